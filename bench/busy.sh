#!/usr/bin/env bash
# bench/busy.sh: the README's main job on a machine loaded by another job (issue 35).
#
# Starts a competing load — one busy loop per CPU and an O_DIRECT writer on the work
# directory's file system — then runs examples/studies/quickstart.toml as the README does,
# and keeps what it printed before the study and its report's Observations and Warnings.
# On a loaded machine fslab should say the machine was busy (before it starts, in the
# warnings, in the inconclusive verdicts) and not that more repetitions would tell.
#
#   sudo bench/busy.sh            writes bench/results/busy-YYYY-MM-DD.md
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=${OUT:-$HERE/results/busy-$(date -u +%Y-%m-%d).md}
WORK=${WORK:-/var/tmp/fslab-bench-busy}
[ "$(id -u)" -eq 0 ] || { echo "bench/busy.sh: run as root (it makes loop devices)" >&2; exit 2; }

echo "building (release)" >&2
(cd "$ROOT" && cargo build --release -q --bin fslab)
FSLAB="$ROOT/target/release/fslab"
rm -rf "$WORK"
mkdir -p "$WORK"
pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -f "$WORK/hog"; }
trap stop EXIT
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  pids+=($!)
done
(while :; do dd if=/dev/zero of="$WORK/hog" bs=1M count=512 oflag=direct status=none; done) &
pids+=($!)
sleep 2
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date +%s)
"$FSLAB" study run -q --db "$WORK/busy.db" --workdir "$WORK/work" \
  "$ROOT/examples/studies/quickstart.toml" > "$WORK/report.txt" 2> "$WORK/stderr.txt" || true
T1=$(date +%s)
stop
trap - EXIT
section() { sed -n "/^== $1 ==/,/^== /p" "$WORK/report.txt" | sed '$d'; }
{
  echo "# The README's main job on a loaded machine ($(date -u +%Y-%m-%d))"
  echo
  echo "Command: \`sudo bench/busy.sh\`: $(nproc) busy loops (one per CPU) and an O_DIRECT writer"
  echo "on the work directory's file system, then \`fslab study run -q examples/studies/quickstart.toml\`"
  echo "($((T1 - T0)) s; load average $LOAD when it started)."
  echo
  echo "What it printed before the study (stderr):"
  echo
  echo '```'
  grep -v '^stored as' "$WORK/stderr.txt" | head -5
  echo '```'
  echo
  echo "The report's Observations and Warnings:"
  echo
  echo '```'
  section Observations
  section Warnings
  echo '```'
  echo
  echo "Lines asking for more repetitions: $(grep -c 'more repetitions would tell\|would narrow the interval' "$WORK/report.txt" || true);"
  echo "lines naming a busy machine: $(grep -c 'busy' "$WORK/report.txt" || true)."
  echo
  echo "Machine: Linux $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs."
} > "$OUT"
rm -rf "$WORK"
echo "wrote $OUT" >&2
