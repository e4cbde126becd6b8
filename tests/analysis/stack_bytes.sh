#!/bin/bash
# stack_bytes.sh FDRTRACE WORKDIR
#
# stack's output is bounded by its input (issue 33): a trace of 300 nested
# functions with 4 KB names, each level calling a leaf (stack_bytes.py),
# made 370 MB of folded stacks from 1.3 MB: the depth cap (1000 levels)
# bounds frames, not bytes. A path longer than 16384 bytes now keeps its
# outermost frame and its innermost ones, the middle folded into one
# frame, "[N frames folded: path over 16384 bytes]", and stderr says so.
# Checked: output within 16 times the trace, every line within 16384 bytes
# and one name, the stderr line, every call still counted (stack -c sums
# to the 600 calls), on one trace and on a run of two (merged lines).
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") work=$(abs "$2")
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v python3 >/dev/null; then
	echo "SKIP: python3 is needed to write the trace"
	exit 77
fi
python3 "$here/stack_bytes.py" 300 4096 >deep.txt
"$fdr" assemble deep.txt -o deep.fdr
in=$(stat -c %s deep.fdr)
for what in one run; do
	if [ $what = one ]; then set -- deep.fdr; calls=600; else set -- deep.fdr deep.fdr; calls=1200; fi
	"$fdr" stack "$@" >"$what.out" 2>"$what.err"
	out=$(stat -c %s "$what.out")
	[ "$out" -le $((16 * in)) ] || fail "$what: $out bytes of stack from $in bytes of trace"
	awk 'length($0) > 16384 + 4096 + 64 { print "line " NR ": " length($0) " bytes"; bad = 1 }
	     END { exit bad }' "$what.out" || fail "$what: a line is longer than its bound"
	grep -q "paths longer than 16384 bytes: the middle frames of each folded into one" "$what.err" ||
		fail "$what: the folding is not said on stderr: $(cat "$what.err")"
	grep -q '^f1_x*;\[[0-9]* frames folded: path over 16384 bytes\];' "$what.out" ||
		fail "$what: no folded frame after the outermost"
	n=$("$fdr" stack -q -c "$@" | awk '{ s += $NF } END { print s }')
	[ "$n" -eq $calls ] || fail "$what: stack -c counts $n calls, the trace has $calls"
	echo "ok   $what: $out bytes from $in"
done
# a short path is not folded
"$fdr" stack -q deep.fdr | grep -q '^f1_x*;leaf 10$' || fail "main's own leaf path changed"
echo "ok"
