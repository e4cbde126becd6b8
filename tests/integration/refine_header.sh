#!/usr/bin/env bash
# refine_header.sh API_TARGET FDRTRACE
#
# Where the TSC frequency is calibrated at start (2.5 ms, within some
# 0.1-0.6 ppm here), the flush thread writes the frequency measured over the
# run into the header as the run goes, so a trace cut by SIGKILL still has
# it. The reference: a normal run's close record, refined over 1.6 s. A run
# killed after 1.8 s (its header refined at 0.1, 0.4 and 1.6 s) must be
# within 0.1 ppm of it (0.000-0.021 ppm in runs here); the calibration alone
# was 0.08-1.1 ppm off in seven runs, so a header left alone fails most runs.
set -u
api=$1 tool=$2
dir=$(mktemp -d /tmp/fdrtrace-refine-XXXXXX)
trap "${KEEP:+:} rm -rf $dir" EXIT

FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="logfile_base=$dir/ref-" "$api" for 1600 > /dev/null 2>&1
ref=$(ls "$dir"/ref-* 2>/dev/null | head -1)
if [[ -z $ref ]]; then
  echo "FAIL: the reference run left no trace"
  exit 1
fi
"$tool" info "$ref" > "$dir/ref.info" 2>&1
if ! grep -q "frequency calibrated" "$dir/ref.info"; then
  echo "SKIP: this machine's TSC frequency is not calibrated (nothing to refine):"
  grep '^clock:' "$dir/ref.info"
  exit 77
fi
r=$(sed -n 's/.*refined frequency \([0-9]*\) Hz.*/\1/p' "$dir/ref.info")

FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="logfile_base=$dir/kill-" "$api" for 5000 > /dev/null 2>&1 &
pid=$!
sleep 1.8
kill -KILL $pid
wait $pid 2>/dev/null
cut=$(ls "$dir"/kill-* 2>/dev/null | head -1)
"$tool" info "$cut" > "$dir/cut.info" 2>&1
h=$(sed -n 's/^cycle frequency: *\([0-9]*\) Hz.*/\1/p' "$dir/cut.info")
if ! grep -q "no close marker" "$dir/cut.info" || [[ -z $r || -z $h ]]; then
  echo "FAIL: expected a closed reference and a cut trace"
  cat "$dir/ref.info" "$dir/cut.info"
  exit 1
fi
ppm=$(awk -v h="$h" -v r="$r" 'BEGIN { d = (h - r) / r * 1e6; printf "%.3f", d < 0 ? -d : d }')
echo "reference (closed, refined) $r Hz; cut by SIGKILL at 1.8 s: header $h Hz; $ppm ppm apart"
if awk -v p="$ppm" 'BEGIN { exit !(p >= 0.1) }'; then
  echo "FAIL: the cut trace's header is not the frequency measured over its run"
  exit 1
fi
echo "PASS"
