#!/usr/bin/env bash
# bench/telemetry.sh: the cost of phase-boundary telemetry (issue 12: < 1% of a 1 s phase).
#
# Makes an ext4 with an external journal on two direct-I/O loop devices over images in a
# private work directory (so the snapshot reads the lines of a data, a journal and a backing
# device plus a jbd2 info file, as in a study cell), then runs examples/telemetry_cost.rs on
# it: the time of one Snapshot::take and delta over ITERS repetitions, and a fixed 1 s CPU
# phase with and without telemetry in PAIRS interleaved pairs. Writes
# bench/results/telemetry.md. Needs root (losetup, mkfs, mount).
#
#   sudo bench/telemetry.sh              PAIRS=11 ITERS=2000 by default
#   PAIRS=21 sudo bench/telemetry.sh
set -euo pipefail

PAIRS=${PAIRS:-11}
ITERS=${ITERS:-2000}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
WORK=${WORK:-/var/tmp/fslab-bench-telemetry}
OUT=${OUT:-$HERE/results/telemetry.md}

[ "$(id -u)" -eq 0 ] || { echo "bench/telemetry.sh: needs root (losetup, mkfs, mount); run with sudo" >&2; exit 2; }

cleanup() {
  set +e
  mountpoint -q "$WORK/mnt" && umount "$WORK/mnt"
  for img in data.img jnl.img; do
    for d in $(losetup -n -O NAME -j "$WORK/$img" 2>/dev/null); do losetup -d "$d"; done
  done
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
cleanup
mkdir -p "$WORK/mnt"

echo "building the example (release)" >&2
(cd "$ROOT" && cargo build --release -q --example telemetry_cost)
BIN="$ROOT/target/release/examples/telemetry_cost"

truncate -s 1G "$WORK/data.img"
truncate -s 128M "$WORK/jnl.img"
DATA=$(losetup --find --show --direct-io=on "$WORK/data.img")
JNL=$(losetup --find --show --direct-io=on "$WORK/jnl.img")
mkfs.ext4 -q -F -O journal_dev -b 4096 "$JNL"
mkfs.ext4 -q -F -b 4096 -J device="$JNL" "$DATA"
mount "$DATA" "$WORK/mnt"

echo "measuring (ITERS=$ITERS, PAIRS=$PAIRS)" >&2
BODY=$("$BIN" "$WORK/mnt" "$PAIRS" "$ITERS")
{
  echo "# Telemetry at phase boundaries: cost"
  echo
  echo "Produced by \`sudo bench/telemetry.sh\` (PAIRS=$PAIRS, ITERS=$ITERS) on $(date -u +%Y-%m-%d)."
  echo "Machine: Linux $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs,"
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). The machine is shared with other"
  echo "work, so the 1 s phases vary by more than the telemetry costs; the per-boundary timing is"
  echo "the direct measurement. Release build of \`examples/telemetry_cost.rs\`; an ext4 with an"
  echo "external journal on direct-I/O loop devices, images on the root file system."
  echo
  echo "$BODY"
} > "$OUT"
cat "$OUT"
