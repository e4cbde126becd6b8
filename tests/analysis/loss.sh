#!/bin/bash
# loss.sh FDRTRACE LOSSY WORKDIR [LLVM_XRAY]
#
# The loss invariant (issue 10): a trace that lost records never reports
# more than the truth. tests/analysis/targets/lossy.c runs a fixed set of
# calls; for each case (policy stream or ring, 1 or 4 threads, format
# version 5 or 1: all eight) it is run twice with 4 KiB buffers:
#   - lossless: a pool that holds the whole run (and on_full=wait in
#     stream), whose exit line must say "0 lost";
#   - starved: buffer_max=2, whose exit line must say records were lost,
#     and whose records kept + lost must be the records made (the lossless
#     run's count, exactly).
# And on_full=wait on the starved pool: 0 lost, the exact counts, and the
# waits in the trace and in the exit line.
# Then, from `fdrtrace account`, for every function of the starved trace:
# its count is at most the lossless count (exactly: the program is
# deterministic), and its sum and self time are at most the lossless ones
# (but for the sum of a function with calls timed across a gap, which is
# the real time of a run slowed by its losses: count and self only)
# (allowing timing noise: x1.5 + 5 ms, since the two runs are separate
# runs on a shared machine; a case whose times break that bound is run
# again, up to 4 times, and a function passes when its least time with
# losses is within the bound of its most without: one preemption inside
# a short function can add milliseconds to its sum in one run, a joined
# gap does so on every run). A trace whose gaps are joined (an entry before
# a gap matched with an exit after it) shows main's and worker's self time
# at the whole gap, and fails here. Also: where the stream traces have
# gaps, replay prints a line with "lost" at each and convert emits an
# instant event ("cat":"gap" in Chrome JSON, "records lost" in Perfetto),
# and the stderr summary gives the totals.
# A write error (write_error: the file size limit, a full disk) ends the
# trace with a close "stopped" naming it, which info, account and record
# report, and counts within the lossless ones.
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") prog=$(abs "$2") work=$(abs "$3") xray=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

# account's text table in seconds as "name count total self" (times '-' when untimed;
# self '-' or marked '*' when calls timed across a gap have no known self)
table() {
	"$fdr" account -q --seconds "$1" | awk '
		NR == 1 { next }
		NR == 2 { off = ($0 ~ /spanning/) + ($0 ~ /unwound/); next }
		/^\((spanning|unwound)/ { next }
		/^\(\*:/ { next }
		{
			# "*": some calls timed across a gap: their durations are
			# the real ones of the run with losses, slowed by them (the
			# starved hooks follow the lost calls): no bound on the sum
			timed_across = /\*/
			gsub(/[\[\],*]/, " ")
			n = split($0, f, " ")
			s = f[8 + off]; self = f[9 + off]
			if (s == "-") { s = 0; self = 0 }
			if (self == "-") self = 0	# no call with a known self (timed across a gap)
			if (timed_across) s = 0
			print f[n], f[2], s, self
		}' | sort
}

# run NAME THREADS ROUNDS OPTIONS: one run, its trace renamed NAME.fdr, stderr in NAME.err
run() {
	rm -f fdrtrace.*.fdr
	FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="$4" "$prog" "$2" "$3" >"$1.out" 2>"$1.err" ||
		{ cat "$1.err" >&2; fail "$1: the program failed"; }
	set -- "$1" fdrtrace.*.fdr
	[ "$#" -eq 2 ] && [ -s "$2" ] || fail "$1: expected one trace"
	mv "$2" "$1.fdr"
}

attempt() {	# attempt POLICY THREADS ROUNDS VERSION: checks all but the times, which it adds to NAME.times
	local policy=$1 threads=$2 rounds=$3 v=$4 name="$1-$2t-v$4" extra=""
	[ "$policy" = stream ] && extra="on_full=wait"
	run "$name-ok" "$threads" "$rounds" \
		"policy=$policy format_version=$v buffer_size=4096 buffer_max=8192 $extra"
	grep -q ": [0-9]* records, 0 lost" "$name-ok.err" ||
		{ cat "$name-ok.err" >&2; fail "$name: the reference run lost records"; }
	run "$name-lossy" "$threads" "$rounds" \
		"policy=$policy format_version=$v buffer_size=4096 buffer_max=2"
	grep -q ": [0-9]* records, [1-9][0-9]* lost (" "$name-lossy.err" ||
		{ cat "$name-lossy.err" >&2; fail "$name: the starved run lost nothing"; }
	cmp -s "$name-ok.out" "$name-lossy.out" || fail "$name: the program's output changed"
	# every record made is kept or counted lost (ring: also the drops that
	# overwritten buffers had reported)
	made=$(sed -n 's/^fdrtrace: .*: \([0-9]*\) records, 0 lost.*/\1/p' "$name-ok.err")
	kept_lost=$(sed -n 's/^fdrtrace: .*: \([0-9]*\) records, \([0-9]*\) lost.*/\1 + \2/p' \
		"$name-lossy.err")
	[ -n "$made" ] && [ -n "$kept_lost" ] && [ "$((kept_lost))" -eq "$made" ] ||
		fail "$name: $kept_lost records kept + lost, $made made"

	table "$name-ok.fdr" >"$name-ok.tab"
	table "$name-lossy.fdr" >"$name-lossy.tab"
	[ -s "$name-ok.tab" ] || fail "$name: empty account"
	join -a 2 -e MISSING -o 0,1.2,1.3,1.4,2.2,2.3,2.4 "$name-ok.tab" "$name-lossy.tab" |
	awk -v name="$name" '
		$2 == "MISSING" { print name ": " $1 " only in the trace with losses"; bad = 1; next }
		$5 + 0 > $2 + 0 { print name ": " $1 " count " $5 " > " $2; bad = 1 }
		END { exit bad }' || fail "$name: the trace with losses counts more calls than were made"
	# times: judged by check() over all attempts so far
	join -o 0,1.3,1.4,2.3,2.4 "$name-ok.tab" "$name-lossy.tab" >>"$name.times"

	if grep -q "reason=pool_empty.*first_tsc=" <("$fdr" dump "$name-lossy.fdr"); then
		"$fdr" dump "$name-lossy.fdr" >"$name.dump"
		# the drop records' gaps, and in ring policy the numbering's: a
		# thread's buffers numbered n then n + k, k > 1, or its first kept
		# one above 1 (overwritten buffers, with no drop record of their own)
		gaps=$(( $(grep -c "FDRx drop .*first_tsc=" "$name.dump") +
			$(sed -n 's/.*FDRx stack tid=\([0-9]*\) .*buffer_no=\([0-9]*\) .*/\1 \2/p' \
				"$name.dump" | awk '{
					if ($1 in last) { if ($2 > last[$1] + 1) g++ } else if ($2 > 1) g++
					last[$1] = $2
				} END { print g + 0 }') ))
		rm -f "$name.dump"
		lines=$("$fdr" replay -q "$name-lossy.fdr" | grep -c "\[lost [0-9]* record")
		[ "$lines" -eq "$gaps" ] || fail "$name: replay shows $lines gaps, the trace has $gaps"
		"$fdr" convert -q --format chrome "$name-lossy.fdr" -o "$name.json"
		[ "$(grep -o '"cat":"gap"' "$name.json" | wc -l)" -eq "$gaps" ] ||
			fail "$name: convert has not one instant event per gap"
		"$fdr" convert -q --format perfetto "$name-lossy.fdr" -o "$name.pftrace"
		python3 "$here/perfetto_check.py" "$name.pftrace" 2>"$name.pfcheck" >/dev/null ||
			{ cat "$name.pfcheck" >&2; fail "$name: convert's Perfetto trace is malformed"; }
		[ "$(sed -n 's/^# instant records lost: //p' "$name.pfcheck")" = "$gaps" ] ||
			fail "$name: convert --format perfetto has not one 'records lost' instant per gap"
		"$fdr" account "$name-lossy.fdr" 2>&1 >/dev/null | grep -q "records lost in $gaps gap" ||
			fail "$name: account's summary does not give the gaps"
	fi
	rm -f "$name"-*.fdr "$name.json" "$name.pftrace"
	return 0
}

# over_time NAME: the functions whose sum or self time is above the bound
# in every attempt so far. Per function, the least time of the traces with
# losses is set against the most of the lossless ones: a preemption lands
# in one run and not the next, while a joined gap inflates every run.
over_time() {
	awk -v name="$1" '
		!($1 in ls) || $4 + 0 < ls[$1] { ls[$1] = $4 + 0 }
		!($1 in lf) || $5 + 0 < lf[$1] { lf[$1] = $5 + 0 }
		$2 + 0 > os[$1] + 0 { os[$1] = $2 + 0 }
		$3 + 0 > of[$1] + 0 { of[$1] = $3 + 0 }
		END {
			for (f in ls) {
				if (ls[f] > 1.5 * os[f] + 0.005) print name ": " f " sum " ls[f] " > " os[f]
				if (lf[f] > 1.5 * of[f] + 0.005) print name ": " f " self " lf[f] " > " of[f]
			}
		}' "$1.times"
}

check() {	# check POLICY THREADS ROUNDS VERSION
	local i name="$1-$2t-v$4"
	rm -f "$name.times"
	for i in 1 2 3 4; do
		echo "=== $name (attempt $i)"
		attempt "$@"
		over_time "$name" >"$name.over"
		[ -s "$name.over" ] || return 0
		cat "$name.over"
	done
	fail "$name: the trace with losses reports more time than the truth in all $i attempts"
}

# on_full=wait on the same starved pool loses nothing: every call counted,
# exactly as in the lossless run, and the waits are in the trace.
waits() {	# waits THREADS ROUNDS VERSION
	local name="wait-$1t-v$3"
	echo "=== $name"
	run "$name" "$1" "$2" "format_version=$3 buffer_size=4096 buffer_max=2 on_full=wait"
	grep -q ": [0-9]* records, 0 lost; threads waited [0-9.]* s for free buffers (on_full=wait)" \
		"$name.err" || { cat "$name.err" >&2; fail "$name: on_full=wait lost records"; }
	table "$name.fdr" | awk '{ print $1, $2 }' >"$name.counts"
	# tree() to depth 6 is 127 calls, 254 leaves; each round adds one leaf_a
	printf '%s\n' "leaf_a $(($1 * $2 * 128))" "leaf_b $(($1 * $2 * 127))" "main 1" \
		"round_of $(($1 * $2))" "tree $(($1 * $2 * 127))" "worker $1" |
		sort >"$name.expected"
	diff -u "$name.expected" "$name.counts" || fail "$name: counts differ"
	"$fdr" dump "$name.fdr" | grep -q "FDRx wait " || fail "$name: no wait record"
	"$fdr" replay -q "$name.fdr" | grep -q "\[waited [0-9.]* s for a free buffer" ||
		fail "$name: replay shows no wait"
	rm -f "$name.fdr"
}

# fdrtrace record prints what each trace's close says, also when the
# program closed its standard error (xz does; a daemon's goes to /dev/null)
# and the runtime's own exit line went nowhere: the losses, and apart from
# them the records left out on purpose.
record_summary() {
	local line info
	echo "=== record-summary"
	rm -rf rec && mkdir rec
	"$fdr" record --no-preload -d rec -b 4K -m 2 -- \
		/bin/sh -c "exec 2>&-; exec '$prog' 1 3000 >/dev/null" 2>rec.err ||
		{ cat rec.err >&2; fail "record-summary: the program failed"; }
	! grep -q "^fdrtrace: " rec.err || fail "record-summary: an exit line on a closed stderr"
	line=$(grep "^fdrtrace record: .*/rec/fdrtrace\.an_lossy\.[0-9]*\.fdr: " rec.err) ||
		{ cat rec.err >&2; fail "record-summary: no line for the trace"; }
	case $line in
	*": "[0-9]*" records, "[1-9]*" lost (fdrtrace info says why"*) ;;
	*) fail "record-summary: the losses are not said: $line" ;;
	esac
	# the same numbers as the close record, as info reads it from the whole trace
	info=$("$fdr" info rec/fdrtrace.an_lossy.*.fdr |
		sed -n 's/^closed: *yes, exit: \([0-9]*\) function records (\([0-9]*\) dropped).*/\1 records, \2 lost/p')
	[ -n "$info" ] && case $line in *": $info ("*) true ;; *) false ;; esac ||
		fail "record-summary: '$line' is not what info says ($info)"
	rm -rf rec && mkdir rec
	"$fdr" record -d rec -O exclude=leaf_b -- "$prog" 1 100 >/dev/null 2>rec.err ||
		{ cat rec.err >&2; fail "record-summary: the program failed"; }
	# tree() has 127 leaf_b calls a round: 2 records each, none lost
	grep -q "^fdrtrace record: .*: [0-9]* records, 0 lost, 25400 left out on purpose\$" rec.err ||
		{ cat rec.err >&2; fail "record-summary: the records left out are not named apart"; }
	rm -rf rec
}

# llvm-xray reads threads of hundreds of 4 KiB buffers once convert
# --format xray made each one buffer (xray.sh); as written, llvm-xray 14
# misorders them and stops
xray_many() {
	echo "=== xray-many"
	run xray-many 4 300 "buffer_size=4096 on_full=wait"
	"$fdr" extract-map xray-many.fdr -o xray-many.yaml
	! "$xray" account -m xray-many.yaml xray-many.fdr >/dev/null 2>&1 ||
		echo "(llvm-xray read the trace as written: its sort is fixed)"
	bash "$here/xray.sh" "$fdr" "$xray" "$work/xray-many.fdr" "$work/xray" >xray-many.log ||
		{ cat xray-many.log >&2; fail "xray-many: llvm-xray and fdrtrace differ"; }
	cat xray-many.log
	grep -q "^--- thread [0-9]*: [0-9]* functions, \([2-9][0-9]\|[1-9][0-9][0-9]\)[0-9]* buffers" \
		xray-many.log || fail "xray-many: no thread had more than 16 buffers"
	rm -rf xray-many.fdr "$work/xray"
}

# werr_check NAME ERROR: the trace NAME.fdr of a run that hit a write
# error (stderr in NAME.err, output in NAME.out) against werr-ok: the
# output is unchanged; the trace verifies and ends with a close "stopped"
# naming ERROR, whose records are what the file holds; info and account
# say so; every function's count is at most the lossless one
werr_check() {
	local name=$1 err=$2 info closed func
	cmp -s werr-ok.out "$name.out" || fail "$name: the program's output changed"
	grep -q "write failed: $err; recording stopped" "$name.err" ||
		{ cat "$name.err" >&2; fail "$name: the error is not reported"; }
	"$fdr" verify "$name.fdr" >/dev/null || fail "$name: the trace does not verify"
	info=$("$fdr" info "$name.fdr")
	closed=$(echo "$info" | sed -n 's/^closed: *yes, stopped: \([0-9]*\) function records.*/\1/p')
	func=$(echo "$info" | sed -n 's/^  function *\([0-9]*\) .*/\1/p')
	[ -n "$closed" ] || { echo "$info" >&2; fail "$name: no close marker \"stopped\""; }
	[ "$closed" = "$func" ] ||
		fail "$name: the close counts $closed records, the file holds $func"
	echo "$info" | grep -q "^stopped by: *a write failed ($err)" ||
		fail "$name: info does not say why recording stopped"
	"$fdr" account "$name.fdr" 2>&1 >/dev/null |
		grep -q ": recording stopped early, a write failed ($err)" ||
		fail "$name: account does not say recording stopped early"
	table "$name.fdr" >"$name.table"
	join werr-ok.table "$name.table" | awk -v n="$name" '
		$5 > $2 { print "FAIL: " n ": " $1 " counted " $5 " > " $2; bad = 1 }
		END { exit bad }' >&2 || fail "$name: a count above the lossless one"
	echo "$name: stopped by '$err' with $closed records kept, $(awk '{ s += $2 } END { print s }' "$name.table") of $(awk '{ s += $2 } END { print s }' werr-ok.table) calls, no count above the lossless one"
}

# A write error: the file size limit (ulimit -f), in both format versions
# and under fdrtrace record, and a full disk where a small tmpfs can be
# mounted (unshare -m: root).
write_error() {
	local v dir
	echo "=== write-error"
	run werr-ok 2 300 "buffer_size=4096 on_full=wait"
	table werr-ok.fdr | sort >werr-ok.table
	for v in 5 1; do
		rm -f fdrtrace.*.fdr
		(ulimit -f 1024
		 FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="format_version=$v buffer_size=4096 on_full=wait" \
			"$prog" 2 300 >"werr-fsize-v$v.out" 2>"werr-fsize-v$v.err") ||
			fail "werr-fsize-v$v: the program failed"
		mv fdrtrace.*.fdr "werr-fsize-v$v.fdr"
		[ "$(stat -c %s "werr-fsize-v$v.fdr")" -le $((1024 * 1024)) ] ||
			fail "werr-fsize-v$v: the trace is past the limit"
		werr_check "werr-fsize-v$v" "File too large"
	done
	# max_size: the same stop as ulimit -f, named as max_size (issue 33: a
	# g++-instrumented build tool wrote 37 GB), in both format versions
	for v in 5 1; do
		rm -f fdrtrace.*.fdr
		FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="format_version=$v buffer_size=4096 on_full=wait max_size=512K" \
			"$prog" 2 300 >"werr-max-v$v.out" 2>"werr-max-v$v.err" || fail "werr-max-v$v: the program failed"
		mv fdrtrace.*.fdr "werr-max-v$v.fdr"
		[ "$(stat -c %s "werr-max-v$v.fdr")" -le $((512 * 1024)) ] ||
			fail "werr-max-v$v: the trace is past max_size ($(stat -c %s "werr-max-v$v.fdr") bytes)"
		grep -q ": max_size reached: File too large; recording stopped" "werr-max-v$v.err" ||
			{ cat "werr-max-v$v.err" >&2; fail "werr-max-v$v: the stop does not name max_size"; }
		sed -i 's/: max_size reached: /: write failed: /' "werr-max-v$v.err"
		werr_check "werr-max-v$v" "File too large"
	done
	rm -rf rec && mkdir rec
	(ulimit -f 1024; "$fdr" record -d rec -b 4K -O on_full=wait -- "$prog" 2 300 \
		>/dev/null 2>rec.err) || { cat rec.err >&2; fail "werr-record: the program failed"; }
	grep -q "^fdrtrace record: .*: [0-9]* records, [0-9]* lost, recording stopped early: a write failed (File too large)" rec.err ||
		{ cat rec.err >&2; fail "werr-record: record does not say recording stopped"; }
	rm -rf rec
	dir=$work/werr-full
	mkdir -p "$dir"
	if unshare -m true 2>/dev/null; then
		unshare -m sh -c "mount -t tmpfs -o size=1m fdrtrace-test '$dir' && cd '$dir' &&
			FDRTRACE_MODE=fdr FDRTRACE_OPTIONS='buffer_size=4096 on_full=wait' \
			'$prog' 2 300 >'$work/werr-full.out' 2>'$work/werr-full.err' &&
			mv fdrtrace.*.fdr '$work/werr-full.fdr'" || fail "werr-full: the run failed"
		werr_check werr-full "No space left on device"
	else
		echo "(unshare -m refused: no tmpfs to fill, the full-disk case skipped)"
	fi
	rm -rf "$dir" werr-*.fdr
}

# The exit line comes after the output the program buffered to its end
# (an_lossy prints its sum at exit, fully buffered into a file): in
# `prog >out 2>&1` it used to be the file's first line
exit_line_last() {
	echo "=== exit-line-last"
	rm -f fdrtrace.*.fdr
	FDRTRACE_MODE=fdr "$prog" 1 10 >exit-line.txt 2>&1 || fail "exit-line-last: the program failed"
	[ "$(wc -l <exit-line.txt)" -eq 2 ] || { cat exit-line.txt >&2; fail "exit-line-last: not two lines"; }
	sed -n 1p exit-line.txt | grep -q "^[0-9][0-9]*\$" &&
		sed -n 2p exit-line.txt | grep -q "^fdrtrace: .*: [0-9]* records, 0 lost\$" ||
		{ cat exit-line.txt >&2; fail "exit-line-last: the exit line is not after the output"; }
	rm -f fdrtrace.*.fdr exit-line.txt
}

record_summary
write_error
exit_line_last
if [ -n "$xray" ] && command -v "$xray" >/dev/null; then
	xray_many
else
	echo "(llvm-xray not found: xray-many skipped)"
fi
waits 1 3000 5
waits 4 800 1

# both policies, 1 and 4 threads, versions 5 and 1: every combination
check stream 1 3000 5
check stream 4 800 5
check stream 1 3000 1
check stream 4 800 1
check ring 1 3000 5
check ring 4 800 5
check ring 1 3000 1
check ring 4 800 1
echo "PASS"
