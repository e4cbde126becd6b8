#!/bin/bash
# spawn_flow.sh FDRTRACE PSPAWN RUN_GOLDEN WORKDIR
#
# convert's arrow to a child its parent started without a fork record in
# the child (posix_spawn): from the parent's spawn record, which names the
# child's pid. From text (RUN_GOLDEN: parent.txt spawns pid 102 at TSC
# 1550, and pid 102 before and after; spawned.txt is pid 102): exactly one
# arrow "spawn", from 0.550 us on thread 100 to the child's first call;
# the spawns before (an earlier one) and after the child's start (a reused
# pid) are not its start; forked.txt (pid 103) has a fork record with a
# serial and no time: its arrow "fork" starts at the parent's spawn record
# of that serial (0.580 us). Then a real run under fdrtrace record
# (targets/pspawn.c: launch() posix_spawn()s the program itself): the
# parent's trace has a spawn record with the child's pid, and the arrow
# "spawn" begins inside launch()'s slice on the parent's thread and ends
# on the child, in the Chrome JSON and in the Perfetto trace
# (perfetto_check.py: one flow, protoc decodes it).
set -u

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") prog=$(abs "$2") gold=$(abs "$3") work=$(abs "$4")
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work/gold"
cd "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# --- from text
"$fdr" assemble "$gold/parent.txt" -o gold/parent.fdr
"$fdr" assemble "$gold/spawned.txt" -o gold/spawned.fdr
"$fdr" assemble "$gold/forked.txt" -o gold/forked.fdr
"$fdr" convert gold 2>/dev/null | grep '"cat":"process"' >gold.flows
diff -u - gold.flows <<'OUT' || fail "convert of the golden run: the spawn arrow"
{"name":"spawn","cat":"process","ph":"s","id":2,"ts":0.550,"pid":100,"tid":100},
{"name":"fork","cat":"process","ph":"s","id":3,"ts":0.580,"pid":100,"tid":100},
{"name":"spawn","cat":"process","ph":"f","bp":"e","id":2,"ts":0.800,"pid":102,"tid":102},
{"name":"fork","cat":"process","ph":"f","bp":"e","id":3,"ts":0.850,"pid":103,"tid":103}
OUT
[ "$fails" -eq 0 ] && echo "ok   golden: the spawn record of the child's pid before its start, of a fork's serial"

# --- a real posix_spawn under fdrtrace record
"$fdr" record -d run -- "$prog" >run.out 2>record.err || { cat record.err; fail "record"; }
child=$(cat run.out)
ptrace=$(ls run/fdrtrace.*.fdr | grep -v "\.$child\.fdr")
ctrace=run/fdrtrace.an_pspawn.$child.fdr
[ -f "$ctrace" ] || fail "no trace of the child $child: $(ls run)"
"$fdr" dump "$ptrace" >parent.dump
"$fdr" dump "$ctrace" >child.dump
spawn_tsc=$(sed -n "s/.*FDRx spawn tid=[0-9]* tsc=\([0-9]*\) serial=1 child_pid=$child\$/\1/p" parent.dump)
[ -n "$spawn_tsc" ] || fail "the parent's trace has no spawn record of pid $child"
start_of() { sed -n 's/.*FDRx process .* start_tsc=\([0-9]*\) .*/\1/p' "$1" | head -1; }
freq=$(sed -n 's/.*FDRx close .* cycle_frequency=\([0-9]*\) .*/\1/p' parent.dump)
"$fdr" convert run -o run.json 2>/dev/null || fail "convert run"
if command -v python3 >/dev/null; then
	# the arrow starts at the spawn record's time (run time: from the
	# parent's start), before the child's start (where it began without it)
	python3 - run.json "$child" "$spawn_tsc" "$(start_of parent.dump)" "$(start_of child.dump)" "$freq" \
		<<'PY' || fail "convert: the spawn arrow"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
child = int(sys.argv[2])
spawn, pstart, cstart, freq = (int(x) for x in sys.argv[3:7])
at = lambda tsc: (tsc - min(pstart, cstart)) * 1e6 / freq
s = [e for e in ev if e["ph"] == "s"]
f = [e for e in ev if e["ph"] == "f"]
assert len(s) == 1 and len(f) == 1, (s, f)
s, f = s[0], f[0]
assert s["name"] == f["name"] == "spawn" and s["id"] == f["id"], (s, f)
assert f["pid"] == child and s["pid"] != child, (s, f)
launch = [e for e in ev if e["ph"] == "X" and e["name"] == "launch"]
assert len(launch) == 1, launch
l = launch[0]
assert s["tid"] == l["tid"] and l["ts"] <= s["ts"] <= l["ts"] + l["dur"], ("not inside launch()", s, l)
assert s["ts"] <= f["ts"], (s, f)
assert abs(s["ts"] - at(spawn)) < 1, ("not at the spawn record", s, at(spawn))
assert at(cstart) - at(spawn) > 2, ("the child started too soon to tell", at(cstart), at(spawn))
PY
	"$fdr" convert -f perfetto run -o run.pftrace 2>/dev/null || fail "convert -f perfetto run"
	python3 "$here/perfetto_check.py" run.pftrace >/dev/null 2>pf.err || { cat pf.err; fail "perfetto_check"; }
	grep -qx "# flows: 1" pf.err || { cat pf.err; fail "perfetto: not 1 flow"; }
	if command -v protoc >/dev/null; then
		protoc --decode_raw <run.pftrace >run.raw || fail "protoc cannot decode it"
		grep -qF '2: "spawn"' run.raw || fail "perfetto: no interned name 'spawn'"
	fi
fi
[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "ok   posix_spawn: the arrow from launch() to the child"
echo "all ok"
