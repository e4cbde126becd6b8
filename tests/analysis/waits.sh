#!/bin/bash
# waits.sh FDRTRACE LOOP WORKDIR
#
# on_full=wait's waits (FDRx kind 13) in convert (issue 33: 72 wait records
# gave 0 events). A wait's record opens the new buffer, before the record
# whose write waited (its time read before the wait), so the wait lies
# after that record: beside a call that ended (the first wait below),
# inside a call that began (the second). Chrome: one complete event
# "fdrtrace: waited for a buffer" per wait with its exact start and
# duration, properly nested; Perfetto: one slice each, the structure
# checked by perfetto_check.py; --tid and -r select waits as events.
# replay prints each where convert places it (it printed the first inside
# the call that had ended before it). Two waits in a row (the first
# before any record: inside the call open then) and a wait before an
# exit that unwinds a callee (after the record's own call, not the
# unwound one): both kept, each in its place.
# Then a real run of LOOP with buffer_max=2 on_full=wait: as many wait
# events as the summary counts waits (skipped when the run never waited).
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") prog=$(abs "$2") work=$(abs "$3")
here=$(dirname "$(abs "$0")")
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# FDRx wait payload: "FDRx", version 1, kind 13, length 20, tid, first, last.
wait_hex() {
	printf '46445278010d1400%s' "$(printf '%08x' "$1" | sed 's/\(..\)\(..\)\(..\)\(..\)/\4\3\2\1/')"
	for v in "$2" "$3"; do
		printf '%016x' "$v" | sed 's/\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)\(..\)/\8\7\6\5\4\3\2\1/'
	done
}

cat >waits.txt <<EOF
hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096
buf ext size=auto
buf new tid=100
buf wal sec=1700000000 usec=0
buf pid pid=100
cpu new cpu=0 tsc=1000
ext func delta=0 func_id=1 address=0x401000 module_id=0 name=main
ext func delta=0 func_id=2 address=0x401100 module_id=0 name=work
fun ent id=1 delta=0
fun ent id=2 delta=100
buf ext size=auto
buf new tid=100
buf wal sec=1700000000 usec=0
buf pid pid=100
cpu new cpu=0 tsc=1200
evt cus size=28 delta=0 data=$(wait_hex 100 1250 5250)
fun exi id=2 delta=0
fun ent id=2 delta=4100
fun exi id=2 delta=50
buf ext size=auto
buf new tid=100
buf wal sec=1700000000 usec=0
buf pid pid=100
cpu new cpu=0 tsc=5400
evt cus size=28 delta=0 data=$(wait_hex 100 5420 5620)
fun ent id=2 delta=0
fun exi id=2 delta=300
fun exi id=1 delta=100
EOF
"$fdr" assemble waits.txt -o waits.fdr
"$fdr" dump waits.fdr | grep -c "FDRx wait" | grep -qx 2 || fail "the trace does not hold two waits"

echo "--- chrome"
"$fdr" convert -q waits.fdr -o waits.json
grep '"cat":"fdrtrace"' waits.json >got
cat >want <<'EOF'
{"name":"fdrtrace: waited for a buffer","cat":"fdrtrace","ph":"X","ts":1.250,"dur":4.000,"pid":100,"tid":100,"args":{"on_full":"wait"}},
{"name":"fdrtrace: waited for a buffer","cat":"fdrtrace","ph":"X","ts":5.420,"dur":0.200,"pid":100,"tid":100,"args":{"on_full":"wait"}},
EOF
diff -u want got || fail "convert: not the two waits"
if command -v python3 >/dev/null; then
	python3 - waits.json <<'PY' || fail "convert: not in start order or not nested"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"]
st, last = [], 0
for e in ev:
    ts, end = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
    if ts < last:
        sys.exit("start order broken at %r" % e)
    last = ts
    while st and st[-1] <= ts:
        st.pop()
    if st and end > st[-1]:
        sys.exit("%r not inside its caller" % e)
    st.append(end)
PY
	echo ok
fi

echo "--- perfetto"
"$fdr" convert -q -f perfetto waits.fdr -o waits.pb
if command -v python3 >/dev/null; then
	python3 "$here/perfetto_check.py" waits.pb >pf.counts || fail "perfetto: bad structure"
	grep -qx "fdrtrace: waited for a buffer 2" pf.counts || { cat pf.counts >&2; fail "perfetto: not two waits"; }
	echo ok
fi

echo "--- replay"
"$fdr" replay -q waits.fdr >replay.out
cat >want <<'EOF'
#    DURATION        TID   FUNCTION
              [    100] | main() {
   100.000 ns [    100] |   work();
              [    100] |   [waited 0.000004 s for a free buffer (on_full=wait)]
    50.000 ns [    100] |   work();
              [    100] |   work() {
              [    100] |     [waited 0.000000 s for a free buffer (on_full=wait)]
   300.000 ns [    100] |   } /* work */
     4.800 us [    100] | } /* main */
EOF
diff -u want replay.out || fail "replay: the waits are not where they happened"
"$fdr" replay -q -t 1ns waits.fdr >replay-t.out
diff -u want replay-t.out || fail "replay -t 1ns (the selecting path): not the same"
echo ok

echo "--- two waits in a row; a wait before an exit that unwinds"
cat >waits2.txt <<EOF
hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096
buf ext size=auto
buf new tid=100
buf wal sec=1700000000 usec=0
buf pid pid=100
cpu new cpu=0 tsc=1000
ext func delta=0 func_id=1 address=0x401000 module_id=0 name=main
ext func delta=0 func_id=2 address=0x401100 module_id=0 name=f
ext func delta=0 func_id=3 address=0x401200 module_id=0 name=g
fun ent id=1 delta=0
fun ent id=2 delta=100
fun ent id=3 delta=100
buf ext size=auto
buf new tid=100
buf wal sec=1700000000 usec=0
buf pid pid=100
cpu new cpu=0 tsc=1300
evt cus size=28 delta=0 data=$(wait_hex 100 1310 1400)
buf ext size=auto
buf new tid=100
buf wal sec=1700000000 usec=0
buf pid pid=100
cpu new cpu=0 tsc=1500
evt cus size=28 delta=0 data=$(wait_hex 100 1510 1600)
fun exi id=2 delta=0
fun exi id=1 delta=200
EOF
"$fdr" assemble waits2.txt -o waits2.fdr
"$fdr" convert -q waits2.fdr -o - | grep '"cat":"fdrtrace"' >got
cat >want <<'EOF'
{"name":"fdrtrace: waited for a buffer","cat":"fdrtrace","ph":"X","ts":1.310,"dur":0.090,"pid":100,"tid":100,"args":{"on_full":"wait"}},
{"name":"fdrtrace: waited for a buffer","cat":"fdrtrace","ph":"X","ts":1.510,"dur":0.090,"pid":100,"tid":100,"args":{"on_full":"wait"}},
EOF
diff -u want got || fail "convert: not the two waits in a row"
if command -v python3 >/dev/null; then
	"$fdr" convert -q -f perfetto waits2.fdr -o waits2.pb
	python3 "$here/perfetto_check.py" waits2.pb >pf2.counts || fail "perfetto: bad structure (waits2)"
	grep -qx "fdrtrace: waited for a buffer 2" pf2.counts || fail "perfetto: not two waits (waits2)"
fi
"$fdr" replay -q waits2.fdr >replay2.out
cat >want <<'EOF'
#    DURATION        TID   FUNCTION
              [    100] | main() {
              [    100] |   f() {
              [    100] |     g() {
              [    100] |       [waited 0.000000 s for a free buffer (on_full=wait)]
   300.000 ns [    100] |     } /* g */ /* ended by an outer exit */
   400.000 ns [    100] |   } /* f */
              [    100] |   [waited 0.000000 s for a free buffer (on_full=wait)]
   700.000 ns [    100] | } /* main */
EOF
diff -u want replay2.out || fail "replay: the waits in a row are not where they happened"
echo ok

echo "--- selectors"
n=$("$fdr" convert -q --tid 7 waits.fdr -o - | grep -c '"cat":"fdrtrace"' || true)
[ "$n" -eq 0 ] || fail "--tid 7 kept $n waits"
n=$("$fdr" convert -q -r '0.000002~' waits.fdr -o - | grep -c '"cat":"fdrtrace"' || true)
[ "$n" -eq 1 ] || fail "-r 0.000002~ kept $n waits, expected 1"
echo ok

echo "--- a real run with buffer_max=2 on_full=wait"
FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="buffer_max=2 buffer_size=4K on_full=wait" "$prog" 20000 2>run.err
set -- fdrtrace.*.fdr
[ "$#" -eq 1 ] || fail "expected one trace: $*"
"$fdr" convert "$1" -o run.json 2>conv.err
waits=$(sed -n 's/.* in \([0-9]*\) waits\{0,1\} (on_full=wait.*/\1/p' conv.err)
if [ -z "$waits" ]; then
	echo "skipped: the run never waited"
	exit 0
fi
n=$(grep -c '"name":"fdrtrace: waited for a buffer"' run.json || true)
[ "$n" -eq "$waits" ] || fail "chrome: $n wait events for $waits waits"
"$fdr" convert -q -f perfetto "$1" -o run.pb
if command -v python3 >/dev/null; then
	python3 "$here/perfetto_check.py" run.pb >run.counts || fail "perfetto: bad structure"
	grep -qx "fdrtrace: waited for a buffer $waits" run.counts || fail "perfetto: not $waits waits"
fi
echo "ok   $waits waits"
