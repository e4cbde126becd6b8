#!/usr/bin/env bash
# tests/tsan/run.sh PROGRAM ARGS... - run an instrumented program with
# recording on under ThreadSanitizer (halt on the first report), in a
# scratch directory, for each policy, and check its trace with fdrtrace.
# Environment: FDRTRACE_TOOL (the fdrtrace command), TSAN_SUPP.
set -euo pipefail
prog=$(realpath "$1")
shift
work=$(mktemp -d /tmp/fdrtrace-tsan.XXXXXX)
trap 'rm -rf "$work"' EXIT
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$TSAN_SUPP"
# the pool_max ones: the flush thread grows the pool while threads take
# and return buffers (with on_full=wait, while threads wait for one);
# the last: latency triggers firing from several threads at once (every
# call of rec lasts more than 1 ns), snapshots written meanwhile; the
# direct ones: direct writes and the idle flush thread settling the file,
# in stream and in ring policy (/tmp's file system permitting); the
# auto_exclude ones: threads counting while the flush thread reads their
# counts (every millisecond) and threads end
for opts in "buffer_size=4096 buffer_max=8" "buffer_size=4096 buffer_max=8 policy=ring" \
	"buffer_size=65536 flush_interval_ms=1" \
	"buffer_size=4096 buffer_max=8 pool_max=1M" \
	"buffer_size=4096 buffer_max=8 pool_max=256K on_full=wait verbosity=2" \
	"buffer_size=4096 buffer_max=8 policy=ring trigger=rec>1ns trigger_max=3 trigger_holdoff_ms=0" \
	"buffer_size=4096 buffer_max=8 direct_io=always flush_interval_ms=5" \
	"buffer_size=4096 buffer_max=8 policy=ring direct_io=always" \
	"buffer_size=4096 buffer_max=8 auto_exclude=1ms;after=16 flush_interval_ms=1" \
	"buffer_size=4096 buffer_max=8 policy=ring auto_exclude=1ms;after=16"; do
	rm -f "$work"/*.fdr
	rc=0
	(cd "$work" && FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="$opts" "$prog" "$@" >out.txt 2>err.txt) || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "FAIL ($opts): exit status $rc" >&2
		cat "$work/err.txt" >&2
		exit 1
	fi
	for f in "$work"/*.fdr; do
		"$FDRTRACE_TOOL" verify "$f" || { echo "FAIL ($opts): $f does not verify" >&2; exit 1; }
	done
	echo "ok   $opts: $(grep -h '^fdrtrace:' "$work/err.txt" | head -n 1)"
done
