#!/usr/bin/env bash
# bench/iozone.sh: fslab iozone against IOzone 3.414 and against a bare pread loop, side by
# side in one run, interleaved (A B, then B A, …), medians of RUNS runs, per test.
#
#   sudo IOZONE_SRC=/path/to/iozone-checkout bench/iozone.sh        # RUNS=5 by default
#
# IOZONE_SRC is a checkout of the pantheon-systems/iozone repository (IOzone 3.414); it is
# copied and built under WORK, never inside this repository. The script needs root: it
# mounts a private tmpfs and an ext4 file system on a loop device made from an image in
# WORK, and removes both at the end (also on error or Ctrl-C).
#
# Configurations (every one of IOzone's 13 tests, -i 0 to -i 7):
#   tmpfs  -s 1g -r 1m      tmpfs  -s 1g -r 4k
#   ext4   -s 1g -r 1m      ext4   -s 1g -r 4k      ext4 -I -s 2g -r 1m (O_DIRECT)
# plus cached sequential 1 MiB reads on tmpfs: fslab's read/re-read against pread_loop.c.
# Results (medians, ratios fslab/IOzone, raw runs, commands) go to OUT, the raw rows beside it
# (OUT with .raw.tsv); bench/iozone_report.py recomputes the tables from those rows.
set -euo pipefail

RUNS=${RUNS:-5}
WORK=${WORK:-/tmp/fslab-bench-iozone}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
FSLAB=${FSLAB:-$ROOT/target/release/fslab}
OUT=${OUT:-$HERE/results/iozone.md}
IOZONE_SRC=${IOZONE_SRC:-/tmp/iozone-src}
CONFIGS=${CONFIGS:-"tmpfs:1m tmpfs:4k ext4:1m ext4:4k ext4-direct:1m"}

die() { echo "bench/iozone.sh: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (mounts a tmpfs and a loop device); run with sudo"
[ -x "$FSLAB" ] || die "$FSLAB not found; run: cargo build --release"
[ -f "$IOZONE_SRC/src/current/iozone.c" ] || die "IOZONE_SRC=$IOZONE_SRC is not an IOzone checkout; clone pantheon-systems/iozone and set IOZONE_SRC"
command -v mkfs.ext4 >/dev/null || die "mkfs.ext4 missing: apt-get install e2fsprogs"
command -v python3 >/dev/null || die "python3 missing: apt-get install python3"

mkdir -p "$WORK"
RAW="$WORK/raw.tsv"
# What else ran: load average at start and end, and the share of CPU time the hypervisor
# took (steal, from /proc/stat) over the whole run, printed in the results.
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
STAT_START=$(head -1 /proc/stat)
: > "$RAW"
LOOP=""
cleanup() {
    set +e
    mountpoint -q "$WORK/tmpfs" && umount "$WORK/tmpfs"
    mountpoint -q "$WORK/ext4" && umount "$WORK/ext4"
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -f "$WORK/ext4.img"
}
trap cleanup EXIT INT TERM

# --- build the anchors beside the project -------------------------------------------
if [ ! -x "$WORK/iozone-build/src/current/iozone" ]; then
    rm -rf "$WORK/iozone-build"
    cp -r "$IOZONE_SRC" "$WORK/iozone-build"
    # -fcommon: IOzone 3.414 defines `junk` in two files (GCC >= 10 rejects that by default).
    make -C "$WORK/iozone-build/src/current" linux-AMD64 CFLAGS=-fcommon >"$WORK/iozone-build.log" 2>&1 \
        || die "IOzone build failed, see $WORK/iozone-build.log"
fi
IOZONE="$WORK/iozone-build/src/current/iozone"
cc -O2 -o "$WORK/pread_loop" "$HERE/pread_loop.c" || die "cannot build pread_loop.c (apt-get install gcc)"

# --- the two file systems -----------------------------------------------------------
mkdir -p "$WORK/tmpfs" "$WORK/ext4"
mount -t tmpfs -o size=3g tmpfs "$WORK/tmpfs"
truncate -s 6G "$WORK/ext4.img"
mkfs.ext4 -q -F "$WORK/ext4.img"
LOOP=$(losetup --find --show --direct-io=on "$WORK/ext4.img")
mount "$LOOP" "$WORK/ext4"

# Both tools print IOzone's -R blocks ("Writer report" … "Re-Fread report", values separated
# by spaces); the text table cannot be parsed reliably because IOzone's fixed-width columns run
# together once a value has more digits than its column (rates above 10 GB/s do).
# Prints: file-KiB record-KiB and the 13 rates in table order (0 for tests not run).
row() {
    python3 -c '
import sys
titles = ["Writer report", "Re-writer report", "Reader report", "Re-Reader report",
          "Random read report", "Random write report", "Backward read report",
          "Record rewrite report", "Stride read report", "Fwrite report", "Re-Fwrite report",
          "Fread report", "Re-Fread report"]
vals, cur, want_header, rec, size = {}, None, False, None, None
for line in sys.stdin:
    t = line.strip()
    if t.strip("\"") in titles and t.startswith("\""):
        cur, want_header = t.strip("\""), True
        continue
    if cur and t.startswith("\""):
        parts = t.split()
        if want_header:
            rec, want_header = parts[0].strip("\""), False
            continue
        size = parts[0].strip("\"")
        vals[cur] = parts[1] if len(parts) > 1 else "0"
        cur = None
if vals:
    print(size, rec, *[vals.get(x, "0") for x in titles])
'
}
# Both tools run at nice -20 (the same for both): the machine is shared, and this keeps other
# jobs from taking the CPU in the middle of a timed loop as often.
NICE="nice -n -20"

run_pair() { # config run-number size record dir extra-flags
    local cfg=$1 r=$2 s=$3 rec=$4 dir=$5 extra=$6
    local order="iozone fslab"
    [ $((r % 2)) -eq 0 ] && order="fslab iozone"
    for tool in $order; do
        sync
        local line
        if [ "$tool" = iozone ]; then
            line=$(cd "$dir" && $NICE "$IOZONE" $extra -R -s "$s" -r "$rec" -f "$dir/iozone.tmp" | row)
        else
            line=$(cd "$dir" && $NICE "$FSLAB" iozone $extra -R -s "$s" -r "$rec" -f "$dir/iozone.tmp" \
                --no-store --quiet 2>/dev/null | row)
        fi
        [ -n "$line" ] || die "$tool produced no result row for $cfg"
        printf '%s\t%s\t%s\t%s\n' "$cfg" "$tool" "$r" "$line" >>"$RAW"
        echo "  $cfg run $r $tool: $line"
    done
}

for c in $CONFIGS; do
    fs=${c%%:*}
    rec=${c##*:}
    case $fs in
        tmpfs) dir="$WORK/tmpfs"; s=1g; extra="" ;;
        ext4) dir="$WORK/ext4"; s=1g; extra="" ;;
        ext4-direct) dir="$WORK/ext4"; s=2g; extra="-I" ;;
    esac
    echo "== $fs -s $s -r $rec $extra"
    for r in $(seq 1 "$RUNS"); do
        run_pair "$fs-$s-$rec" "$r" "$s" "$rec" "$dir" "$extra"
    done
done

# --- the bare limit: cached sequential 1 MiB reads ------------------------------------
echo "== cached 1 MiB reads: pread loop vs fslab read/re-read (tmpfs, 1 GiB)"
"$FSLAB" iozone -i 0 -s 1g -r 1m -w -f "$WORK/tmpfs/limit.tmp" --no-store --quiet >/dev/null 2>&1
for r in $(seq 1 "$RUNS"); do
    for tool in $([ $((r % 2)) -eq 0 ] && echo "fslab pread" || echo "pread fslab"); do
        if [ "$tool" = pread ]; then
            v=$($NICE "$WORK/pread_loop" "$WORK/tmpfs/limit.tmp" 1048576)
            printf 'limit\tpread\t%s\t%s\n' "$r" "$v" >>"$RAW"
        else
            # -i 1 alone would add the write test; -w keeps the file, so read it as written.
            line=$($NICE "$FSLAB" iozone -i 0 -i 1 -R -s 1g -r 1m -w --overwrite -f "$WORK/tmpfs/limit.tmp" --no-store --quiet 2>/dev/null | row)
            v=$(echo "$line" | awk '{print $5, $6}')
            [ -n "$line" ] || die "fslab produced no result row for the cached-read limit"
            printf 'limit\tfslab\t%s\t%s\n' "$r" "$v" >>"$RAW"
        fi
        echo "  limit run $r $tool: $v"
    done
done
rm -f "$WORK/tmpfs/limit.tmp"

# --- medians and ratios -------------------------------------------------------------
cp "$RAW" "${OUT%.md}.raw.tsv"
python3 "$HERE/iozone_report.py" "$OUT" "${OUT%.md}.raw.tsv" --runs "$RUNS" \
    --load-start "$LOAD_START" --load-end "$(cut -d' ' -f1-3 /proc/loadavg)" \
    --stat-start "$STAT_START" --stat-end "$(head -1 /proc/stat)"
echo "results: $OUT"
