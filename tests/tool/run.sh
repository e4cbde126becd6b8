#!/bin/bash
# run.sh FDRTRACE CALC RUN_TREE WORKDIR
#
# fdrtrace record's run directories and fdrtrace info DIR:
#   - -d DIR created when missing (with its parents), the index in it;
#   - the default ./fdrtrace.run: an earlier run in it moved aside to
#     fdrtrace.run.N (the first free N), never overwritten; a default
#     directory holding other files refused; -d DIR with a run moved aside
#     the same way, with other files used as it is, with a file of the
#     user's named index refused;
#   - `record -- sh -c 'calc; calc'`: the shell is said not instrumented,
#     both calcs traced, one summary line for the run; the program's stdout
#     and stderr exactly as untraced (no line of the runtime's in them);
#   - exit statuses as untraced (an exit code, a signal);
#   - info DIR: RUN_TREE's processes as a tree (fork, fork of a fork, exec,
#     a process killed without a close), orphans under their untraced ppid;
#     the index's rows, and the counts over the run equal to the sum over
#     its processes; info FILE unchanged.
# The fields written by runtimes since 2026-12-01 (command line, how a
# process ended) are checked when the runtime writes them.
set -u

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") calc=$(abs "$2") tree=$(abs "$3") work=$(abs "$4")
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fails=0

fail() { echo "FAIL $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }
check() {	# check NAME WANT_STATUS COMMAND...
	local name=$1 want=$2 rc=0
	shift 2
	"$@" >out 2>err || rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$name: exit $rc, expected $want"; cat err
		return 1
	fi
	ok "$name"
}
has() {	# has FILE TEXT
	grep -qF -- "$2" "$1" && return 0
	fail "$1 lacks '$2':"; cat "$1"
	return 1
}
lacks() {	# lacks FILE REGEX
	! grep -q -- "$2" "$1" && return 0
	fail "$1 has '$2':"; cat "$1"
	return 1
}
rows() {	# rows DIR: the index's rows (no comments, no header)
	grep -v '^#' "$1/index" | tail -n +2
}

if [ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ]; then
	preload_ok=0	# a sanitized libfdrtrace cannot be preloaded
else
	preload_ok=1
fi

# -d DIR created, with its parents; one trace, the index names it
check missing-dir 0 "$fdr" record -d new/run/dir -- "$calc" 5 &&
	has err "fdrtrace record: 1 process traced, " &&
	has err "fdrtrace record: run in $work/new/run/dir " &&
	[ "$(rows new/run/dir | wc -l)" = 1 ] &&
	[ "$(rows new/run/dir | cut -f3)" = "$(cd new/run/dir && ls fdrtrace.calc.*.fdr)" ] &&
	ok missing-dir-index || fail missing-dir-index

# quiet by default; -O verbosity=1 gives the runtime's own lines back
check quiet 0 "$fdr" record -d q1 -- "$calc" 5 && lacks err '^fdrtrace: ' && ok quiet-no-runtime-line || fail quiet-no-runtime-line
check verbose 0 "$fdr" record -d q2 -O verbosity=1 -- "$calc" 5 &&
	has err "fdrtrace: $work/q2/fdrtrace.calc." && has err "fdrtrace record: 1 process traced"

# the default directory: earlier runs moved aside, never overwritten
mkdir def && cd def
check default-1 0 "$fdr" record -- "$calc" 5 && has err "run in $work/def/fdrtrace.run "
first=$(cd fdrtrace.run && ls fdrtrace.calc.*.fdr) first_sum=$(cksum <fdrtrace.run/"$first")
check default-2 0 "$fdr" record -- "$calc" 5 &&
	has err "the earlier run in fdrtrace.run moved to fdrtrace.run.1"
check default-3 0 "$fdr" record -- "$calc" 5 &&
	has err "the earlier run in fdrtrace.run moved to fdrtrace.run.2"
if [ -f "fdrtrace.run.1/$first" ] && [ "$(cksum <"fdrtrace.run.1/$first")" = "$first_sum" ] &&
   [ "$(ls fdrtrace.run.1 fdrtrace.run.2 fdrtrace.run | grep -c '^fdrtrace\.calc\.')" = 3 ] &&
   [ -f fdrtrace.run/index ] && [ -f fdrtrace.run.1/index ] && [ -f fdrtrace.run.2/index ]; then
	ok default-never-overwritten
else
	fail "default-never-overwritten: $(ls -R)"
fi
# a free number is taken, never one in use
rm -rf fdrtrace.run.1
check default-first-free 0 "$fdr" record -- "$calc" 5 &&
	has err "the earlier run in fdrtrace.run moved to fdrtrace.run.1"
cd "$work"
# a default directory that is not a run: refused, left alone
mkdir -p other/fdrtrace.run && echo mine >other/fdrtrace.run/notes
(cd other && "$fdr" record -- "$calc" 5 >../out 2>../err)
rc=$?
if [ "$rc" = 1 ] && grep -q "fdrtrace.run holds files but no index" err &&
   [ "$(ls other/fdrtrace.run)" = notes ]; then
	ok default-not-a-run-refused
else
	fail "default-not-a-run-refused: exit $rc: $(cat err)"
fi
# -d DIR holding a run: moved aside the same way; -d DIR holding other
# files (no index): used, its files left alone and not counted in the run
check explicit-1 0 "$fdr" record -d exp -- "$calc" 5
check explicit-2 0 "$fdr" record -d exp/ -- "$calc" 5 &&
	has err "the earlier run in exp moved to exp.1"
# a file of the user's named index is not a run's: refused, left alone
mkdir -p notrun && echo "my index" >notrun/index
check explicit-foreign-index 1 "$fdr" record -d notrun -- "$calc" 5 &&
	has err "that is not a run's index" && [ "$(cat notrun/index)" = "my index" ] &&
	[ "$(ls notrun)" = index ] && ok explicit-foreign-index-kept || fail explicit-foreign-index-kept
mkdir -p mixed && : >mixed/fdrtrace.calc.1.fdr
check explicit-not-a-run 0 "$fdr" record -d mixed -- "$calc" 5 &&
	[ "$(rows mixed | wc -l)" = 1 ] && [ -e mixed/fdrtrace.calc.1.fdr ] &&
	ok explicit-not-a-run-kept || fail explicit-not-a-run-kept

if [ "$preload_ok" = 1 ]; then
	# a shell (not instrumented) running two instrumented programs: both
	# traced; its output and status as untraced, record's lines apart
	script="$calc 5; $calc 6 >&2; echo done"
	/bin/sh -c "$script" >plain.out 2>plain.err
	check shell-children 0 "$fdr" record -d sh -- /bin/sh -c "$script" &&
		has err "fdrtrace record: /bin/sh is not instrumented" &&
		has err "fdrtrace record: 2 processes traced, " &&
		[ "$(rows sh | wc -l)" = 2 ] && ok shell-children-two-traces || fail shell-children-two-traces
	grep -v '^fdrtrace record: ' err >own.err
	if cmp -s out plain.out && cmp -s own.err plain.err; then
		ok shell-output-as-untraced
	else
		fail "shell-output-as-untraced: $(diff plain.out out; diff plain.err own.err)"
	fi
	lacks err '^fdrtrace: ' && ok shell-no-runtime-lines || fail shell-no-runtime-lines
	[ "$(grep -c '^fdrtrace record: .* processes* traced' err)" = 1 ] && ok shell-one-summary || fail shell-one-summary
	# the summary's counts are the sum of the traces' (the index, info FILE)
	sum=$(rows sh | awk -F'\t' '{ r += $7; l += $8 } END { print r " records, " l " lost" }')
	has err "2 processes traced, $sum" && ok shell-summary-is-the-sum || fail shell-summary-is-the-sum
	infosum=0
	for t in sh/fdrtrace.calc.*.fdr; do
		n=$("$fdr" info "$t" | sed -n 's/^closed: *yes, exit: \([0-9]*\) function records.*/\1/p')
		infosum=$((infosum + n))
	done
	[ "$sum" = "$infosum records, 0 lost" ] && ok shell-index-is-info ||
		fail "shell-index-is-info: index $sum, info $infosum"
	# info DIR: the shell is not traced: both calcs under its pid
	check shell-info 0 "$fdr" info sh && has out "processes:       2 traced" &&
		has out "(not traced)" &&
		[ "$(grep -Ec 'calc( [0-9])?  \[' out)" = 2 ] && ok shell-info-orphans || fail shell-info-orphans

	# two untraced parents (a shell, and a shell it started): two groups
	check orphans 0 "$fdr" record -d orph -- /bin/sh -c \
		"$calc 5 >/dev/null; /bin/sh -c '$calc 6 >/dev/null; :'; $calc 7 >/dev/null"
	check orphans-info 0 "$fdr" info orph &&
		[ "$(grep -c '(not traced)$' out)" = 2 ] &&
		[ "$(grep -A2 '(not traced)$' out | grep -Ec 'calc( [0-9])?  \[')" = 3 ] &&
		ok orphans-grouped || { fail orphans-grouped; cat out; }
	# exit statuses as untraced: an exit code, a signal
	check status-exit 7 "$fdr" record -d st1 -- /bin/sh -c "$calc 5 >/dev/null; exit 7"
	check status-signal 143 "$fdr" record -d st2 -- /bin/sh -c "$calc 5 >/dev/null; kill -TERM \$\$"
	# no process traced: said, and the status is the program's
	check status-untraced 0 "$fdr" record -d st3 -- /bin/true &&
		has err "no process was traced" && [ "$(rows st3 | wc -l)" = 0 ] && ok status-untraced-empty-index || fail status-untraced-empty-index
else
	echo "skip shell-*, status-*: a sanitized libfdrtrace cannot be preloaded"
fi

# the tree: run_tree forks A (which forks G), B (which execs "leaf"), C
# (killed by SIGKILL: its trace has no close)
check tree 0 "$fdr" record -d tree -- "$tree" tree && has out "tree done" &&
	has err "no close marker"
cp err tree.err
check tree-info 0 "$fdr" info tree
top=$(rows tree | head -1 | cut -f1)
depth() {	# depth PID [N]: the indent of the Nth line of PID's in the tree
	awk -v pid="$1" -v n="${2:-1}" '$1 == pid && ++k == n {
		s = substr($0, 79); d = 0
		while (substr(s, 2 * d + 1, 2) == "  ") d++
		print d }' out
}
kids=$(rows tree | awk -F'\t' -v p="$top" '$2 == p && $6 !~ /^exec.d \/bin\/true/ { print $1 }' | uniq)
grand=$(rows tree | awk -F'\t' -v k="$(echo $kids | cut -d' ' -f1)" '$2 == k { print $1 }')
set -- $kids
if [ "$(depth "$top")" = 0 ] && [ $# = 3 ] && [ -n "$grand" ] &&
   [ "$(depth "$1")" = 1 ] && [ "$(depth "$grand")" = 2 ] &&
   [ "$(depth "$2")" = 1 ] && [ "$(depth "$2" 2)" = 1 ] && [ "$(depth "$3")" = 1 ]; then
	ok tree-shape
else
	fail "tree-shape: top $top kids $kids grand $grand:"; cat out
fi
grep -q "^ *$2 .*exec'd /proc/self/exe " out && grep -q "^ *$2 .* exec: " out &&
	ok tree-exec || fail "tree-exec: $(cat out)"
grep -q "^ *$3 .* ? .*no close: killed or cut short" out && ok tree-killed ||
	fail "tree-killed: $(cat out)"
if grep -q "exited 0 " out; then	# a runtime that records how processes end
	grep -q "^ *$grand .*exited 2 " out && grep -q "^ *$2 .*exited 5 " out &&
		grep -q "^ *$top .*exited 0 .*run_tree tree " out && ok tree-ends ||
		fail "tree-ends: $(cat out)"
else
	echo "skip tree-ends: the runtime does not record how a process ended"
fi
# the child that exec'd /bin/true at once ran no instrumented call: an
# empty trace ended by the exec, said as such, or (lazy start) none
empty=$(rows tree | awk -F'\t' '$6 ~ /^exec.d \/bin\/true/')
if [ -z "$empty" ]; then
	ok "tree-exec-at-once: no trace"
elif [ "$(echo "$empty" | cut -f7)" = 0 ] &&
     grep -q "^fdrtrace record: 1 trace without a function record" tree.err; then
	ok "tree-exec-at-once: an empty trace, said so"
else
	fail "tree-exec-at-once: $empty"; cat tree.err
fi
# info FILE is as before
t=$(ls tree/fdrtrace.run_tree."$top".fdr)
check info-file 0 "$fdr" info "$t" && has out "file:            $t" && has out "closed:          yes"

[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "all ok"
