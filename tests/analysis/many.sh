#!/bin/bash
# many.sh FDRTRACE LOOP WORKDIR
#
# Hundreds of buffers on one thread: LOOP 100000 with 4 KiB buffers. Exact
# counts in account; then the same trace with its buffers in reverse file
# order (dump, reverse the buffers, assemble) must give the same account,
# stack and graph output when read from the file (buffers visited in time
# order), and one event per record must agree with runs of records. convert's
# JSON is in start order and well nested although main has more callees
# than its reorder window (main becomes a begin/end pair, every other call
# one complete event). Every command runs within 32 MB of address space
# (ulimit -v) on both.
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") prog=$(abs "$2") work=$(abs "$3")
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

n=100000
FDRTRACE_MODE=fdr FDRTRACE_OPTIONS=buffer_size=4096:buffer_max=4096 "$prog" $n 2>run.err
set -- fdrtrace.*.fdr
[ "$#" -eq 1 ] || fail "expected one trace: $*"
trace=$1
buffers=$("$fdr" info "$trace" | awk '/^buffers:/ { print $2 }')
echo "--- $buffers buffers"
[ "$buffers" -ge 300 ] || fail "only $buffers buffers"

"$fdr" account -f csv "$trace" >acc.csv 2>acc.err
[ -s acc.err ] && { cat acc.err >&2; fail "account reported imperfections"; }
tail -n +2 acc.csv | awk -F, '{ n = $10; gsub(/"/, "", n); print n, $2 }' | sort >counts
diff -u <(printf 'inner %d\nmain 1\nouter %d\n' $((2 * n)) $n) counts

echo "--- buffers in reverse order"
"$fdr" dump -n "$trace" >all.txt
awk '
	/^hdr / { print; next }
	/^buf ext / { n++ }
	{ buf[n] = buf[n] $0 "\n" }
	END { for (i = n; i >= 1; i--) printf "%s", buf[i] }' all.txt >reversed.txt
"$fdr" assemble reversed.txt -o reversed.fdr
cmp -s "$trace" reversed.fdr && fail "reversing changed nothing"
for c in "account" "stack -P" "graph"; do
	"$fdr" $c "$trace" >a.out 2>/dev/null
	"$fdr" $c reversed.fdr >b.out 2>b.err
	diff -u a.out b.out >/dev/null || fail "'$c' differs on the reversed trace"
	grep -q "buffers reordered by time" b.err || fail "'$c' did not say it reordered"
	FDRTRACE_ANALYSIS_READER=1 "$fdr" $c reversed.fdr >c.out 2>/dev/null
	diff -u a.out c.out >/dev/null || fail "'$c' differs on the reversed trace (reader path)"
	echo "ok   $c"
done
echo "--- convert: start order over a call with more callees than the window"
"$fdr" convert "$trace" -o out.json
if command -v python3 >/dev/null; then
	python3 - out.json $((3 * n + 1)) <<'PY' || fail "convert: events not in start order or not nested"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
calls = 0
last, stack = {}, {}
for e in ev:
    k = (e.get("pid"), e.get("tid"))
    st = stack.setdefault(k, [])
    # integer nanoseconds: the JSON has microseconds with 3 decimals, and
    # float sums of them could misorder two equal ends by one ulp
    ts = round(e.get("ts", 0) * 1000)
    if e["ph"] in "XB":
        if ts < last.get(k, 0):
            sys.exit("start order broken at %r" % e)
        last[k] = ts
        calls += 1
        while st and st[-1][0] == "X" and st[-1][1] <= ts:
            st.pop()
        end = ts + round(e.get("dur", 0) * 1000)
        if st and end > st[-1][1]:
            sys.exit("%r not inside %r" % (e, st[-1]))
        st.append(("X", end) if e["ph"] == "X" else ("B", float("inf")))
    elif e["ph"] == "E":
        while st and st[-1][0] == "X":
            st.pop()
        if not st:
            sys.exit("E without B: %r" % e)
        st.pop()
bs = sum(1 for e in ev if e["ph"] == "B")
es = sum(1 for e in ev if e["ph"] == "E")
print("calls %d, begin/end pairs %d" % (calls, bs))
if calls != int(sys.argv[2]) or bs != es or bs == 0:
    sys.exit("calls %d (want %s), B %d, E %d" % (calls, sys.argv[2], bs, es))
PY
	echo ok
fi
echo "--- convert -t writes the calls account -t counts (issue 33)"
# The window writes main out early; before, every call open then (an outer
# or inner of ~100 ns) became a begin/end pair whatever -t said.
here=$(dirname "$(abs "$0")")
for t in 100ns 1us 10us 10s; do
	acc=$("$fdr" account -q -t $t -f csv "$trace" | tail -n +2 |
		awk -F, '{ s += $2 } END { print s + 0 }')
	chrome=$("$fdr" convert -q -t $t "$trace" -o - | grep -o '"ph":"[XE]"' | wc -l)
	[ "$chrome" -eq "$acc" ] || fail "convert -t $t: $chrome calls, account -t $t: $acc"
	if command -v python3 >/dev/null; then
		"$fdr" convert -q -f perfetto -t $t "$trace" -o t.pb
		pf=$(python3 "$here/perfetto_check.py" t.pb | awk '!/^#/ { s += $2 } END { print s + 0 }')
		[ "$pf" -eq "$acc" ] || fail "convert -f perfetto -t $t: $pf calls, account: $acc"
	fi
	echo "ok   -t $t: $acc calls"
done
echo "--- bounded memory: every command within 32 MB of address space"
if (ulimit -v 32768; "$fdr" --version >/dev/null 2>&1); then
	for c in "account" "stack -P" "graph" "replay" "convert"; do
		for t in "$trace" reversed.fdr; do
			(ulimit -v 32768; "$fdr" $c -q "$t" >/dev/null) ||
				fail "'$c $t' failed within 32 MB"
		done
	done
	echo ok
else
	echo "skipped: fdrtrace does not even start within 32 MB (a sanitizer build?)"
fi
echo "--- from a pipe, the disorder is counted"
cat reversed.fdr | "$fdr" account - >/dev/null 2>p.err
grep -q "buffers out of time order (read from a file" p.err || fail "no disorder count from a pipe"
echo ok
