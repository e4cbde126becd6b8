#!/bin/bash
# events.sh FDRTRACE EVENTS WORKDIR
#
# A real run of targets/events.c (a custom event inside step(), a typed
# event in main()): replay shows both where they happened, with runs of
# records and with one event per record; account, stack and graph leave them out of
# their output and count them in one line on stderr, which -q silences.
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") prog=$(abs "$2") work=$(abs "$3")
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

FDRTRACE_MODE=fdr "$prog" 2>run.err || { cat run.err >&2; fail "the target failed"; }
set -- fdrtrace.*.fdr
[ "$#" -eq 1 ] || fail "expected one trace: $*"
trace=$1

# The duration column varies from run to run: compare from the tid on,
# with the tid itself replaced.
expected='[TID] | main() {
[TID] |   step() {
[TID] |     [event custom 6 bytes "step 1"]
[TID] |   } /* step */
[TID] |   [event typed type=7 6 bytes "typed!"]
[TID] | } /* main */'
for mode in fast reader; do
	if [ "$mode" = reader ]; then export FDRTRACE_ANALYSIS_READER=1; fi
	"$fdr" replay "$trace" >replay.out 2>replay.err
	[ -s replay.err ] && { cat replay.err >&2; fail "replay ($mode) reported imperfections"; }
	tail -n +2 replay.out | cut -c15- | sed 's/^\[ *[0-9]*\]/[TID]/' >replay.cut
	diff -u <(printf '%s\n' "$expected") replay.cut || fail "replay ($mode)"
	for c in account stack graph; do
		"$fdr" $c "$trace" >$c.out 2>$c.err
		printf 'fdrtrace %s: %s: 2 application events (custom 1, typed 1): see replay, convert or dump\n' \
			$c "$trace" | diff -u - $c.err || fail "$c ($mode): no count of the events"
		grep -q event $c.out && fail "$c ($mode): events in its output"
		"$fdr" $c -q "$trace" >$c.q.out 2>$c.q.err
		[ -s $c.q.err ] && { cat $c.q.err >&2; fail "$c -q ($mode) printed on stderr"; }
		cmp -s $c.out $c.q.out || fail "$c -q ($mode) changed the output"
	done
	echo "--- $mode: ok"
done
grep -q 'step' account.out || fail "account does not name step"
echo ok
