#!/usr/bin/env bash
# reentry_race.sh GDB REL_TARGET FDRTRACE RECORD_DIR
# (RECORD_DIR: runtime/record, whose slowpath.c and thread_exit.c it breaks in)
#
# A signal handler's calls while a hook runs are kept and written by the
# thread's next hook, in their place; where they cannot be (max_depth, or
# while the thread leaves) they are dropped and counted (re-entry), never
# lost. Handlers delivered at set points with gdb (skipped without it), on
# "rel_target sig" (the handler on_prof calls sig_fn: four records a
# handler). Three scenarios:
#
# kept: 1. one handler while a hook's slow path holds the thread's guard,
#   2. one in the next hook's slow path, after the first one's calls were
#   written (slow_resume()) and before their position was published. Both
#   handlers' calls are in the trace as records, none counted, and it
#   verifies (a call written out of its place would leave exits unmatched).
#
# resume (max_depth set, so handlers count): where the hook that resumes
# says so: a gap record (slow_resume()).
#   1. one handler while a hook's slow path holds the thread's guard: its
#      four calls are counted, and the same slow path reports the gap;
#   2. one just after that report was written and before its position was
#      published. The runtime took the pending flag this handler set again
#      for "the report did not fit", handed the buffer over at the old
#      position and so lost the report just written: the first handler's
#      four calls, neither recorded nor counted (the ten-kHz timer test
#      failed now and then in the sanitizer build, where slow paths are
#      slow enough to be interrupted there).
#
# exit: a thread that exits (slow_thread_exit(), guard held) with
#   1. a handler before its counts move to the process-wide ones (@leaving
#      still false): counted on the thread, then moved;
#   2. a handler after the move: counted process-wide. Counted on the
#      thread, its calls were lost (nothing reports a gone thread's
#      counters; "rel_target sig 1" then reported 4 records fewer than
#      twice its calls).
#
# After each, every call the program counted is in the trace, recorded or
# counted as dropped: records + drops = 2 x calls.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../race_skip.sh"
gdb=$1 target=$(readlink -f "$2") tool=$(readlink -f "$3") record=$4
dir=$(mktemp -d /tmp/fdrtrace-reentry-XXXXXX)
trap "${KEEP:+:} rm -rf $dir" EXIT

if [[ ! -x $gdb ]]; then
  race_cannot_run "no gdb"
fi
# line_of FILE FUNCTION TEXT: the first line holding TEXT in FUNCTION of
# FILE (in the runtime's record layer, directory $record)
line_of() {
  local n
  n=$(awk -v fn="$2" -v text="$3" '$0 ~ "^(static )?notrace [a-z]+ " fn "\\(" { f = 1 }
      f && index($0, text) { print NR; exit }' "$record/$1")
  if [[ -z $n ]]; then
    echo "FAIL: no '$3' in $2() of $record/$1 (update this test)" >&2
    exit 1
  fi
  echo "$n"
}
resume_line=$(line_of slowpath.c slow_resume 't->rewind_floor = np;') || exit 1
leaving_line=$(line_of thread_exit.c slow_thread_exit 't->leaving = true;') || exit 1
moved_line=$(line_of thread_exit.c slow_thread_exit 't->state = FDR_T_NEW;') || exit 1

# scenario NAME THREADS OPTIONS WANT GDB_COMMANDS MARKER...: run rel_target
# sig THREADS 100 under gdb with FDRTRACE_OPTIONS=OPTIONS; the interleaving
# happened when gdb printed every MARKER. WANT: "kept" (no re-entry drops)
# or "counted" (at least the two handlers' eight).
scenario() {
  local name=$1 threads=$2 opts=$3 want=$4 cmds=$5 out calls trace info records drops reentry
  shift 5
  mkdir -p "$dir/$name"
  out=$dir/$name/out
  printf 'set pagination off\nset confirm off\nset breakpoint pending on\n%s\n%s\n' \
    'handle SIGPROF nostop noprint pass' "$cmds" > "$dir/$name/t.gdb"
  # LeakSanitizer cannot run under ptrace (the sanitizer build)
  (cd "$dir/$name" && FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="$opts" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    timeout 120 "$gdb" -q -batch -nx -x t.gdb --args "$target" sig "$threads" 100 > out 2>&1)
  if grep -q "ptrace: Operation not permitted\|Could not trace" "$out"; then
    race_cannot_run "gdb may not trace here (ptrace denied)"
  fi
  for marker in "$@" "exited normally"; do
    if ! grep -q -- "$marker" "$out"; then
      echo "FAIL $name: the interleaving did not happen as planned (no '$marker'):"
      cat "$out"
      exit 1
    fi
  done
  calls=$(grep -o 'calls [0-9]*$' "$out" | tail -1 | cut -d' ' -f2)
  trace=$(ls "$dir/$name"/fdrtrace.rel_target.*.fdr 2>/dev/null | head -1)
  if [[ -z $calls || -z $trace ]]; then
    echo "FAIL $name: no call count or no trace"; cat "$out"; exit 1
  fi
  "$tool" verify "$trace" || { echo "FAIL $name: the trace does not verify"; exit 1; }
  info=$("$tool" info "$trace")
  records=$(echo "$info" | sed -n 's/^  function *\([0-9]*\).*/\1/p')
  reentry=$(echo "$info" | sed -n 's/^drops:.*reentry: \([0-9]*\) records.*/\1/p')
  drops=$(echo "$info" | grep '^drops:' | grep -o '[0-9]* records' | awk '{ s += $1 } END { print s + 0 }')
  echo "$name: calls $calls: $records records + $drops dropped (re-entry ${reentry:-0})"
  if [[ $want == counted ]] && ((${reentry:-0} < 8)); then
    echo "FAIL $name: the two handlers' calls were not counted as re-entry drops"
    exit 1
  fi
  if [[ $want == kept ]] && ((${reentry:-0} != 0)); then
    echo "FAIL $name: handlers' calls were counted as re-entry drops, not kept"
    exit 1
  fi
  if ((records + drops != 2 * calls)); then
    echo "FAIL $name: $((2 * calls - records - drops)) records neither in the trace nor counted"
    exit 1
  fi
}

# two_handlers SECOND: the gdb commands of kept and resume: a handler in a
# hook's slow path, then one in the next hook's slow_resume() at $resume_line,
# which prints SECOND first
two_handlers() {
  cat <<EOF
break timer_create
run
delete
break fdr_record_slow
continue
delete
printf "handler 1 in a slow path\n"
break slowpath.c:$resume_line
signal SIGPROF
delete
printf "$1\n"
signal SIGPROF
EOF
}

# kept: the program's own 10 kHz timer is not passed on (nopass): only the
# two handlers placed above run. With it, a handler storm (each delivery
# a ptrace stop; slower on a slow host) sometimes found the thread's 64
# held-call slots full, and those calls were counted as re-entry drops,
# as designed (records + drops stayed 2 x calls): on 2026-12-02 the library
# from before and after that day's changes both failed 4 of 4 runs that
# way on an idle machine. What this scenario claims is the placed two.
scenario kept 0 "" kept "handle SIGPROF nostop noprint nopass
$(two_handlers "handler 2 after the kept calls")" \
  "^handler 2 after the kept calls$" "hit Breakpoint [0-9.]*, slow_resume "

scenario resume 0 "max_depth=100000" counted "$(two_handlers "handler 2 after the report")" \
  "^handler 2 after the report$" "hit Breakpoint [0-9.]*, slow_resume "

# the first thread to leave is the worker (main ends with exit())
scenario exit 1 "" counted "break thread_exit.c:$leaving_line
run
delete
printf \"handler 1 before leaving\\n\"
break thread_exit.c:$moved_line
signal SIGPROF
delete
printf \"handler 2 after the move\\n\"
signal SIGPROF" "^handler 2 after the move$" "hit Breakpoint [0-9.]*, slow_thread_exit .*thread_exit.c:$moved_line"
echo "PASS"
