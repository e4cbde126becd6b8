#!/usr/bin/env bash
# snapshot_race.sh GDB RECORDER FDRTRACE
#
# Three interleavings of a ring snapshot (dump_signal) with the program,
# made certain with gdb (skipped without it):
#
# A. "recorder snap" raises SIGUSR2 and waits for the snapshot file before
#    it records again. The program is held once its handler asked for the
#    snapshot, and the flush thread alone runs until it writes the ring
#    (fdr_ring_write()); then the program alone polls for the file four
#    times. The file must not be there yet, so the program must
#    not go on: the snapshot used to be created by name before it was
#    written, the program saw it, ran on and overwrote the ring's buffers
#    before they were written (ring::sigusr2_snapshot_mid_run... failed
#    now and then with a snapshot of one or two buffers). Then the
#    snapshot holds the ring as it was at the signal: the program's
#    buffer_max (8) buffers, numbered one after the other.
#
# B. "recorder snaprun" records on while the snapshot is written. The
#    flush thread is held just after its scan found the oldest buffer and
#    before it claims it; the program alone takes that buffer back, fills
#    it and hands it over again (a handover number past the snapshot's
#    bound, newer than the partial buffer the snapshot copied). The
#    snapshot must not write it: it used to, as the number was read again
#    after the scan, so a thread's buffer numbers went backwards in the
#    snapshot (its partial copy came after its next buffer).
#
# C. "recorder snapcrash" raises SIGUSR2 and dies of a SIGSEGV at once. The
#    flush thread is held between its two stretches of the file lock (it
#    copies the threads' partial buffers without it); the program alone
#    crashes and its handler writes the crash dump. The dump must go to
#    the trace, closed how=signal with the crashing call: the snapshot's
#    descriptor used to stay in place while the lock was free, so the
#    crash dump went to the snapshot (now unnamed, so lost) and the trace
#    ended without its close marker.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../race_skip.sh"
gdb=$1
recorder=$(readlink -f "$2") tool=$(readlink -f "$3")	# it runs in a directory of its own
dir=$(mktemp -d /tmp/fdrtrace-snaprace-XXXXXX)
trap "${KEEP:+:} rm -rf $dir" EXIT
opts="policy=ring buffer_size=4096 buffer_max=8 dump_signal=USR2"
fail=0

if [[ ! -x $gdb ]]; then
  race_cannot_run "no gdb"
fi

# run_gdb NAME MODE: run the recorder in $dir/NAME under $dir/NAME.gdb
run_gdb() {
  mkdir -p "$dir/$1"
  (cd "$dir/$1" && FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="$opts" \
    timeout 120 "$gdb" -q -batch -nx -x "$dir/$1.gdb" --args "$recorder" "$2" \
    > "$dir/$1.out" 2>&1)
  if grep -q "ptrace: Operation not permitted\|Could not trace" "$dir/$1.out"; then
    race_cannot_run "gdb may not trace here (ptrace denied)"
  fi
}

# buffer numbers of the program's thread in trace $1, one a line, in file order
numbers() {
  "$tool" dump "$1" | sed -n "s/.* FDRx stack tid=$2 .* buffer_no=\([0-9]*\) .*/\1/p"
}

# increasing FILE: the numbers in FILE go up one at a time
consecutive() {
  awk 'NR > 1 && $1 != prev + 1 { bad = 1 } { prev = $1 } END { exit bad }' "$1"
}

# ---- A: the snapshot file appears whole ----
cat > "$dir/a.gdb" <<GDB
set pagination off
set confirm off
set breakpoint pending on
handle SIGUSR2 nostop noprint pass
break fdr_flush_request_snapshot
run
delete 1
set scheduler-locking on
finish
printf "program asked for the snapshot\n"
thread 2
break fdr_ring_write if keep
continue
delete
printf "writer in the snapshot\n"
shell echo "snapshot files while it is written: \$(ls | grep -c '\.snap')"
thread 1
break snapshot_files
break work
continue
continue
continue
continue
delete
printf "program held back\n"
set scheduler-locking off
continue
GDB
run_gdb a snap
out=$dir/a.out
if ! grep -q '^Thread 2 "fdrtrace-flush" hit' "$out" || ! grep -q "^program held back$" "$out" ||
   ! grep -q "exited normally" "$out"; then
  echo "FAIL (A): the interleaving did not happen as planned:"
  cat "$out"
  exit 1
fi
seen=$(sed -n 's/^snapshot files while it is written: \([0-9]*\)$/\1/p' "$out")
polls=$(grep -c "hit Breakpoint [0-9]*, .*snapshot_files" "$out")
went_on=$(grep -c "hit Breakpoint [0-9]*, .*work ()" "$out")
echo "A: snapshot files seen while it was written: $seen; the program polled $polls times," \
  "went on $went_on times"
if [[ $seen != 0 ]]; then
  echo "FAIL (A): the snapshot's file was there before it was written"
  fail=1
fi
if [[ $went_on != 0 || $polls -lt 4 ]]; then
  echo "FAIL (A): the program went on recording while the snapshot was written"
  fail=1
fi
snap=$(ls "$dir"/a/*.snap1.fdr 2>/dev/null | head -1)
if [[ -z $snap ]] || ! grep -q "^snapshots 1$" "$out"; then
  echo "FAIL (A): no snapshot, or the program did not see it"; cat "$out"; exit 1
fi
"$tool" verify "$snap" || { echo "FAIL (A): the snapshot does not verify"; fail=1; }
pid=$(basename "$snap" | sed -n 's/.*\.\([0-9]*\)\.snap1\.fdr$/\1/p')
numbers "$snap" "$pid" > "$dir/a.numbers"
n=$(wc -l < "$dir/a.numbers")
echo "A: the snapshot holds $n buffers of the program's thread:" $(cat "$dir/a.numbers")
if [[ $n != 8 ]] || ! consecutive "$dir/a.numbers"; then
  echo "FAIL (A): not the ring at the signal (buffer_max=8 buffers, one after the other)"
  fail=1
fi

# ---- B: a buffer handed over again between the scan and the claim ----
cat > "$dir/b.gdb" <<'GDB'
set pagination off
set confirm off
set breakpoint pending on
handle SIGUSR2 nostop noprint pass
break fdr_flush_request_snapshot
run
delete 1
set scheduler-locking on
finish
printf "program asked for the snapshot\n"
thread 2
break fdr_ring_write if keep
continue
delete
break ring_oldest
continue
delete
finish
set $b = $
printf "writer scanned: oldest buffer %d, handover %lu, bound %lu\n", $b->index, $b->ring_seq, upto
thread 1
break fdr_ring_put if b == $b
continue
finish
delete
printf "handed over again: buffer %d, handover %lu\n", $b->index, $b->ring_seq
set scheduler-locking off
continue
GDB
run_gdb b snaprun
out=$dir/b.out
limit=$(sed -n 's/^writer scanned: oldest buffer [0-9]*, handover [0-9]*, bound \([0-9]*\)$/\1/p' "$out")
again=$(sed -n 's/^handed over again: buffer [0-9]*, handover \([0-9]*\)$/\1/p' "$out")
if [[ -z $limit || -z $again ]] || ! grep -q '^Thread 2 "fdrtrace-flush" hit' "$out" ||
   ! grep -q "exited normally" "$out" || ((again <= limit)); then
  echo "FAIL (B): the interleaving did not happen as planned:"
  cat "$out"
  exit 1
fi
echo "B: the snapshot's bound is handover $limit; its oldest buffer was handed over again as $again"
snap=$(ls "$dir"/b/*.snap1.fdr 2>/dev/null | head -1)
if [[ -z $snap ]]; then
  echo "FAIL (B): no snapshot"; cat "$out"; exit 1
fi
"$tool" verify "$snap" || { echo "FAIL (B): the snapshot does not verify"; fail=1; }
pid=$(basename "$snap" | sed -n 's/.*\.\([0-9]*\)\.snap1\.fdr$/\1/p')
numbers "$snap" "$pid" > "$dir/b.numbers"
echo "B: the snapshot's buffers of the program's thread:" $(cat "$dir/b.numbers")
if ! sort -n -c -u "$dir/b.numbers" 2>/dev/null; then
  echo "FAIL (B): the thread's buffer numbers do not only grow (a buffer newer than the bound)"
  fail=1
fi
if "$tool" account "$snap" 2>&1 >/dev/null | grep "numbered as one already read"; then
  fail=1
fi
# ---- C: a crash while the snapshot's writer does not hold the file lock ----
cat > "$dir/c.gdb" <<'GDB'
set pagination off
set confirm off
set breakpoint pending on
handle SIGUSR2 nostop noprint pass
handle SIGSEGV nostop noprint pass
break fdr_flush_request_snapshot
run
delete 1
set scheduler-locking on
finish
printf "program asked for the snapshot\n"
thread 2
break fdr_threads_foreach if fn == fl_copy_partial
continue
delete
printf "writer between its two stretches of the file lock\n"
thread 1
continue
GDB
run_gdb c snapcrash
out=$dir/c.out
if ! grep -q '^Thread 2 "fdrtrace-flush" hit' "$out" ||
   ! grep -q "^writer between its two stretches of the file lock$" "$out"; then
  echo "FAIL (C): the interleaving did not happen as planned:"
  cat "$out"
  exit 1
fi
trace=$(ls "$dir"/c/*.fdr 2>/dev/null | grep -v '\.snap' | head -1)
if [[ -z $trace ]]; then
  echo "FAIL (C): no trace"; exit 1
fi
closed=$("$tool" info "$trace" | sed -n 's/^closed: *//p')
echo "C: the trace: closed $closed"
"$tool" verify "$trace" || { echo "FAIL (C): the trace does not verify"; fail=1; }
if [[ $closed != "yes, signal:"* ]]; then
  echo "FAIL (C): the crash dump is not in the trace"
  fail=1
elif ! "$tool" replay "$trace" 2>/dev/null | grep -q "last_moment: did not return"; then
  echo "FAIL (C): the trace does not end in the crashing call"
  fail=1
fi

[[ $fail == 0 ]] && echo "PASS"
exit $fail
