#!/usr/bin/env bash
# fslab dbench against dbench 4.0, side by side on the same ext4 loop mount.
#
#   sudo bench/dbench.sh                 # 5 rounds × {1,4,16} clients × 30 s, both tools
#   ROUNDS=3 TIME=20 CLIENTS="1 4" sudo -E bench/dbench.sh
#   BENCH_NICE=0 sudo -E bench/dbench.sh   # no scheduling boost (see below)
#
# Same loadfile (Debian's /usr/share/dbench/client.txt, read at run time, never copied into
# the repository), same run time (-t, warmup = t/5 for both, dbench 4.0's fixed rule), same
# file system. Runs are interleaved: in every round each client count runs dbench and fslab
# back to back, the order alternating between rounds. Before every run the client tree is
# removed, dirty data is synced and the page cache dropped, so neither tool inherits the
# other's cache. Reported: every run, medians, ratio of medians (fslab / dbench) and the
# median of the per-round ratios; then a syscall profile (strace -c, 1 client) per 1000
# loadfile lines, which shows whether both tools put the same work on the file system.
#
# Shared machines: the script runs in its own session and gives that session's scheduler
# autogroup the nice value BENCH_NICE (default -10, about 9× the CPU weight of another
# session), so neighbours' jobs disturb both tools less. Both tools get the same treatment;
# BENCH_NICE=0 turns it off. Per run it also records the CPU time (user+sys) each tool used.
#
# Writes bench/results/dbench.md. Needs root (loop device, mount, drop_caches), dbench
# (scripts/install-deps --bench), strace for the profile (skipped when absent).
set -euo pipefail

ROUNDS=${ROUNDS:-5}
TIME=${TIME:-30}
CLIENTS=${CLIENTS:-"1 4 16"}
IMAGE_SIZE=${IMAGE_SIZE:-4G}
LOADFILE=${LOADFILE:-/usr/share/dbench/client.txt}
SYSCALLS=${SYSCALLS:-1}
BENCH_NICE=${BENCH_NICE:--10}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$here/bench/results/dbench.md}

die() { echo "bench/dbench.sh: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || die "needs root (loop device, mount, drop_caches); run with sudo"
command -v dbench >/dev/null || die "dbench is not installed; run scripts/install-deps --bench"
[ -r "$LOADFILE" ] || die "$LOADFILE is missing; run scripts/install-deps --bench (Debian's dbench package ships it)"

command -v /usr/bin/time >/dev/null || die "/usr/bin/time is missing; run scripts/install-deps --bench"

if [ "$BENCH_NICE" != 0 ] && [ -z "${FSLAB_BENCH_SESSION:-}" ]; then
  FSLAB_BENCH_SESSION=1 exec setsid --wait "$0" "$@"
fi
if [ "$BENCH_NICE" != 0 ]; then
  echo "$BENCH_NICE" >/proc/self/autogroup || die "cannot set the autogroup nice value; use BENCH_NICE=0"
fi

(cd "$here" && cargo build --release --quiet) || die "cargo build --release failed"
FSLAB=$here/target/release/fslab
rev=$(cd "$here" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(cd "$here" && git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)
mkdir -p "$(dirname "$out")"

work=$(mktemp -d /var/tmp/fslab-dbench-bench.XXXXXX)
loop=""
cleanup() {
  set +e
  mountpoint -q "$work/mnt" && umount "$work/mnt"
  [ -n "$loop" ] && losetup -d "$loop"
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
truncate -s "$IMAGE_SIZE" "$work/ext4.img"
loop=$(losetup -f --show "$work/ext4.img")
mkfs.ext4 -q -F "$loop"
mkdir "$work/mnt"
mount "$loop" "$work/mnt"
mnt=$work/mnt

fresh() {
  rm -rf "$mnt/clients"
  sync
  echo 3 >/proc/sys/vm/drop_caches
}

# Each prints "MB/s CPU-seconds": the tool's own "Throughput X MB/sec" line and the user+sys
# time of the whole run (warmup, parsing and cleanup included).
run_dbench() {
  fresh
  /usr/bin/time -f "%U %S" -o "$work/time" dbench -c "$LOADFILE" -D "$mnt" -t "$TIME" "$1" >"$work/out" 2>&1 || true
  echo "$(awk '/^Throughput/ {print $2}' "$work/out") $(awk '{printf "%.2f", $1 + $2}' "$work/time")"
}
run_fslab() {
  fresh
  /usr/bin/time -f "%U %S" -o "$work/time" "$FSLAB" dbench -c "$LOADFILE" -D "$mnt" -t "$TIME" -q --no-store "$1" >"$work/out" 2>&1 || true
  echo "$(awk '/^Throughput/ {print $2}' "$work/out") $(awk '{printf "%.2f", $1 + $2}' "$work/time")"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

declare -A res cpu
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date -u +%FT%TZ)
for r in $(seq 1 "$ROUNDS"); do
  for n in $CLIENTS; do
    if [ $((r % 2)) -eq 1 ]; then order="dbench fslab"; else order="fslab dbench"; fi
    for tool in $order; do
      read -r v c <<<"$(run_$tool "$n")"
      [ -n "$v" ] && [ -n "$c" ] || { cat "$work/out" >&2; die "$tool with $n clients printed no throughput"; }
      res[$tool,$n]+="$v "
      cpu[$tool,$n]+="$c "
      echo "round $r/$ROUNDS  $n clients  $tool  $v MB/s  $c CPU-s  load $(cut -d' ' -f1 /proc/loadavg)" >&2
    done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

profile=""
if [ "$SYSCALLS" = 1 ] && command -v strace >/dev/null; then
  # Syscalls per 1000 loadfile lines, 1 client, 10 s: the last progress line gives the lines.
  for tool in dbench fslab; do
    fresh
    if [ $tool = dbench ]; then
      strace -f -c -o "$work/strace.$tool" dbench -c "$LOADFILE" -D "$mnt" -t 10 1 >"$work/out.$tool" 2>&1
      # dbench calls kill(parent, 0) once per loadfile line it reads: an exact line count.
      lines=$(awk '$NF == "kill" {print $4}' "$work/strace.$tool")
    else
      strace -f -c -o "$work/strace.$tool" "$FSLAB" dbench -c "$LOADFILE" -D "$mnt" -t 10 --no-store --json -q 1 >"$work/out.$tool" 2>&1
      lines=$(grep -o '"total_lines": [0-9]*' "$work/out.$tool" | awk '{print $2}')
    fi
    [ -n "$lines" ] && [ "$lines" -gt 0 ] || die "no line count for the $tool syscall profile"
    awk -v L="$lines" 'NF >= 5 && $4 ~ /^[0-9]+$/ && $NF != "total" {printf "%s %.1f\n", $NF, 1000*$4/L}' \
      "$work/strace.$tool" | sort >"$work/per1000.$tool"
  done
  profile=$(join -a1 -a2 -e 0 -o 0,1.2,2.2 "$work/per1000.dbench" "$work/per1000.fslab" |
    awk '$2 >= 1 || $3 >= 1' | sort -k2 -g -r |
    awk '{printf "| %s | %s | %s |\n", $1, $2, $3}')
fi
# fslab's own cost per operation: a loadfile of QUERY_FS_INFORMATION lines (one fstatvfs
# each) replayed by 1 client, against a bare C loop of fstatvfs on the same directory.
overhead=""
if command -v cc >/dev/null; then
  cat >"$work/bare.c" <<'EOF_C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <time.h>
int main(int argc, char **argv) {
  int fd = open(argv[1], O_RDONLY | O_DIRECTORY);
  double secs = atof(argv[2]);
  struct timespec a, b;
  struct statvfs st;
  unsigned long n = 0;
  if (fd < 0) { perror(argv[1]); return 1; }
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    for (int i = 0; i < 1000; i++) { fstatvfs(fd, &st); n++; }
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
  printf("%.0f\n", n / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9));
  return 0;
}
EOF_C
  cc -O2 -o "$work/bare" "$work/bare.c"
  for i in $(seq 1 100000); do echo "QUERY_FS_INFORMATION 259 NT_STATUS_OK"; done >"$work/qfs.txt"
  bare_runs=""; fslab_runs=""
  for r in 1 2 3; do
    bare_runs+="$("$work/bare" "$mnt" 5) "
    fslab_runs+="$("$FSLAB" dbench -c "$work/qfs.txt" -D "$mnt" -t 5 --warmup 1 --no-store --json -q 1 |
      grep -A3 '"metric": "op_rate"' | awk '/"value"/ {printf "%.0f", $2}') "
  done
  mb=$(tr ' ' '\n' <<<"$bare_runs" | grep . | median)
  mfs=$(tr ' ' '\n' <<<"$fslab_runs" | grep . | median)
  overhead=$(awk -v b="$mb" -v f="$mfs" 'BEGIN {printf "| bare fstatvfs loop (C, -O2) | %s | %.0f |\n| fslab dbench, 1 client | %s | %.0f |", b, 1e9/b, f, 1e9/f}')
  overhead_ns=$(awk -v b="$mb" -v f="$mfs" 'BEGIN {printf "%.0f", 1e9/f-1e9/b}')
fi
fresh

{
  echo "# fslab dbench vs dbench 4.0"
  echo
  echo "Produced by \`bench/dbench.sh\` (ROUNDS=$ROUNDS TIME=$TIME CLIENTS=\"$CLIENTS\" IMAGE_SIZE=$IMAGE_SIZE), $start."
  echo
  echo "- Loadfile: \`$LOADFILE\` ($(wc -l <"$LOADFILE") lines), the same file for both tools."
  echo "- File system: ext4 (mkfs.ext4 defaults) on a $IMAGE_SIZE loop image in /var/tmp, $(uname -r)."
  echo "- Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM."
  echo "- dbench: $(dpkg-query -W -f='${Version}' dbench 2>/dev/null || echo unknown) (Debian package); fslab: $rev$dirty, release build."
  if [ "$BENCH_NICE" != 0 ]; then
    echo "- Scheduling: the bench session's autogroup ran at nice $BENCH_NICE (both tools alike) to damp neighbours' load."
  else
    echo "- Scheduling: no boost (BENCH_NICE=0)."
  fi
  echo "- Each run: \`-t $TIME\` measured seconds after a warmup of t/5; before each run the tree is removed, \`sync\`, \`drop_caches\`."
  echo "- Commands: \`dbench -c $LOADFILE -D MNT -t $TIME N\` and \`fslab dbench -c $LOADFILE -D MNT -t $TIME -q --no-store N\`."
  echo "- Load average before/after: $load_before / $load_after (other jobs shared the machine; medians and paired ratios damp that)."
  echo
  echo "| clients | dbench MB/s (runs) | fslab MB/s (runs) | median dbench | median fslab | ratio of medians | median of per-round ratios | ≥ 0.95 | median CPU-s per run dbench / fslab |"
  echo "|---:|---|---|---:|---:|---:|---:|:---:|---:|"
  for n in $CLIENTS; do
    d=${res[dbench,$n]}; f=${res[fslab,$n]}
    md=$(tr ' ' '\n' <<<"$d" | grep . | median)
    mf=$(tr ' ' '\n' <<<"$f" | grep . | median)
    ratio=$(awk -v a="$mf" -v b="$md" 'BEGIN {printf "%.3f", a/b}')
    paired=$(paste <(tr ' ' '\n' <<<"$d" | grep .) <(tr ' ' '\n' <<<"$f" | grep .) |
      awk '{printf "%.4f\n", $2/$1}' | median)
    ok=$(awk -v r="$ratio" 'BEGIN {print (r >= 0.95) ? "yes" : "NO"}')
    cd_=$(tr ' ' '\n' <<<"${cpu[dbench,$n]}" | grep . | median)
    cf_=$(tr ' ' '\n' <<<"${cpu[fslab,$n]}" | grep . | median)
    echo "| $n | $d | $f | $md | $mf | $ratio | $paired | $ok | $cd_ / $cf_ |"
  done
  if [ -n "$overhead" ]; then
    echo
    echo "## fslab's own cost per operation"
    echo
    echo "QUERY_FS_INFORMATION only (100,000 lines, one fstatvfs each), 1 client, 5 s, median of 3"
    echo "interleaved runs, against a bare C loop of fstatvfs on the same directory."
    echo
    echo "| what | ops/s | ns per op |"
    echo "|---|---:|---:|"
    echo "$overhead"
    echo
    echo "fslab adds about $overhead_ns ns per operation (two clock reads, a histogram record, counters, the status check)."
  fi
  if [ -n "$profile" ]; then
    echo
    echo "## System calls per 1000 loadfile lines (strace -f -c, 1 client, -t 10)"
    echo
    echo "Shows whether both tools put the same work on the file system. Counts include the"
    echo "warmup; glibc's fstat and opendir's fstat appear as newfstatat for dbench and as"
    echo "fstat for fslab; dbench's per-line \`kill(parent, 0)\` liveness check is its own."
    echo
    echo "| syscall | dbench | fslab |"
    echo "|---|---:|---:|"
    echo "$profile"
  fi
} >"$out"
echo "wrote $out" >&2
cat "$out"
