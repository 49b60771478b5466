#!/usr/bin/env python3
"""Turn bench/mdtest.sh's raw TSV into bench/results/mdtest-<date>.md.

Per file system and operation: each tool's median rate, the ratio of the medians, the
median of the per-pair ratios (a pair = one mdtest run and one fslab run next to each
other, order alternated) with their range, and the geometric mean over the ten operations.

    python3 bench/mdtest_report.py RAW.tsv OUT.md [--pairs N --n N ...]
"""
import argparse
import csv
import math
import statistics
from collections import defaultdict

OPS = [
    "Directory creation", "Directory stat", "Directory rename", "Directory removal",
    "File creation", "File stat", "File read", "File removal", "Tree creation", "Tree removal",
]
GOAL_GEO, GOAL_MIN = 0.95, 0.85


def geo(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("out")
    ap.add_argument("--pairs", default="?")
    ap.add_argument("--n", default="?")
    ap.add_argument("--null-n", default="?")
    ap.add_argument("--ior", default="?")
    ap.add_argument("--machine", default="?")
    ap.add_argument("--load", default="?")
    ap.add_argument("--null", default="")
    ap.add_argument("--nice", default="?")
    ap.add_argument("--fses", default="tmpfs ext4")
    ap.add_argument("--configs", default="1 2u")
    a = ap.parse_args()

    runs = defaultdict(dict)  # (fs/config, pair, tool) -> {op: rate}
    first = {}  # (fs/config, pair) -> tool that ran first
    with open(a.raw) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            cfg = r.get("config", "1")
            fs = r["fs"] + (", 1 rank" if cfg == "1" else ", 2 ranks, -u")
            runs[(fs, int(r["pair"]), r["tool"])][r["operation"]] = float(r["rate"])
            if r["position"] == "1":
                first[(fs, int(r["pair"]))] = r["tool"]
    fss = sorted({k[0] for k in runs}, key=lambda s: (not s.startswith("tmpfs"), s))
    lines = [
        "# mdtest engine: fslab against mdtest (hpc/ior)",
        "",
        f"Produced by `sudo PAIRS={a.pairs} N={a.n} NICE={a.nice} FSES=\"{a.fses}\" CONFIGS=\"{a.configs}\" bench/mdtest.sh` on {a.machine}; "
        f"mdtest built from hpc/ior {a.ior} (`mdtest -n {a.n} -d DIR`; two ranks: "
        f"`mpiexec -n 2 mdtest -u -n {a.n} -d DIR`, MPICH) against "
        f"`fslab mdtest --no-store -q` with the same flags (two ranks: `mpiexec -n 2 fslab "
        f"mdtest -u …`, built with `--features mpi`). Load average at the end: {a.load}.",
        "",
        "Each pair is one mdtest run and one fslab run back to back, the order alternated "
        "(odd pairs mdtest first), both at niceness NICE. The machine is shared by several "
        "developers: read the medians and ratios, and the range of the per-pair ratios as the "
        "noise. The goal (geometric mean of the per-phase ratios at least 0.95, no phase below "
        "0.85) applies to one rank; the two-rank rows run both tools as two MPI processes.",
        "",
    ]
    summary = []
    for fs in fss:
        pairs = sorted({k[1] for k in runs if k[0] == fs})
        lines += [
            f"## {fs}",
            "",
            "| operation | mdtest median (ops/s) | fslab median (ops/s) | ratio of medians | "
            "median pair ratio | pair ratios min–max |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        rom, mpr = [], []
        for op in OPS:
            m = [runs[(fs, p, "mdtest")][op] for p in pairs]
            s = [runs[(fs, p, "fslab")][op] for p in pairs]
            ratios = [y / x for x, y in zip(m, s) if x > 0]
            r1 = statistics.median(s) / statistics.median(m)
            r2 = statistics.median(ratios)
            rom.append(r1)
            mpr.append(r2)
            lines.append(
                f"| {op} | {statistics.median(m):,.0f} | {statistics.median(s):,.0f} | "
                f"{r1:.3f} | {r2:.3f} | {min(ratios):.2f}–{max(ratios):.2f} |"
            )
        g1, g2 = geo(rom), geo(mpr)
        lines += [
            f"| **geometric mean** | | | **{g1:.3f}** | **{g2:.3f}** | |",
            "",
        ]
        # Does running first or second matter (caches, the other tool's leftovers)?
        by_pos = defaultdict(list)
        for p in pairs:
            who = first.get((fs, p), "?")
            for op in OPS:
                x = runs[(fs, p, "mdtest")][op]
                if x > 0:
                    by_pos[who].append(runs[(fs, p, "fslab")][op] / x)
        pos = ", ".join(
            f"{w} first: median ratio {statistics.median(v):.3f} over {len(v)} operation-pairs"
            for w, v in sorted(by_pos.items())
        )
        lines += [f"Order check — {pos}.", ""]
        worst = min(zip(rom, OPS))
        summary.append((fs, g1, g2, worst))
    lines += ["## Against the goal", "",
              f"Goal (issue 22): geometric mean of the per-operation ratios ≥ {GOAL_GEO}, "
              f"no operation below {GOAL_MIN}.", "",
              "| fs | geometric mean (ratio of medians) | geometric mean (median pair ratios) | "
              "lowest operation (ratio of medians) | goal met |",
              "|---|---:|---:|---|---|"]
    for fs, g1, g2, (wr, wop) in summary:
        met = "yes" if g1 >= GOAL_GEO and wr >= GOAL_MIN else "no"
        if "2 ranks" in fs:
            met += " (information only)"
        lines.append(f"| {fs} | {g1:.3f} | {g2:.3f} | {wop} {wr:.3f} | {met} |")
    lines.append("")
    if a.null.strip():
        lines += [
            f"## fslab's own cost (null backend, `-n {a.null_n}`, no system calls)", "",
            "| operation | ops/s | ns per operation |", "|---|---:|---:|",
        ]
        for row in a.null.strip().splitlines():
            op, rate = row.split("\t")
            rate = float(rate)
            ns = 1e9 / rate if rate > 0 else float("nan")
            lines.append(f"| {op} | {rate:,.0f} | {ns:.1f} |")
        lines.append("")
    lines += ["Raw values: the `.raw.tsv` beside this file "
              "(fs, config, pair, position, tool, operation, rate).", ""]
    with open(a.out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
