#!/usr/bin/env bash
# process_tree.sh TARGET FDRTRACE
#
# A run is a process tree (issue 30): `target tree` forks three children
# (one execs the program again as "status 4", one ends with _exit(5), one
# by SIGSEGV) and exits with status 3. Each process's trace must say who
# it is (argc, arguments, the clock when recording began), where it was
# forked (its fork record names the parent's thread, clock and serial,
# which the parent's spawn record of that serial repeats), where it
# exec'd (thread and clock) and how it ended (exited N, signaled 11,
# execed), read back through `fdrtrace dump`.
set -u
target=$1 tool=$2
dir=$(mktemp -d /tmp/fdrtrace-tree-XXXXXX)
trap "${KEEP:+:} rm -rf $dir" EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="logfile_base=$dir/t. verbosity=0" "$target" tree \
  > "$dir/out" 2> "$dir/err"
st=$?
[[ $st == 3 ]] || no "the program's status is $st, not 3"
[[ -s $dir/err ]] && no "verbosity=0 printed: $(cat "$dir/err")"
n=0
for f in "$dir"/t.*.fdr; do
  "$tool" dump "$f" | grep -oE "FDRx (process|fork|spawn|close|exec) .*" > "$f.txt" || no "$f: dump"
  n=$((n + 1))
done
[[ $n == 5 ]] || no "$n traces, expected 5 (parent, a child before and after its exec, two more)"

field() { sed -n "s/.*FDRx $2 .*\b$3=\([^ ]*\).*/\1/p" "$1" | head -1; }
parent=$(grep -l 'args=.*x00tree\\x00' "$dir"/*.txt | head -1)
[[ -n $parent ]] || { no "no trace of the parent"; exit 1; }
ppid=$(field "$parent" process pid)
[[ $(field "$parent" process argc) == 2 ]] || no "parent: argc $(field "$parent" process argc)"
[[ $(field "$parent" process start_tsc) =~ ^[1-9][0-9]*$ ]] || no "parent: no start_tsc"
grep -q "FDRx close .* end=exited end_value=3$" "$parent" || no "parent: not closed as exited 3"
[[ $(grep -c "FDRx spawn tid=$ppid " "$parent") == 3 ]] || no "parent: not 3 spawn records of its thread"

for serial in 1 2 3; do
  stsc=$(sed -n "s/.*FDRx spawn tid=$ppid tsc=\([0-9]*\) serial=$serial .*/\1/p" "$parent")
  child=$(grep -l "FDRx fork parent_pid=$ppid .* parent_tid=$ppid tsc=$stsc serial=$serial$" \
    "$dir"/*.txt | head -1)
  if [[ -z $stsc || -z $child ]]; then
    no "fork $serial: no spawn record or no child trace that names it"
    continue
  fi
  case $serial in
  1)
    cpid=$(field "$child" process pid)
    grep -q "FDRx exec pid=$cpid .* tid=$cpid tsc=[1-9]" "$child" || no "child 1: exec point"
    grep -q "end=execed end_value=0$" "$child" || no "child 1: not closed as execed"
    img=$(grep -l "FDRx process pid=$cpid .*argc=3 args=.*x00status\\\\x004\\\\x00" "$dir"/*.txt)
    [[ -n $img ]] || no "child 1: no trace of the exec'd image with its arguments"
    [[ -n $img ]] && { grep -q "end=exited end_value=4$" "$img" || no "exec'd image: not exited 4"; }
    ;;
  2) grep -q "end=exited end_value=5$" "$child" || no "child 2: not closed as exited 5 (_exit)" ;;
  3) grep -q "FDRx close how=signal .* end=signaled end_value=11$" "$child" ||
       no "child 3: not closed as signaled 11" ;;
  esac
done
if [[ $fail != 0 ]]; then
  cat "$dir"/*.txt
  exit 1
fi
echo PASS
