#!/bin/bash
# run.sh FDRTRACE SPAWN WORKDIR
#
# Runs of several processes (docs/analysis.md, "Runs of several
# processes"): SPAWN (targets/spawn.c) forks a child that execs itself and
# another child, after a thread: four traces in one directory. Every
# command reads the directory (and the traces named one by one) as one run:
# account's and graph's totals are the sums of the traces' own, stack's
# merged lines too, --pid selects, replay's headers come in start order,
# convert writes one pid per process (with a flow from parent to child),
# diff of the run against itself changes nothing, extract-map makes one map
# of one program. Then 100 and 1,000 processes (one trace copied with other
# pids through dump and assemble): every command completes, and the peak
# RSS does not grow with the number of processes.
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
here=$(abs "$(dirname "$0")")
fdr=$(abs "$1") prog=$(abs "$2") work=$(abs "$3")
rm -rf "$work"
mkdir -p "$work/run"
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }

n=200
FDRTRACE_MODE=fdr FDRTRACE_OPTIONS=logfile_base=$work/run/ "$prog" $n 2>spawn.err
traces=(run/*.fdr)
[ "${#traces[@]}" -eq 4 ] || fail "expected 4 traces: ${traces[*]}"
# the parent: the trace whose pid is in no other trace's name twice and
# that is the run's first (the smallest start): replay's first header
parent=$("$fdr" replay -D 1 run 2>/dev/null | awk '/^# ==== process/ { print $4; exit }')
parent=${parent%:}
[ -n "$parent" ] || fail "no process header in replay"

# --- account: the run's counts per name are the sums of the traces'
# CSV columns: funcid,count,...,debug,function(10),total
acc_counts() { tail -n +2 | awk -F, '{ n = $10; gsub(/"/, "", n); c[n] += $2 } END { for (k in c) print k, c[k] }' | sort; }
"$fdr" account -f csv run >acc.csv 2>acc.err
grep -q "read 4 of 4 traces (3 processes) as one run" acc.err || { cat acc.err; fail "account: no count of traces"; }
acc_counts <acc.csv >acc.run
for t in "${traces[@]}"; do "$fdr" account -f csv "$t" 2>/dev/null | tail -n +2; done |
	(echo; cat) | acc_counts >acc.sum
diff -u acc.sum acc.run || fail "account: run's counts are not the traces' sums"
grep -qx "step $((5 * n))" acc.run || fail "account: step is not $((5 * n))"
grep -qx "work 5" acc.run || fail "account: work is not 5"
# several files named one by one: the same as the directory
"$fdr" account -f csv "${traces[@]}" 2>/dev/null | acc_counts >acc.files
diff -u acc.run acc.files || fail "account: files differ from the directory"
# --per-process: each process's table, then the run's
"$fdr" account --per-process run >acc.pp 2>/dev/null
[ "$(grep -c '^== process' acc.pp)" -eq 4 ] || fail "account --per-process: not 4 sections"
grep -q '^== the run: 4 processes' acc.pp || fail "account --per-process: no run section"
"$fdr" account --per-process -f csv run 2>/dev/null | awk -F, 'NR > 1 && $1 == "*"' |
	awk -F, '{ n = $11; gsub(/"/, "", n); print n, $3 }' | sort >acc.pp.run
diff -u acc.run acc.pp.run || fail "account --per-process -f csv: run rows differ"
ok "account: totals are the sums of the traces'"
# --pid: the parent alone is its own trace
"$fdr" account -f csv --pid "$parent" run 2>/dev/null | acc_counts >acc.pid
ptrace=$(ls run/*."$parent".fdr)
"$fdr" account -f csv "$ptrace" 2>/dev/null | acc_counts >acc.ptrace
diff -u acc.ptrace acc.pid || fail "account --pid: not the parent's trace"
"$fdr" account --pid 1 run >/dev/null 2>pid.err && fail "account --pid 1: no such process, but success"
grep -q "no trace of process 1" pid.err || fail "account --pid 1: $(cat pid.err)"
ok "account --pid"

# --- replay: one header per trace, in start order; --pid
"$fdr" replay run >replay.out 2>/dev/null
grep '^# ==== process' replay.out >replay.heads
[ "$(wc -l <replay.heads)" -eq 4 ] || fail "replay: not 4 headers"
head -1 replay.heads | grep -q "process $parent " || fail "replay: the parent is not first"
# the exec'd image comes right after the image it replaced
child=$(grep -m1 "(forked by $parent)" replay.heads | awk '{ print $4 }')
grep -A1 "process $child (forked by $parent)" replay.heads | grep -q "process $child (after exec)" ||
	fail "replay: the exec'd image does not follow its first image"
[ "$(grep -c 'step();' replay.out)" -eq $((5 * n)) ] || fail "replay: not every step"
"$fdr" replay --pid "$child" run 2>/dev/null | grep '^# ====' >replay.pid
[ "$(wc -l <replay.pid)" -eq 2 ] || fail "replay --pid: not the two images of $child"
grep -vq "process $child " replay.pid && fail "replay --pid: another process"
# selectors apply to every process
[ "$("$fdr" replay -F leaf run 2>/dev/null | grep -c 'step();')" -eq $n ] || fail "replay -F leaf"
ok "replay: headers in start order, --pid, selectors"

# --- stack: merged lines are the traces' lines summed
for t in "${traces[@]}"; do "$fdr" stack -c "$t" 2>/dev/null; done |
	awk '{ v = $NF; $NF = ""; c[$0] += v } END { for (k in c) print k c[k] }' | sort >stack.sum
"$fdr" stack -c run 2>/dev/null | sort >stack.run
diff -u stack.sum stack.run || fail "stack: run's lines are not the traces' sums"
"$fdr" stack -c --per-process run 2>/dev/null | grep -c "^an_spawn $parent;" >/dev/null ||
	fail "stack --per-process: no line of the parent"
ok "stack"

# --- graph: vertices' calls are the traces' sums
gcalls() { sed -n 's/.*label="\([^\\]*\)\\n\([0-9]*\) call.*/\1 \2/p' | grep -v ' -> ' ; }
for t in "${traces[@]}"; do "$fdr" graph --format dot "$t" 2>/dev/null | grep -v -- '->' | gcalls; done |
	awk '{ c[$1] += $2 } END { for (k in c) print k, c[k] }' | sort >graph.sum
"$fdr" graph --format dot run 2>/dev/null | grep -v -- '->' | gcalls | sort >graph.run
diff -u graph.sum graph.run || fail "graph: calls are not the traces' sums"
"$fdr" graph --format dot run 2>/dev/null | grep -q "f[0-9]* -> f[0-9]* \\[label=\"$((5 * n)) calls" ||
	fail "graph: no edge of the $((5 * n)) calls of step"
ok "graph"

# --- graph as text on a run: each process's tree after its header; FUNC
# in the processes that called it
"$fdr" graph run step >graph-text.out 2>graph-text.err || fail "graph run step"
[ "$(grep -c '^# ==== process ' graph-text.out)" -ge 2 ] || fail "graph run: no process headers"
grep -q '========== BACKTRACES OF step ==========' graph-text.out || fail "graph run step: no backtraces"
grep -q 'no completed call' graph-text.err && fail "graph run step: a process without step was an error"
"$fdr" graph run nosuchfunction >/dev/null 2>graph-none.err && fail "graph run nosuchfunction: exit 0"
grep -q "no process of the run has a completed call of 'nosuchfunction'" graph-none.err ||
	fail "graph run nosuchfunction: no message"
ok "graph as text, FUNC on a run"

# --- convert: one Chrome JSON, one pid per process, an arrow per child
"$fdr" convert run -o run.json 2>convert.err
grep -q "read 4 of 4 traces (3 processes) as one run" convert.err || fail "convert: no count of traces"
if command -v python3 >/dev/null; then
	python3 - run.json "$parent" acc.run <<'PY' || fail "convert: the run's JSON"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
parent = int(sys.argv[2])
want = dict(l.split() for l in open(sys.argv[3]))
calls = {}
for e in ev:
    if e["ph"] == "X":
        calls[e["name"]] = calls.get(e["name"], 0) + 1
assert calls == {k: int(v) for k, v in want.items()}, (calls, want)
pids = {e["pid"] for e in ev if e["ph"] == "X"}
assert len(pids) == 3 and parent in pids, pids
names = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
assert set(names) == pids, names
s = {e["id"]: e for e in ev if e["ph"] == "s"}
f = {e["id"]: e for e in ev if e["ph"] == "f"}
assert len(s) == 3 and set(s) == set(f), (s, f)	# 2 forks, 1 exec
for i in f:
    assert f[i]["name"] == s[i]["name"] and s[i]["ts"] <= f[i]["ts"], (s[i], f[i])
    assert f[i]["bp"] == "e"
assert sum(1 for e in s.values() if e["name"] == "fork" and e["pid"] == parent) == 2
assert sum(1 for e in s.values() if e["name"] == "exec") == 1
# one time axis: from the run's earliest start
assert min(e["ts"] for e in ev if "ts" in e) < 1e6, "times are not from the run's start"
PY
	ok "convert chrome: one pid per process, 3 flows, counts"
	"$fdr" convert -f perfetto run -o run.pftrace 2>/dev/null
	python3 "$here/perfetto_check.py" run.pftrace acc.run 2>pf.err >/dev/null ||
		{ cat pf.err; fail "convert perfetto: not valid"; }
	grep -qx "# flows: 3" pf.err || { cat pf.err; fail "convert perfetto: not 3 flows"; }
	if command -v protoc >/dev/null; then
		protoc --decode_raw <run.pftrace >/dev/null || fail "convert perfetto: protoc cannot decode it"
	fi
	ok "convert perfetto: valid, counts, 3 flows"
fi
# --pid: the child's two images, one pid, the exec arrow between them
"$fdr" convert --pid "$child" run -o child.json 2>/dev/null
[ "$(grep -c '"ph":"s"' child.json)" -eq 1 ] || fail "convert --pid: not the exec's arrow alone"
grep -q "\"pid\":$parent," child.json && fail "convert --pid: the parent is there"
ok "convert --pid"

# --- diff: a run against itself changes nothing; against one of its traces
"$fdr" diff -f csv run run >diff.csv 2>/dev/null
awk -F, 'NR > 1 && ($2 != "both" || $5 != 0 || $9 != 0 || $13 != 0) { bad = 1 } END { exit bad }' diff.csv ||
	{ cat diff.csv; fail "diff: a run against itself changed"; }
[ "$(tail -n +2 diff.csv | wc -l)" -eq "$(wc -l <acc.run)" ] || fail "diff: not every function"
"$fdr" diff -f csv "$ptrace" run 2>/dev/null | awk -F, '$1 == "\"step\"" { print $3, $4 }' >diff.step
[ "$(cat diff.step)" = "$((2 * n)) $((5 * n))" ] || fail "diff: step of a trace and of the run: $(cat diff.step)"
ok "diff: run against itself, trace against run"

# --- extract-map: the ids of one program's processes; refused when they differ
"$fdr" extract-map --pid "$parent" run -o parent.map 2>/dev/null
"$fdr" extract-map "$ptrace" -o ptrace.map
cmp -s parent.map ptrace.map || fail "extract-map --pid: not the parent's map"
# the exec'd image numbered its functions anew: refused, naming the processes
"$fdr" extract-map run -o all.map 2>xm.err && fail "extract-map: ids that differ, but a map"
grep -q "pick one with --pid" xm.err || { cat xm.err; fail "extract-map: no advice"; }
ok "extract-map"

# --- the process tree's fields (writers since 2026-12-01), from text
# (run-golden/*.txt): command lines name the processes, the fork record's
# point and the exec record's start the arrows, on one time axis (TSC -
# the earliest start, 1000; 1 GHz)
mkdir -p gold
for t in parent child leaf; do
	"$fdr" assemble "$here/run-golden/$t.txt" -o "gold/$t.fdr"
done
"$fdr" replay gold >gold.replay 2>/dev/null
diff -u - gold.replay <<'OUT' || fail "replay of the golden run"
#    DURATION        TID   FUNCTION
# ==== process 100 (parent 1): demo --serve  [gold/parent.fdr]
              [    100] | main() {
   200.000 ns [    100] |   spawn();
   900.000 ns [    100] | } /* main */

# ==== process 101 (forked by 100): demo --worker  [gold/child.fdr]
   100.000 ns [    101] | work();

# ==== process 101 (after exec): leaf 7  [gold/leaf.fdr]
   200.000 ns [    101] | leaf();
OUT
"$fdr" convert gold 2>/dev/null | grep -v '"ph":"X"' >gold.json
diff -u - gold.json <<'OUT' || fail "convert of the golden run"
{"displayTimeUnit":"ns","traceEvents":[
{"name":"process_name","ph":"M","pid":100,"args":{"name":"demo --serve"}},
{"name":"thread_name","ph":"M","pid":100,"tid":100,"args":{"name":"thread 100"}},
{"name":"fork","cat":"process","ph":"s","id":2,"ts":0.500,"pid":100,"tid":100},
{"name":"process_name","ph":"M","pid":101,"args":{"name":"demo --worker; exec leaf 7"}},
{"name":"thread_name","ph":"M","pid":101,"tid":101,"args":{"name":"thread 101"}},
{"name":"fork","cat":"process","ph":"f","bp":"e","id":2,"ts":0.700,"pid":101,"tid":101},
{"name":"exec","cat":"process","ph":"s","id":3,"ts":0.900,"pid":101,"tid":101},
{"name":"process_name","ph":"M","pid":101,"args":{"name":"demo --worker; exec leaf 7"}},
{"name":"thread_name","ph":"M","pid":101,"tid":101,"args":{"name":"thread 101"}},
{"name":"exec","cat":"process","ph":"f","bp":"e","id":3,"ts":1.100,"pid":101,"tid":101}
]}
OUT
"$fdr" convert gold 2>/dev/null | grep -q '"name":"main","cat":"function","ph":"X","ts":0.100,"dur":0.900' ||
	fail "convert of the golden run: main is not at 0.1 us"
if command -v python3 >/dev/null; then
	"$fdr" convert -f perfetto gold -o gold.pftrace 2>/dev/null
	python3 "$here/perfetto_check.py" gold.pftrace >/dev/null 2>gold.pf.err ||
		{ cat gold.pf.err; fail "perfetto of the golden run"; }
	grep -qx "# flows: 2" gold.pf.err || fail "perfetto of the golden run: not 2 flows"
fi
"$fdr" extract-map gold >/dev/null 2>gold.xm && fail "extract-map of two programs made a map"
grep -q "run 2 programs" gold.xm && grep -qx "  /bin/leaf: pids 101" gold.xm ||
	{ cat gold.xm; fail "extract-map of two programs: not named"; }
ok "golden run: names, fork and exec points, one time axis; extract-map names the programs"

# --- 100 and 1,000 processes: every command completes; the peak RSS does
# not grow with the number of processes (the traces are read one after
# another). The copies are of the second child (forked by the parent,
# whose trace is in the run too: 1,000 arrows).
if ! command -v python3 >/dev/null; then
	echo "note: no python3: runs of 100 and 1,000 processes not made"
	exit 0
fi
peak() {	# peak OUT COMMAND...: the command's peak RSS in KiB on stdout
	local out=$1
	shift
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M -o peak.txt "$@" >"$out" 2>/dev/null || return 1
		tail -1 peak.txt
	else
		python3 -c 'import resource, subprocess, sys
with open(sys.argv[1], "wb") as o:
    r = subprocess.call(sys.argv[2:], stdout=o, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r)' "$out" "$@"
	fi
}
copy=$(grep -v "(after exec)" replay.heads | awk -v p="$parent" '$4 != p":" { t = $NF } END { print t }' | tr -d '[]')
[ -f "$copy" ] || fail "no trace to copy: '$copy'"
"$fdr" dump -n "$copy" >copy.txt
for count in 100 1000; do
	mkdir -p "copies$count" "many$count"
	python3 "$here/run_copies.py" copy.txt "copies$count" $((count - 1))
	for t in "copies$count"/*.txt; do
		b=${t##*/}
		"$fdr" assemble "$t" -o "many$count/${b%.txt}.fdr"
	done
	cp "$ptrace" "many$count/"
	[ "$(ls "many$count" | wc -l)" -eq $count ] || fail "not $count traces"
	i=0
	for c in "account" "account --per-process" "replay" "stack" "graph" "convert" \
		"convert -f perfetto" "extract-map"; do
		kb=$(peak "out$count.$i" "$fdr" $c "many$count") || fail "$c on $count processes failed"
		echo "${c// /_} $kb" >>"rss$count"
		i=$((i + 1))
	done
	kb=$(peak "out$count.diff" "$fdr" diff "many$count" "many$count") || fail "diff on $count failed"
	echo "diff $kb" >>"rss$count"
done
# what the runs hold: every process's calls
[ "$(grep -c '^# ==== process' out1000.2)" -eq 1000 ] || fail "replay: not 1,000 headers"
python3 - out1000.5 1000 <<'PY' || fail "convert: 1,000 processes"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
pids = {e["pid"] for e in ev if e["ph"] == "X"}
assert len(pids) == int(sys.argv[2]), len(pids)
assert sum(1 for e in ev if e["ph"] == "f") == int(sys.argv[2]) - 1
PY
python3 "$here/perfetto_check.py" out1000.6 >/dev/null 2>pf1000.err || { cat pf1000.err; fail "perfetto of 1,000 processes"; }
grep -qx "# flows: 999" pf1000.err || fail "perfetto: not 999 flows"
# peak RSS: under 64 MiB, and 1,000 processes within 1.5 times 100 (KiB);
# not under a sanitizer, whose allocator keeps freed memory in quarantine
if [ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ]; then
	paste rss100 rss1000 | awk '{ printf "  %-22s 100: %6d KiB  1000: %6d KiB (sanitized: not checked)\n", $1, $2, $4 }'
else
paste rss100 rss1000 | awk '{
	printf "  %-22s 100: %6d KiB  1000: %6d KiB\n", $1, $2, $4
	if ($4 > 65536 || $4 > 1.5 * $2 + 2048) bad = bad " " $1
} END { if (bad) { print "FAIL: peak RSS grows with the processes:" bad; exit 1 } }'
fi
ok "100 and 1,000 processes: every command, bounded memory"
