#!/bin/bash
# runtime.sh FDRTRACE PROGRAM WORKDIR
#
# Traces written by fdrtrace's own runtime: run PROGRAM (an example built
# with -finstrument-functions and linked with libfdrtrace) with
# FDRTRACE_MODE=fdr, once in FDR version 5 (the default) and once in
# version 1 (small buffers, so there is padding), and check that
#   - fdrtrace verify accepts the trace;
#   - dump | assemble gives back the identical file;
#   - dump decodes the runtime's extension records (process, func, close);
#   - info reports a clean close and the named threads (the flush thread too).
set -eu

abs() { case $1 in /*) echo "$1" ;; '') echo "" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") prog=$(abs "$2") work=$(abs "$3")

for f in "$fdr" "$prog"; do
	[ -x "$f" ] || { echo "runtime.sh: $f is not executable" >&2; exit 1; }
done
rm -rf "$work"

check_one() {	# check_one SUBDIR FDRTRACE_OPTIONS
	local dir=$work/$1 trace

	mkdir -p "$dir"
	cd "$dir"
	echo "=== FDRTRACE_OPTIONS='$2'"
	FDRTRACE_MODE=fdr FDRTRACE_OPTIONS=$2 "$prog" >run.out 2>run.err || {
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
		grep -q "FDRx $kind " trace.dump ||
			{ echo "FAIL: no FDRx $kind in the dump" >&2; exit 1; }
	done
	"$fdr" info "$trace" >info.out
	cat info.out
	grep -q '^closed:          yes, exit:' info.out
	grep -q '^threads:.*(' info.out
	# the runtime's own buffers belong to its flush thread, listed apart
	# from the program's threads
	grep -q '^runtime threads: 1: [0-9]* (fdrtrace-flush)$' info.out ||
		{ echo "FAIL: the flush thread is not listed apart in info" >&2; exit 1; }
	if grep -q '^threads:.*fdrtrace-flush' info.out; then
		echo "FAIL: the flush thread is listed with the program's threads" >&2; exit 1
	fi
}

check_one v5 ""
grep -q '^version:         5$' "$work/v5/info.out"
check_one v1 "format_version=1 buffer_size=4096"
grep -q '^version:         1$' "$work/v1/info.out"
grep -q '^buf pad ' "$work/v1/trace.dump"
echo ok
