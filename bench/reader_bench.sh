#!/usr/bin/env bash
# bench/reader_bench.sh - reader throughput and peak memory, fdrtrace against
# llvm-xray, on the same large trace written by LLVM XRay's own FDR runtime.
#
# usage: bench/reader_bench.sh BUILDDIR [ITERATIONS] [ROUNDS]
#
# Builds bench/xray_workload.c with clang -fxray-instrument, runs it once to
# write the trace, then times each reader ROUNDS times, interleaved (A B C ...
# A B C ...), and prints the median wall time, MB/s and peak RSS of each.
# Needs clang, llvm-xray and GNU time (/usr/bin/time).
set -euo pipefail
build=$(realpath "${1:?usage: reader_bench.sh BUILDDIR [ITERATIONS] [ROUNDS]}")
iters=${2:-16000}
rounds=${3:-5}
src=$(dirname "$(realpath "$0")")
work=$(mktemp -d /tmp/fdrtrace-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

for p in clang llvm-xray /usr/bin/time; do
  command -v "$p" >/dev/null || { echo "reader_bench: $p not found" >&2; exit 2; }
done

clang -O2 -fxray-instrument -fxray-instruction-threshold=1 -fxray-modes=xray-fdr \
  "$src/xray_workload.c" -o "$work/workload"
(cd "$work" && XRAY_OPTIONS="patch_premain=false xray_mode=xray-fdr xray_logfile_base=$work/xr- verbosity=0" \
  ./workload "$iters")
trace=$(ls "$work"/xr-workload.* | head -n 1)
size=$(stat -c %s "$trace")
echo "trace: $size bytes ($iters iterations), written by LLVM XRay FDR (clang $(clang -dumpversion))"

fdr=$build/tools/fdrtrace/fdrtrace
declare -A cmds=(
  [fdrtrace-reader]="$build/bench/reader_count $trace"
  [fdrtrace-verify]="$fdr verify $trace"
  [fdrtrace-account]="$fdr account $trace"
  [fdrtrace-stack]="$fdr stack $trace"
  [fdrtrace-convert]="$fdr convert --format chrome $trace -o /dev/null"
  [llvm-xray-fdr-dump]="llvm-xray fdr-dump $trace"
  [llvm-xray-account]="llvm-xray account -instr_map=$work/workload $trace"
  [llvm-xray-stack]="llvm-xray stack -instr_map=$work/workload $trace"
  [llvm-xray-convert]="llvm-xray convert -instr_map=$work/workload -output-format=trace_event $trace"
)
order=(fdrtrace-reader fdrtrace-verify fdrtrace-account fdrtrace-stack fdrtrace-convert
       llvm-xray-fdr-dump llvm-xray-account llvm-xray-stack llvm-xray-convert)
declare -A times rss
for ((i = 0; i < rounds; i++)); do
  for name in "${order[@]}"; do
    out=$( { /usr/bin/time -f "%e %M" ${cmds[$name]} >/dev/null 2>/dev/null; } 2>&1 | tail -n 1)
    times[$name]+="${out% *} "
    rss[$name]+="${out#* } "
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-22s %10s %10s %12s\n' reader "median s" "MB/s" "peak RSS MB"
for name in "${order[@]}"; do
  t=$(echo "${times[$name]}" | median)
  m=$(echo "${rss[$name]}" | median)
  awk -v n="$name" -v t="$t" -v m="$m" -v s="$size" \
    'BEGIN {printf "%-22s %10.3f %10.1f %12.1f\n", n, t, (t > 0 ? s / 1e6 / t : 0), m / 1024}'
done
