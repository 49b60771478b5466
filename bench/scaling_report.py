#!/usr/bin/env python3
"""Turn bench/scaling.sh's raw TSV into bench/results/scaling-<date>.md.

Per file system, engine, number of workers N and metric: the anchor's median, fslab's median,
the ratio of the medians (fslab / anchor), and the range of the per-pair ratios (a pair = one
anchor run and one fslab run back to back, the order alternated). Per engine and N, the
lowest ratio over its metrics, against the goal (every ratio of medians >= 0.95, none below
0.90). The file-table mechanism rows (bench/fdtable_loop.c) compare three ways of running N
workers, not two tools.

    python3 bench/scaling_report.py RAW.tsv OUT.md [--cpus N --pairs N ...]
"""
import argparse
import csv
import statistics
from collections import defaultdict

GOAL, FLOOR = 0.95, 0.90
# mdtest's tree phases with its default depth (-z 0) make or remove one directory per tree:
# a phase of a few microseconds, timed mostly as the ranks' synchronization around it. The
# issue that set the goal says so too; they are shown, and left out of the summary's lowest.
SYNC_ONLY = {("mdtest", "tree_creation"), ("mdtest", "tree_removal")}
ANCHORS = {
    "dbench": "dbench N (client.txt)",
    "fdtree": "bench/fdtree_loop.c as N processes",
    "iozone": "IOzone -t N (N processes)",
    "mdtest": "mpiexec -n N mdtest -u",
}
FSLAB = {
    "dbench": "fslab dbench N",
    "fdtree": "fslab fdtree --threads N",
    "iozone": "fslab iozone -t N",
    "mdtest": "mpiexec -n N fslab mdtest -u",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("out")
    for k in ("cpus", "pairs", "ns", "machine", "load", "settings", "rev"):
        ap.add_argument("--" + k, default="?")
    a = ap.parse_args()

    vals = defaultdict(list)  # (fs, engine, n, metric, tool) -> [values]
    pairs = defaultdict(dict)  # (fs, engine, n, metric, pair) -> {tool: value}
    order = []  # metrics in the order first seen, per engine
    with open(a.raw) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            key = (r["fs"], r["engine"], int(r["n"]), r["metric"])
            v = float(r["value"])
            vals[key + (r["tool"],)].append(v)
            pairs[key + (int(r["pair"]),)][r["tool"]] = v
            if (r["engine"], r["metric"]) not in order:
                order.append((r["engine"], r["metric"]))
    fses = sorted({k[0] for k in vals}, key=lambda s: (s != "tmpfs", s))
    engines = [e for e in ["dbench", "fdtree", "iozone", "mdtest", "fdtable", "phasecost"]
               if any(k[1] == e for k in vals)]

    out = [
        "# Many cores: every engine against the tool it replaces, 1 to N workers",
        "",
        f"Produced by `sudo bench/scaling.sh` (fslab {a.rev}) on {a.machine}; **{a.cpus} CPUs**, "
        f"N = {a.ns.strip()}, {a.pairs} alternated pairs per point ({a.settings}). "
        f"Load average {a.load}.",
        "",
        "Each pair is one run of the anchor and one of fslab back to back, the order alternated "
        "(odd pairs the anchor first; an even number of pairs, so each tool runs second as often "
        "as first), caches dropped before each. Ratio = median of fslab / "
        f"median of the anchor; the goal is every ratio at least {GOAL}, none below {FLOOR}. "
        "N above the CPU count measures the scheduler as much as the file system.",
        "",
    ]
    summary = []
    cost_summary = []
    for fs in fses:
        out += [f"## {fs}", ""]
        for eng in engines:
            ns = sorted({k[2] for k in vals if k[0] == fs and k[1] == eng})
            if not ns:
                continue
            metrics = [m for e, m in order if e == eng]
            if eng == "phasecost":
                out += [
                    "### fixed cost per phase: `fslab mdtest -n 1 -z 0` against `mdtest -n 1 -z 0`, one "
                    "rank (mean µs of a one-item phase per run)",
                    "",
                    "| phase | mdtest median (µs) | fslab median (µs) | fslab − mdtest, median of pairs (µs) | "
                    "pairs min–max (µs) | at most 1 µs more |",
                    "|---|---:|---:|---:|---:|---|",
                ]
                for m in metrics:
                    a_v = vals.get((fs, eng, 1, m, "anchor"))
                    f_v = vals.get((fs, eng, 1, m, "fslab"))
                    if not a_v or not f_v:
                        continue
                    diffs = [p["fslab"] - p["anchor"] for k, p in pairs.items()
                             if k[:4] == (fs, eng, 1, m) and "fslab" in p and "anchor" in p]
                    d = statistics.median(diffs)
                    out.append(
                        f"| {m.removesuffix('_us')} | {statistics.median(a_v):.2f} | {statistics.median(f_v):.2f} | "
                        f"**{d:+.2f}** | {min(diffs):+.2f} to {max(diffs):+.2f} | {'yes' if d <= 1.0 else '**no**'} |")
                    cost_summary.append((fs, m.removesuffix("_us"), d))
                out.append("")
                continue
            if eng == "fdtable":
                out += [
                    "### file-descriptor tables (bench/fdtable_loop.c, files/s: create+write 4 KiB, "
                    "read, stat, unlink per file)",
                    "",
                    "| N | threads sharing one table | threads each unsharing it (fslab) | processes | "
                    "unshared / processes | shared / processes |",
                    "|---:|---:|---:|---:|---:|---:|",
                ]
                for n in ns:
                    med = {t: statistics.median(vals[(fs, eng, n, "files_per_s", t)])
                           for t in ("shared", "unshared", "procs")
                           if vals.get((fs, eng, n, "files_per_s", t))}
                    if len(med) < 3:
                        continue
                    out.append(
                        f"| {n} | {med['shared']:,.0f} | {med['unshared']:,.0f} | {med['procs']:,.0f} | "
                        f"{med['unshared'] / med['procs']:.3f} | {med['shared'] / med['procs']:.3f} |")
                out.append("")
                continue
            out += [
                f"### {eng}: `{FSLAB[eng]}` against `{ANCHORS[eng]}`",
                "",
                "| N | metric | anchor median | fslab median | ratio of medians | median pair ratio | "
                "pair ratios min–max |",
                "|---:|---|---:|---:|---:|---:|---:|",
            ]
            for n in ns:
                worst = None
                for m in metrics:
                    a_v = vals.get((fs, eng, n, m, "anchor"))
                    f_v = vals.get((fs, eng, n, m, "fslab"))
                    if not a_v or not f_v:
                        continue
                    ra, rf = statistics.median(a_v), statistics.median(f_v)
                    ratio = rf / ra if ra > 0 else float("nan")
                    per = [p["fslab"] / p["anchor"] for (k, p) in
                           ((k, p) for k, p in pairs.items() if k[:4] == (fs, eng, n, m))
                           if "fslab" in p and "anchor" in p and p["anchor"] > 0]
                    rng = f"{min(per):.2f}–{max(per):.2f}" if per else "-"
                    mpr = f"{statistics.median(per):.3f}" if per else "-"
                    note = " (one directory)" if (eng, m) in SYNC_ONLY else ""
                    out.append(f"| {n} | {m}{note} | {ra:,.1f} | {rf:,.1f} | **{ratio:.3f}** | {mpr} | {rng} |")
                    if (eng, m) not in SYNC_ONLY and (worst is None or ratio < worst[0]):
                        worst = (ratio, m)
                if worst:
                    summary.append((fs, eng, n, worst))
            out.append("")
    out += [
        "## Summary: the lowest ratio of medians per engine and N",
        "",
        "mdtest's tree phases (one directory per tree at `-z 0`, a few microseconds of the "
        "ranks' synchronization) are in the tables above and left out here.",
        "",
        "| file system | engine | N | lowest ratio (metric) | goal met |",
        "|---|---|---:|---|---|",
    ]
    for fs, eng, n, (ratio, m) in summary:
        met = "yes" if ratio >= GOAL else ("no (above the floor)" if ratio >= FLOOR else "**no**")
        note = " (oversubscribed)" if a.cpus.isdigit() and n > int(a.cpus) else ""
        out.append(f"| {fs} | {eng} | {n}{note} | {ratio:.3f} ({m}) | {met} |")
    out.append("")
    if cost_summary:
        worst = {}
        for fs, phase, d in cost_summary:
            if fs not in worst or d > worst[fs][1]:
                worst[fs] = (phase, d)
        out += ["Fixed cost per phase, the largest fslab − mdtest difference: " + "; ".join(
            f"{fs} {d:+.2f} µs ({phase})" for fs, (phase, d) in worst.items()) + ".", ""]
    with open(a.out, "w") as f:
        f.write("\n".join(out))


if __name__ == "__main__":
    main()
