#!/usr/bin/env bash
# bench/scaling.sh: every many-worker engine against the tool it replaces, from 1 worker to
# the machine's CPU count, side by side in one run (issue 31, doc/architecture.md "Workers own
# their kernel state").
#
# For N = 1, 2, 4, 8, … up to the CPU count (and the CPU count itself), on a tmpfs and on an
# ext4 file system on a loop device whose image lives in RAM (/dev/shm), in alternated pairs
# (odd pairs the anchor first, even pairs fslab first), PAIRS pairs each:
#   dbench    fslab dbench N            vs  dbench N (Debian's, its client.txt)
#   fdtree    fslab fdtree --threads N  vs  bench/fdtree_loop.c as N processes
#   iozone    fslab iozone -t N         vs  IOzone -t N (its default: N child processes)
#   mdtest    mpiexec -n N fslab mdtest -u  vs  mpiexec -n N mdtest -u (hpc/ior)
#   fdtable   bench/fdtable_loop.c: N threads sharing one table, N threads each unsharing it
#             (what fslab's workers do), N processes — the mechanism, not a comparison of tools
#   phasecost the fixed cost per phase: `mdtest -n 1 -z 0 -i PHASECOST_ITER` against `fslab
#             mdtest` with the same flags, one rank, the mean µs of each one-item phase
# Results: the ratio of medians fslab / anchor per engine, metric and N, with the machine's
# CPU count, in OUT (bench/results/scaling-<date>.md) and every run in OUT's .raw.tsv
# (bench/scaling_report.py recomputes the tables from it).
#
#   sudo IOR_SRC=/path/to/hpc-ior IOZONE_SRC=/path/to/iozone bench/scaling.sh
#   sudo PAIRS=5 NS="1 16" FSES=ext4 ENGINES="dbench mdtest" … bench/scaling.sh
#
# Defaults: PAIRS=4 (even: the run second in a pair was slower for both tools here, by up to
# 20%, so each tool is second in half the pairs), NS = powers of two up to the CPU count plus the CPU count, FSES="tmpfs
# ext4", ENGINES="dbench fdtree iozone mdtest fdtable phasecost", DBENCH_TIME=10 (dbench's warmup rule
# for both), FDTREE="-d 10 -f 50 -s 1 -l 2" per worker, IOZONE="-s 64m -r 64k -i 0 -i 1" per
# worker, MDTEST_N=5000 items per rank, FDTABLE_TIME=3, PHASECOST_ITER=200, RAM_FS_SIZE=8g. IOR_SRC and IOZONE_SRC
# are checkouts built under WORK, never in this repository (or give MDTEST= and IOZONE= binaries).
# Needs root (mounts, loop device, drop_caches), gcc, python3, dbench (scripts/install-deps
# --bench), MPI (scripts/install-deps --mpi) and, to build mdtest, autoconf and automake.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
CPUS=$(nproc)
PAIRS=${PAIRS:-4}
FSES=${FSES:-tmpfs ext4}
ENGINES=${ENGINES:-dbench fdtree iozone mdtest fdtable phasecost}
DBENCH_TIME=${DBENCH_TIME:-10}
LOADFILE=${LOADFILE:-/usr/share/dbench/client.txt}
FDTREE=${FDTREE:--d 10 -f 50 -s 1 -l 2}
IOZONE_ARGS=${IOZONE_ARGS:--s 64m -r 64k -i 0 -i 1}
MDTEST_N=${MDTEST_N:-5000}
FDTABLE_TIME=${FDTABLE_TIME:-3}
PHASECOST_ITER=${PHASECOST_ITER:-200}
RAM_FS_SIZE=${RAM_FS_SIZE:-8g}
WORK=${WORK:-/var/tmp/fslab-bench-scaling}
DATE=$(date -u +%Y-%m-%d)
OUT=${OUT:-$HERE/results/scaling-$DATE.md}
RAW=${RAW:-${OUT%.md}.raw.tsv}
if [ -z "${NS:-}" ]; then
  NS=""
  n=1
  while [ "$n" -le "$CPUS" ]; do NS="$NS $n"; n=$((n * 2)); done
  case " $NS " in *" $CPUS "*) ;; *) NS="$NS $CPUS" ;; esac
fi

die() { echo "bench/scaling.sh: $*" >&2; exit 2; }
[ $((PAIRS % 2)) -eq 0 ] && [ "$PAIRS" -gt 0 ] ||
  die "PAIRS must be even (each tool runs second in half the pairs); got $PAIRS"
[ "$(id -u)" -eq 0 ] || die "needs root (mounts, loop device, drop_caches); run with sudo"
for tool in gcc python3 mkfs.ext4 losetup; do
  command -v "$tool" >/dev/null || die "needs $tool; run scripts/install-deps --bench"
done
wants() { case " $ENGINES " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if wants dbench; then
  command -v dbench >/dev/null || die "dbench is not installed; run scripts/install-deps --bench"
  [ -r "$LOADFILE" ] || die "$LOADFILE is missing; run scripts/install-deps --bench (Debian's dbench ships it)"
fi
if wants mdtest; then
  command -v mpiexec >/dev/null || die "needs mpiexec; run scripts/install-deps --mpi"
fi

# The C loop takes the tree's shape as arguments, in FDTREE's order.
read -r f1 FD_D f2 FD_F f3 FD_S f4 FD_L extra <<<"$FDTREE"
[ "$f1 $f2 $f3 $f4" = "-d -f -s -l" ] && [ -z "${extra:-}" ] ||
  die "FDTREE must be \"-d D -f F -s S -l L\" in that order (got \"$FDTREE\")"

LOOP=""
cleanup() {
  set +e
  for fs in tmpfs ext4; do mountpoint -q "$WORK/$fs" && umount "$WORK/$fs"; done
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  rm -f /dev/shm/fslab-bench-scaling.img
}
trap cleanup EXIT INT TERM
mkdir -p "$WORK/bin" "$WORK/tmpfs" "$WORK/ext4"

# --- the anchors and fslab, built beside the project -----------------------------------
echo "building fslab (release, with MPI) and the C loops" >&2
(cd "$ROOT" && cargo build --release -q --features mpi)
FSLAB="$ROOT/target/release/fslab"
gcc -O2 -Wall -pthread -o "$WORK/bin/fdtree_loop" "$HERE/fdtree_loop.c"
gcc -O2 -Wall -pthread -o "$WORK/bin/fdtable_loop" "$HERE/fdtable_loop.c"
if wants iozone && [ -z "${IOZONE:-}" ]; then
  IOZONE="$WORK/iozone/src/current/iozone"
  if [ ! -x "$IOZONE" ]; then
    [ -n "${IOZONE_SRC:-}" ] && [ -f "$IOZONE_SRC/src/current/iozone.c" ] ||
      die "set IOZONE_SRC to a pantheon-systems/iozone checkout (or IOZONE to an iozone binary)"
    rm -rf "$WORK/iozone" && cp -r "$IOZONE_SRC" "$WORK/iozone"
    # -fcommon: IOzone 3.414 defines `junk` in two files (GCC >= 10 rejects that by default).
    make -C "$WORK/iozone/src/current" linux-AMD64 CFLAGS=-fcommon >"$WORK/iozone.log" 2>&1 ||
      die "IOzone build failed, see $WORK/iozone.log"
  fi
fi
if { wants mdtest || wants phasecost; } && [ -z "${MDTEST:-}" ]; then
  MDTEST="$WORK/ior/src/mdtest"
  if [ ! -x "$MDTEST" ]; then
    [ -n "${IOR_SRC:-}" ] && [ -d "$IOR_SRC" ] || die "set IOR_SRC to an hpc/ior checkout (or MDTEST to an mdtest binary)"
    command -v autoreconf >/dev/null || die "building mdtest needs autoconf and automake (apt-get install autoconf automake)"
    rm -rf "$WORK/ior" && mkdir -p "$WORK/ior"
    if git -C "$IOR_SRC" rev-parse --git-dir >/dev/null 2>&1; then
      git -C "$IOR_SRC" archive HEAD | tar -x -C "$WORK/ior"
    else
      cp -a "$IOR_SRC/." "$WORK/ior/"
    fi
    (cd "$WORK/ior" && ./bootstrap >/dev/null 2>&1 && ./configure -q >/dev/null 2>&1 && make -s -j"$CPUS" >/dev/null 2>&1) ||
      die "mdtest build failed in $WORK/ior"
  fi
fi

# --- the file systems -------------------------------------------------------------------
mount_fs() {
  case "$1" in
    tmpfs) mount -t tmpfs -o "size=$RAM_FS_SIZE,nr_inodes=4m" tmpfs "$WORK/tmpfs" ;;
    ext4)
      truncate -s "$RAM_FS_SIZE" /dev/shm/fslab-bench-scaling.img
      mkfs.ext4 -q -F /dev/shm/fslab-bench-scaling.img
      LOOP=$(losetup --find --show /dev/shm/fslab-bench-scaling.img)
      mount "$LOOP" "$WORK/ext4" ;;
    *) die "unknown file system '$1' in FSES (tmpfs, ext4)" ;;
  esac
}
umount_fs() {
  umount "$WORK/$1"
  if [ "$1" = ext4 ]; then losetup -d "$LOOP"; LOOP=""; rm -f /dev/shm/fslab-bench-scaling.img; fi
}
fresh() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# --- one run of one tool: "metric<TAB>value" lines --------------------------------------
# Each tool writes to a file and is parsed after it ended, so no parser starts beside it.
OUTF="$WORK/out"
run_dbench() { # tool n dir
  local d="$3/db"
  mkdir -p "$d"
  if [ "$1" = anchor ]; then
    dbench -c "$LOADFILE" -D "$d" -t "$DBENCH_TIME" "$2" >"$OUTF" 2>&1
  else
    "$FSLAB" dbench -c "$LOADFILE" -D "$d" -t "$DBENCH_TIME" -q --no-store "$2" >"$OUTF" 2>&1
  fi
  rm -rf "$d"
  awk '/^Throughput/ {printf "throughput\t%s\n", $2}' "$OUTF"
}
run_fdtree() {
  local d="$3/ft"
  mkdir -p "$d"
  if [ "$1" = anchor ]; then
    "$WORK/bin/fdtree_loop" "$d" "$FD_D" "$FD_F" "$FD_S" "$FD_L" "$2" >"$OUTF"
    rm -rf "$d"
    awk '{printf "%s\t%s\n", $1, $4}' "$OUTF"
  else
    # shellcheck disable=SC2086
    "$FSLAB" fdtree --threads "$2" $FDTREE --no-store -q --json -o "$d" >"$OUTF"
    rm -rf "$d"
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for m in d["repetitions"][0]:
    if m["metric"] == "rate":
        print(m["phase"], m["value"], sep="\t")' "$OUTF"
  fi
}
run_iozone() {
  local d="$3/iz" files=()
  mkdir -p "$d"
  for i in $(seq 1 "$2"); do files+=("$d/f$i"); done
  # shellcheck disable=SC2086
  if [ "$1" = anchor ]; then
    (cd "$d" && "$IOZONE" -t "$2" $IOZONE_ARGS -F "${files[@]}") >"$OUTF" 2>&1
  else
    "$FSLAB" iozone -t "$2" $IOZONE_ARGS --no-store -F "${files[@]}" >"$OUTF" 2>&1
  fi
  rm -rf "$d"
  awk -F'=' '/Children see throughput for/ {
      name = $1; sub(/.*Children see throughput for +[0-9]+ +/, "", name); gsub(/[ \t]+$/, "", name)
      split($2, v, " "); gsub(/ /, "_", name); printf "%s\t%s\n", name, v[1] }' "$OUTF"
}
run_mdtest() {
  local d="$3/md"
  if [ "$1" = anchor ]; then
    mpiexec -n "$2" "$MDTEST" -u -n "$MDTEST_N" -d "$d" >"$OUTF" 2>&1
  else
    mpiexec -n "$2" "$FSLAB" mdtest --no-store -q -u -n "$MDTEST_N" -d "$d" >"$OUTF" 2>&1
  fi
  rm -rf "$d"
  awk '/^SUMMARY rate/ {on=1; next} /^SUMMARY time/ {on=0}
       on && /^   (Directory|File|Tree) / { printf "%s_%s\t%s\n", tolower($1), $2, $3 }' "$OUTF"
}

# The fixed cost per phase: mdtest and fslab mdtest with one item per phase (`-n 1 -z 0`),
# PHASECOST_ITER iterations each, one rank; the mean time of each phase in µs.
run_phasecost() {
  local d="$3/pc"
  if [ "$1" = anchor ]; then
    rm -f "$WORK/pc.csv"
    "$MDTEST" -n 1 -z 0 -i "$PHASECOST_ITER" --saveRankPerformanceDetails="$WORK/pc.csv" -d "$d" >"$OUTF" 2>&1
    rm -rf "$d"
    python3 -c '
import csv, sys
names = {"Directory creation": "dir_create", "Directory stat": "dir_stat",
         "Directory removal": "dir_remove", "File creation": "file_create",
         "File stat": "file_stat", "File read": "file_read", "File removal": "file_remove"}
rows = list(csv.reader(open(sys.argv[1])))
head, per_iter = rows[0], rows[2:]
for long, short in names.items():
    col = head.index("time-" + long)
    vals = [float(r[col]) for r in per_iter if r[col]]
    print(short + "_us", 1e6 * sum(vals) / len(vals), sep="\t")' "$WORK/pc.csv"
  else
    "$FSLAB" mdtest --no-store -q -n 1 -z 0 -i "$PHASECOST_ITER" -d "$d" --json >"$OUTF" 2>&1
    rm -rf "$d"
    python3 -c '
import json, sys
keep = {"dir_create", "dir_stat", "dir_remove", "file_create", "file_stat", "file_read", "file_remove"}
d = json.load(open(sys.argv[1]))
t = {}
for it in d["iterations"]:
    for p in it["phases"]:
        if p["phase"] in keep:
            t.setdefault(p["phase"], []).append(p["seconds"])
for k, v in t.items():
    print(k + "_us", 1e6 * sum(v) / len(v), sep="\t")' "$OUTF"
  fi
}

printf 'fs\tengine\tn\tpair\tposition\ttool\tmetric\tvalue\n' >"$RAW"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
for fs in $FSES; do
  mount_fs "$fs"
  dir="$WORK/$fs"
  for engine in $ENGINES; do
    ns=$NS
    [ "$engine" = phasecost ] && ns=1
    for n in $ns; do
      for pair in $(seq 1 "$PAIRS"); do
        if [ "$engine" = fdtable ]; then
          pos=0
          for mode in shared unshared procs; do
            pos=$((pos + 1))
            mkdir -p "$dir/fdt"
            "$WORK/bin/fdtable_loop" "$dir/fdt" "$mode" "$n" "$FDTABLE_TIME" >"$OUTF"
            v=$(awk '{print $5}' "$OUTF")
            rm -rf "$dir/fdt"
            printf '%s\tfdtable\t%s\t%s\t%s\t%s\tfiles_per_s\t%s\n' "$fs" "$n" "$pair" "$pos" "$mode" "$v" >>"$RAW"
          done
          echo "  $fs fdtable N=$n pair $pair/$PAIRS" >&2
          continue
        fi
        if [ $((pair % 2)) -eq 1 ]; then order="anchor fslab"; else order="fslab anchor"; fi
        pos=0
        for tool in $order; do
          pos=$((pos + 1))
          fresh
          lines=$("run_$engine" "$tool" "$n" "$dir")
          [ -n "$lines" ] || die "$engine ($tool, N=$n, $fs) printed no result"
          printf '%s\n' "$lines" | while IFS=$'\t' read -r metric value; do
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fs" "$engine" "$n" "$pair" "$pos" "$tool" "$metric" "$value"
          done >>"$RAW"
        done
        echo "  $fs $engine N=$n pair $pair/$PAIRS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
      done
    done
  done
  umount_fs "$fs"
done

python3 -B "$HERE/scaling_report.py" "$RAW" "$OUT" \
  --cpus "$CPUS" --pairs "$PAIRS" --ns "$NS" \
  --machine "$(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $CPUS CPUs" \
  --load "$LOAD_START → $(cut -d' ' -f1-3 /proc/loadavg)" \
  --settings "DBENCH_TIME=$DBENCH_TIME FDTREE=\"$FDTREE\" IOZONE_ARGS=\"$IOZONE_ARGS\" MDTEST_N=$MDTEST_N FDTABLE_TIME=$FDTABLE_TIME PHASECOST_ITER=$PHASECOST_ITER" \
  --rev "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "wrote $OUT and $RAW" >&2
