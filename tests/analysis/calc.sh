#!/bin/bash
# calc.sh FDRTRACE CALC WORKDIR [LLVM_XRAY]
#
# A real trace from fdrtrace's runtime: examples/calc, whose call counts are
# fixed (two threads evaluate the same expressions). Checks, on that trace:
#   - account: the exact number of calls of every function, by name;
#   - stack -c: the counts add up to the same total;
#   - replay: one closing or leaf line per call;
#   - convert --format chrome: valid JSON (with python3), one complete event
#     per call, the process and thread names;
#   - graph: an edge main -> worker;
#   - a version 1 trace (padding) gives the same counts;
#   - names from ELF: with the names taken out of the trace's func records,
#     account finds them in the module's symbol table (the recorded
#     build-id matches); with a wrong build-id it falls back to #ID@0xADDR;
#   - no command reports unmatched records on this clean trace;
#   - runs of records (the reader's batch path) and one event per record give
#     the same account and stack;
#   - with LLVM_XRAY: llvm-xray account, through fdrtrace extract-map's map,
#     counts what fdrtrace account counts (xray.sh, on the version 5 trace).
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") prog=$(abs "$2") work=$(abs "$3") xray=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"

expected='evaluate 10
expr 30
factor 58
fib 5230
main 1
number 38
skip_space 182
term 46
worker 2'
total=5597

fail() { echo "FAIL: $*" >&2; exit 1; }

check() {	# check SUBDIR FDRTRACE_OPTIONS
	local dir=$work/$1 trace n
	mkdir -p "$dir"
	cd "$dir"
	echo "=== FDRTRACE_OPTIONS='$2'"
	FDRTRACE_MODE=fdr FDRTRACE_OPTIONS=$2 "$prog" >run.out 2>run.err || {
		cat run.err >&2
		fail "$prog failed"
	}
	set -- fdrtrace.*.fdr
	[ "$#" -eq 1 ] && [ -s "$1" ] || fail "expected one trace, found: $*"
	trace=$1

	echo "--- account"
	"$fdr" account -f csv "$trace" >acc.csv 2>acc.err
	[ -s acc.err ] && { cat acc.err >&2; fail "account reported imperfections"; }
	tail -n +2 acc.csv | awk -F, '{ n = $10; gsub(/"/, "", n); print n, $2 }' | sort >counts
	diff -u <(echo "$expected") counts

	echo "--- account with selectors"
	# both threads run worker() on the same expressions: half of every count,
	# worker once each; main on one of them
	mains=0
	for tid in $("$fdr" info "$trace" | sed -n 's/^threads: *[0-9]*: //p' |
		     sed 's/([^)]*)//g' | tr -d ,); do
		"$fdr" account -q -f csv --tid "$tid" "$trace" | tail -n +2 |
			awk -F, '{ n = $10; gsub(/"/, "", n); print n, $2 }' | sort >"tid$tid"
		grep -q '^main 1$' "tid$tid" && mains=$((mains + 1))
		diff -u <(echo "$expected" | awk '$1 != "main" { print $1, ($1 == "worker") ? 1 : $2 / 2 }') \
			<(grep -v '^main ' "tid$tid") || fail "account --tid $tid"
	done
	[ "$mains" -eq 1 ] || fail "account --tid: main on $mains threads"
	# -F: the calls inside evaluate (itself included); -r is still the sort order
	"$fdr" account -q -f csv -F evaluate -s func -r asc "$trace" | tail -n +2 |
		awk -F, '{ n = $10; gsub(/"/, "", n); print n, $2 }' >filtered
	diff -u <(echo "$expected" | grep -v -e '^main ' -e '^worker ') filtered ||
		fail "account -F evaluate"
	# a time range: no call begins after the end of the run
	"$fdr" account -q -f csv --time-range 0~ "$trace" | cmp - acc.csv ||
		fail "account --time-range 0~ is not the whole trace"

	echo "--- runs and one event per record agree"
	FDRTRACE_ANALYSIS_READER=1 "$fdr" account -f csv "$trace" >acc-reader.csv
	cmp acc.csv acc-reader.csv || fail "account differs with FDRTRACE_ANALYSIS_READER=1"
	"$fdr" stack -P "$trace" >stack.fast
	FDRTRACE_ANALYSIS_READER=1 "$fdr" stack -P "$trace" >stack.reader
	cmp stack.fast stack.reader || fail "stack differs with FDRTRACE_ANALYSIS_READER=1"

	echo "--- stack -c"
	n=$("$fdr" stack -c "$trace" | awk '{ s += $NF } END { print s }')
	[ "$n" -eq "$total" ] || fail "stack -c counts $n calls, expected $total"

	echo "--- replay"
	"$fdr" replay "$trace" >replay.out
	n=$(grep -cE '\| +(} /\* .* \*/|.*\(\);)$' replay.out || true)
	[ "$n" -eq "$total" ] || fail "replay shows $n calls, expected $total"

	echo "--- convert --format chrome"
	"$fdr" convert --format chrome "$trace" -o out.json
	n=$(grep -c '"ph":"X"' out.json || true)
	[ "$n" -eq "$total" ] || fail "chrome JSON has $n complete events, expected $total"
	grep -q '"process_name".*"calc"' out.json || fail "no process name"
	grep -q '"thread_name".*"calc-worker"' out.json || fail "no thread name"
	if command -v python3 >/dev/null; then
		python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert len(d["traceEvents"]) > 5597' out.json
	fi

	echo "--- graph"
	"$fdr" graph --format dot "$trace" >graph.dot
	grep -q '^	f[0-9]* \[label="main' graph.dot || fail "no main in the graph"
	id_main=$(sed -n 's/^	f\([0-9]*\) \[label="main\\n.*/\1/p' graph.dot)
	id_worker=$(sed -n 's/^	f\([0-9]*\) \[label="worker\\n.*/\1/p' graph.dot)
	grep -q "^	f$id_main -> f$id_worker \[label=\"1 call\\\\n" graph.dot || fail "no edge main -> worker"
}

check v5 ''

echo "=== names from ELF symbols"
cd "$work/v5"
# Rewrite the func and module_map records as 'ext' lines (their dump
# comments have that syntax), without the names.
"$fdr" dump fdrtrace.*.fdr | awk '
	/^buf ext size=/ { print "buf ext size=auto"; next }
	/^evt cus .*# .* FDRx (func|module_map) / {
		i = index($0, " FDRx "); rest = substr($0, i + 6)
		k = rest; sub(/ .*/, "", k); rest = substr(rest, length(k) + 2)
		if (k == "func") sub(/ name=.*/, "", rest)
		print "ext " k " delta=0 " rest; next }
	{ print }' >noname.txt
grep -q '^ext func .*address=' noname.txt || fail "no func records to rewrite"
grep -q ' name=' <(grep '^ext func' noname.txt) && fail "names left in func records"
"$fdr" assemble noname.txt -o noname.fdr
"$fdr" account -f csv noname.fdr | tail -n +2 |
	awk -F, '{ n = $10; gsub(/"/, "", n); print n, $2 }' | sort >noname.counts
diff -u <(echo "$expected") noname.counts
sed -E 's/(^ext module_map .*build_id=)[0-9a-f]{2}/\1ff/' noname.txt >stale.txt
cmp -s noname.txt stale.txt &&
	sed -E 's/(^ext module_map .*build_id=)[0-9a-f]{2}/\100/' noname.txt >stale.txt
cmp -s noname.txt stale.txt && fail "could not change the build-id"
"$fdr" assemble stale.txt -o stale.fdr
n=$("$fdr" account -f csv stale.fdr | grep -c '"#[0-9]*@0x[0-9a-f]*",' || true)
[ "$n" -eq 9 ] || fail "with a stale build-id, $n of 9 functions fell back to #ID@0xADDR"
if [ -n "$xray" ]; then
	echo "=== llvm-xray"
	bash "$here/xray.sh" "$fdr" "$xray" "$work/v5/$(cd "$work/v5" && ls fdrtrace.*.fdr)" "$work/xray"
fi
check v1 'format_version=1:buffer_size=4096'
echo ok
