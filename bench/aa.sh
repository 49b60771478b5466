#!/usr/bin/env bash
# bench/aa.sh: are fslab's conclusions calibrated? (issues 23, 35)
#
# 0. The default design (no root; issue 35): a study without `min` repeats by `detect =
#    "10%"` — n for 80% power at an assumed cv of 5%, each series going on by the runner's own
#    rule until its own spread gives that power. examples/aa.rs runs that rule over simulated
#    series and prints the power for a true 10% change at cv 5% (per comparison, before and
#    after the adjustment), the mean n, and the A/A rates with equal and unequal spreads.
#    PART=design runs this part only.
# 1. Simulated A/A and power (no root): examples/aa.rs runs the report's own statistics —
#    one model per comparison, the primary family, Benjamini–Hochberg across the report,
#    Observations — over SIMS simulated data sets per cell of a grid (normal and log-normal
#    noise, coefficient of variation 2–30% in every series, or each series its own from a
#    third to three times that with equal medians, n = 3–10, the families of the quickstart,
#    ext4-external-journal and fio-block-size studies) and prints the false-discovery rate of
#    Observations, and the power for a 10% effect at a cv of 5%.
# 2. A real A/A (root; skip with REAL=0): the quickstart run twice on this machine and
#    compared with `fslab compare A B`; on a quiet machine there is no Observation. Each
#    run's own warnings are listed too (the README's main job).
#
# Writes bench/results/aa-YYYY-MM-DD.md.
#
#   bench/aa.sh                    SIMS=1000 SEED=1, then the real A/A when root
#   SIMS=200 REAL=0 bench/aa.sh    a quick simulated run only
#   SIMS=0 bench/aa.sh             the real A/A only
#   PART=design REAL=0 bench/aa.sh  the default design only
set -euo pipefail

SIMS=${SIMS:-1000}
SEED=${SEED:-1}
REAL=${REAL:-1}
PART=${PART:-all}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=${OUT:-$HERE/results/aa-$(date -u +%Y-%m-%d).md}
WORK=${WORK:-/var/tmp/fslab-bench-aa}

echo "building (release)" >&2
(cd "$ROOT" && cargo build --release -q --example aa --bin fslab)
SIM="(simulation not run: SIMS=0)"
if [ "$SIMS" != 0 ]; then
  SIM=$("$ROOT/target/release/examples/aa" "$SIMS" "$SEED" "$PART")
fi

REAL_BODY="Not run (REAL=0, or not root)."
if [ "$REAL" = 1 ] && [ "$(id -u)" -eq 0 ]; then
  rm -rf "$WORK"
  mkdir -p "$WORK"
  FSLAB="$ROOT/target/release/fslab"
  DB="$WORK/aa.db"
  for side in A B; do
    echo "real A/A: quickstart, side $side" >&2
    "$FSLAB" study run -q --db "$DB" --workdir "$WORK/work" "$ROOT/examples/studies/quickstart.toml" \
      > "$WORK/run-$side.txt" 2>&1
  done
  "$FSLAB" compare --db "$DB" 1 2 > "$WORK/compare.txt"
  OBS=$(sed -n '/^== Observations ==/,/^== /p' "$WORK/compare.txt" | grep -c '^- ' || true)
  WARN=$(sed -n '/^== Warnings ==/,/^== /p' "$WORK/compare.txt" | grep -v '^==' | grep -v '^$' || true)
  START=$(sed -n '/^== Observations ==/,/^== /p' "$WORK/compare.txt" | sed '1d;$d')
  # Each run's own report: the README's main job, whose warnings on a quiet machine should
  # be none.
  OWN=""
  for side in A B; do
    W=$(sed -n '/^== Warnings ==/,/^== /p' "$WORK/run-$side.txt" | grep -v '^==' | grep -v '^$' || true)
    OWN=$(printf '%s\n\n%s\n\n%s\n%s\n%s\n' "$OWN" "Warnings of run $side's own report ($(grep -c '^- ' <<<"$W" || true) lines):" '```' "${W:-(none)}" '```')
  done
  REAL_BODY=$(printf '%s\n' \
    "\`fslab study run examples/studies/quickstart.toml\` twice into one database, then" \
    "\`fslab compare 1 2\` (release build; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))." \
    "" \
    "Observations: **$OBS**." \
    "" '```' "$START" '```' "" "Warnings of the comparison:" "" '```' "$WARN" '```' "$OWN")
  rm -rf "$WORK"
fi

{
  echo "$SIM"
  echo
  echo "## Real A/A: the quickstart twice on this machine"
  echo
  echo "$REAL_BODY"
  echo
  echo "Machine: Linux $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; $(date -u +%Y-%m-%d)."
} > "$OUT"
echo "wrote $OUT" >&2
