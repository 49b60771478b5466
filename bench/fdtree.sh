#!/usr/bin/env bash
# bench/fdtree.sh: fslab fdtree against the bare system-call limit (a C loop doing the same
# system calls), against fdtree.bash, the null backend's own cost, and peak memory.
#
# Measured side by side in one run, interleaved, medians of RUNS runs; writes
# bench/results/fdtree.md. Needs root (it mounts a tmpfs and an ext4 loop image) and gcc.
#
#   sudo bench/fdtree.sh                 RUNS=9 by default
#   RUNS=9 sudo bench/fdtree.sh
#   FDTREE_BASH=/path/to/fdtree.bash     use this copy of fdtree.bash instead of fetching it
set -euo pipefail

RUNS=${RUNS:-9}
FD_RUNS=${FD_RUNS:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
WORK=${WORK:-/var/tmp/fslab-bench-fdtree}
OUT=${OUT:-$HERE/results/fdtree.md}
# The tree for the syscall-limit comparison: 1,111 directories, 111,100 files of 4 KiB.
TREE=(-d 10 -f 100 -s 1 -l 3)
# The tree for fdtree.bash (it forks dd per file): 111 directories, 11,100 files of 4 KiB.
FD_TREE=(-d 10 -f 100 -s 1 -l 2)

[ "$(id -u)" -eq 0 ] || { echo "bench/fdtree.sh: needs root (mount); run with sudo" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench/fdtree.sh: needs python3 (to read fslab's JSON)" >&2; exit 2; }
command -v gcc >/dev/null || { echo "bench/fdtree.sh: needs gcc; run scripts/install-deps --bench" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/fdtree.sh: needs /usr/bin/time; run scripts/install-deps --bench" >&2; exit 2; }

cleanup() {
  set +e
  umount "$WORK/tmpfs" 2>/dev/null
  umount "$WORK/ext4" 2>/dev/null
  [ -n "${LOOP:-}" ] && losetup -d "$LOOP" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
cleanup
mkdir -p "$WORK/tmpfs" "$WORK/ext4" "$WORK/bin"

echo "building fslab (release) and the C loop" >&2
(cd "$ROOT" && cargo build --release -q)
FSLAB="$ROOT/target/release/fslab"
gcc -O2 -Wall -pthread -o "$WORK/bin/fdtree_loop" "$HERE/fdtree_loop.c"

# fdtree.bash from its public repository, never committed.
FDB=${FDTREE_BASH:-}
if [ -z "$FDB" ]; then
  FDB="$WORK/bin/fdtree.bash"
  if git clone -q --depth 1 https://github.com/LLNL/fdtree "$WORK/fdtree-src" 2>/dev/null; then
    cp "$WORK/fdtree-src/fdtree.bash" "$FDB"
  else
    echo "bench/fdtree.sh: cannot fetch fdtree.bash; set FDTREE_BASH=/path/to/fdtree.bash" >&2
    FDB=""
  fi
fi

mount -t tmpfs -o size=12g,nr_inodes=4m tmpfs "$WORK/tmpfs"
truncate -s 8G "$WORK/ext4.img"
mkfs.ext4 -q -F "$WORK/ext4.img"
LOOP=$(losetup --find --show "$WORK/ext4.img")
mount "$LOOP" "$WORK/ext4"

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "nan"} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }
# fslab's rates of one run: "<phase> <rate>" lines.
rates_of_json() {
  python3 -c 'import json,sys
for m in json.load(sys.stdin)["summary"]:
    if m["metric"] == "rate": print(m["phase"], m["mean"])'
}
fslab_rates() {
  "$FSLAB" fdtree -o "$1" "${@:2}" --no-store -q --json | rates_of_json
}

declare -A R
for fs in tmpfs ext4; do
  dir="$WORK/$fs"
  for i in $(seq 1 "$RUNS"); do
    # Interleave: odd runs C first, even runs fslab first.
    for who in $( [ $((i % 2)) -eq 1 ] && echo "c fslab" || echo "fslab c"); do
      sync
      if [ "$who" = c ]; then
        out=$("$WORK/bin/fdtree_loop" "$dir" 10 100 1 3 | awk '{print $1, $4}')
      else
        out=$(fslab_rates "$dir" "${TREE[@]}")
      fi
      while read -r phase rate; do R[$fs,$who,$phase]+="$rate "; done <<< "$out"
    done
  done
done

# fdtree.bash: whole-second timer, so its tree is sized to take tens of seconds.
declare -A FD
if [ -n "$FDB" ]; then
  for fs in tmpfs ext4; do
    for i in $(seq 1 "$FD_RUNS"); do
      sync
      t0=$(date +%s.%N)
      log=$(cd "$WORK/$fs" && bash "$FDB" "${FD_TREE[@]}" -o "$WORK/$fs" 2>&1)
      t1=$(date +%s.%N)
      fc=$(echo "$log" | awk -F'= ' '/File creates per second/ {gsub(/ /,"",$2); print $2}')
      fr=$(echo "$log" | awk -F'= ' '/File removals per second/ {gsub(/ /,"",$2); print $2}')
      FD[$fs,fdtree,cycle]+="$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }') "
      FD[$fs,fdtree,file_create]+="$fc "
      FD[$fs,fdtree,file_remove]+="$fr "
      sync
      t0=$(date +%s.%N)
      "$FSLAB" fdtree -o "$WORK/$fs" "${FD_TREE[@]}" --no-store -q --json > "$WORK/fd.json"
      t1=$(date +%s.%N)
      FD[$fs,fslab,cycle]+="$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }') "
      r=$(rates_of_json < "$WORK/fd.json" | grep '^file_')
      while read -r phase rate; do FD[$fs,fslab,$phase]+="$rate "; done <<< "$r"
    done
  done
fi

# Null backend: fslab's own cost per operation (11.1 million files, 111,111 directories).
NULL_TREE=(-d 10 -f 100 -s 1 -l 5)
declare -A N
for i in $(seq 1 "$RUNS"); do
  out=$(fslab_rates /nonexistent-null-backend "${NULL_TREE[@]}" --backend null)
  while read -r phase rate; do N[$phase]+="$rate "; done <<< "$out"
done

# Peak memory for a tree of 2,000,000 files (empty files: data size does not change fslab's memory).
MEM_TREE=(-d 10 -f 180 -s 0 -l 4)
rss=$( { /usr/bin/time -f '%M' "$FSLAB" fdtree -o "$WORK/tmpfs" "${MEM_TREE[@]}" --no-store -q --format json > /dev/null; } 2>&1 | tail -1)

med() { echo "$1" | tr ' ' '\n' | grep -v '^$' | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "nan" }'; }
fmt() { awk -v a="$1" 'BEGIN { printf "%.0f", a }'; }

mkdir -p "$(dirname "$OUT")"
{
  echo "# fdtree engine: fslab vs the system-call limit and fdtree.bash"
  echo
  echo "Produced by \`sudo bench/fdtree.sh\` (RUNS=$RUNS, FD_RUNS=$FD_RUNS) on $(date -u +%Y-%m-%d)."
  echo "Machine: $(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs,"
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). Medians of interleaved runs; the machine is shared, so read ratios, not absolute rates."
  echo
  echo "## Against a C loop doing the same system calls (\`bench/fdtree_loop.c\`), one thread, 4 KiB files"
  echo
  echo "Tree \`${TREE[*]}\`: 1,111 directories, 111,100 files per run."
  echo
  echo "| fs | phase | C loop (ops/s) | fslab (ops/s) | fslab / C |"
  echo "|---|---|---:|---:|---:|"
  for fs in tmpfs ext4; do
    for p in dir_create file_create file_remove dir_remove; do
      c=$(med "${R[$fs,c,$p]}"); f=$(med "${R[$fs,fslab,$p]}")
      echo "| $fs | $p | $(fmt "$c") | $(fmt "$f") | $(ratio "$f" "$c") |"
    done
  done
  echo
  echo "Every run (ops/s, in run order), so the spread behind each median is visible:"
  echo
  echo '```'
  for fs in tmpfs ext4; do
    for p in file_create file_remove; do
      for who in c fslab; do
        printf '%-6s %-12s %-6s %s\n' "$fs" "$p" "$who" "$(for v in ${R[$fs,$who,$p]}; do fmt "$v"; printf ' '; done)"
      done
    done
  done
  echo '```'
  echo
  if [ -n "$FDB" ]; then
    echo "## Against fdtree.bash 1.0.2 (one \`dd\` per file, whole-second timer)"
    echo
    echo "Tree \`${FD_TREE[*]}\`: 111 directories, 11,100 files of 4 KiB. fdtree's rates are its own"
    echo "integer output; cycle = wall time of the whole four-phase run measured by this script."
    echo
    echo "| fs | metric | fdtree.bash | fslab | fslab / fdtree |"
    echo "|---|---|---:|---:|---:|"
    for fs in tmpfs ext4; do
      for p in file_create file_remove; do
        a=$(med "${FD[$fs,fdtree,$p]}"); b=$(med "${FD[$fs,fslab,$p]}")
        if awk -v a="$a" 'BEGIN { exit !(a == 0) }'; then
          # fdtree prints 0 when a phase takes under one second (integer $SECONDS).
          echo "| $fs | $p (files/s) | 0 (phase under fdtree's 1 s timer) | $(fmt "$b") | not measurable |"
        else
          echo "| $fs | $p (files/s) | $(fmt "$a") | $(fmt "$b") | $(ratio "$b" "$a") |"
        fi
      done
      a=$(med "${FD[$fs,fdtree,cycle]}"); b=$(med "${FD[$fs,fslab,cycle]}")
      echo "| $fs | whole cycle (s) | $(printf '%.2f' "$a") | $(printf '%.3f' "$b") | $(ratio "$a" "$b") |"
    done
    echo
  fi
  echo "## Null backend: fslab's own cost per operation, one thread"
  echo
  echo "Tree \`${NULL_TREE[*]} --backend null\`: 111,111 directories, 11,111,100 files, no system calls."
  echo
  echo "| phase | ops/s (median) | ns per op |"
  echo "|---|---:|---:|"
  for p in dir_create file_create file_remove dir_remove; do
    v=$(med "${N[$p]}")
    echo "| $p | $(fmt "$v") | $(awk -v v="$v" 'BEGIN { printf "%.1f", 1e9 / v }') |"
  done
  echo
  echo "## Memory"
  echo
  echo "Peak RSS of \`fslab fdtree ${MEM_TREE[*]}\` on tmpfs (11,111 directories, 1,999,980 files): $((rss / 1024)) MiB ($rss KiB)."
} > "$OUT"
cat "$OUT"
