#!/bin/bash
# xray.sh FDRTRACE LLVM_XRAY TRACE WORKDIR
#
# TRACE is a trace file, or a text form (*.txt) that is assembled first.
# fdrtrace account and llvm-xray account (reading the trace through the map
# that fdrtrace extract-map writes) must count the same calls per function;
# llvm-xray graph must find the same caller -> callee edges as fdrtrace
# graph, and llvm-xray stack must read the trace.
#
# llvm-xray 14 account refuses any record whose TSC is below the first record
# it processes, and it takes threads in hash order: on a trace of several
# threads it fails (or, with -k, skips records); and it misorders the
# buffers of a thread that has more than 16. So each thread is made a trace
# of its own, its records in one buffer (fdrtrace convert --format xray
# --tid), and each one is compared whole, with no -k.
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") xray=$2 trace=$(abs "$3") work=$(abs "$4")
if [ -z "$xray" ] || ! command -v "$xray" >/dev/null; then
	echo "llvm-xray not found: skipped"
	exit 77
fi
rm -rf "$work"
mkdir -p "$work"
cd "$work"
case $trace in
*.txt) "$fdr" assemble "$trace" -o trace.fdr; trace=$work/trace.fdr ;;
esac

"$fdr" extract-map "$trace" -o map.yaml
grep -q 'kind: function-enter' map.yaml
"$fdr" dump -n "$trace" >all.txt
tids=$(awk '/^buf new /{ sub(/.*tid=/, ""); print $1 }' all.txt | sort -un)
compared=0
for tid in $tids; do
	# the thread's records as one buffer: llvm-xray 14 misorders a thread's
	# buffers past 16 (convert_xray.c says why)
	nbuf=$(grep -c "^buf new tid=$tid\$" all.txt || true)
	"$fdr" convert -f xray --tid "$tid" "$trace" -o "t$tid.fdr" 2>"t$tid.err"
	grep -q "^fdrtrace convert: thread $tid: [1-9][0-9]* function records" "t$tid.err" || continue
	"$fdr" account -q -f csv -s funcid "t$tid.fdr" | tail -n +2 | cut -d, -f1,2 | sort >"t$tid.ours"
	"$xray" account -f csv -m map.yaml "t$tid.fdr" | tail -n +2 | cut -d, -f1,2 | sort >"t$tid.xray"
	echo "--- thread $tid: $(wc -l <"t$tid.ours") functions, $nbuf buffers"
	diff -u "t$tid.xray" "t$tid.ours"
	[ -s "t$tid.ours" ] || { echo "FAIL: no calls on thread $tid" >&2; exit 1; }
	# The same caller -> callee edges (llvm-xray adds F0, its root, as caller
	# of the outermost calls).
	"$xray" graph -m map.yaml "t$tid.fdr" | grep -o '^F[0-9]* -> F[0-9]*' |
		grep -v '^F0 ' | tr F f | sort >"t$tid.xray-edges"
	"$fdr" graph --format dot -q "t$tid.fdr" | grep -o 'f[0-9]* -> f[0-9]*' | sort >"t$tid.edges"
	diff -u "t$tid.xray-edges" "t$tid.edges"
	"$xray" stack -m map.yaml "t$tid.fdr" >"t$tid.xray-stack"
	grep -q '^Unique Stacks: [1-9]' "t$tid.xray-stack"
	compared=$((compared + 1))
done
if [ "$compared" -eq 0 ]; then
	echo "FAIL: no thread with calls in $trace" >&2
	exit 1
fi
echo "ok ($compared threads)"
