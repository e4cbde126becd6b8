# workload.bash [SCALE] - tests/real's bash workload (real.py bash gcc).
#
# Run by the bash under test (plain and traced builds) in a fresh, empty
# directory; real.py compares stdout, stderr and the exit status (3) of the
# two. The output is deterministic: no pids, no times, background jobs write
# to their own files, read back in order. $BASH is the bash running this,
# so the "$BASH" children are the build under test too.
#
# Processes that run shell code and exit, each leaving a trace of its own
# (closed at exit; a fork that execs another program leaves one too, closed
# at exec, not counted here), at least: the shell itself; in part 1, 19
# forks (subshells, command substitutions, the builtins and loops of
# pipelines); part 2, 4; part 3, 4 (a subshell, a "$BASH -c", a
# subshell with a trap, a background builtin); part 4, 8 jobs; part 5, the
# coproc; part 6, 2 (one execs "$BASH"); part 7, the 67 calls of fib, each
# in a command substitution, and the FUNCNEST subshell; part 8, 2. In all
# 109: real.py's Bash.min_traces (keep the two in step; 111 traces end at
# an exit with bash 5.2.15, and 24 more at an exec).
scale=${1:-1}

# 1. subshells, command substitution, pipelines
x=1
( x=2; echo "subshell x=$x"; ( echo nested; exit 3 ); echo "nested status $?" )
echo "parent x=$x"
y=$(echo a; echo b | tr a-z A-Z)
echo "y=$y"
z=$( (echo deep) )
echo "z=$z"
n=0
for i in 1 2 3 4 5; do n=$((n + $(echo $i))); done
echo "n=$n"
echo foo | while read -r l; do echo "read $l"; done
printf '%s\n' c b a | sort | head -2 | cat
echo hi | { read -r v; echo "brace $v"; }
{ echo e1; echo e2 >&2; } 2>&1 | wc -l
set -o pipefail; false | true; echo "pipefail status $?"; set +o pipefail
seq 1 $((100 * scale)) | while read -r i; do echo $((i * 2)); done | tail -1
echo "stderr line from the main shell" >&2

# 2. descriptors: exec 3>file 4>file, written by the shell and its children
exec 3>three.txt 4>four.txt
echo "to 3" >&3
echo "to 4" >&4
( echo "3 from a subshell" >&3; echo "4 from a subshell" >&4 )
for i in 1 2 3; do echo "3 line $i" >&3; done
f4() { echo "4 from a function $1" >&4; }
f4 a; f4 b
echo "$(echo "4 from a command substitution" >&4; echo cs)" >&3
exec {dyn}>dyn.txt
echo "to a dynamic descriptor" >&$dyn
( echo "dynamic from a subshell" >&$dyn )
exec {dyn}>&-
echo "3 and 4 to one file" 3>&4 >&3
exec 3>&- 4>&-
cat three.txt four.txt dyn.txt
echo "wc $(cat three.txt four.txt | wc -l)"
( exec 5>five.txt; echo five >&5; echo "five to stderr" >&2 ) 2>five-err.txt
cat five.txt five-err.txt

# 3. traps: USR1 (from itself, a subshell, a child bash), TERM, EXIT
# (No CHLD trap: bash 5.2.15 running one during `wait` corrupts its own
# heap now and then under load, untraced and uninstrumented too: CI saw
# "free(): double free detected in tcache 2", SIGABRT, in the plain
# build's run, 2026-11-27. bash's SIGCHLD handler still runs for every job
# below.)
usr1=0
trap 'usr1=$((usr1 + 1)); echo "USR1 trap $usr1"' USR1
trap 'echo "TERM trap"' TERM
trap 'echo "EXIT trap usr1=$usr1"; echo "EXIT trap to stderr" >&2' EXIT
kill -USR1 $$
kill -USR1 $$
kill -TERM $$
( kill -USR1 $$ )
echo "after the subshell's USR1: $usr1"
"$BASH" -c "kill -USR1 $$"
echo "after the child bash's USR1: $usr1"
( trap 'echo "subshell EXIT trap"' EXIT; echo "in a subshell with a trap" )
/bin/true & wait
true & wait

# 4. background jobs and wait
pids=()
for i in 1 2 3 4 5; do
	( s=0; for ((k = 0; k < 40 * scale * i; k++)); do s=$((s + k)); done
	  echo "job $i sum $s" >job$i.txt; exit $i ) &
	pids+=($!)
done
for i in 1 2 3 4 5; do wait "${pids[i - 1]}"; echo "job $i status $?"; cat job$i.txt; done
sq() { echo $(($1 * $1)) >sq$1.txt; }
for i in 6 7 8; do sq $i & done
wait
cat sq6.txt sq7.txt sq8.txt

# 5. a coproc running shell code
# (its pid saved: bash unsets UPPER_PID when it reaps the coproc, which may
# be before or after the wait below, as the two sides run)
coproc UPPER { while read -r l; do echo "${l^^}"; done; }
upper_pid=$UPPER_PID
for w in alpha beta gamma; do
	echo "$w" >&"${UPPER[1]}"
	read -r r <&"${UPPER[0]}"
	echo "coproc: $r"
done
exec {UPPER[1]}>&-
wait "$upper_pid"
echo "coproc status $?"

# 6. exec of external commands from subshells
( exec /bin/echo "exec'd /bin/echo" )
( exec "$BASH" -c 'echo "exec'\''d bash $((6 * 7))"; exit 5' ); echo "exec'd bash status $?"
( exec >redir.txt; echo "subshell stdout redirected by exec" )
cat redir.txt
out=$(exec cat <<EOF
here-doc through an exec'd cat
EOF
)
echo "$out"

# 7. recursion: deep, fib through command substitutions, FUNCNEST
deep() { if [ "$1" -gt 0 ]; then deep $(($1 - 1)); else echo "bottom of deep"; fi; }
deep $((300 * scale))
fib() {
	if [ "$1" -lt 2 ]; then echo "$1"; return; fi
	local a b
	a=$(fib $(($1 - 1))); b=$(fib $(($1 - 2)))
	echo $((a + b))
}
echo "fib 8 = $(fib 8)"
count() { local n=0; while [ $n -lt "$1" ]; do n=$((n + 1)); done; echo "counted $n"; }
count $((500 * scale))
(FUNCNEST=30; loop() { loop; }; loop) 2>&1 | sed 's/.*: //'
echo "after FUNCNEST"

# 8. set -e in subshells
( set -e; echo "set -e subshell"; false; echo "not reached" ); echo "set -e subshell status $?"
( set -e; f() { echo "in f"; return 4; }; f; echo "not reached" ); echo "set -e function status $?"
echo "done" >&2
exit 3
