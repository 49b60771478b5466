#!/usr/bin/env bash
# bench/guest.sh: what a User-mode Linux guest costs and what its figures include (issue 16).
#
#  1. Boot and teardown: a guest that halts at once (BOOTS runs), and the wall time a study
#     run with --guest spends beyond its repetitions.
#  2. The same small ext4 fdtree study (cold cache, REPS repetitions) on the host (loop
#     devices) and in the guest (ubd devices): wall time per repetition and the file_create
#     rate, guest/host.
#  3. The host's page cache: an IOzone write/read of a 1 GiB file in a 256 MiB guest with
#     cache = "none" and cache = "cold" (cold drops the guest's and the host's caches).
#
# Writes bench/results/guest-DATE.md. Needs root and user-mode-linux (scripts/install-deps
# --guest). The machine is shared: quote the ratios, not the absolute times.
#
#   sudo bench/guest.sh                 BOOTS=5 REPS=5 by default
set -euo pipefail

BOOTS=${BOOTS:-5}
REPS=${REPS:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
FSLAB=${FSLAB:-$ROOT/target/release/fslab}
WORK=${WORK:-/var/tmp/fslab-bench-guest}
OUT=${OUT:-$HERE/results/guest-$(date -u +%Y-%m-%d).md}

[ "$(id -u)" -eq 0 ] || { echo "bench/guest.sh: needs root; run with sudo" >&2; exit 2; }
command -v linux.uml >/dev/null || { echo "bench/guest.sh: linux.uml missing; run scripts/install-deps --guest" >&2; exit 2; }
[ -x "$FSLAB" ] || (cd "$ROOT" && cargo build --release -q)

rm -rf "$WORK"; mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
DB="$WORK/bench.db"

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) exit; if (NR%2) m = a[(NR+1)/2]; else m = (a[NR/2]+a[NR/2+1])/2; printf "%.3f\n", m}'; }
now() { date +%s.%N; }

# 1. A guest that halts at once.
cat > "$WORK/halt" <<'EOF'
#!/bin/sh
halt -f >/dev/null 2>&1
EOF
chmod +x "$WORK/halt"
boots=()
for i in $(seq "$BOOTS"); do
  t0=$(now)
  linux.uml quiet loglevel=0 mem=512M root=/dev/root rootfstype=hostfs rootflags=/ rw \
    ubd0=/dev/null init="$WORK/halt" con=null con0=null,fd:1 </dev/null >/dev/null 2>&1 || true
  boots+=("$(echo "$(now) - $t0" | bc)")
done
BOOT=$(printf '%s\n' "${boots[@]}" | median)

# 2. One ext4 cell, host and guest.
study() { # name
  cat <<EOF
name = "$1"
[repetitions]
min = $REPS
cache = "cold"
[device]
data = "loop:1G"
[filesystem]
type = "ext4"
[[workload]]
kind = "fdtree"
dirs = 4
files = 20
size_blocks = 1
levels = 3
EOF
}
study host-ext4 > "$WORK/host.toml"
study guest-ext4 > "$WORK/guest.toml"
t0=$(now); "$FSLAB" --db "$DB" study run -q "$WORK/host.toml" --workdir "$WORK/wd" >/dev/null; HOST_WALL=$(echo "$(now) - $t0" | bc)
t0=$(now); "$FSLAB" --db "$DB" study run -q --guest uml:512M "$WORK/guest.toml" --workdir "$WORK/wd" >/dev/null; GUEST_WALL=$(echo "$(now) - $t0" | bc)

q() { sqlite3 "$DB" "$1"; }
rate() { # study name -> median file_create rate
  q "SELECT s.value FROM sample s JOIN trial t ON t.id = s.trial_id JOIN cell c ON c.id = t.cell_id
     JOIN study st ON st.id = c.study_id WHERE st.name = '$1' AND t.status = 'ok'
     AND s.phase = 'file_create' AND s.metric = 'rate'" | median
}
reps_wall() { # study name -> sum of the repetitions' wall seconds
  q "SELECT SUM(t.wall_seconds) FROM trial t JOIN cell c ON c.id = t.cell_id JOIN study st ON st.id = c.study_id
     WHERE st.name = '$1'"
}
HOST_RATE=$(rate host-ext4); GUEST_RATE=$(rate guest-ext4)
HOST_REPS=$(reps_wall host-ext4); GUEST_REPS=$(reps_wall guest-ext4)

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
  echo "| boot + halt of an empty guest, median of $BOOTS | $(printf '%.2f' "$BOOT") s |"
  echo "| ext4 fdtree study, $REPS cold repetitions: wall time on the host | $(printf '%.1f' "$HOST_WALL") s |"
  echo "| the same in the guest (boot, provisioning, repetitions, teardown) | $(printf '%.1f' "$GUEST_WALL") s |"
  echo "| repetitions' own wall time, host / guest (sum) | $(printf '%.1f' "$HOST_REPS") s / $(printf '%.1f' "$GUEST_REPS") s |"
  echo "| per repetition, guest − host | $(printf '%.2f' "$(echo "scale=3; ($GUEST_REPS - $HOST_REPS) / $REPS" | bc)") s |"
  echo "| file_create rate, host / guest (medians) | $(printf '%.0f' "$HOST_RATE") / $(printf '%.0f' "$GUEST_RATE") files/s = $(echo "scale=1; $HOST_RATE / $GUEST_RATE" | bc)× |"
  echo "| 256 MiB guest, 1 GiB IOzone, cache none: write / read | $(mib "$(io io-none write)") / $(mib "$(io io-none read)") MiB/s |"
  echo "| the same, cache cold (guest and host caches dropped): write / read | $(mib "$(io io-cold write)") / $(mib "$(io io-cold read)") MiB/s |"
  echo
  echo "The cold policy drops the guest's and the host's caches before each repetition; IOzone's"
  echo "read pass then reads what its write pass just wrote, which the 256 MiB guest cannot hold"
  echo "but the host's page cache does (ubd does buffered I/O on the image files). A guest's"
  echo "reads are device-bound only for data sets larger than the host's RAM; the report's"
  echo "page-cache warning counts the host's RAM for a guest study."
} > "$OUT"
cat "$OUT"
