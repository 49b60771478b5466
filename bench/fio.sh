#!/usr/bin/env bash
# fslab fio against a plain shell loop of fio, side by side on the same ext4 loop mount, and
# the stored numbers against fio's own JSON of the same runs.
#
#   sudo bench/fio.sh                       # 5 rounds × 10 repetitions
#   ROUNDS=3 REPS=5 sudo -E bench/fio.sh
#
# fio measures itself, so fslab cannot change fio's figures; what fslab adds is wall time
# between repetitions (starting, the cache drop, reading and storing the JSON). Per round:
#   A  fslab fio --repeat REPS --cache drop -q (store in a scratch database)
#   B  for i in 1..REPS: mkdir D; sync; echo 3 > drop_caches; fio --output-format=json+
#      --directory=D JOB > out.json; rm -rf D            (what fslab does, by hand)
# in alternating order. Reported: wall seconds per repetition of each, medians over rounds,
# the ratio and the difference per repetition (fslab's overhead), and the median of the
# per-round differences. Each round also times `fslab fio --repeat 1` against one plain fio
# run (what fslab costs once per command: start, fio --parse-only, the environment). Then
# fidelity: one `fslab fio --repeat 3 --json` run whose stored
# samples (read back with `fslab export --raw`) are compared with fio's own JSON of the same
# repetitions (the document carries it): IOPS, bandwidth, runtime, bytes, I/O counts,
# latency mean/min/max and every stored percentile, CPU and disk util — each must be equal.
#
# Writes bench/results/fio-<date>.md (OUT= to choose). Needs root (loop device, mount,
# drop_caches), fio (scripts/install-deps), python3.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
REPS=${REPS:-10}
IMAGE_SIZE=${IMAGE_SIZE:-2G}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/bench/results/fio-$(date -u +%Y-%m-%d).md}

die() { echo "bench/fio.sh: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || die "needs root (loop device, mount, drop_caches); run with sudo"
command -v fio >/dev/null || die "fio is not installed; run scripts/install-deps"
command -v python3 >/dev/null || die "python3 is missing; apt-get install python3"

(cd "$here" && cargo build --release --quiet) || die "cargo build --release failed"
FSLAB=${CARGO_TARGET_DIR:-$here/target}/release/fslab
rev=$(cd "$here" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(cd "$here" && git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)
mkdir -p "$(dirname "$out")"

work=$(mktemp -d /var/tmp/fslab-fio-bench.XXXXXX)
loop=""
cleanup() {
  set +e
  mountpoint -q "$work/mnt" && umount "$work/mnt"
  [ -n "$loop" ] && losetup -d "$loop"
  rm -rf "$work"
}
trap cleanup EXIT

truncate -s "$IMAGE_SIZE" "$work/img"
loop=$(losetup --find --show --direct-io=on "$work/img")
mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
mkdir "$work/mnt"
mount -o noatime "$loop" "$work/mnt"

# A short job, so the time between repetitions is a visible share: 4 KiB random reads and
# 1 MiB sequential writes, 32 MiB each.
job=$work/bench.fio
cat >"$job" <<'EOF'
[global]
ioengine=psync
size=32m

[randread]
rw=randread
bs=4k

[seqwrite]
stonewall
rw=write
bs=1m
end_fsync=1
EOF

now() { date +%s.%N; }
db=$work/results.db

# Seconds per repetition of N repetitions, with the cache action (drop or none).
run_fslab() {
  local t0 t1 n=$1 cache=${2:-drop}
  t0=$(now)
  "$FSLAB" --db "$db" fio -q --no-store --repeat "$n" --cache "$cache" -D "$work/mnt" "$job" >/dev/null
  t1=$(now)
  echo "$t0 $t1" | awk -v n="$n" '{ printf "%.4f", ($2 - $1) / n }'
}

run_plain() {
  local t0 t1 i n=$1 cache=${2:-drop}
  t0=$(now)
  for i in $(seq "$n"); do
    mkdir "$work/mnt/plain"
    if [ "$cache" = drop ]; then
      sync
      echo 3 >/proc/sys/vm/drop_caches
    fi
    fio --output-format=json+ --directory="$work/mnt/plain" "$job" >"$work/plain.json"
    rm -rf "$work/mnt/plain"
  done
  t1=$(now)
  echo "$t0 $t1" | awk -v n="$n" '{ printf "%.4f", ($2 - $1) / n }'
}

fslab_s=()
plain_s=()
fslab1_s=()
plain1_s=()
fslabn_s=()
plainn_s=()
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) -eq 1 ]; then
    a=$(run_fslab "$REPS"); b=$(run_plain "$REPS")
    an=$(run_fslab "$REPS" none); bn=$(run_plain "$REPS" none)
    a1=$(run_fslab 1); b1=$(run_plain 1)
  else
    b=$(run_plain "$REPS"); a=$(run_fslab "$REPS")
    bn=$(run_plain "$REPS" none); an=$(run_fslab "$REPS" none)
    b1=$(run_plain 1); a1=$(run_fslab 1)
  fi
  fslab_s+=("$a"); plain_s+=("$b"); fslab1_s+=("$a1"); plain1_s+=("$b1")
  fslabn_s+=("$an"); plainn_s+=("$bn")
  echo "round $r: drop: fslab $a s/rep, fio loop $b s/rep; none: fslab $an, fio loop $bn; one run: fslab $a1 s, fio $b1 s" >&2
done

# Fidelity: stored samples against fio's own document of the same repetitions.
"$FSLAB" --db "$db" fio -q --repeat 3 --cache drop --json -D "$work/mnt" "$job" >"$work/run.json"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$work/run.json")
"$FSLAB" --db "$db" export "$id" --raw --format json >"$work/export.json"
fidelity=$(python3 - "$work/run.json" "$work/export.json" "$(basename "$loop")" <<'EOF'
import json, sys
run = json.load(open(sys.argv[1]))
# fslab stores the disk under the target as `data` (the same name in every configuration).
data_disk = sys.argv[3]
samples = json.load(open(sys.argv[2]))["samples"]
stored = {}
for s in samples:
    stored[(s["repetition"], s["phase"], s["metric"])] = s["value"]
checked = mismatched = 0
bad = []
def check(rep, phase, metric, want):
    global checked, mismatched
    got = stored.get((rep, phase, metric))
    checked += 1
    if got is None or got != want:
        mismatched += 1
        bad.append(f"rep {rep} {phase}.{metric}: stored {got} fio {want}")
pcts = {"50.000000": "p50", "90.000000": "p90", "99.000000": "p99",
        "99.900000": "p99_9", "99.990000": "p99_99"}
for rep, doc in enumerate(run["fio_json"], start=1):
    for j in doc["jobs"]:
        name = j["jobname"]
        for d in ("read", "write", "trim"):
            x = j.get(d)
            if not x or x["total_ios"] == 0:
                continue
            ph = f"{name}/{d}"
            check(rep, ph, "iops", x["iops"])
            check(rep, ph, "throughput", x["bw_bytes"] / 1024)
            check(rep, ph, "elapsed", x["runtime"] / 1e3)
            check(rep, ph, "io_bytes", x["io_bytes"])
            check(rep, ph, "total_ios", x["total_ios"])
            for lat in ("slat", "clat", "lat"):
                l = x[f"{lat}_ns"]
                if l["N"] == 0:
                    continue
                for k in ("mean", "min", "max"):
                    check(rep, ph, f"{lat}_{k}", l[k] / 1e6)
                for k, n in pcts.items():
                    if k in l.get("percentile", {}):
                        check(rep, ph, f"{lat}_{n}", l["percentile"][k] / 1e6)
        check(rep, name, "usr_cpu", j["usr_cpu"])
        check(rep, name, "sys_cpu", j["sys_cpu"])
    for du in doc.get("disk_util", []):
        name = "data" if du["name"] == data_disk else du["name"]
        check(rep, "disk_util", name, du["util"])
versions = sorted({d["fio version"] for d in run["fio_json"]})
print(f"{checked} {mismatched} {' '.join(versions)}")
for b in bad[:10]:
    print(b, file=sys.stderr)
EOF
)
read -r checked mismatched fio_version <<<"$fidelity"

stats() {
  python3 - "$1" "$2" <<'EOF'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
diffs = [x - y for x, y in zip(a, b)]
ma, mb = statistics.median(a), statistics.median(b)
print(f"{ma:.4f} {mb:.4f} {ma / mb:.4f} {(ma - mb) * 1000:.1f} {statistics.median(diffs) * 1000:.1f} {min(diffs) * 1000:.1f} {max(diffs) * 1000:.1f}")
EOF
}
read -r med_a med_b ratio diff_ms med_diff_ms min_diff_ms max_diff_ms <<<"$(stats "${fslab_s[*]}" "${plain_s[*]}")"
read -r med_an med_bn ration diffn_ms med_diffn_ms min_diffn_ms max_diffn_ms <<<"$(stats "${fslabn_s[*]}" "${plainn_s[*]}")"
read -r med_a1 med_b1 ratio1 diff1_ms med_diff1_ms min_diff1_ms max_diff1_ms <<<"$(stats "${fslab1_s[*]}" "${plain1_s[*]}")"

{
  echo "# fslab fio vs a plain fio loop"
  echo
  echo "Produced by \`bench/fio.sh\` (ROUNDS=$ROUNDS REPS=$REPS IMAGE_SIZE=$IMAGE_SIZE), $(date -u +%Y-%m-%dT%H:%M:%SZ)."
  echo
  echo "- fio: $fio_version (Debian package); fslab: $rev$dirty, release build."
  echo "- File system: ext4 (mkfs.ext4 defaults, noatime) on a $IMAGE_SIZE loop image (direct I/O) in /var/tmp, kernel $(uname -r)."
  echo "- Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs. Load average after: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "- Job: 32 MiB of 4 KiB random reads, then (stonewall) 32 MiB of 1 MiB sequential writes with end_fsync, psync."
  echo "- A: \`fslab fio -q --no-store --repeat $REPS --cache drop -D MNT bench.fio\`"
  echo "- B: \`for i in 1..$REPS: mkdir D; sync; echo 3 > /proc/sys/vm/drop_caches; fio --output-format=json+ --directory=D bench.fio > out.json; rm -rf D\`"
  echo "- Rounds alternate the order (A then B, B then A)."
  echo
  echo "## Wall time per repetition, caches dropped before each"
  echo
  echo "| | seconds per repetition (each round) | median |"
  echo "|---|---|---:|"
  echo "| fslab fio | ${fslab_s[*]} | $med_a |"
  echo "| plain fio loop | ${plain_s[*]} | $med_b |"
  echo
  echo "Ratio of medians (fslab / plain): **$ratio**; difference of medians: **$diff_ms ms per repetition**; per-round differences (fslab − plain): median $med_diff_ms ms, from $min_diff_ms to $max_diff_ms ms."
  echo
  echo "## Without the cache drop (--cache none against the loop without sync/drop_caches)"
  echo
  echo "The cache drop makes every repetition re-read fio's binary and libraries from disk, which is noisy on a shared disk; without it the difference is fslab's own work between repetitions."
  echo
  echo "| | seconds per repetition (each round) | median |"
  echo "|---|---|---:|"
  echo "| fslab fio --cache none | ${fslabn_s[*]} | $med_an |"
  echo "| plain fio loop | ${plainn_s[*]} | $med_bn |"
  echo
  echo "Ratio of medians: **$ration**; difference of medians: **$diffn_ms ms per repetition**; per-round differences: median $med_diffn_ms ms, from $min_diffn_ms to $max_diffn_ms ms."
  echo
  echo "## One run (--repeat 1 against a single fio)"
  echo
  echo "This includes what fslab does once per command: starting, \`fio --parse-only\` of the job, capturing the environment."
  echo
  echo "| | seconds (each round) | median |"
  echo "|---|---|---:|"
  echo "| fslab fio --repeat 1 | ${fslab1_s[*]} | $med_a1 |"
  echo "| one plain fio run | ${plain1_s[*]} | $med_b1 |"
  echo
  echo "Ratio of medians: **$ratio1**; difference of medians: **$diff1_ms ms**; per-round differences: median $med_diff1_ms ms, from $min_diff1_ms to $max_diff1_ms ms."
  echo
  echo "## Stored numbers against fio's own JSON"
  echo
  echo "\`fslab fio -q --repeat 3 --cache drop --json -D MNT bench.fio\`, then \`fslab export ID --raw --format json\`:"
  echo "$checked stored values compared with fio's JSON of the same repetitions (IOPS, bw_bytes/1024, runtime, io_bytes, total_ios, slat/clat/lat mean/min/max and percentiles p50–p99.99, usr/sys CPU, disk util): **$mismatched differ**."
} >"$out"
echo "wrote $out" >&2
cat "$out"
[ "$mismatched" -eq 0 ] || die "$mismatched stored values differ from fio's JSON"
