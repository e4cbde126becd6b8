#!/bin/bash
# runtime.sh FDRTRACE PROGRAM WORKDIR
#
# A trace written by fdrtrace's own runtime: run PROGRAM (an example built
# with -finstrument-functions and linked with libfdrtrace) with
# FDRTRACE_MODE=fdr, then check that
#   - fdrtrace verify accepts the trace;
#   - dump | assemble gives back the identical file;
#   - dump decodes the runtime's extension records (process, func, close);
#   - info reports a clean close and the named threads.
set -eu

abs() { case $1 in /*) echo "$1" ;; '') echo "" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") prog=$(abs "$2") work=$(abs "$3")

for f in "$fdr" "$prog"; do
	[ -x "$f" ] || { echo "runtime.sh: $f is not executable" >&2; exit 1; }
done
rm -rf "$work"
mkdir -p "$work"
cd "$work"

FDRTRACE_MODE=fdr "$prog" >run.out 2>run.err || {
	echo "FAIL: $prog failed:" >&2
	cat run.err >&2
	exit 1
}
set -- fdrtrace.*.fdr
if [ "$#" -ne 1 ] || ! [ -s "$1" ]; then
	echo "FAIL: expected one trace file fdrtrace.*.fdr, found: $*" >&2
	cat run.err >&2
	exit 1
fi
trace=$1
echo "--- trace $trace ($(wc -c <"$trace") bytes)"

"$fdr" verify -v "$trace"
"$fdr" dump "$trace" >trace.dump
"$fdr" assemble trace.dump -o again.fdr
cmp "$trace" again.fdr
echo "--- round trip identical"

for kind in process func close; do
	grep -q "FDRx $kind " trace.dump || { echo "FAIL: no FDRx $kind in the dump" >&2; exit 1; }
done
"$fdr" info "$trace" >info.out
cat info.out
grep -q '^closed:          yes, exit:' info.out
grep -q '^threads:.*(' info.out
echo ok
