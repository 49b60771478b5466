#!/usr/bin/env bash
# bench/mdtest.sh: fslab's mdtest engine against mdtest itself (hpc/ior), side by side.
#
# Builds mdtest from the hpc/ior sources (never committed: a checkout given in IOR_SRC, else
# a fresh clone) and fslab with MPI (`cargo build --release --features mpi`), then runs
# `mdtest -n N` and `fslab mdtest -n N --no-store -q` in alternated pairs (odd pairs mdtest
# first, even pairs fslab first) on a tmpfs and on an ext4 loop device that the script makes
# and removes: one rank, and two ranks with -u (`mpiexec -n 2` for both). Every run's ten
# rates go to a raw TSV; bench/mdtest_report.py
# turns it into medians, per-pair ratios and their spread. Also measures fslab's own cost per
# operation (the null backend: the same walks without system calls).
#
#   sudo bench/mdtest.sh                         PAIRS=11 N=10000 CONFIGS="1 2u" FSES="tmpfs ext4" NICE=-10 by default
#   sudo PAIRS=11 IOR_SRC=/path/to/ior bench/mdtest.sh
#
# Needs root (mount, losetup), gcc, autoconf/automake and MPI (scripts/install-deps --mpi;
# mpicc builds mdtest), python3. Writes bench/results/mdtest-<date>.md and .raw.tsv.
set -euo pipefail

PAIRS=${PAIRS:-11}
# Both tools run at this niceness, so other work on a shared machine disturbs them less.
NICE=${NICE:--10}
CONFIGS=${CONFIGS:-1 2u}
# File systems to compare on: a tmpfs and an ext4 loop device the script makes.
FSES=${FSES:-tmpfs ext4}
N=${N:-10000}
NULL_N=${NULL_N:-2000000}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
WORK=${WORK:-/var/tmp/fslab-bench-mdtest}
DATE=$(date -u +%Y-%m-%d)
OUT=${OUT:-$HERE/results/mdtest-$DATE.md}
RAW=${RAW:-${OUT%.md}.raw.tsv}

[ "$(id -u)" -eq 0 ] || { echo "bench/mdtest.sh: needs root (mount, losetup); run with sudo" >&2; exit 2; }
for tool in python3 mpicc mpiexec autoreconf make mkfs.ext4 losetup; do
  command -v "$tool" >/dev/null || {
    echo "bench/mdtest.sh: needs $tool; run scripts/install-deps --mpi and apt-get install autoconf automake" >&2
    exit 2
  }
done

cleanup() {
  set +e
  umount "$WORK/tmpfs" 2>/dev/null
  umount "$WORK/ext4" 2>/dev/null
  [ -n "${LOOP:-}" ] && losetup -d "$LOOP" 2>/dev/null
  rm -rf "$WORK/tmpfs" "$WORK/ext4" "$WORK/ext4.img"
}
trap cleanup EXIT INT TERM
cleanup
mkdir -p "$WORK/tmpfs" "$WORK/ext4"

# mdtest from hpc/ior, built in the work directory.
if [ ! -x "$WORK/ior/src/mdtest" ]; then
  rm -rf "$WORK/ior"
  if [ -n "${IOR_SRC:-}" ]; then
    echo "copying hpc/ior from $IOR_SRC" >&2
    mkdir -p "$WORK/ior"
    if [ -d "$IOR_SRC/.git" ] || git -C "$IOR_SRC" rev-parse --git-dir >/dev/null 2>&1; then
      git -C "$IOR_SRC" archive HEAD | tar -x -C "$WORK/ior"
    else
      cp -a "$IOR_SRC/." "$WORK/ior/"
    fi
  else
    echo "cloning hpc/ior" >&2
    git clone -q --depth 1 https://github.com/hpc/ior "$WORK/ior" || {
      echo "bench/mdtest.sh: cannot fetch hpc/ior; set IOR_SRC=/path/to/an/ior/checkout" >&2
      exit 2
    }
  fi
  echo "building mdtest" >&2
  (cd "$WORK/ior" && ./bootstrap >/dev/null 2>&1 && ./configure -q >/dev/null && make -s -j"$(nproc)" >/dev/null)
fi
MDTEST="$WORK/ior/src/mdtest"
IOR_REV=$( (git -C "${IOR_SRC:-$WORK/ior}" rev-parse --short HEAD 2>/dev/null) || echo unknown)

echo "building fslab with MPI (release)" >&2
(cd "$ROOT" && cargo build --release -q --features mpi)
FSLAB="$ROOT/target/release/fslab"

mount -t tmpfs -o size=8g,nr_inodes=4m tmpfs "$WORK/tmpfs"
truncate -s 8G "$WORK/ext4.img"
mkfs.ext4 -q -F "$WORK/ext4.img"
LOOP=$(losetup --find --show "$WORK/ext4.img")
mount "$LOOP" "$WORK/ext4"

# "<operation>\t<rate>" for each row of a SUMMARY rate table (1 iteration: Max = the rate).
rates() {
  awk '/^SUMMARY rate/ {on=1; next} /^SUMMARY time/ {on=0}
       on && /^   (Directory|File|Tree) / {
         op=$1" "$2; printf "%s\t%s\n", op, $3 }'
}

mkdir -p "$(dirname "$OUT")"
printf 'fs\tconfig\tpair\tposition\ttool\toperation\trate\n' > "$RAW"
for fs in $FSES; do
  dir="$WORK/$fs/out"
  for cfg in $CONFIGS; do
    case "$cfg" in
      1) md=(nice -n "$NICE" "$MDTEST" -n "$N" -d "$dir")
         fl=(nice -n "$NICE" "$FSLAB" mdtest --no-store -q -n "$N" -d "$dir") ;;
      2u) md=(nice -n "$NICE" mpiexec -n 2 "$MDTEST" -u -n "$N" -d "$dir")
          fl=(nice -n "$NICE" mpiexec -n 2 "$FSLAB" mdtest --no-store -q -u -n "$N" -d "$dir") ;;
      *) echo "bench/mdtest.sh: unknown config '$cfg' in CONFIGS (1, 2u)" >&2; exit 2 ;;
    esac
    for i in $(seq 1 "$PAIRS"); do
      if [ $((i % 2)) -eq 1 ]; then order="mdtest fslab"; else order="fslab mdtest"; fi
      pos=0
      for who in $order; do
        pos=$((pos + 1))
        sync
        if [ "$who" = mdtest ]; then out=$("${md[@]}" 2>&1); else out=$("${fl[@]}" 2>&1); fi
        lines=$(printf '%s\n' "$out" | rates)
        [ "$(printf '%s\n' "$lines" | grep -c .)" -eq 10 ] || {
          echo "bench/mdtest.sh: $who on $fs ($cfg) printed no full table:" >&2
          printf '%s\n' "$out" >&2
          exit 1
        }
        printf '%s\n' "$lines" | while IFS=$'\t' read -r op rate; do
          printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$fs" "$cfg" "$i" "$pos" "$who" "$op" "$rate"
        done >> "$RAW"
        [ ! -e "$dir" ] || { echo "bench/mdtest.sh: $who left $dir behind" >&2; exit 1; }
      done
      echo "  $fs $cfg pair $i of $PAIRS done" >&2
    done
  done
done

# fslab's own cost per operation: the same walks, no system calls.
null_out=$("$FSLAB" mdtest --no-store -q --backend null -n "$NULL_N" -d "$WORK/null-never-made" | rates)

python3 -B "$HERE/mdtest_report.py" "$RAW" "$OUT" \
  --pairs "$PAIRS" --n "$N" --null-n "$NULL_N" --ior "$IOR_REV" --nice "$NICE" \
  --fses "$FSES" --configs "$CONFIGS" \
  --machine "$(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs" \
  --load "$(cut -d' ' -f1-3 /proc/loadavg)" \
  --null "$null_out"
echo "wrote $OUT and $RAW" >&2
