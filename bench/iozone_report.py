#!/usr/bin/env python3
"""bench/iozone_report.py: the tables of bench/iozone.sh from its raw rows.

    python3 bench/iozone_report.py OUT.md RAW.tsv [RAW.tsv ...]

RAW.tsv has one row per tool run: config, tool, round, then the tool's -R row (file KiB,
record KiB, 13 rates; 0 for tests not run), tab-separated, as bench/iozone.sh writes it and
bench/results/iozone-*.raw.tsv keep them, so the tables can be recomputed from committed rows.
Several files are pooled (their rounds kept apart, so each round still pairs the two tools
that ran back to back in it). bench/iozone.sh also passes the options that only feed the
header (--runs, --load-start/--load-end, --stat-start/--stat-end: the first line of
/proc/stat, for the hypervisor's steal time); without them the header says "not recorded".
"""
import argparse
import datetime
import os
import platform
import random
import statistics

TESTS = ["write", "rewrite", "read", "reread", "random read", "random write", "bkwd read",
         "record rewrite", "stride read", "fwrite", "frewrite", "fread", "freread"]
TARGET = 0.97
BOOT = 2000

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("out")
ap.add_argument("raw", nargs="+")
ap.add_argument("--runs")
ap.add_argument("--load-start")
ap.add_argument("--load-end")
ap.add_argument("--stat-start")
ap.add_argument("--stat-end")
args = ap.parse_args()

if args.stat_start and args.stat_end:
    cpu0 = [int(x) for x in args.stat_start.split()[1:]]
    cpu1 = [int(x) for x in args.stat_end.split()[1:]]
    ticks = [b - a for a, b in zip(cpu0, cpu1)]
    steal = "%.1f%%" % (100.0 * ticks[7] / max(sum(ticks[:8]), 1))
    context = "Load average at the start %s, at the end %s; the hypervisor took %s of CPU time (steal)." % (
        args.load_start, args.load_end, steal)
else:
    context = "Load average and steal time: not recorded (tables recomputed from raw rows)."

data, limit = {}, {}
per_file = [0] * len(args.raw)  # rounds in each raw file (the RUNS of each bench run)
for k, path in enumerate(args.raw):
    for line in open(path):
        cfg, tool, r, rest = line.rstrip("\n").split("\t")
        vals = [int(x) for x in rest.split()]
        if cfg == "limit":
            limit.setdefault(tool, []).append(vals)
        else:
            data.setdefault(cfg, {}).setdefault(tool, []).append(((k, int(r)), vals[2:]))
            per_file[k] = max(per_file[k], int(r))
runs = args.runs or str(sum(per_file))

med = statistics.median
rng = random.Random(1)


def paired_ci(a, b):
    """Median of the per-round ratios b[i]/a[i] (the two tools ran back to back in round i)
    and its 95% bootstrap interval, rounds resampled (seeded)."""
    rs = [y / max(x, 1) for x, y in zip(a, b)]
    boot = sorted(med(rng.choices(rs, k=len(rs))) for _ in range(BOOT))
    return med(rs), boot[int(0.025 * BOOT)], boot[int(0.975 * BOOT) - 1]


def ratio_boot(a, b):
    """Bootstrap distribution of median(b)/median(a), each tool's runs resampled independently
    (seeded: the same raw rows give the same interval)."""
    return sorted(med(rng.choices(b, k=len(b))) / max(med(rng.choices(a, k=len(a))), 1)
                  for _ in range(BOOT))


L = []
L.append("# fslab iozone vs IOzone 3.414: medians of %s interleaved runs\n" % runs)
where = "on %s (%s, kernel %s, %d CPUs), %s." % (platform.node(), platform.machine(), platform.release(),
                                                  os.cpu_count(), datetime.datetime.now().strftime("%Y-%m-%d %H:%M"))
if args.stat_start:
    L.append("Produced by `sudo IOZONE_SRC=<pantheon-systems/iozone checkout> RUNS=%s bench/iozone.sh` %s" % (runs, where))
else:
    L.append("Tables computed by `python3 bench/iozone_report.py OUT %s` from the raw rows of %s of"
             " `sudo IOZONE_SRC=<pantheon-systems/iozone checkout> RUNS=N bench/iozone.sh` (N = %s), %s" % (
                 " ".join(os.path.basename(p) for p in args.raw),
                 "one run" if len(args.raw) == 1 else "%d runs, pooled," % len(args.raw),
                 ", ".join(str(n) for n in per_file), where))
L.append("Both tools run the same command line, one after the other, alternating which goes first; the")
L.append("file systems are a private tmpfs (size=3g) and ext4 on a loop device (`losetup --direct-io=on`,")
L.append("6 GiB image on the host's disk). Values are IOzone's own KiB/s (integer, truncated) from each")
L.append("tool's result row; the ratio is median(fslab) / median(IOzone). Both run at `nice -n -20`.")
L.append(context)
L.append("The min–max columns show how much single runs scatter. The 95% interval of the ratio is a")
L.append("bootstrap over the runs (%d resamples of each tool's runs, seeded); a test is *below" % BOOT)
L.append("target* only if the whole interval is under %.2f, *unresolved* if the median ratio is under" % TARGET)
L.append("%.2f but the interval reaches it. *paired* is the median of the per-round ratios (the two" % TARGET)
L.append("tools ran back to back in each round, so a slow minute of the host hits both) with its")
L.append("bootstrap interval over rounds: a second estimate of the same ratio, less sensitive to drift.\n")
if len(args.raw) == 1 and per_file[0] < 5:
    L.append("**Only %s round(s): the intervals below cannot show the scatter; use RUNS=15 or more.**\n" % runs)

cells, paired = [], []
expected_misses = 0.0
for cfg, tools in data.items():
    if cfg.startswith("ext4-direct"):
        fs, (size, rec), flags = "ext4-direct", cfg.split("-")[2:4], "-I "
    else:
        (fs, size, rec), flags = cfg.split("-", 2), ""
    L.append("## %s: `%s-s %s -r %s`\n" % (fs, flags, size, rec))
    L.append("| test | IOzone median | fslab median | ratio | ratio 95% CI | paired (95% CI) | IOzone min–max | fslab min–max |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
    for i, t in enumerate(TESTS):
        a = [v[i] for _, v in sorted(tools["iozone"])]
        b = [v[i] for _, v in sorted(tools["fslab"])]
        ratio = med(b) / med(a) if med(a) else float("nan")
        boot = ratio_boot(a, b)
        lo, hi = boot[int(0.025 * BOOT)], boot[int(0.975 * BOOT) - 1]
        # How often this cell's estimate would land under the target if the true ratio were
        # exactly 1: its bootstrap spread, centred on 1.
        expected_misses += sum(1 for x in boot if x / ratio < TARGET) / BOOT
        pm, plo, phi = paired_ci(a, b)
        cells.append((ratio, cfg, t, lo, hi))
        paired.append(pm)
        L.append("| %s | %d | %d | %.3f | %.2f–%.2f | %.3f (%.2f–%.2f) | %d–%d | %d–%d |" % (
            t, med(a), med(b), ratio, lo, hi, pm, plo, phi, min(a), max(a), min(b), max(b)))
    L.append("")

if limit:
    p = [v[0] for v in limit["pread"]]
    f_read = [v[0] for v in limit["fslab"]]
    f_reread = [v[1] for v in limit["fslab"]]
    L.append("## The limit: cached sequential 1 MiB reads (tmpfs, 1 GiB)\n")
    L.append("`bench/pread_loop.c`: one untimed pass, then one timed pass of `pread(fd, buf, 1 MiB, off)` into")
    L.append("one aligned buffer. fslab: the read and re-read columns of `fslab iozone -i 0 -i 1 -s 1g -r 1m`.\n")
    L.append("| | median KiB/s | min–max | ratio to pread loop |")
    L.append("|---|---:|---:|---:|")
    L.append("| pread loop | %d | %d–%d | 1.000 |" % (med(p), min(p), max(p)))
    L.append("| fslab read | %d | %d–%d | %.3f |" % (med(f_read), min(f_read), max(f_read), med(f_read) / med(p)))
    L.append("| fslab re-read | %d | %d–%d | %.3f |" % (med(f_reread), min(f_reread), max(f_reread), med(f_reread) / med(p)))
    L.append("")

fmt = lambda w: "%s %s %.3f (%.3f–%.3f)" % (w[1], w[2], w[0], w[3], w[4])
by_ratio = sorted(cells)
ratios = [c[0] for c in cells]
below = [w for w in by_ratio if w[4] < TARGET]
unresolved = [w for w in by_ratio if w[0] < TARGET <= w[4]]
L.append("## Summary\n")
L.append("Lowest ratios fslab/IOzone: " + ", ".join(fmt(w) for w in by_ratio[:5]) + ".")
L.append("Ratios over all %d tests: median %.3f, geometric mean %.3f, lowest %.3f, highest %.3f." % (
    len(ratios), med(ratios), statistics.geometric_mean(ratios), min(ratios), max(ratios)))
L.append("Tests with a median ratio at or above %.2f: %d of %d." % (TARGET, len(ratios) - sum(1 for r in ratios if r < TARGET), len(ratios)))
L.append("Expected under %.2f if every test were exactly at parity (each test's bootstrap spread" % TARGET)
L.append("centred on 1): %.1f." % expected_misses)
L.append("Below target (whole 95%% interval under %.2f): %d%s." % (TARGET, len(below), "" if not below else ": " + ", ".join(fmt(w) for w in below)))
L.append("Unresolved (median under %.2f, interval reaching it): %d." % (TARGET, len(unresolved)))
L.append("Paired estimate (median of per-round ratios) at or above %.2f: %d of %d.\n" % (TARGET, sum(1 for p in paired if p >= TARGET), len(paired)))
L.append("Raw rows (config, tool, round, row): %s." % ", ".join("`%s`" % os.path.basename(p) for p in args.raw))
open(args.out, "w").write("\n".join(L) + "\n")
print("\n".join(L))
