#!/bin/bash
# ring_snap.sh FDRTRACE LOSSY WORKDIR
#
# Ring policy snapshots taken while threads run (issue 10): a snapshot
# writes the ring's buffers oldest first, then a copy of each thread's
# partial buffer. A thread's buffer handed over between the copy and the
# ring's write used to be written twice (and a thread's ring buffers newer
# than its copy before it), so a buffer number repeated or went back and
# its records and drops were counted twice or left out. Here
# targets/lossy.c runs 4 threads in a 32-buffer ring of 4 KiB buffers (so
# buffers are handed over every few microseconds) and gets SIGUSR2
# (dump_signal) every 20 ms; in every snapshot and in the final trace:
#   - each thread's buffer numbers (FDRx stack records) only grow;
#   - the trace verifies, and no analysis says a buffer was read twice;
#   - records kept + lost = records made: each thread's newest buffer says
#     how many function records the thread made before it (records_before)
#     and holds its own; kept are the trace's function records, lost what
#     the analysis counts lost in gaps (the buffers the numbering says were
#     overwritten, between two kept buffers and before a thread's first),
#     and info's "ring numbering" line says as many.
# And a snapshot taken once the threads ended (fdrtrace_flush()) counts
# every record made before it, kept or dropped (below).
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") prog=$(abs "$2") work=$(abs "$3")
rm -rf "$work"
mkdir -p "$work"
cd "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

snaps=0 checked=0
for bmax in 32 8; do
	rm -f fdrtrace.*.fdr
	FDRTRACE_MODE=fdr \
		FDRTRACE_OPTIONS="policy=ring buffer_size=4096 buffer_max=$bmax dump_signal=USR2" \
		"$prog" 4 20000 >out 2>err &
	pid=$!
	# SIGUSR2 only once the runtime catches it (SigCgt bit 11): it would kill the program
	for _ in $(seq 500); do
		cgt=$(sed -n 's/^SigCgt:\t*//p' "/proc/$pid/status" 2>/dev/null) || break
		[ -n "$cgt" ] && [ $((0x$cgt & 0x800)) -ne 0 ] && break
		sleep 0.01
	done
	while kill -USR2 "$pid" 2>/dev/null; do
		sleep 0.02
	done
	wait "$pid" || { cat err >&2; fail "the program failed"; }
	for f in fdrtrace.*.fdr; do
		case $f in *.snap*) snaps=$((snaps + 1)) ;; esac
		"$fdr" verify "$f" || fail "$f does not verify"
		"$fdr" dump "$f" >dump.txt
		# tid, buffer_no, records_before of every stack record, in file order
		sed -n 's/.*FDRx stack tid=\([0-9]*\) .*buffer_no=\([0-9]*\) records_before=\([0-9]*\).*/\1 \2 \3/p' \
			dump.txt >stacks.txt
		# a snapshot taken before any thread recorded holds no buffer to number
		# (seen in the ASan build, where the first USR2 came that early)
		if ! grep -q '^fun ' dump.txt; then
			[ ! -s stacks.txt ] || fail "$f: stack records and no function record"
			continue
		fi
		[ -s stacks.txt ] || fail "$f: no numbered stack record"
		awk -v f="$f" '($1 in last) && $2 <= last[$1] {
				print "FAIL: " f ": thread " $1 " buffer " $2 " after " last[$1]; bad = 1
			}
			{ last[$1] = $2 }
			END { exit bad }' stacks.txt >&2 || exit 1
		"$fdr" account "$f" >/dev/null 2>sum.txt
		! grep -q "numbered as one already read" sum.txt ||
			{ cat sum.txt >&2; fail "$f: a buffer read twice"; }
		# kept + lost = made: a thread made the records_before of its
		# newest buffer and that buffer's own; the analysis counts lost
		# what the numbering says is missing, at its start too
		made_kept=$(awk '
			/^buf new / { cur = "" }
			/FDRx stack tid=/ {
				match($0, /FDRx stack tid=[0-9]+/); cur = substr($0, RSTART + 15, RLENGTH - 15)
				match($0, /records_before=[0-9]+/); before[cur] = substr($0, RSTART + 15, RLENGTH - 15)
				own[cur] = 0
			}
			/^fun / { kept++; if (cur != "") own[cur]++ }
			END { for (t in before) made += before[t] + own[t]; print made, kept + 0 }' dump.txt)
		lost=$(sed -n 's/.*: \([0-9]*\) records lost in [0-9]* gaps\{0,1\};.*/\1/p' sum.txt)
		set -- $made_kept
		[ "$1" -eq $(($2 + ${lost:-0})) ] ||
			{ cat sum.txt >&2; fail "$f: made $1, kept $2 + lost ${lost:-0}"; }
		# info says what the numbering says, as the analyses count it
		numbered=$("$fdr" info "$f" | sed -n 's/^ring numbering: *//p' |
			grep -o '[0-9]* records' | awk '{ s += $1 } END { print s + 0 }')
		[ "$numbered" -eq "${lost:-0}" ] ||
			{ "$fdr" info "$f" >&2; fail "$f: info's ring numbering $numbered, account's gaps ${lost:-0}"; }
		checked=$((checked + 1))
	done
done
[ "$snaps" -ge 10 ] || fail "only $snaps snapshots were written"

# A snapshot counts every record made before it: kept, or dropped in its
# drop records (the threads' drops not yet in a buffer, those of buffers
# overwritten, of threads that ended). lossy.c's "flush" calls
# fdrtrace_flush() once its threads are joined, so the snapshot's records
# kept + dropped are the exit line's, less main's exit: exactly. 4 threads
# in 2 buffers lose records pool full and overwritten, in 8 overwritten.
for bmax in 2 8; do
	rm -f fdrtrace.*.fdr
	FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="policy=ring buffer_size=4096 buffer_max=$bmax" \
		"$prog" 4 2000 flush >out 2>err || { cat err >&2; fail "the program failed"; }
	set -- fdrtrace.*.snap1.fdr
	[ -s "$1" ] || fail "buffer_max=$bmax: no snapshot"
	snap=$("$fdr" info "$1" |
		sed -n 's/^closed: *yes, snapshot: \([0-9]*\) function records (\([0-9]*\) dropped).*/\1 + \2/p')
	all=$(sed -n 's/^fdrtrace: .*: \([0-9]*\) records, \([0-9]*\) lost.*/\1 + \2/p' err)
	[ -n "$snap" ] && [ -n "$all" ] || { cat err >&2; fail "buffer_max=$bmax: no counts"; }
	# ring ignores on_full: the exit line must not advise it (issue 33)
	! grep -q "on_full" err || { cat err >&2; fail "buffer_max=$bmax: ring's exit line names on_full"; }
	[ $((snap + 1)) -eq $((all)) ] ||
		fail "buffer_max=$bmax: the snapshot has $snap = $((snap)), the exit line $all = $((all)) (main's exit: 1 more)"
	[ $((snap)) -gt "${snap%% *}" ] || fail "buffer_max=$bmax: the snapshot lost nothing"
done
echo "ok: $snaps snapshots and $checked traces: every thread's buffers numbered in order, none read twice, kept + lost = made; snapshots count every drop"
