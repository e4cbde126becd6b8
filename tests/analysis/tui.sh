#!/bin/bash
# tui.sh FDRTRACE GOLDEN_DIR WORKDIR
#
# fdrtrace tui under tmux, for real: a 160x40 pane of a private tmux
# server runs it on golden/basic.txt (assembled), keys go in with
# send-keys and the screen comes back with capture-pane. Checks:
#   - the first screen has the tree: the threads and main under thread 100;
#   - Enter on main unfolds it (parse, foo::bar, fact appear, more lines)
#     and Enter again folds it (the same screen as before);
#   - Tab shows the account table (its header, lex with 4 calls);
#   - / lex Enter puts the cursor on lex (the status line names it), and
#     n goes on to the next match; after Esc, n goes to the next node of
#     the function under the cursor, p to the parent;
#   - c shows the callers and callees of the function under the cursor;
#   - a resize redraws (the status line moves to the new last lines);
#   - q ends the program with status 0 (remain-on-exit; a wrapper prints
#     the status on the pane; pane_dead_status when tmux has it);
#   - a run directory (run-golden: three traces, two processes, one of
#     them exec'd) shows one root per process, named by pid and command
#     line (the exec'd image's too);
#   - SIGTERM restores the terminal and ends with the signal;
#   - a standard output that is not a terminal is refused.
# Every wait polls capture-pane for the text it expects (10 s at most),
# no fixed sleeps. Skips (77) when tmux is missing.
set -u

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") golden=$(abs "$2") work=$(abs "$3")

if ! command -v tmux >/dev/null; then
	echo "SKIP: tmux is not installed (the test drives fdrtrace tui in a tmux pane)"
	exit 77
fi
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

"$fdr" assemble "$golden/basic.txt" -o basic.fdr || exit 1
mkdir run
for t in parent child leaf; do
	"$fdr" assemble "$golden/../run-golden/$t.txt" -o "run/$t.fdr" || exit 1
done

# a server of our own per session (a new socket each: a server being
# killed may still answer on its old one): nothing of the user's tmux is
# touched
n_srv=0
sock="$work/tmux.0"
tm() { tmux -S "$sock" "$@"; }
trap 'tm kill-server 2>/dev/null' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# start CMD...: a new session running the command through wrap.sh, which
# writes its pid to tui.pid and, after it, its status to tui.status (tmux
# 3.3 may mark a pane dead before it has reaped it, its pane_dead_status
# then empty: the file is what the checks read)
start() {
	tm kill-server 2>/dev/null
	n_srv=$((n_srv + 1))
	sock="$work/tmux.$n_srv"
	rm -f tui.pid tui.status
	tm -f "$work/tmux.conf" new-session -d -s t -x 160 -y 40 "sh $work/wrap.sh $*"
}
# the pane stays when its program ends, from the start (a config file:
# one that is missing would put the pane in view mode, eating the keys)
echo 'set-option -g remain-on-exit on' >tmux.conf
cat >wrap.sh <<'EOF'
sh -c 'echo $$ >tui.pid; exec "$@"' sh "$@"
echo $? >tui.status.new && mv tui.status.new tui.status
EOF
screen() { tm capture-pane -p -t t 2>/dev/null; }
# wait_for REGEX: until the screen matches (10 s); prints the screen on failure
wait_for() {
	local i
	for ((i = 0; i < 200; i++)); do
		screen | grep -Eq -- "$1" && return 0
		sleep 0.05
	done
	echo "--- screen (waiting for /$1/):"
	screen
	return 1
}
# wait_gone REGEX: until the screen no longer matches
wait_gone() {
	local i
	for ((i = 0; i < 200; i++)); do
		screen | grep -Eq -- "$1" || return 0
		sleep 0.05
	done
	echo "--- screen (waiting for /$1/ to go):"
	screen
	return 1
}
# wait_status N: the program ended with status N (wrap.sh's file), the
# terminal restored (the alternate screen left), and the pane's process
# (the wrapper) ended with status 0 once tmux says so (remain-on-exit)
wait_status() {
	local i st
	for ((i = 0; i < 200; i++)); do
		[ -e tui.status ] && break
		sleep 0.05
	done
	st=$(cat tui.status 2>/dev/null)
	[ "$st" = "$1" ] || { echo "status '$st', not $1"; return 1; }
	for ((i = 0; i < 100; i++)); do
		st=$(tm display -p -t t '#{pane_dead}:#{pane_dead_status}' 2>/dev/null)
		case $st in
		1:0) break ;;
		1:?*) echo "the pane's status: ${st#1:}"; return 1 ;;
		esac
		sleep 0.05
	done
	[ "$(tm display -p -t t '#{alternate_on}')" = 0 ] || { echo "still on the alternate screen"; return 1; }
}

export TERM=xterm-256color
start "$fdr" tui basic.fdr || { echo "FAIL: tmux cannot start a session"; exit 1; }

# the first screen: the tree, main under thread 100
wait_for 'CALL TREE' || bad "no tree on the first screen"
wait_for '^.*1  - thread 100 \(main-thread\)$' || bad "thread 100 is not a root"
wait_for '^.*1    \+ main$' || bad "main is not under thread 100, folded"
wait_for 'thread 200 \(worker\)' || bad "thread 200 is not a root"
first=$(screen | head -n 38)	# the tree, not the status lines
lines=$(grep -c . <<<"$first")

# Down to main, Enter: unfolded (its callees appear), Enter: folded again
tm send-keys -t t Down Enter
wait_for '^.*1    - main$' || bad "Enter did not unfold main"
wait_for '^.*1      \+ parse$' || bad "parse is not under main"
wait_for 'foo::bar$' || bad "foo::bar is not under main"
now=$(grep -c . <<<"$(screen)")
[ "$now" -gt "$lines" ] || bad "unfolding did not add lines ($lines, then $now)"
tm send-keys -t t Enter
wait_gone 'foo::bar$' || bad "Enter did not fold main"
[ "$(screen | head -n 38)" = "$first" ] || bad "folding did not give the first screen back"

# Tab: the account table
tm send-keys -t t Tab
wait_for 'CALLS +TOTAL +SELF +MIN +MAX +FUNCTION' || bad "Tab did not show the account"
wait_for '^ +4 .* lex$' || bad "the account has no lex with 4 calls"
wait_for '^\[account\]' || bad "no account status line"
# s: the next sort key
tm send-keys -t t s
wait_for 'sorted by self' || bad "s did not change the sort key"

# Tab twice: back to the tree; / lex Enter: the cursor on lex
tm send-keys -t t Tab Tab
wait_for '^\[tree\]' || bad "Tab did not come back to the tree"
tm send-keys -t t / l e x Enter
wait_for '^\[tree\] [0-9]+/[0-9]+  lex  search: lex' || bad "search did not move the cursor to lex"
pos1=$(screen | grep -E '^\[tree\]')
wait_for '^.*  lex$' || bad "lex is not shown after the search"
tm send-keys -t t n
for ((i = 0; i < 200; i++)); do
	pos2=$(screen | grep -E '^\[tree\]')
	[ "$pos2" != "$pos1" ] && break
	sleep 0.05
done
case $pos2 in
*"  lex  search: lex") [ "$pos2" != "$pos1" ] || bad "n did not move to the next lex ($pos1)" ;;
*) bad "n did not stay on a match: $pos2" ;;
esac

# Esc forgets the search
tm send-keys -t t Escape
wait_gone 'search: lex' || bad "Esc did not forget the search"
# n without a search: the next node of the function under the cursor (lex)
pos1=$(screen | grep -E '^\[tree\]')
tm send-keys -t t n
for ((i = 0; i < 200; i++)); do
	pos2=$(screen | grep -E '^\[tree\]')
	[ "$pos2" != "$pos1" ] && break
	sleep 0.05
done
case $pos2 in
*"  lex") [ "$pos2" != "$pos1" ] || bad "n did not move to the next node of lex ($pos1)" ;;
*) bad "n did not go to a node of lex: $pos2" ;;
esac
# p: the parent of that lex (parse, or the thread's root)
tm send-keys -t t p
wait_for '^\[tree\] [0-9]+/[0-9]+  (parse|thread .*)$' || bad "p did not go to lex's parent"
# c on lex (searched again): its callers and callees
tm send-keys -t t / l e x Enter c
wait_for 'CALLERS AND CALLEES OF lex' || bad "c did not show lex's callers"
wait_for 'caller +parse$' || bad "parse is not a caller of lex"

# a resize (KEY_RESIZE): redrawn for 100x12, the status line on line 11
tm resize-window -t t -x 100 -y 12
for ((i = 0; i < 200; i++)); do
	screen | sed -n 11p | grep -q '^\[callers/callees\]' && break
	sleep 0.05
done
screen | sed -n 11p | grep -q '^\[callers/callees\]' || { bad "not redrawn after a resize"; screen; }
tm resize-window -t t -x 160 -y 40

# ?: the keys, any key back
tm send-keys -t t '?'
wait_for '^Keys' || bad "? did not show the keys"
tm send-keys -t t Escape
wait_gone '^Keys' || bad "a key did not close the help"

# q: the program ends with status 0
tm send-keys -t t q
wait_status 0 || bad "q: not status 0"

# a run: one root per process, pid and command line
start "$fdr" tui -q run
wait_for 'process [0-9]+: ' || bad "the run has no process root"
n=$(screen | head -n 38 | grep -cE 'process [0-9]+: ')
[ "$n" = 2 ] || bad "the run shows $n process roots, not 2"
screen | grep -q 'process 100: demo --serve$' || bad "no root for process 100 (demo --serve)"
screen | grep -q 'process 101: demo --worker; exec ' || bad "process 101's exec is not in its name"
tm send-keys -t t q
wait_status 0 || bad "q on a run: not status 0"

# SIGTERM: the terminal restored, the signal's status (128 + 15)
start "$fdr" tui basic.fdr
wait_for 'CALL TREE' || bad "no tree before SIGTERM"
kill -TERM "$(cat tui.pid)"
wait_status 143 || bad "SIGTERM: the program did not end by the signal"

# not a terminal
out=$("$fdr" tui basic.fdr 2>&1 </dev/null | cat)
[ "$out" = "fdrtrace tui: standard output is not a terminal" ] || bad "not a terminal: '$out'"
"$fdr" tui basic.fdr >/dev/null 2>&1 && bad "not a terminal: status 0"
"$fdr" tui --help | grep -q 'Usage: fdrtrace tui' || bad "no --help"

[ "$fail" = 0 ] && echo "tui: ok"
exit "$fail"
