#!/usr/bin/env bash
# bench/mpi.sh: fslab's MPI mode on tmpfs, in three parts (PARTS, default all three):
#
#   fdtree  aggregate rates of 1, 2 and 4 ranks, the measured phase-start skew, ranks against
#           fslab's threads (same work, no MPI), against mdtest (IOR suite, the MPI tool fslab's
#           MPI mode replaces) on the same shape, one directory per rank and one shared
#           directory, and the stonewall figures;
#   iozone  `iozone -t` on 1 and 4 ranks (one file per rank), against the same work on 4
#           threads of one process (no MPI) and against IOzone 3.414's own throughput mode
#           (-t, processes); phase-start skew; 1 MiB and 4 KiB records;
#   dbench  `dbench` with 4 clients on 1 and on 4 ranks and with 1 client on 1 rank, against
#           the same clients on threads (no MPI) and against dbench 4.0; start skew.
#
# Within a part, everything is measured side by side in one run, configurations interleaved
# (the order rotates every run), medians of RUNS runs. Writes bench/results/mpi.md; parts not
# run this time are kept from the existing file (each part says when it was measured). Needs
# root (it mounts its own tmpfs), mpiexec and a Rust toolchain. Anchors are built or found
# beside the project, never committed: mdtest from the public hpc/ior repository unless
# MDTEST=/path/to/mdtest (or a clone of IOR_REPO, default the GitHub URL); IOzone 3.414 from IOZONE=/path/to/iozone or built from a checkout of
# pantheon-systems/iozone in IOZONE_SRC (as bench/iozone.sh does); dbench 4.0 from PATH
# (Debian's dbench package). A missing anchor leaves its columns empty.
#
#   sudo bench/mpi.sh                               RUNS=5 by default
#   RUNS=9 MDTEST=/opt/ior/bin/mdtest sudo bench/mpi.sh
#   PARTS="iozone dbench" IOZONE=/opt/iozone/iozone sudo bench/mpi.sh
set -euo pipefail

RUNS=${RUNS:-5}
PARTS=${PARTS:-"fdtree iozone dbench"}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
WORK=${WORK:-/var/tmp/fslab-bench-mpi}
OUT=${OUT:-$HERE/results/mpi.md}
# Scaling tree, per rank: 11,111 directories and 111,110 files of 4 KiB (434 MiB).
TREE=(-d 10 -f 10 -s 1 -l 4)
# mdtest-comparable shape, per rank: one directory with ITEMS files of 4 KiB.
ITEMS=${ITEMS:-50000}
RANKS=(1 2 4)
# iozone: the file of each rank with 1 MiB records, and the smaller one with 4 KiB records.
IOZ_SIZE=${IOZ_SIZE:-1g}
IOZ_SIZE_4K=${IOZ_SIZE_4K:-256m}
# dbench: measured seconds (warmup a fifth of it, dbench 4.0's rule, for both tools).
DB_TIME=${DB_TIME:-10}

has_part() { [[ " $PARTS " == *" $1 "* ]]; }
for p in $PARTS; do
  case "$p" in fdtree|iozone|dbench) ;; *) echo "bench/mpi.sh: unknown part '$p' in PARTS (fdtree, iozone, dbench)" >&2; exit 2 ;; esac
done
[ "$(id -u)" -eq 0 ] || { echo "bench/mpi.sh: needs root (mount); run with sudo" >&2; exit 2; }
command -v mpiexec >/dev/null || { echo "bench/mpi.sh: needs mpiexec; run scripts/install-deps --mpi" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench/mpi.sh: needs python3 (to read fslab's JSON)" >&2; exit 2; }

cleanup() {
  set +e
  umount "$WORK/tmpfs" 2>/dev/null
  rm -rf "$WORK/tmpfs" "$WORK/ior-src" "$WORK/ior"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cleanup
rm -f "$WORK"/part-*.md
mkdir -p "$WORK/tmpfs"

echo "building fslab (release, --features mpi)" >&2
(cd "$ROOT" && cargo build --release --features mpi -q)
FSLAB="$ROOT/target/release/fslab"

MD=${MDTEST:-}
MD_VERSION="not run"
if has_part fdtree; then
  if [ -z "$MD" ]; then
    echo "building mdtest from hpc/ior (autotools, mpicc)" >&2
    src="$WORK/ior-src"
    if git clone -q --depth 1 "${IOR_REPO:-https://github.com/hpc/ior}" "$src" 2>/dev/null; then
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
fi

IOZ=${IOZONE:-}
IOZONE_SRC=${IOZONE_SRC:-/tmp/iozone-src}
if has_part iozone && [ -z "$IOZ" ]; then
  if [ ! -x "$WORK/iozone-build/src/current/iozone" ]; then
    echo "building IOzone from $IOZONE_SRC" >&2
    rm -rf "$WORK/iozone-build"
    # A checkout, or a bare git directory (a mirror).
    { git clone -q "$IOZONE_SRC" "$WORK/iozone-build" 2>/dev/null || cp -r "$IOZONE_SRC" "$WORK/iozone-build"; } \
      && [ -f "$WORK/iozone-build/src/current/iozone.c" ] \
      && make -C "$WORK/iozone-build/src/current" linux-AMD64 CFLAGS=-fcommon >"$WORK/iozone-build.log" 2>&1 \
      || echo "bench/mpi.sh: no IOzone built from IOZONE_SRC=$IOZONE_SRC (see $WORK/iozone-build.log); set IOZONE=/path/to/iozone; continuing without it" >&2
  fi
  # -fcommon above: IOzone 3.414 defines `junk` in two files (GCC >= 10 rejects that by default).
  [ -x "$WORK/iozone-build/src/current/iozone" ] && IOZ="$WORK/iozone-build/src/current/iozone"
fi
DBENCH=$(command -v dbench || true)

mount -t tmpfs -o size=12g,nr_inodes=8m tmpfs "$WORK/tmpfs"
T="$WORK/tmpfs"

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "nan"} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }
# "<phase>.<metric> <value>" for every metric of fslab's first repetition.
# (the run document: "repetitions"; an IOzone run has them per point, "points"[0]["repetitions"].)
metrics_of_json() {
  python3 -c 'import json,sys
d = json.load(sys.stdin)
reps = d["points"][0]["repetitions"] if "points" in d else d["repetitions"]
for m in reps[0]:
    print(m["phase"] + "." + m["metric"], m["value"])'
}

declare -A V
add() { V["$1"]+="$2 "; }

med() { tr ' ' '\n' <<<"${V[$1]:-}" | grep -v '^$' | median; }
fmt() { awk -v x="$1" 'BEGIN { if (x == "nan" || x == "") print "–"; else printf "%.0f", x }'; }
fmt2() { awk -v x="$1" 'BEGIN { if (x == "nan" || x == "") print "–"; else printf "%.1f", x }'; }
ms() { awk -v x="$1" 'BEGIN { if (x == "nan" || x == "") print "–"; else printf "%.3f", x * 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b == 0 || a == "" || b == "") print "–"; else printf "%.2f", a / b }'; }


# When and where a part was measured.
produced() { # extra facts
  echo "Produced by \`PARTS=\"$PARTS\" sudo bench/mpi.sh\` (RUNS=$RUNS; $1) on $(date -u +%Y-%m-%d)."
  echo "Machine: $(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs;"
  echo "MPICH hydra $(mpiexec --version 2>/dev/null | grep -m1 'Version:' | awk '{print $NF}'). Load average at the end:"
  echo "$(cut -d' ' -f1-3 /proc/loadavg). Medians of $RUNS interleaved runs (the order of the configurations"
  echo "rotates every run). The machine has **$(nproc) cores** and is shared with other builds: read ratios,"
  echo "not absolute rates; 4 ranks on 2 cores are oversubscribed."
}

# Run every configuration of a part RUNS times, rotating the order every run.
interleave() { # part config-function configs...
  local part=$1 fn=$2; shift 2
  local configs=("$@") i j n=$#
  for i in $(seq 1 "$RUNS"); do
    echo "$part: run $i/$RUNS" >&2
    for j in $(seq 0 $((n - 1))); do
      "$fn" "${configs[$(((i + j) % n))]}"
    done
  done
}

# ------------------------------------------------------------------------------------------
part_fdtree() {
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

  local configs=()
  for n in "${RANKS[@]}"; do configs+=("mpi$n" "thr$n"); done
  configs+=(sw4 own4 shared4 md_own4 md_shared4 md_own1)
  local MPI_SHAPE=(-d 1 -l 0 -f "$ITEMS" -s 1)

  fd_config() {
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

  interleave fdtree fd_config "${configs[@]}"
  PHASES=(dir_create file_create file_remove dir_remove)
  {
    echo "## fdtree"
    echo
    produced "ITEMS=$ITEMS; mdtest: $MD_VERSION"
    echo
    echo "### 1, 2 and 4 ranks, one tree per rank (weak scaling), against the same work on threads"
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
    echo "### Phase-start skew (latest − earliest rank start after the barrier), ms"
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
    echo "### Stonewall (4 ranks, same trees, \`--stonewall\`)"
    echo
    echo "| phase | last-done rate | stonewall rate | stonewall / last-done | items counted at stonewall / all | lag (ms) |"
    echo "|---|---:|---:|---:|---:|---:|"
    for p in "${PHASES[@]}"; do
      r=$(med "sw4|$p.rate"); s=$(med "sw4|$p.stonewall_rate")
      echo "| $p | $(fmt "$r") | $(fmt "$s") | $(ratio "$s" "$r") | $(ratio "$(med "sw4|$p.stonewall_items")" "$(med "sw4|$p.items")") | $(ms "$(med "sw4|$p.stonewall_lag")") |"
    done
    echo
    echo "### Against mdtest: one directory of $ITEMS files of 4 KiB per rank, and one shared directory"
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
    echo "### Commands"
    echo
    echo '```'
    echo "mpiexec -n N fslab fdtree -o TMPFS ${TREE[*]} --no-store -q --json            # N = 1, 2, 4"
    echo "fslab fdtree -o TMPFS --threads N ${TREE[*]} --no-store -q --json"
    echo "mpiexec -n 4 fslab fdtree -o TMPFS ${TREE[*]} --stonewall --no-store -q --json"
    echo "mpiexec -n 4 fslab fdtree -o TMPFS -d 1 -l 0 -f $ITEMS -s 1 [--shared] --no-store -q --json"
    echo "mpiexec -n 4 mdtest -F -C -r -n $ITEMS -w 4096 -d TMPFS/mdtest [-u]"
    echo '```'
  } > "$WORK/part-fdtree.md"
}

# ------------------------------------------------------------------------------------------
part_iozone() {
  local IO="$T/io"
  ioz_fslab() { # name ranks (0: threads of one process, no MPI) workers size record
    local name=$1 n=$2 w=$3 size=$4 rec=$5 key val
    local launch=()
    [ "$n" -gt 0 ] && launch=(mpiexec -n "$n")
    rm -rf "$IO"; mkdir -p "$IO"
    while read -r key val; do add "$name|$key" "$val"; done < <(
      cd "$IO" && "${launch[@]}" "$FSLAB" iozone -t "$w" -s "$size" -r "$rec" -i 0 -i 1 --no-store --quiet --json | metrics_of_json)
    rm -rf "$IO"
  }
  ioz_anchor() { # name workers size record
    [ -n "$IOZ" ] || return 0
    local name=$1 w=$2 size=$3 rec=$4 key val out
    rm -rf "$IO"; mkdir -p "$IO"
    out=$(cd "$IO" && "$IOZ" -t "$w" -s "$size" -r "$rec" -i 0 -i 1 2>&1)
    while read -r key val; do add "$name|$key" "$val"; done < <(python3 -c '
import re, sys
phase = {"initial writers": "write", "rewriters": "rewrite", "readers": "read", "re-readers": "reread"}
for line in sys.stdin:
    m = re.search(r"(Children see|Parent sees) throughput for\s+\d+\s+(.+?)\s+=\s+([\d.]+)", line)
    if m and m.group(2).strip() in phase:
        kind = "children_sum" if m.group(1) == "Children see" else "parent"
        print(phase[m.group(2).strip()] + "." + kind, m.group(3))' <<<"$out")
    rm -rf "$IO"
  }
  io_config() {
    case "$1" in
      r1)     ioz_fslab r1 1 1 "$IOZ_SIZE" 1m ;;
      r4)     ioz_fslab r4 4 4 "$IOZ_SIZE" 1m ;;
      t4)     ioz_fslab t4 0 4 "$IOZ_SIZE" 1m ;;
      iz1)    ioz_anchor iz1 1 "$IOZ_SIZE" 1m ;;
      iz4)    ioz_anchor iz4 4 "$IOZ_SIZE" 1m ;;
      r4_4k)  ioz_fslab r4_4k 4 4 "$IOZ_SIZE_4K" 4k ;;
      t4_4k)  ioz_fslab t4_4k 0 4 "$IOZ_SIZE_4K" 4k ;;
      iz4_4k) ioz_anchor iz4_4k 4 "$IOZ_SIZE_4K" 4k ;;
    esac
  }
  interleave iozone io_config r1 r4 t4 iz1 iz4 r4_4k t4_4k iz4_4k

  local PH=(write rewrite read reread) p
  local iz_version
  iz_version=$([ -n "$IOZ" ] && "$IOZ" -v 2>/dev/null | grep -o 'Version \$Revision: [0-9.]*' | awk '{print $NF}' || true)
  {
    echo "## iozone -t"
    echo
    produced "IOZ_SIZE=$IOZ_SIZE, IOZ_SIZE_4K=$IOZ_SIZE_4K; IOzone ${iz_version:-not run}"
    echo
    echo "### 1 and 4 ranks, one $IOZ_SIZE file per rank, 1 MiB records (weak scaling)"
    echo
    echo "fslab's headline figure, the aggregate: all bytes of all ranks / (latest finish − earliest"
    echo "start), KiB/s. \"4 threads\" is \`fslab iozone -t 4\` without MPI (IOzone's \`-T\` semantics): the"
    echo "same four files, the same worker code, an in-process barrier instead of \`MPI_Barrier\`."
    echo
    echo "| phase | 1 rank | 4 ranks | 4 / 1 | 4 threads | 4 ranks / 4 threads |"
    echo "|---|---:|---:|---:|---:|---:|"
    for p in "${PH[@]}"; do
      a=$(med "r1|$p.aggregate"); b=$(med "r4|$p.aggregate"); c=$(med "t4|$p.aggregate")
      echo "| $p | $(fmt "$a") | $(fmt "$b") | $(ratio "$b" "$a") | $(fmt "$c") | $(ratio "$b" "$c") |"
    done
    echo
    echo "### IOzone's own figures against IOzone 3.414 (\`iozone -t N\`, processes)"
    echo
    echo "\"Children see\" (sum of the workers' rates, each over its own interval, stonewalled) and"
    echo "\"parent sees\", KiB/s, same sizes."
    echo
    echo "| phase | fslab 1 rank children | IOzone -t 1 children | ratio | fslab 4 ranks children | IOzone -t 4 children | ratio | fslab 4 ranks parent | IOzone -t 4 parent | ratio |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for p in "${PH[@]}"; do
      a=$(med "r1|$p.children_sum"); b=$(med "iz1|$p.children_sum")
      c=$(med "r4|$p.children_sum"); d=$(med "iz4|$p.children_sum")
      e=$(med "r4|$p.parent"); f=$(med "iz4|$p.parent")
      echo "| $p | $(fmt "$a") | $(fmt "$b") | $(ratio "$a" "$b") | $(fmt "$c") | $(fmt "$d") | $(ratio "$c" "$d") | $(fmt "$e") | $(fmt "$f") | $(ratio "$e" "$f") |"
    done
    echo
    echo "### 4 KiB records ($IOZ_SIZE_4K per rank): the notice poll every 16 records"
    echo
    echo "| phase | 4 ranks aggregate | 4 threads aggregate | ranks / threads | 4 ranks children | IOzone -t 4 children | ratio |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for p in "${PH[@]}"; do
      a=$(med "r4_4k|$p.aggregate"); b=$(med "t4_4k|$p.aggregate")
      c=$(med "r4_4k|$p.children_sum"); d=$(med "iz4_4k|$p.children_sum")
      echo "| $p | $(fmt "$a") | $(fmt "$b") | $(ratio "$a" "$b") | $(fmt "$c") | $(fmt "$d") | $(ratio "$c" "$d") |"
    done
    echo
    echo "### Phase-start skew and the tail, 4 ranks, ms"
    echo
    echo "Start skew: latest − earliest rank start after \`MPI_Barrier\`; finish skew: latest − earliest"
    echo "finish; stonewall lag: how late the last rank noticed that the first had finished."
    echo
    echo "| phase | start skew 1 MiB | start skew 4 KiB | finish skew 1 MiB | stonewall lag 1 MiB | stonewall lag 4 KiB | per-rank spread 1 MiB (%) |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for p in "${PH[@]}"; do
      echo "| $p | $(ms "$(med "r4|$p.start_skew")") | $(ms "$(med "r4_4k|$p.start_skew")") | $(ms "$(med "r4|$p.end_skew")") | $(ms "$(med "r4|$p.stonewall_lag")") | $(ms "$(med "r4_4k|$p.stonewall_lag")") | $(fmt "$(med "r4|$p.worker_spread")") |"
    done
    echo
    echo "### Commands"
    echo
    echo '```'
    echo "mpiexec -n N fslab iozone -t N -s $IOZ_SIZE -r 1m -i 0 -i 1 --no-store --quiet --json     # N = 1, 4 (in TMPFS/io)"
    echo "fslab iozone -t 4 -s $IOZ_SIZE -r 1m -i 0 -i 1 --no-store --quiet --json"
    echo "iozone -t N -s $IOZ_SIZE -r 1m -i 0 -i 1                                            # N = 1, 4"
    echo "mpiexec -n 4 fslab iozone -t 4 -s $IOZ_SIZE_4K -r 4k -i 0 -i 1 …; fslab iozone -t 4 -s $IOZ_SIZE_4K -r 4k …; iozone -t 4 -s $IOZ_SIZE_4K -r 4k -i 0 -i 1"
    echo '```'
  } > "$WORK/part-iozone.md"
}

# ------------------------------------------------------------------------------------------
part_dbench() {
  local D="$T/db" LF="$WORK/office.txt"
  "$FSLAB" dbench --generate "$LF" 2>/dev/null
  db_fslab() { # name ranks (0: threads of one process, no MPI) clients
    local name=$1 n=$2 c=$3 key val
    local launch=()
    [ "$n" -gt 0 ] && launch=(mpiexec -n "$n")
    rm -rf "$D"; mkdir -p "$D"
    while read -r key val; do add "$name|$key" "$val"; done < <(
      "${launch[@]}" "$FSLAB" dbench -c "$LF" -D "$D" -t "$DB_TIME" --no-store -q --json "$c" | metrics_of_json)
    rm -rf "$D"
  }
  db_anchor() { # name clients
    [ -n "$DBENCH" ] || return 0
    local name=$1 c=$2
    rm -rf "$D"; mkdir -p "$D"
    add "$name|total.throughput" "$("$DBENCH" -c "$LF" -D "$D" -t "$DB_TIME" "$c" 2>&1 | awk '/^Throughput/ {print $2}')"
    rm -rf "$D"
  }
  db_config() {
    case "$1" in
      r1c1) db_fslab r1c1 1 1 ;;
      r1c4) db_fslab r1c4 1 4 ;;
      r4c4) db_fslab r4c4 4 4 ;;
      t4)   db_fslab t4 0 4 ;;
      d1)   db_anchor d1 1 ;;
      d4)   db_anchor d4 4 ;;
    esac
  }
  interleave dbench db_config r1c1 r1c4 r4c4 t4 d1 d4

  {
    echo "## dbench"
    echo
    produced "DB_TIME=$DB_TIME s, warmup $(awk -v t="$DB_TIME" 'BEGIN { print t / 5 }') s; dbench $(dpkg-query -W -f='${Version}' dbench 2>/dev/null || echo 'not run')"
    echo
    echo "### 1 and 4 ranks; NCLIENTS counts the clients of all ranks"
    echo
    echo "fslab's default office load (\`fslab dbench --generate\`, the same file for every tool), on"
    echo "tmpfs. MB/s of ReadX/WriteX in the measured window (all ranks' bytes / the common window)."
    echo "\"threads\" is \`fslab dbench 4\` without MPI; dbench 4.0 runs its clients as processes."
    echo
    echo "| clients | 1 rank | 4 ranks | 4 ranks / 1 rank | threads, no MPI | 4 ranks / threads | dbench 4.0 | 4 ranks / dbench |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|"
    a=$(med "r1c1|total.throughput"); d=$(med "d1|total.throughput")
    echo "| 1 | $(fmt2 "$a") | – | – | – | – | $(fmt2 "$d") | – |"
    a=$(med "r1c4|total.throughput"); b=$(med "r4c4|total.throughput"); c=$(med "t4|total.throughput"); d=$(med "d4|total.throughput")
    echo "| 4 | $(fmt2 "$a") | $(fmt2 "$b") | $(ratio "$b" "$a") | $(fmt2 "$c") | $(ratio "$b" "$c") | $(fmt2 "$d") | $(ratio "$b" "$d") |"
    echo
    echo "Weak scaling, 1 client on 1 rank → 1 client on each of 4 ranks: $(ratio "$(med "r4c4|total.throughput")" "$(med "r1c1|total.throughput")")×."
    echo
    echo "### Start skew and per-rank spread, 4 ranks × 1 client"
    echo
    echo "| start skew (ms) | finish skew (ms) | per-rank MB/s spread (%) | per-rank MB/s min | max |"
    echo "|---:|---:|---:|---:|---:|"
    echo "| $(ms "$(med "r4c4|total.start_skew")") | $(ms "$(med "r4c4|total.end_skew")") | $(fmt "$(med "r4c4|total.rank_throughput_spread")") | $(fmt2 "$(med "r4c4|total.rank_throughput_min")") | $(fmt2 "$(med "r4c4|total.rank_throughput_max")") |"
    echo
    echo "### Commands"
    echo
    echo '```'
    echo "fslab dbench --generate office.txt"
    echo "mpiexec -n R fslab dbench -c office.txt -D TMPFS/db -t $DB_TIME --no-store -q --json C   # (R, C) = (1, 1), (1, 4), (4, 4)"
    echo "fslab dbench -c office.txt -D TMPFS/db -t $DB_TIME --no-store -q --json 4"
    echo "dbench -c office.txt -D TMPFS/db -t $DB_TIME C                                       # C = 1, 4"
    echo '```'
  } > "$WORK/part-dbench.md"
}

for p in $PARTS; do "part_$p"; done

# ------------------------------------------------------------------------------------------
# Assemble: parts measured now, the others as they were in the existing file.
old_part() { # name
  [ -f "$OUT" ] || return 0
  awk -v p="$1" '$0 == "<!-- part:" p " -->" {on=1; next} $0 == "<!-- /part:" p " -->" {on=0} on' "$OUT"
}
{
  echo "# MPI mode: aggregate rates and phase-start skew on tmpfs"
  echo
  echo "Three parts, each measured by \`bench/mpi.sh\` (\`PARTS=\"…\"\` reruns some and keeps the others);"
  echo "each says when, on what and under which load it was measured."
  for p in fdtree iozone dbench; do
    echo
    echo "<!-- part:$p -->"
    if [ -f "$WORK/part-$p.md" ]; then cat "$WORK/part-$p.md"; else old_part "$p"; fi
    echo "<!-- /part:$p -->"
  done
} > "$OUT.new"
mv "$OUT.new" "$OUT"
echo "wrote $OUT" >&2
