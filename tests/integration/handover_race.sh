#!/usr/bin/env bash
# handover_race.sh GDB API_TARGET FDRTRACE
#
# A thread whose hook got past the gate just before the exit dump began
# hands its full buffer over after the dump started and before the dump
# took that thread's snapshot. That buffer must be written: it used to be
# abandoned without a count (seen as an exit without its entry, once in
# some hundred runs of api::threads_still_running_at_exit... on a busy
# machine). gdb makes the interleaving happen every time:
#   1. a spinner of 'api running' reaches an exit hook with its first
#      buffer full, and is held at the handover (past the gate check);
#   2. main alone runs on, returns from main and stops in the exit dump,
#      after the gate closed and before any thread's snapshot;
#   3. the spinner alone hands its buffer over; then everyone goes on.
# The spinner's full buffer must be in the trace (its last record, the
# entry before the exit hook, at the time gdb read), and the trace must
# verify with no exit lacking its entry.
# Step 1 waits for the flush thread's set-up (fl_alive), which it makes
# after its first wait: held in there, inside dlopen() (libgcc's
# unwinder), it holds the loader's lock, which main's exit takes before
# the dump (_dl_fini), and main then waited for ever: 2 runs in about 100
# beside two busy loops, one in CI.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../race_skip.sh"
gdb=$1 api=$2 tool=$3
dir=$(mktemp -d /tmp/fdrtrace-race-XXXXXX)
trap "${KEEP:+:} rm -rf $dir" EXIT

if [[ ! -x $gdb ]]; then
  race_cannot_run "no gdb"
fi
cat > "$dir/race.gdb" <<'GDB'
set pagination off
set confirm off
set breakpoint pending on
break fdr_record_slow if action == 1 && t->end != 0 && t->pos >= t->end && t->tid != 0 && 'flush_thread.c'::fl_alive
run
delete 1
set $spinner = $_thread
printf "spinner tid %d last %lu\n", t->tid, t->last_tsc
set scheduler-locking on
break fdr_thread_handover thread $spinner
continue
delete 2
break fdr_threads_foreach if fn == lc_snap
thread 1
continue
delete 3
printf "main in the exit dump, phase %d\n", fdr_phase
thread $spinner
finish
printf "spinner handed over\n"
set scheduler-locking off
continue
GDB
FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="logfile_base=$dir/" \
  timeout 120 "$gdb" -q -batch -nx -x "$dir/race.gdb" --args "$api" running \
  > "$dir/gdb.out" 2>&1
if grep -q "ptrace: Operation not permitted\|Could not trace" "$dir/gdb.out"; then
  race_cannot_run "gdb may not trace here (ptrace denied)"
fi
tid=$(sed -n 's/^spinner tid \([0-9]*\) last [0-9]*$/\1/p' "$dir/gdb.out")
last=$(sed -n 's/^spinner tid [0-9]* last \([0-9]*\)$/\1/p' "$dir/gdb.out")
if [[ -z $tid || -z $last ]] || ! grep -q "^main in the exit dump, phase 3$" "$dir/gdb.out" ||
   ! grep -q "^spinner handed over$" "$dir/gdb.out" ||
   ! grep -q "exited normally" "$dir/gdb.out"; then
  echo "FAIL: the interleaving did not happen as planned:"
  cat "$dir/gdb.out"
  exit 1
fi
trace=$(ls "$dir"/*.fdr 2>/dev/null | head -1)
if [[ -z $trace ]]; then
  echo "FAIL: no trace"; cat "$dir/gdb.out"; exit 1
fi
"$tool" verify "$trace" || { echo "FAIL: the trace does not verify"; exit 1; }
# the last record of the buffer it handed over (the entry just before
# the exit hook that found it full), and all the buffers before it
"$tool" dump "$trace" > "$dir/dump.txt" || { echo "FAIL: dump"; exit 1; }
n=$(grep -c "^fun .* tid=$tid\$" "$dir/dump.txt")
echo "spinner $tid: $n function records in the trace"
if ! grep -q "^fun ent .* tsc=$last .* tid=$tid\$" "$dir/dump.txt"; then
  echo "FAIL: the spinner's full buffer, handed over during the exit dump, is missing" \
    "(no entry at tsc=$last)"
  exit 1
fi
acc=$("$tool" account "$trace" 2>&1 >/dev/null)
echo "$acc"
if ! grep -q "unmatched: 0 exits without entry" <<< "$acc"; then
  echo "FAIL: an exit without its entry"
  exit 1
fi
echo "PASS"
