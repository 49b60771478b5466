#!/usr/bin/env bash
# bench/guest.sh: what a User-mode Linux guest costs and what its figures include (issues 16, 21).
#
#  1. Boot: `fslab doctor` boots a guest BOOTS times (with fslab's XSAVE shim where the host
#     needs it): the median time to the guest's init, and of the whole doctor run.
#  2. Per engine, host vs guest: one study with [guest] calibrate = ["ext4", "xfs"] and four
#     workloads (fdtree, dbench, IOzone, fio), REPS cold repetitions each. Its calibration
#     runs the same workloads on plain ext4 and xfs on the host and in the guest; the report's
#     guest_calibration gives, per headline metric, how many times slower the guest is and
#     how much of the host's xfs/ext4 difference the guest still shows.
#  3. The host's page cache: an IOzone write/read of a 1 GiB file in a 256 MiB guest with
#     cache = "none" and cache = "cold" (cold drops the guest's and the host's caches).
#
# Writes bench/results/guest-DATE.md. Needs root, user-mode-linux (scripts/install-deps
# --guest), fio, jq and sqlite3. The machine is shared: quote the ratios, not the times.
#
#   sudo bench/guest.sh                 BOOTS=5 REPS=3 by default
set -euo pipefail

BOOTS=${BOOTS:-5}
REPS=${REPS:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
FSLAB=${FSLAB:-$ROOT/target/release/fslab}
WORK=${WORK:-/var/tmp/fslab-bench-guest}
OUT=${OUT:-$HERE/results/guest-$(date -u +%Y-%m-%d).md}

[ "$(id -u)" -eq 0 ] || { echo "bench/guest.sh: needs root; run with sudo" >&2; exit 2; }
command -v linux.uml >/dev/null || { echo "bench/guest.sh: linux.uml missing; run scripts/install-deps --guest" >&2; exit 2; }
for t in jq sqlite3 bc; do
  command -v "$t" >/dev/null || { echo "bench/guest.sh: $t missing; apt-get install $t" >&2; exit 2; }
done
[ -x "$FSLAB" ] || (cd "$ROOT" && cargo build --release -q)

rm -rf "$WORK"; mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
DB="$WORK/bench.db"

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) exit; if (NR%2) m = a[(NR+1)/2]; else m = (a[NR/2]+a[NR/2+1])/2; printf "%.3f\n", m}'; }
now() { date +%s.%N; }

# 1. Boots, through fslab doctor (its guest.boot check carries the seconds to the init).
boots=(); walls=()
for i in $(seq "$BOOTS"); do
  t0=$(now)
  "$FSLAB" doctor --format json > "$WORK/doctor.json" 2>/dev/null || true
  walls+=("$(echo "$(now) - $t0" | bc)")
  boots+=("$(jq -r '.[] | select(.check == "guest.boot") | .seconds' "$WORK/doctor.json")")
done
BOOT=$(printf '%s\n' "${boots[@]}" | median)
DOCTOR=$(printf '%s\n' "${walls[@]}" | median)
XSAVE=$(jq -r '.[] | select(.check == "guest.xsave") | .detail' "$WORK/doctor.json")
VECTORS=$(jq -r '.[] | select(.check == "guest.vectors") | .detail' "$WORK/doctor.json")

# 2. Four engines, host vs guest, by the study's own calibration.
cat > "$WORK/engines.toml" <<EOF
name = "guest-engines"
[repetitions]
min = $REPS
cache = "cold"
[device]
data = "loop:2G"
[filesystem]
type = "ext4"
[guest]
kind = "uml"
mem = "1G"
calibrate = ["ext4", "xfs"]
[[workload]]
kind = "fdtree"
dirs = 10
files = 4
size_blocks = 1
levels = 3
[[workload]]
kind = "dbench"
clients = 2
duration = "10s"
[[workload]]
kind = "iozone"
file_size = "256m"
record_size = "64k"
tests = [0, 1, 2]
[[workload]]
kind = "fio"
label = "fio 4k randread, 1m write"
[workload.job.global]
ioengine = "psync"
size = "128m"
filename = "data"
time_based = 1
runtime = 3
[workload.job.1-randread]
rw = "randread"
bs = "4k"
direct = 1
[workload.job.2-write]
rw = "write"
bs = "1m"
stonewall = 1
EOF
t0=$(now)
"$FSLAB" --db "$DB" study run -q "$WORK/engines.toml" --workdir "$WORK/wd" > /dev/null 2> "$WORK/engines.err" \
  || { cat "$WORK/engines.err" >&2; exit 1; }
ENGINES_WALL=$(echo "$(now) - $t0" | bc)
"$FSLAB" --db "$DB" report guest-engines --format json > "$WORK/engines.json"
slowdowns() { # workload label prefix -> each headline metric's guest slowdown on ext4
  jq -r --arg k "$1" '.guest_calibration.rows[] | select(.fs == "ext4")
    | select(.workload | startswith($k)) | .slower' "$WORK/engines.json"
}
kept() { # workload label prefix -> share of the host's xfs/ext4 difference the guest shows
  jq -r --arg k "$1" '.guest_calibration.ratios[] | select(.workload | startswith($k))
    | select((.host_ratio | log | fabs) > 0.05)
    | ((.guest_ratio | log) / (.host_ratio | log))' "$WORK/engines.json"
}
ENGINE_ROWS=""
for k in fdtree dbench iozone fio; do
  vals=$(slowdowns "$k")
  n=$(printf '%s\n' "$vals" | grep -c . || true)
  if [ "$n" -eq 0 ]; then ENGINE_ROWS+="| $k | 0 | - | - | - |"$'\n'; continue; fi
  med=$(printf '%s\n' "$vals" | median)
  lo=$(printf '%s\n' "$vals" | sort -g | head -1); hi=$(printf '%s\n' "$vals" | sort -g | tail -1)
  kk=$(kept "$k" | median); [ -n "$kk" ] && kk=$(printf '%.2f' "$kk") || kk="-"
  ENGINE_ROWS+="| $k | $n | $(printf '%.2f' "$med")× | $(printf '%.2f' "$lo")–$(printf '%.2f' "$hi")× | $kk |"$'\n'
done

q() { sqlite3 "$DB" "$1"; }
# 3. The host's page cache under a 256 MiB guest.
iostudy() { # name cache
  cat <<EOF
name = "$1"
[repetitions]
min = 2
cache = "$2"
[device]
data = "loop:2G"
[filesystem]
type = "ext4"
[[workload]]
kind = "iozone"
file_size = "1g"
record_size = "1m"
tests = [0, 1]
EOF
}
iostudy io-none none > "$WORK/io-none.toml"
iostudy io-cold cold > "$WORK/io-cold.toml"
"$FSLAB" --db "$DB" study run -q --guest uml:256M "$WORK/io-none.toml" --workdir "$WORK/wd" >/dev/null
"$FSLAB" --db "$DB" study run -q --guest uml:256M "$WORK/io-cold.toml" --workdir "$WORK/wd" >/dev/null
io() { # study phase -> median KiB/s
  q "SELECT s.value FROM sample s JOIN trial t ON t.id = s.trial_id JOIN cell c ON c.id = t.cell_id
     JOIN study st ON st.id = c.study_id WHERE st.name = '$1' AND t.status = 'ok'
     AND s.phase = '$2' AND s.metric = 'throughput'" | median
}
mib() { if [ -n "$1" ]; then echo "scale=0; $1 / 1024" | bc; else echo "-"; fi; }

{
  echo "# User-mode Linux guest: cost and what its figures include"
  echo
  echo "Produced by \`sudo bench/guest.sh\` (BOOTS=$BOOTS, REPS=$REPS) on $(date -u +%Y-%m-%d) with"
  echo "$(linux.uml --version 2>/dev/null | head -1 || echo 'linux.uml') on host kernel $(uname -r),"
  echo "$(nproc) CPUs, load average at the end $(cut -d' ' -f1-3 /proc/loadavg). Release build."
  echo
  echo "| measure | value |"
  echo "|---|---:|"
  echo "| guest boot to its init (fslab doctor), median of $BOOTS | $(printf '%.2f' "$BOOT") s |"
  echo "| the whole \`fslab doctor\` with its guest, median of $BOOTS | $(printf '%.2f' "$DOCTOR") s |"
  echo "| XSAVE | $XSAVE |"
  echo "| vector registers in the guest | $VECTORS |"
  echo "| engines study with its calibration, wall time (one guest boot) | $(printf '%.0f' "$ENGINES_WALL") s |"
  echo "| 256 MiB guest, 1 GiB IOzone, cache none: write / read | $(mib "$(io io-none write)") / $(mib "$(io io-none read)") MiB/s |"
  echo "| the same, cache cold (guest and host caches dropped): write / read | $(mib "$(io io-cold write)") / $(mib "$(io io-cold read)") MiB/s |"
  echo
  echo "Host vs guest per engine: the study's [guest] calibrate, $REPS cold repetitions on each"
  echo "side. \"guest slower\" is host/guest for rates and guest/host for times, over the engine's"
  echo "headline metrics on ext4; \"kept\" is the median share of the host's xfs/ext4 difference"
  echo "the guest still shows (ln ratio guest / ln ratio host, metrics whose host difference"
  echo "exceeds 5%): 1 = kept, below 1 = compressed towards no difference."
  echo
  echo "| engine | metrics | guest slower, median | range | xfs/ext4 difference kept |"
  echo "|---|---:|---:|---:|---:|"
  printf '%s' "$ENGINE_ROWS"
  echo
  echo "The cold policy drops the guest's and the host's caches before each repetition; IOzone's"
  echo "read pass then reads what its write pass just wrote, which the 256 MiB guest cannot hold"
  echo "but the host's page cache does (ubd does buffered I/O on the image files). A guest's"
  echo "reads are device-bound only for data sets larger than the host's RAM; the report's"
  echo "page-cache warning counts the host's RAM for a guest study."
} > "$OUT"
cat "$OUT"
