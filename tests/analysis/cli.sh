#!/bin/bash
# cli.sh FDRTRACE CALC NOLINK WORKDIR
#
# The analysis commands' command lines: --help, unknown options, missing
# arguments, bad values (exit 2); an unreadable input (exit 1). Then
# 'fdrtrace record': a program linked with libfdrtrace (calc) and one that
# is not (NOLINK, preloaded), each traced into a run directory, the run's
# summary printed and the calls counted exactly; a missing program exits
# 127; an uninstrumented one leaves no trace, record names the compile flag
# and returns the program's status; a copy of fdrtrace finds the library
# beside its bin/, and one that finds none says where it looked and exits
# 127. With stdout and stderr on one pipe, every command's output and its
# stderr lines stay whole lines, the output first (issue 33: account's
# footnote was cut mid-word by the summary). (tests/tool/run.sh: run
# directories and their process trees.)
set -u

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") calc=$(abs "$2") nolink=$(abs "$3") work=$(abs "$4")
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fails=0

check() {	# check NAME WANT_STATUS COMMAND...
	local name=$1 want=$2 rc=0
	shift 2
	"$@" >out 2>err || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL $name: exit $rc, expected $want"; cat err
		fails=$((fails + 1))
		return 1
	fi
	echo "ok   $name"
}
has() {	# has FILE TEXT
	grep -qF -- "$2" "$1" && return 0
	echo "FAIL: $1 lacks '$2':"; cat "$1"
	fails=$((fails + 1))
	return 1
}

for c in account stack convert replay graph extract-map record diff live tui; do
	check "$c-help" 0 "$fdr" $c --help && has out "Usage: fdrtrace $c"
	check "$c-unknown-option" 2 "$fdr" $c --frob x && has err "fdrtrace $c: unknown option '--frob'"
	check "$c-missing-arg" 2 "$fdr" $c && has err "fdrtrace $c: missing"
	check "$c-in-main-help" 0 "$fdr" --help && has out "  $c "
done
for c in account stack convert replay graph extract-map tui; do
	check "$c-no-such-file" 1 "$fdr" $c no-such.fdr && has err "no-such.fdr"
	# several files are a run (input.h): each must be there
	check "$c-two-missing-files" 1 "$fdr" $c a.fdr b.fdr && has err "a.fdr: No such file"
done
check account-bad-sort 2 "$fdr" account -s frob x.fdr && has err "unknown sort key 'frob'"
check account-bad-sort-list 2 "$fdr" account -s total,frob x.fdr && has err "unknown sort key 'frob'"
check account-bad-order 2 "$fdr" account --sortorder up x.fdr && has err "asc or dsc"
# -r: the time range, as in every other command, or llvm-xray's asc/dsc
check account-r-range 2 "$fdr" account -r up x.fdr && has err "time range is A~B"
mkdir -p empty-run
check account-empty-run 1 "$fdr" account empty-run && has err "no trace (*.fdr) in the directory"
check account-bad-pid 2 "$fdr" account --pid x a.fdr && has err "bad --pid 'x'"
check diff-pid 2 "$fdr" diff --pid 1 a.fdr b.fdr && has err "unknown option '--pid'"
check account-bad-top 2 "$fdr" account -p -1 x.fdr && has err "bad --top"
check account-bad-format 2 "$fdr" account -f xml x.fdr && has err "unknown format 'xml'"
check stack-bad-unit 2 "$fdr" stack -u fortnights x.fdr && has err "unknown unit"
check convert-bad-format 2 "$fdr" convert -f svg x.fdr && has err "unknown format 'svg'"
check convert-xray-stdin 2 "$fdr" convert -f xray - && has err "standard input cannot be read so"
check convert-xray-selector 2 "$fdr" convert -f xray -F main x.fdr && has err "only --tid selects"
check replay-bad-depth 2 "$fdr" replay -D 0 x.fdr && has err "bad --depth"
check replay-bad-threshold 2 "$fdr" replay -t 5parsecs x.fdr && has err "bad --threshold"
check replay-bad-range 2 "$fdr" replay -r 5 x.fdr && has err "A~B"
# the selectors, parsed once (cli.c) for every command that takes them
for c in stack convert replay; do
	check "$c-help-selectors" 0 "$fdr" $c --help && has out "-r, --time-range A~B" &&
		has out "-F, --filter GLOB"
	check "$c-bad-depth" 2 "$fdr" $c -D 0 x.fdr && has err "fdrtrace $c: bad --depth '0'"
	check "$c-bad-threshold" 2 "$fdr" $c -t 5parsecs x.fdr && has err "bad --threshold"
	check "$c-bad-tid" 2 "$fdr" $c --tid x x.fdr && has err "bad --tid 'x'"
	check "$c-bad-range" 2 "$fdr" $c -r 5 x.fdr && has err "A~B"
	check "$c-reversed-range" 2 "$fdr" $c -r 2~1 x.fdr && has err "bad time range '2~1'"
	check "$c-missing-value" 2 "$fdr" $c x.fdr -F && has err "option '-F' needs an argument"
done
check record-bad-option 2 "$fdr" record -O nokey -- true && has err "KEY=VALUE"
"$fdr" assemble "$here/golden/basic.txt" -o basic.fdr
check demangled-short 0 "$fdr" account basic.fdr && has out "  foo::bar" &&
	{ ! grep -qF "foo::bar(int)" out || { echo "FAIL: account's default name is not short"; fails=$((fails + 1)); }; }
check full-names 0 "$fdr" account --full-names basic.fdr && has out "  foo::bar(int)"
check stack-full-names 0 "$fdr" stack --full-names basic.fdr && has out "main;foo::bar(int) 300"
check no-demangle 0 "$fdr" account --no-demangle basic.fdr && has out "  _ZN3foo3barEi"
check stack-no-demangle 0 "$fdr" stack --no-demangle basic.fdr && has out "main;_ZN3foo3barEi 300"
check top-and-sort 0 "$fdr" account -s count -p 1 basic.fdr && has out "        3          4 ["
# uftrace's sort keys, several; human units by default, seconds on demand
check uftrace-keys 0 "$fdr" account -s call,self -p 2 basic.fdr && has out "        3          4 [ 10.000 ns," &&
	has out "        2          2 [300.000 ns,"
check account-seconds 0 "$fdr" account --seconds -s funcid -p 1 basic.fdr &&
	has out "        1          1 [ 0.000002000,  0.000002000,"
check account-r-asc 0 "$fdr" account -s funcid -r dsc -p 1 basic.fdr && has out "        5          2 ["
check account-r-time 0 "$fdr" account -r 0~0.0000009 basic.fdr && has out "        3          2 ["
# fact recurses (fact -> fact): total counts its outermost call once, sum every level
check recursion-total 0 "$fdr" account -f csv basic.fdr && has out '"fact",2.000000000e-07' &&
	has out ',2.500000000e-07,"","fact"'
check stack-us 0 "$fdr" stack -u us --inclusive basic.fdr && has out "main 2"
check replay-threshold 0 "$fdr" replay -t 250ns basic.fdr && has out "foo::bar();"
check replay-tid 0 "$fdr" replay --tid 200 basic.fdr && has out "[    200] | lex();"
# graph: the text tree, FUNC's backtraces and callees, DOT on demand, selectors
check graph-text 0 "$fdr" graph basic.fdr && has out "    2.000 us    1.100 us           1  main" &&
	has out "   50.000 ns   50.000 ns           1  | +-fact"
check graph-func 0 "$fdr" graph basic.fdr 'pars*' && has out "========== BACKTRACES OF pars* ==========" &&
	has out " backtrace #0: 1 call, total 400.000 ns" &&
	has out "  700.000 ns  450.000 ns           2  parse"
check graph-func-missing 1 "$fdr" graph basic.fdr nosuch && has err "no completed call of 'nosuch'"
check graph-dot-func 2 "$fdr" graph --format dot basic.fdr main && has err "FUNC is for the text form"
check graph-selectors 0 "$fdr" graph -N lex basic.fdr && has out "  400.000 ns  400.000 ns           1  +-parse"
# -f: uftrace's fields; a line's time is what --time-range takes
check replay-fields 0 "$fdr" replay -f time,duration,tid basic.fdr &&
	has out "#         TIME      DURATION     TID | FUNCTION" &&
	has out "   0.000000600    300.000 ns     100 |   foo::bar();"
check replay-fields-range 0 "$fdr" replay -f time -r 0.000000600~0.000000600 basic.fdr &&
	has out "   0.000000600 | foo::bar();"
check replay-fields-default 0 "$fdr" replay -f duration,tid basic.fdr && has out "   100.000 ns [    100] |     lex();"
check replay-bad-field 2 "$fdr" replay -f time,frob basic.fdr && has err "unknown field 'frob'"
printf 'not a trace at all, just text\n' >garbage.fdr
printf 'padding to more than a 32-byte file header\n' >>garbage.fdr
check account-garbage 1 "$fdr" account garbage.fdr && has err "garbage.fdr:"

counts() {	# counts TRACE: "name count" lines, sorted
	"$fdr" account -q -f csv "$1" | tail -n +2 |
		awk -F, '{ n = $10; gsub(/"/, "", n); print n, $2 }' | sort
}

mkdir -p linked preloaded
check record-linked 0 "$fdr" record -d linked -b 16K -- "$calc" &&
	has err "fdrtrace record: run in $work/linked "
# what the trace's close says, summed over the run
if grep -q "^fdrtrace record: 1 process traced, 11194 records, 0 lost\$" err; then
	echo "ok   record-linked-summary"
else
	echo "FAIL record-linked-summary: $(cat err)"; fails=$((fails + 1))
fi
t=$(ls linked/fdrtrace.calc.*.fdr 2>/dev/null)
if [ -n "$t" ] && [ "$(counts "$t" | grep -c '^fib 5230$')" = 1 ]; then
	echo "ok   record-linked-counts"
else
	echo "FAIL record-linked-counts: $(counts "$t" | tr '\n' ' ')"; fails=$((fails + 1))
fi
if [ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ]; then
	echo "skip record-preloaded: a sanitized libfdrtrace cannot be preloaded"
else
	check record-preloaded 0 "$fdr" record -d preloaded -- "$nolink" &&
		has err "fdrtrace record: run in $work/preloaded "
	t=$(ls preloaded/fdrtrace.*.fdr 2>/dev/null)
	if [ -n "$t" ] && [ "$(counts "$t" | tr '\n' ' ')" = "inner 6 main 1 outer 3 " ]; then
		echo "ok   record-preloaded-counts"
	else
		echo "FAIL record-preloaded-counts: '$(counts "$t" | tr '\n' ' ')'"; fails=$((fails + 1))
	fi
fi
mkdir -p based
check record-logfile-base 0 "$fdr" record -O logfile_base=based/my. -- "$calc" &&
	has err "fdrtrace record: run in $work/based " && ls based/my.calc.*.fdr >/dev/null
check record-missing-program 127 "$fdr" record -- ./no-such-program && has err "no-such-program"
# a program built without -finstrument-functions: no trace (the runtime
# creates none for a process that runs nothing instrumented), and record
# says why, naming the flag; the program's exit status as untraced
if [ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ]; then
	echo "skip record-uninstrumented: a sanitized libfdrtrace cannot be preloaded"
else
	mkdir -p uninstr
	check record-uninstrumented 0 "$fdr" record -d uninstr -- /bin/true &&
		has err "no function of /bin/true is instrumented" &&
		has err "build them with -finstrument-functions"
	check record-uninstrumented-failing 3 "$fdr" record -d uninstr -- /bin/sh -c 'exit 3' &&
		has err "no function of /bin/sh is instrumented"
	if [ "$(ls uninstr)" != index ]; then
		echo "FAIL record-uninstrumented-no-file: $(ls uninstr)"; fails=$((fails + 1))
	else
		echo "ok   record-uninstrumented-no-file"
	fi
	# the program's ignored signals are those it gets untraced: fdrtrace
	# ignores SIGPIPE for itself, and an ignored signal survives exec (pigz
	# -c | head exited 32, EPIPE, under record instead of dying of SIGPIPE)
	sigign='grep ^SigIgn: /proc/$$/status'
	/bin/sh -c "$sigign" >plain-sigign
	check record-signals-as-untraced 0 "$fdr" record -d uninstr -- /bin/sh -c "$sigign" &&
		if cmp -s out plain-sigign; then
			echo "ok   record-signals-as-untraced-same"
		else
			echo "FAIL record-signals-as-untraced-same: $(cat out) under record, $(cat plain-sigign) untraced"
			fails=$((fails + 1))
		fi
fi
# a program that is not instrumented but starts ones that are (a shell, make):
# their traces are counted, the program said not instrumented, and the run
# is not a failure
if [ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ]; then
	echo "skip record-children: a sanitized libfdrtrace cannot be preloaded"
else
	mkdir -p children
	: >children/fdrtrace.calc.1.fdr	# an earlier run's: not this one's
	check record-children 0 "$fdr" record -d children -- /bin/sh -c "$calc >/dev/null; $calc >/dev/null" &&
		has err "/bin/sh is not instrumented (no __cyg_profile_func_enter)"
	n=$(grep -c "^fdrtrace record: 2 processes traced, 22388 records, 0 lost\$" err)
	if [ "$n" = 1 ] && ! grep -q "calc.1.fdr" children/index; then
		echo "ok   record-children-listed"
	else
		echo "FAIL record-children-listed: $n in: $(cat err)"; fails=$((fails + 1))
	fi
fi
# a process the program leaves running (a daemon: its parent exits at once)
# writes its trace after the program ended: record waits for it (1 s at
# most) and lists it; SIGTERM to record is passed on to the program, and
# record still reports and returns the program's status
if [ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ]; then
	echo "skip record-daemon, record-sigterm: a sanitized libfdrtrace cannot be preloaded"
else
	mkdir -p dmn fwd
	# (counted, its records too when it ended first, else said still running)
	check record-daemon 0 "$fdr" record -d dmn -- /bin/sh -c "(sleep 0.3; exec $calc >/dev/null) &" &&
		has err "fdrtrace record: 1 process traced, " && ls dmn/fdrtrace.calc.*.fdr >/dev/null
	"$fdr" record -d fwd -- /bin/sh -c "$calc >/dev/null; exec sleep 30" >out 2>err &
	rp=$!
	for i in $(seq 100); do ls fwd/fdrtrace.calc.*.fdr >/dev/null 2>&1 && break; sleep 0.1; done
	sleep 0.2
	kill -TERM "$rp"
	rc=0
	wait "$rp" || rc=$?
	if [ "$rc" = 143 ] && grep -q "^fdrtrace record: 1 process traced, 11194 records, 0 lost" err; then
		echo "ok   record-sigterm"
	else
		echo "FAIL record-sigterm: exit $rc: $(cat err)"; fails=$((fails + 1))
	fi
fi
check record-not-a-dir 1 "$fdr" record -d garbage.fdr -- "$calc" && has err "garbage.fdr: Not a directory"
check record-no-dir 0 "$fdr" record -d no/such/dir -- "$calc" && [ -f no/such/dir/index ] &&
	echo "ok   record-no-dir-created"
# an install moved or staged (DESTDIR): the library beside bin/ is found;
# none anywhere: record names where it looked and exits 127 (not run)
reader_dir=$(dirname "$fdr")/../reader
lib=$(dirname "$fdr")/../../runtime/libfdrtrace.so.0
mkdir -p staged/bin staged/lib nolib/bin
cp "$fdr" staged/bin/fdrtrace && cp "$fdr" nolib/bin/fdrtrace && cp "$lib" staged/lib/
if [ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ]; then
	echo "skip record-staged-lib: a sanitized libfdrtrace cannot be preloaded"
else
	check record-staged-lib 0 env LD_LIBRARY_PATH="$reader_dir" staged/bin/fdrtrace record \
		-d staged -- "$nolink" && has err "fdrtrace record: run in $work/staged "
fi
if [ -e /usr/local/lib/x86_64-linux-gnu/libfdrtrace.so.0 ] || [ -e /usr/local/lib/libfdrtrace.so.0 ]; then
	echo "skip record-lib-not-found: libfdrtrace is installed in /usr/local"
else
	check record-lib-not-found 127 env LD_LIBRARY_PATH="$reader_dir" FDRTRACE_LIB= \
		nolib/bin/fdrtrace record -d nolib -- "$nolink" &&
		has err "was not found to preload (looked for $work/nolib/bin/../" &&
		has err "$reader_dir/libfdrtrace.so.0"
fi

# One pipe for stdout and stderr: a table of 300 functions (tens of KB,
# several pipe buffers), an unwound call (account's footnote), calls
# without exits and an application event (the summary and the events
# note on stderr). Every line of the mixed stream is a whole line of
# stdout or of stderr (each of which begins with "fdrtrace "), each
# stream's in order; account, stack and graph print their footnotes and
# table before the summary.
{
	echo "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=65536"
	echo "buf ext size=auto"
	echo "buf new tid=1"
	echo "buf wal sec=1700000000 usec=0"
	echo "buf pid pid=1"
	echo "cpu new cpu=0 tsc=1000"
	for i in $(seq 1 300); do
		echo "ext func delta=0 func_id=$i address=0x$((400000 + i)) module_id=0" \
			"name=a_function_with_a_rather_long_name_number_$i"
	done
	for i in $(seq 1 300); do
		echo "fun ent id=$i delta=10"
		echo "fun exi id=$i delta=$i"
	done
	echo "fun ent id=1 delta=10"
	echo "fun ent id=2 delta=10"
	echo "fun exi id=1 delta=10"
	echo "evt cus size=2 delta=1 data=6869"
	echo "fun ent id=3 delta=10"
} >many-fns.txt
"$fdr" assemble many-fns.txt -o many-fns.fdr
for c in "account" "account -f csv" "stack" "graph" "replay" "diff many-fns.fdr" "convert -o -"; do
	"$fdr" $c many-fns.fdr >alone.out 2>alone.err
	"$fdr" $c many-fns.fdr 2>&1 | cat >mixed
	n_out=$(wc -l <alone.out)
	if [ ! -s alone.err ]; then
		echo "FAIL one pipe, '$c': nothing on stderr to mix"
		fails=$((fails + 1))
	elif ! grep -v '^fdrtrace ' mixed | cmp -s - alone.out ||
		! grep '^fdrtrace ' mixed | cmp -s - alone.err; then
		echo "FAIL one pipe, '$c': stdout and stderr mixed inside lines"
		diff <(grep -v '^fdrtrace ' mixed) alone.out | head -5
		fails=$((fails + 1))
	elif [ "${c%% *}" != diff ] && ! cat alone.out alone.err | cmp -s - mixed; then
		echo "FAIL one pipe, '$c': the output is not before the summary"
		fails=$((fails + 1))
	else
		echo "ok   one pipe, '$c' ($n_out lines, then $(wc -l <alone.err) on stderr)"
	fi
done

# live: record then replay in one step; the run is kept only with -d, the
# program's status is live's
mkdir -p live-tmp
check live-tree 0 env TMPDIR="$work/live-tmp" "$fdr" live -- "$calc" && has out "  evaluate() {" &&
	has err "1 process traced" && ! grep -q "run in" err
[ -z "$(ls -A live-tmp)" ] || { echo "FAIL: live left $(ls -A live-tmp) in TMPDIR"; fails=$((fails + 1)); }
check live-selectors 0 "$fdr" live -F evaluate -D 1 "$calc" && has out "evaluate();" &&
	! grep -q "worker()" out
check live-kept 0 "$fdr" live -d live-kept -- "$calc" && has out "evaluate() {" &&
	has err "run in" && ls live-kept/fdrtrace.calc.*.fdr >/dev/null
if [ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ]; then
	echo "skip live-status: a sanitized libfdrtrace cannot be preloaded into sh"
else
	check live-status 3 env TMPDIR="$work/live-tmp" "$fdr" live -- sh -c 'exit 3' &&
		has err "no process was traced"
fi
[ -z "$(ls -A live-tmp)" ] || { echo "FAIL: live left $(ls -A live-tmp) in TMPDIR"; fails=$((fails + 1)); }
check live-no-program 2 "$fdr" live -F main && has err "missing PROGRAM"

# No FILE: the run record wrote here, else the newest trace here, named on
# stderr (uftrace reads uftrace.data); neither: a usage error that says so.
mkdir -p default-input && (
	cd default-input || exit 1
	for c in account replay stack graph info; do
		check "$c-default-none" 2 "$fdr" $c && has err "no fdrtrace.run run or *.fdr trace in this directory"
	done
	"$fdr" assemble "$here/golden/basic.txt" -o old.fdr
	touch -d '1 hour ago' old.fdr
	"$fdr" assemble "$here/golden/args.txt" -o new.fdr
	check default-newest 0 "$fdr" replay && has err "reading new.fdr (no FILE given: the newest trace here)" &&
		has out "square(7);"
	check default-quiet 0 "$fdr" account -q && ! grep -q reading err
	check default-graph-func 0 "$fdr" graph add3 && has err "reading new.fdr" &&
		has out "========== BACKTRACES OF add3 =========="
	"$fdr" record -- "$calc" >/dev/null 2>&1
	check default-run 0 "$fdr" account && has err "reading fdrtrace.run (no FILE given: the run fdrtrace record wrote here)" &&
		has out " main"
	check default-run-info 0 "$fdr" info && has err "reading fdrtrace.run" && has out "index:           yes"
	exit "$fails"
) || fails=$((fails + $?))

[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "all ok"
