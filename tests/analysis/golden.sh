#!/bin/bash
# golden.sh FDRTRACE TEXT EXPECTED_DIR NAME WORKDIR
#
# An analysis golden trace: assemble TEXT, then run every analysis command
# for which EXPECTED_DIR/NAME.<what> exists and compare its output exactly:
#   account         fdrtrace account FILE
#   account-csv     fdrtrace account -f csv -s funcid FILE
#   stack           fdrtrace stack FILE
#   stack-count     fdrtrace stack -c -P FILE
#   replay          fdrtrace replay FILE
#   replay-filtered fdrtrace replay -F main -N fact -D 2 FILE
#   replay-tid      fdrtrace replay --tid 2 FILE
#   replay-range    fdrtrace replay -r 0.0000004~0.0000008 FILE
#   replay-threshold fdrtrace replay -t 100ns FILE
#   replay-fields   fdrtrace replay -f time,delta,elapsed,duration,tid,pid FILE
#   stack-filtered  fdrtrace stack -F main -N fact -D 2 FILE
#   stack-threshold fdrtrace stack -t 250ns FILE
#   stack-tid-range fdrtrace stack --tid 100 -r 0.0000005~ FILE
#   graph           fdrtrace graph --format dot FILE
#   graph-text      fdrtrace graph FILE (the text tree)
#   graph-func      fdrtrace graph FILE fact (backtraces and callee tree)
#   chrome          fdrtrace convert --format chrome FILE -o out.json (and, with
#                   python3, the JSON must parse and each thread's events be in
#                   start order)
#   chrome-filtered  fdrtrace convert -F parse -N lex --tid 100 FILE
#   chrome-threshold fdrtrace convert -t 250ns -r ~0.000003 FILE
#   map             fdrtrace extract-map FILE
#   summary         what fdrtrace account FILE prints on stderr
#   pipe-summary    what 'cat FILE | fdrtrace account -' prints on stderr
#   stack-summary   what fdrtrace stack FILE prints on stderr
#   graph-summary   what fdrtrace graph FILE prints on stderr
#   quiet-summary   what account, stack and graph print on stderr with -q
# Every command must exit 0. Each runs twice: with runs of function records
# from the reader's batch path (the default) and with
# FDRTRACE_ANALYSIS_READER=1 (one event per record); both must print exactly the expected output.
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") text=$(abs "$2") exp=$(abs "$3") name=$4 work=$(abs "$5")
rm -rf "$work"
mkdir -p "$work"
cd "$work"

run() {	# run WHAT COMMAND...: stdout to WHAT.out, stderr to WHAT.err, exit 0
	local what=$1 rc=0
	shift
	"$@" >"$what.out" 2>"$what.err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: '$*' exited $rc" >&2
		cat "$what.err" >&2
		exit 1
	fi
}

"$fdr" assemble "$text" -o trace.fdr
checked=0
for mode in fast reader; do
if [ "$mode" = reader ]; then export FDRTRACE_ANALYSIS_READER=1; fi
for f in "$exp/$name".*; do
	[ -e "$f" ] || continue
	what=${f##*/$name.}
	case $what in
	account) run "$what" "$fdr" account trace.fdr ;;
	account-csv) run "$what" "$fdr" account -f csv -s funcid trace.fdr ;;
	stack) run "$what" "$fdr" stack trace.fdr ;;
	stack-count) run "$what" "$fdr" stack -c -P trace.fdr ;;
	replay) run "$what" "$fdr" replay trace.fdr ;;
	stack-filtered) run "$what" "$fdr" stack -F main -N fact -D 2 trace.fdr ;;
	stack-threshold) run "$what" "$fdr" stack -t 250ns trace.fdr ;;
	stack-tid-range) run "$what" "$fdr" stack --tid 100 -r 0.0000005~ trace.fdr ;;
	chrome-filtered)
		run "$what" "$fdr" convert -F parse -N lex --tid 100 trace.fdr -o out.json
		mv out.json "$what.out" ;;
	chrome-threshold)
		run "$what" "$fdr" convert -t 250ns -r ~0.000003 trace.fdr -o out.json
		mv out.json "$what.out" ;;
	replay-filtered) run "$what" "$fdr" replay -F main -N fact -D 2 trace.fdr ;;
	replay-tid) run "$what" "$fdr" replay --tid 2 trace.fdr ;;
	replay-range) run "$what" "$fdr" replay -r 0.0000004~0.0000008 trace.fdr ;;
	replay-threshold) run "$what" "$fdr" replay -t 100ns trace.fdr ;;
	replay-fields) run "$what" "$fdr" replay -f time,delta,elapsed,duration,tid,pid trace.fdr ;;
	graph) run "$what" "$fdr" graph --format dot trace.fdr ;;
	graph-text) run "$what" "$fdr" graph trace.fdr ;;
	graph-func) run "$what" "$fdr" graph trace.fdr fact ;;
	chrome)
		run "$what" "$fdr" convert --format chrome trace.fdr -o out.json
		mv out.json "$what.out"
		if command -v python3 >/dev/null; then
			# valid JSON, and each thread's events in start order
			python3 -c '
import json, sys
last = {}
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e["ph"] in "XBi":
        k = (e["pid"], e["tid"])
        if e["ts"] < last.get(k, 0):
            sys.exit("not in start order: %r" % e)
        last[k] = e["ts"]
' "$what.out" || exit 1
		fi ;;
	map) run "$what" "$fdr" extract-map trace.fdr ;;
	summary)
		run "$what" "$fdr" account trace.fdr
		mv "$what.err" "$what.out" ;;
	stack-summary)
		run "$what" "$fdr" stack trace.fdr
		mv "$what.err" "$what.out" ;;
	graph-summary)
		run "$what" "$fdr" graph trace.fdr
		mv "$what.err" "$what.out" ;;
	quiet-summary)
		run "$what-a" "$fdr" account -q trace.fdr
		run "$what-s" "$fdr" stack -q trace.fdr
		run "$what-g" "$fdr" graph -q trace.fdr
		cat "$what-a.err" "$what-s.err" "$what-g.err" >"$what.out" ;;
	pipe-summary)
		run "$what" bash -c 'cat trace.fdr | "$1" account -' _ "$fdr"
		mv "$what.err" "$what.out" ;;
	*) echo "golden.sh: unknown expectation $f" >&2; exit 1 ;;
	esac
	echo "--- $what ($mode)"
	diff -u "$f" "$what.out"
	checked=$((checked + 1))
done
done
if [ "$checked" -eq 0 ]; then
	echo "FAIL: no expectations for $name in $exp" >&2
	exit 1
fi
echo "ok ($checked outputs)"
