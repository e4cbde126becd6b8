#!/bin/bash
# hostile.sh FDRTRACE HOSTILE_DIR WORKDIR
#
# Regression tests for the defects of issue #11 found by fuzzing the whole
# command. Each trace in HOSTILE_DIR (dump's text form) is assembled, and
# every check runs with runs of records (the reader's batch path) and with
# one event per record (FDRTRACE_ANALYSIS_READER=1):
#   class 4  names.txt: names that are not UTF-8; every output of every
#            command is valid UTF-8, the Chrome JSON and the XRay YAML parse
#            (YAML with python3-yaml when installed), valid names survive
#   class 5  damaged-open.txt: calls open where the trace is damaged: replay
#            shows them, closed with "end lost with records"
#   class 5  unfinished.txt: two calls entered, none completed: replay shows
#            both, closed with "did not return"
#   class 8  unfinished.txt: graph with no completed call exits 0 (under
#            UBSan a qsort on NULL would stop it)
#   class 6  offsets.txt, offsets-order.txt: damaged buffers after the
#            first, read in file order and in time order: the
#            "FILE:OFFSET: message" lines of account, stack, graph, replay
#            and convert equal verify's (offsets in the message too)
#   class 3  one valid buffer of 16 MiB (1M calls): every command within
#            16 MiB of address space (the core once copied the whole buffer)
#   class 3  200,000 distinct functions and 40,000 threads (generated here):
#            every command within 32 MiB of address space plus 512 bytes a
#            function, or 1 KiB a thread (ulimit -v; they took 340 MB and
#            100 MB before)
#   class 3  5,000 nested calls: replay indents 200 levels at most (deeper
#            lines say "[level N]"), stack folds calls deeper than 1,000
#            levels into one frame that counts them: their output grew with
#            the square of the depth (50,000 levels: 5 GB and > 3 GB)
#   class 3  300,000 functions all named "f" (one slot of the name hash per
#            name): every command within 60 s, a hang guard 100 times what
#            they take (a walk past every namesake per function took 15 s
#            at 80,000; 4 minutes at 300,000)
#   class 3  400,000 nested entries, then 400,000 exits of another id: every
#            command within a 60 s hang guard (each exit walked the whole
#            stack: 5 s at 100,000, 80 s at 400,000; the 65,536 kept now);
#            and on a 300-deep
#            stack, exits of ids not on it and an exit that unwinds all of
#            it (past the 64 frames walked first) counted exactly
#   class 3  70,000 nested calls: a thread keeps 65,536 open calls; the 4,464
#            deeper ones are counted and said so, not timed; every command
#            within 32 MiB (1.1 M nested entries, 9 MB of zeros, took 80 to
#            200 MB)
#   class 3  40 threads one after another, each with 20,000 calls inside
#            one (as sqlite's sorting threads): convert, both formats,
#            within 32 MiB and with every call (convert kept each thread's
#            start-order ring at a whole window: 50 MB; out of memory it
#            dropped calls, said so, and exited 0; it now exits 1)
set -u

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") dir=$(abs "$2") work=$(abs "$3")
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fails=0
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
utf8() { iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1; }

# vlimit KiB: ulimit -v KiB, but not in a sanitized build
# (FDRTRACE_TEST_SANITIZED=1): ASan reserves terabytes of shadow and keeps a
# quarantine of freed memory, so an address-space bound there says nothing
# about the command; the commands still run and must succeed.
vlimit() {
	[ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ] || ulimit -v "$1"
}

awk 'BEGIN { print "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096"
	print "buf ext size=auto"; print "buf new tid=1"; print "buf wal sec=1 usec=0"
	print "cpu new cpu=0 tsc=1000"
	for (i = 1; i <= 200000; i++) { print "fun ent id=" i " delta=1"; print "fun exi id=" i " delta=" i % 300 } }' >fns.txt
awk 'BEGIN { print "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096"
	for (t = 1; t <= 40000; t++) { print "buf ext size=auto"; print "buf new tid=" t
		print "buf wal sec=1 usec=0"; print "cpu new cpu=0 tsc=" 1000 + t
		print "fun ent id=1 delta=1"; print "fun ent id=2 delta=1"; print "fun exi id=2 delta=1" } }' >threads.txt
awk 'BEGIN { print "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=1048576"
	for (t = 1; t <= 40; t++) { print "buf ext size=auto"; print "buf new tid=" t
		print "buf wal sec=1 usec=0"; printf "cpu new cpu=0 tsc=%d\n", 1000 + t * 1000000
		print "fun ent id=1 delta=1"
		for (i = 0; i < 20000; i++) { print "fun ent id=2 delta=1"; print "fun exi id=2 delta=1" }
		print "fun exi id=1 delta=1" } }' >sorters.txt
awk 'BEGIN { print "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=1048576"
	print "buf ext size=auto"; print "buf new tid=1"; print "buf wal sec=1 usec=0"
	print "cpu new cpu=0 tsc=1000"
	for (i = 1; i <= 5000; i++) print "fun ent id=" i % 7 + 1 " delta=1"
	for (i = 5000; i >= 1; i--) print "fun exi id=" i % 7 + 1 " delta=2" }' >deep.txt
awk 'BEGIN { print "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=16777216"
	print "buf ext size=auto"; print "buf new tid=1"; print "buf wal sec=1 usec=0"
	print "cpu new cpu=0 tsc=1000"
	for (i = 1; i <= 300000; i++)
		printf "ext func func_id=%d address=0x%x module_id=1 name=\"f\"\n", i, 4096 + i
	for (i = 1; i <= 300000; i++) { print "fun ent id=" i " delta=1"; print "fun exi id=" i " delta=1" } }' >samename.txt
awk 'BEGIN { print "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=16777216"
	print "buf ext size=auto"; print "buf new tid=1"; print "buf wal sec=1 usec=0"
	print "cpu new cpu=0 tsc=1000"
	for (i = 0; i < 400000; i++) print "fun ent id=1 delta=1"
	for (i = 0; i < 400000; i++) print "fun exi id=2 delta=1" }' >unmatched.txt
# A call of id 7, 299 nested calls of ids 1..5 in it, 50 exits of id 9 (on
# no stack), then the exit of 7: it closes the 299 frames above it too
awk 'BEGIN { print "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=65536"
	print "buf ext size=auto"; print "buf new tid=1"; print "buf wal sec=1 usec=0"
	print "cpu new cpu=0 tsc=1000"; print "fun ent id=7 delta=1"
	for (i = 0; i < 299; i++) print "fun ent id=" i % 5 + 1 " delta=1"
	for (i = 0; i < 50; i++) print "fun exi id=9 delta=1"
	print "fun exi id=7 delta=1" }' >unwind.txt
awk 'BEGIN { print "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=16777216"
	print "buf ext size=auto"; print "buf new tid=1"; print "buf wal sec=1 usec=0"
	print "cpu new cpu=0 tsc=1000"
	for (i = 0; i < 70000; i++) print "fun ent id=" i % 3 + 1 " delta=1"
	for (i = 70000; i > 0; i--) print "fun exi id=" (i - 1) % 3 + 1 " delta=1" }' >deeper.txt
"$fdr" assemble deeper.txt -o deeper.fdr && rm -f deeper.txt || fail "assemble deeper"
# The per-id counts of a deep stack, kept as it grows: 65 calls of id 1 and
# an exit of id 999 (on no frame: the counts are made), 299 calls of new
# ids 2..300 (the table is made again on the way), then for each of them,
# innermost first, a call of id 1000 and the exit of that id, which closes
# the 1000 above it: one exit without entry (999) in all, 299 unwound
awk 'BEGIN { print "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=65536"
	print "buf ext size=auto"; print "buf new tid=1"; print "buf wal sec=1 usec=0"
	print "cpu new cpu=0 tsc=1000"
	for (i = 0; i < 65; i++) print "fun ent id=1 delta=1"
	print "fun exi id=999 delta=1"
	for (i = 2; i <= 300; i++) print "fun ent id=" i " delta=1"
	for (i = 300; i >= 2; i--) { print "fun ent id=1000 delta=1"; print "fun exi id=" i " delta=1" }
	for (i = 0; i < 65; i++) print "fun exi id=1 delta=1" }' >counts.txt
"$fdr" assemble counts.txt -o counts.fdr && rm -f counts.txt || fail "assemble counts"
"$fdr" assemble unmatched.txt -o unmatched.fdr && "$fdr" assemble unwind.txt -o unwind.fdr ||
	fail "assemble unmatched, unwind"
rm -f unmatched.txt unwind.txt
"$fdr" assemble fns.txt -o fns.fdr && "$fdr" assemble threads.txt -o threads.fdr &&
	"$fdr" assemble sorters.txt -o sorters.fdr && "$fdr" assemble deep.txt -o deep.fdr &&
	"$fdr" assemble samename.txt -o samename.fdr || fail "assemble generated"
rm -f fns.txt threads.txt sorters.txt deep.txt samename.txt
# One v5 buffer: a 64-byte preamble, then 2^20 (entry, exit) pairs of id 1.
printf 'hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096\nbuf ext size=%d\nbuf new tid=1\nbuf wal sec=1 usec=0\nbuf pid pid=1\ncpu new cpu=0 tsc=1000\n' \
	$((64 + (16 << 20))) >big.txt
"$fdr" assemble big.txt -o big.fdr || fail "assemble big"
printf '\x10\x00\x00\x00\x01\x00\x00\x00\x12\x00\x00\x00\x03\x00\x00\x00' >pairs
for i in $(seq 20); do cat pairs pairs >pairs2 && mv pairs2 pairs; done
cat pairs >>big.fdr && rm -f pairs

for t in unfinished damaged-open names offsets offsets-order; do
	"$fdr" assemble "$dir/$t.txt" -o "$t.fdr" || { fail "assemble $t"; continue; }
done

for path in fast reader; do
	if [ $path = reader ]; then export FDRTRACE_ANALYSIS_READER=1; else unset FDRTRACE_ANALYSIS_READER; fi

	# class 5
	"$fdr" replay -q unfinished.fdr >replay.out 2>&1
	cat >replay.want <<'W'
#    DURATION        TID   FUNCTION
              [    100] | main() {
              [    100] |   work() {
              [    100] |   } /* work: did not return */
              [    100] | } /* main: did not return */
W
	if cmp -s replay.want replay.out; then ok "$path: replay shows calls that never returned"
	else fail "$path: replay shows calls that never returned"; diff replay.want replay.out; fi
	"$fdr" replay -q damaged-open.fdr >replay.out 2>/dev/null
	cat >replay.want <<'W'
#    DURATION        TID   FUNCTION
              [      1] | #1() {
     5.000 ns [      1] |   #2();
              [      1] |   #3() {
              [      1] |   } /* #3: end lost with records */
              [      1] | } /* #1: end lost with records */
W
	if cmp -s replay.want replay.out; then ok "$path: replay shows calls whose end was lost"
	else fail "$path: replay shows calls whose end was lost"; diff replay.want replay.out; fi
	# ... also under a threshold (their duration is unknown)
	if [ "$("$fdr" replay -q -t 1s unfinished.fdr | grep -c 'did not return')" = 2 ]; then
		ok "$path: replay -t keeps calls that never returned"
	else
		fail "$path: replay -t keeps calls that never returned"
	fi

	# class 8
	if "$fdr" graph --format dot -q unfinished.fdr >graph.out 2>graph.err && grep -q '^digraph' graph.out; then
		ok "$path: graph with no completed call"
	else
		fail "$path: graph with no completed call"; cat graph.err
	fi

	# class 4
	bad=0
	for cmd in "account" "account -f csv" "stack" "stack -P" "replay" "graph" "convert" \
		   "extract-map" "account --no-demangle"; do
		"$fdr" $cmd -q names.fdr >out 2>err || "$fdr" $cmd names.fdr >out 2>err || bad=1
		utf8 out || { echo "not UTF-8: $cmd"; bad=1; }
	done
	[ $bad = 0 ] && ok "$path: every output is UTF-8" || fail "$path: every output is UTF-8"
	"$fdr" convert names.fdr -o names.json
	if python3 -c '
import json, sys
d = json.loads(open("names.json", "rb").read().decode("utf-8"))
names = {e.get("name") for e in d["traceEvents"]} | {e["args"]["name"] for e in d["traceEvents"] if e["ph"] == "M"}
want = {"ma?in", "cut??", "over??long", "sur???rogate", "c1?????nul?x", "caf\u00e9\U0001F600'"'"'q", "pro?gram", "th?read?"}
sys.exit(0 if want <= names else print(sorted(names - want), sorted(want - names)) or 1)
'; then ok "$path: Chrome JSON parses, names replaced byte by byte"; else fail "$path: Chrome JSON"; fi
	"$fdr" extract-map names.fdr -o names.yaml
	if python3 -c 'import yaml' 2>/dev/null; then
		if python3 -c '
import yaml, sys
m = yaml.safe_load(open("names.yaml", "rb").read().decode("utf-8"))
sys.exit(0 if "caf\u00e9\U0001F600'"'"'q" in [e["function-name"] for e in m] else 1)
'; then ok "$path: YAML parses"; else fail "$path: YAML parses"; fi
	else
		echo "skip YAML parse (no python3-yaml)"
	fi

	# class 6
	for t in offsets offsets-order; do
		"$fdr" verify $t.fdr >verify.out 2>&1
		for cmd in account stack graph replay convert; do
			"$fdr" $cmd $t.fdr 2>&1 >/dev/null | grep "^$t.fdr:" >cmd.out
			if [ -s verify.out ] && cmp -s verify.out cmd.out; then
				ok "$path: $cmd reports $t's damage at verify's offsets"
			else
				fail "$path: $cmd reports $t's damage at verify's offsets"
				diff verify.out cmd.out
			fi
		done
	done

	# class 3 (vlimit: the bound, proved by ulimit -v where the build is not sanitized)
	before=$fails
	for cmd in account stack graph replay convert extract-map; do
		q=-q; [ "$cmd" = extract-map ] && q=
		(vlimit 16384; "$fdr" $cmd $q big.fdr >out) ||
			fail "$path: $cmd on one 16 MiB buffer within 16 MiB"
	done
	"$fdr" account -q -f csv big.fdr >out
	grep -q "^1,1048576," out || fail "$path: 1048576 calls in the 16 MiB buffer"
	[ $fails = $before ] && ok "$path: one 16 MiB buffer streamed in bounded memory"

	before=$fails
	for cmd in account stack "stack -P" graph replay convert extract-map; do
		q=-q; [ "$cmd" = extract-map ] && q=
		(vlimit $((32768 + 200000 / 2)); "$fdr" $cmd $q fns.fdr >/dev/null) ||
			fail "$path: $cmd on 200000 functions within 32 MiB + 512 B each"
		(vlimit $((32768 + 40000)); "$fdr" $cmd $q threads.fdr >/dev/null) ||
			fail "$path: $cmd on 40000 threads within 32 MiB + 1 KiB each"
	done
	[ $fails = $before ] && ok "$path: 200000 functions, 40000 threads in bounded memory"

	before=$fails
	for f in chrome perfetto; do
		if ! (vlimit $((32768 + 40)); "$fdr" convert -q --format $f sorters.fdr -o sorters.$f) 2>err ||
		   [ -s err ]; then
			fail "$path: convert --format $f of 40 threads of 20001 calls within 32 MiB:"
			cat err
		fi
	done
	# each thread's outer call outlives the window: a begin and an end event,
	# never "ended":"never" (every call ends; that label was put on them)
	x=$(grep -c '"ph":"X"' sorters.chrome) b=$(grep -c '"ph":"B"' sorters.chrome)
	e=$(grep -c '"ph":"E"' sorters.chrome) never=$(grep -c '"ended":"never"' sorters.chrome)
	early=$(grep -c '"ended":"unknown when written"' sorters.chrome)
	[ $((x + b)) = $((40 * 20001)) ] && [ "$b" = "$e" ] && [ "$b" -ge 40 ] && [ "$never" = 0 ] &&
		[ "$early" = "$b" ] ||
		fail "$path: sorters.chrome: $x complete, $b begin ($early unknown when written), $e end events, $never never ended; want $((40 * 20001)) calls, all ended"
	[ $fails = $before ] && ok "$path: 40 threads that each fill the start-order window, in bounded memory"

	before=$fails
	"$fdr" replay -q deep.fdr >deep.replay || fail "$path: replay of 5000 nested calls"
	lines=$(wc -l <deep.replay) longest=$(awk '{ if (length > m) m = length } END { print m }' deep.replay)
	[ "$lines" = 10000 ] && [ "$longest" -lt 600 ] &&
		grep -q '^ .*|  *\[level 201\] #' deep.replay && grep -q '\[level 4999\] #3();' deep.replay &&
		! grep -q '\[level 200\]' deep.replay ||
		fail "$path: replay of 5000 nested calls: $lines lines (want 10000: a header, 4999 openings and closings, one leaf), the longest $longest bytes (want < 600, levels past 200 marked)"
	"$fdr" stack -q -c deep.fdr >deep.stack 2>err || fail "$path: stack of 5000 nested calls"
	lines=$(wc -l <deep.stack) folded=$(grep -c '^\([^;]*;\)\{1000\}\[calls deeper than 1000 levels\] 4000$' deep.stack)
	[ "$lines" = 1001 ] && [ "$folded" = 1 ] ||
		fail "$path: stack -c of 5000 nested calls: $lines lines (want 1001), $folded folded frame at level 1001 counting 4000 calls (want 1)"
	"$fdr" stack deep.fdr 2>err >/dev/null
	grep -q 'calls deeper than 1000 levels are folded into one frame' err ||
		fail "$path: stack does not say it folded the calls deeper than 1000 levels"
	[ $fails = $before ] && ok "$path: 5000 nested calls: replay and stack output bounded, marked"

	before=$fails
	for cmd in account stack graph replay convert "convert --format perfetto" extract-map; do
		q=-q; [ "$cmd" = extract-map ] && q=
		timeout 60 "$fdr" $cmd $q samename.fdr >/dev/null 2>&1 ||
			fail "$path: $cmd on 300000 functions named f: failed or over 60 s"
	done
	"$fdr" account -q samename.fdr | grep -q 'f (#300000)$' ||
		fail "$path: account does not tell 300000 functions named f apart"
	[ $fails = $before ] && ok "$path: 300000 functions of one name"

	before=$fails
	for cmd in account stack graph replay convert; do
		timeout 60 "$fdr" $cmd -q unmatched.fdr >/dev/null 2>&1 ||
			fail "$path: $cmd on 400000 exits not on a 400000-deep stack: failed or over 60 s"
	done
	# 65536 entries kept, 334464 too deep (closed by the first exits), then
	# 65536 exits of an id on no frame
	"$fdr" account unmatched.fdr 2>err >/dev/null
	grep -q 'unmatched: 65536 exits without entry, 65536 entries without exit,' err &&
		grep -q ': 334464 calls deeper than 65536 levels counted' err ||
		{ fail "$path: account does not count 65536 unmatched exits and entries, 334464 too deep"; cat err; }
	"$fdr" account -f csv unwind.fdr 2>err >out
	grep -q 'unmatched: 50 exits without entry, 0 entries without exit, 299 closed by an outer exit,' err &&
		[ "$(awk -F, 'NR > 1 { n += $2 } END { print n }' out)" = 300 ] ||
		{ fail "$path: account of 300 nested calls unwound past 64 frames"; cat err out; }
	"$fdr" account counts.fdr 2>err >/dev/null
	grep -q 'unmatched: 1 exits without entry, 0 entries without exit, 299 closed by an outer exit,' err ||
		{ fail "$path: account of calls pushed while the per-id counts grow"; cat err; }
	[ $fails = $before ] && ok "$path: exits on deep stacks: unmatched at once, unwinds exact"

	before=$fails
	for cmd in account stack graph replay convert; do
		(vlimit 32768; "$fdr" $cmd deeper.fdr -o /dev/null >/dev/null 2>err) ||
			(vlimit 32768; "$fdr" $cmd deeper.fdr >/dev/null 2>err) ||
			fail "$path: $cmd on 70000 nested calls within 32 MiB"
		grep -q ': 4464 calls deeper than 65536 levels counted, not timed nor shown' err ||
			fail "$path: $cmd does not say 4464 calls were too deep to keep"
	done
	"$fdr" account -q -f csv deeper.fdr >out
	[ "$(awk -F, 'NR > 1 { n += $2 } END { print n }' out)" = 65536 ] ||
		fail "$path: account of 70000 nested calls: want the 65536 kept ones timed"
	[ $fails = $before ] && ok "$path: 70000 nested calls: 65536 kept, the rest counted"
done

echo "$fails failed"
[ "$fails" = 0 ]
