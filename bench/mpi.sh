#!/usr/bin/env bash
# bench/mpi.sh: fslab's MPI mode on tmpfs — aggregate rates of 1, 2 and 4 ranks, the measured
# phase-start skew, fslab's ranks against fslab's threads (same work, no MPI), against
# mdtest (IOR suite, the MPI tool fslab's MPI mode replaces) on the same shape, one directory
# per rank and one shared directory, and the stonewall figures.
#
# Everything is measured side by side in one run, configurations interleaved (the order
# rotates every run), medians of RUNS runs; writes bench/results/mpi.md. Needs root (it mounts
# its own tmpfs), mpiexec and a Rust toolchain; mdtest is built from the public hpc/ior
# repository into the work directory unless MDTEST=/path/to/mdtest is given (never committed).
#
#   sudo bench/mpi.sh                       RUNS=5 by default
#   RUNS=9 MDTEST=/opt/ior/bin/mdtest sudo bench/mpi.sh
set -euo pipefail

RUNS=${RUNS:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
WORK=${WORK:-/var/tmp/fslab-bench-mpi}
OUT=${OUT:-$HERE/results/mpi.md}
# Scaling tree, per rank: 11,111 directories and 111,110 files of 4 KiB (434 MiB).
TREE=(-d 10 -f 10 -s 1 -l 4)
# mdtest-comparable shape, per rank: one directory with ITEMS files of 4 KiB.
ITEMS=${ITEMS:-50000}
RANKS=(1 2 4)

[ "$(id -u)" -eq 0 ] || { echo "bench/mpi.sh: needs root (mount); run with sudo" >&2; exit 2; }
command -v mpiexec >/dev/null || { echo "bench/mpi.sh: needs mpiexec; run scripts/install-deps --mpi" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench/mpi.sh: needs python3 (to read fslab's JSON)" >&2; exit 2; }

cleanup() {
  set +e
  umount "$WORK/tmpfs" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
cleanup
mkdir -p "$WORK/tmpfs"

echo "building fslab (release, --features mpi)" >&2
(cd "$ROOT" && cargo build --release --features mpi -q)
FSLAB="$ROOT/target/release/fslab"

MD=${MDTEST:-}
if [ -z "$MD" ]; then
  echo "building mdtest from hpc/ior (autotools, mpicc)" >&2
  src="$WORK/ior-src"
  if git clone -q --depth 1 https://github.com/hpc/ior "$src" 2>/dev/null \
     || { [ -d /work/.mirror/hpc+ior/repo ] && git clone -q /work/.mirror/hpc+ior/repo "$src"; }; then
    if (cd "$src" && ./bootstrap && ./configure -q --prefix="$WORK/ior" MPICC=mpicc && make -s -j2 && make -s install) >"$WORK/ior-build.log" 2>&1; then
      MD="$WORK/ior/bin/mdtest"
    else
      echo "bench/mpi.sh: mdtest build failed (see $WORK/ior-build.log); continuing without it" >&2
    fi
  else
    echo "bench/mpi.sh: cannot fetch hpc/ior; set MDTEST=/path/to/mdtest; continuing without it" >&2
  fi
fi
MD_VERSION=$([ -n "$MD" ] && (cd "$WORK" && mpiexec -n 1 "$MD" -F -C -n 1 -d "$WORK/tmpfs" 2>/dev/null | grep -o 'mdtest-[^ ]*' | head -1) || echo "not run")

mount -t tmpfs -o size=12g,nr_inodes=8m tmpfs "$WORK/tmpfs"
T="$WORK/tmpfs"

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "nan"} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }
# "<phase>.<metric> <value>" for every metric of fslab's first repetition.
metrics_of_json() {
  python3 -c 'import json,sys
for m in json.load(sys.stdin)["repetitions"][0]:
    print(m["phase"] + "." + m["metric"], m["value"])'
}

declare -A V
add() { V["$1"]+="$2 "; }

fslab_mpi() { # name ranks args...
  local name=$1 n=$2; shift 2
  local key val
  while read -r key val; do add "$name|$key" "$val"; done < <(
    mpiexec -n "$n" "$FSLAB" fdtree -o "$T" "$@" --no-store -q --json | metrics_of_json)
}
fslab_threads() { # name threads args...
  local name=$1 n=$2; shift 2
  local key val
  while read -r key val; do add "$name|$key" "$val"; done < <(
    "$FSLAB" fdtree -o "$T" --threads "$n" "$@" --no-store -q --json | metrics_of_json)
}
mdtest_run() { # name ranks extra-args...
  local name=$1 n=$2; shift 2
  [ -n "$MD" ] || return 0
  rm -rf "$T/mdtest"; mkdir -p "$T/mdtest"
  local out
  out=$(cd "$WORK" && mpiexec -n "$n" "$MD" -F -C -r -n "$ITEMS" -w 4096 -d "$T/mdtest" "$@" 2>&1)
  add "$name|file_create.rate" "$(awk '/File creation/ {print $3}' <<<"$out")"
  add "$name|file_remove.rate" "$(awk '/File removal/ {print $3}' <<<"$out")"
  rm -rf "$T/mdtest"
}

configs=()
for n in "${RANKS[@]}"; do configs+=("mpi$n" "thr$n"); done
configs+=(sw4 own4 shared4 md_own4 md_shared4 md_own1)
MPI_SHAPE=(-d 1 -l 0 -f "$ITEMS" -s 1)

run_config() {
  case "$1" in
    mpi*)      fslab_mpi "$1" "${1#mpi}" "${TREE[@]}" ;;
    thr*)      fslab_threads "$1" "${1#thr}" "${TREE[@]}" ;;
    sw4)       fslab_mpi sw4 4 "${TREE[@]}" --stonewall ;;
    own4)      fslab_mpi own4 4 "${MPI_SHAPE[@]}" ;;
    shared4)   fslab_mpi shared4 4 "${MPI_SHAPE[@]}" --shared ;;
    md_own4)   mdtest_run md_own4 4 -u ;;
    md_shared4) mdtest_run md_shared4 4 ;;
    md_own1)   mdtest_run md_own1 1 -u ;;
  esac
}

for i in $(seq 1 "$RUNS"); do
  echo "run $i/$RUNS" >&2
  nconf=${#configs[@]}
  for j in $(seq 0 $((nconf - 1))); do
    run_config "${configs[$(((i + j) % nconf))]}"
  done
done

med() { tr ' ' '\n' <<<"${V[$1]:-}" | grep -v '^$' | median; }
fmt() { awk -v x="$1" 'BEGIN { if (x == "nan" || x == "") print "–"; else printf "%.0f", x }'; }
ms() { awk -v x="$1" 'BEGIN { if (x == "nan" || x == "") print "–"; else printf "%.3f", x * 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b == 0 || a == "" || b == "") print "–"; else printf "%.2f", a / b }'; }

PHASES=(dir_create file_create file_remove dir_remove)
{
  echo "# MPI mode: aggregate rates and phase-start skew on tmpfs"
  echo
  echo "Produced by \`sudo bench/mpi.sh\` (RUNS=$RUNS, ITEMS=$ITEMS) on $(date -u +%Y-%m-%d)."
  echo "Machine: $(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs;"
  echo "MPICH hydra $(mpiexec --version 2>/dev/null | grep -m1 'Version:' | awk '{print $NF}'); mdtest: $MD_VERSION."
  echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). Medians of $RUNS interleaved runs (the order"
  echo "of the configurations rotates every run). The machine has **$(nproc) cores** and is shared with other"
  echo "builds: read ratios, not absolute rates; 4 ranks on 2 cores are oversubscribed."
  echo
  echo "## 1, 2 and 4 ranks, one tree per rank (weak scaling), against the same work on threads"
  echo
  echo "Tree per rank \`fdtree ${TREE[*]}\`: 11,111 directories and 111,110 files of 4 KiB; N ranks do N"
  echo "trees. Rates are the aggregate (all items / (latest end − earliest start)), in items/s."
  echo "\"threads\" is \`fslab fdtree --threads N\` without MPI: the same trees and the same aggregate rule."
  echo
  echo "| phase | 1 rank | 2 ranks | 4 ranks | 2 / 1 | 4 / 1 | 1 thread | 2 threads | 4 threads | 4 ranks / 4 threads |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for p in "${PHASES[@]}"; do
    m1=$(med "mpi1|$p.rate"); m2=$(med "mpi2|$p.rate"); m4=$(med "mpi4|$p.rate")
    t1=$(med "thr1|$p.rate"); t2=$(med "thr2|$p.rate"); t4=$(med "thr4|$p.rate")
    echo "| $p | $(fmt "$m1") | $(fmt "$m2") | $(fmt "$m4") | $(ratio "$m2" "$m1") | $(ratio "$m4" "$m1") | $(fmt "$t1") | $(fmt "$t2") | $(fmt "$t4") | $(ratio "$m4" "$t4") |"
  done
  echo
  echo "## Phase-start skew (latest − earliest rank start after the barrier), ms"
  echo
  echo "Medians over runs of each phase's measured skew; also the finish skew (the tail) and the"
  echo "per-rank rate spread ((max − min) / mean) of file_create."
  echo
  echo "| phase | 2 ranks | 4 ranks | 4 ranks, stonewall run |"
  echo "|---|---:|---:|---:|"
  for p in "${PHASES[@]}"; do
    echo "| $p | $(ms "$(med "mpi2|$p.start_skew")") | $(ms "$(med "mpi4|$p.start_skew")") | $(ms "$(med "sw4|$p.start_skew")") |"
  done
  echo
  echo "| file_create | 2 ranks | 4 ranks |"
  echo "|---|---:|---:|"
  echo "| finish skew (ms) | $(ms "$(med "mpi2|file_create.end_skew")") | $(ms "$(med "mpi4|file_create.end_skew")") |"
  echo "| per-rank rate spread (%) | $(fmt "$(med "mpi2|file_create.rank_rate_spread")") | $(fmt "$(med "mpi4|file_create.rank_rate_spread")") |"
  echo
  echo "## Stonewall (4 ranks, same trees, \`--stonewall\`)"
  echo
  echo "| phase | last-done rate | stonewall rate | stonewall / last-done | items counted at stonewall / all | lag (ms) |"
  echo "|---|---:|---:|---:|---:|---:|"
  for p in "${PHASES[@]}"; do
    r=$(med "sw4|$p.rate"); s=$(med "sw4|$p.stonewall_rate")
    echo "| $p | $(fmt "$r") | $(fmt "$s") | $(ratio "$s" "$r") | $(ratio "$(med "sw4|$p.stonewall_items")" "$(med "sw4|$p.items")") | $(ms "$(med "sw4|$p.stonewall_lag")") |"
  done
  echo
  echo "## Against mdtest: one directory of $ITEMS files of 4 KiB per rank, and one shared directory"
  echo
  echo "fslab: \`mpiexec -n 4 fslab fdtree -d 1 -l 0 -f $ITEMS -s 1 [--shared]\`; mdtest:"
  echo "\`mpiexec -n 4 mdtest -F -C -r -n $ITEMS -w 4096 [-u]\` (\`-u\`: a directory per rank). Both create"
  echo "each file with open(O_CREAT) + one 4 KiB write + close and remove it with unlink, and both"
  echo "report all items / (latest end − earliest start). files/s."
  echo
  echo "| layout | phase | fslab | mdtest | fslab / mdtest |"
  echo "|---|---|---:|---:|---:|"
  for p in file_create file_remove; do
    a=$(med "own4|$p.rate"); b=$(med "md_own4|$p.rate")
    echo "| 4 ranks, a directory each | $p | $(fmt "$a") | $(fmt "$b") | $(ratio "$a" "$b") |"
  done
  for p in file_create file_remove; do
    a=$(med "shared4|$p.rate"); b=$(med "md_shared4|$p.rate")
    echo "| 4 ranks, one shared directory | $p | $(fmt "$a") | $(fmt "$b") | $(ratio "$a" "$b") |"
  done
  for p in file_create file_remove; do
    echo "| 1 rank (mdtest only, for scale) | $p | – | $(fmt "$(med "md_own1|$p.rate")") | – |"
  done
  echo
  echo "## Commands"
  echo
  echo '```'
  echo "mpiexec -n N fslab fdtree -o TMPFS ${TREE[*]} --no-store -q --json            # N = 1, 2, 4"
  echo "fslab fdtree -o TMPFS --threads N ${TREE[*]} --no-store -q --json"
  echo "mpiexec -n 4 fslab fdtree -o TMPFS ${TREE[*]} --stonewall --no-store -q --json"
  echo "mpiexec -n 4 fslab fdtree -o TMPFS -d 1 -l 0 -f $ITEMS -s 1 [--shared] --no-store -q --json"
  echo "mpiexec -n 4 mdtest -F -C -r -n $ITEMS -w 4096 -d TMPFS/mdtest [-u]"
  echo '```'
} > "$OUT"
echo "wrote $OUT" >&2
