#!/bin/bash
# args.sh FDRTRACE ARGS WORKDIR
#
# The values a real program logs inside its calls (targets/args.c,
# fdrtrace_log_arg(), typed events) in convert's output: the Chrome JSON's
# slice of each call has them in its args ("arg0": 7; a small negative
# number as one, a value of 2^32 as a number; ten values: eight kept and
# "args_left_out": 2; a typed event's "event0": type, size, and value
# escaped, or hex, 32 bytes of it at most, a C string's NUL left out),
# and the Perfetto trace's slice as debug annotations (decoded by
# perfetto_check.py, begin and end together). walk() makes more calls than
# the reorder window: some are written as begin events before their value
# came, which then goes on their end event; every leaf(i) still has i. A
# run directory (fdrtrace record) converts the same. A late value whose
# call never ends is counted on stderr. The selectors keep the
# values of the calls they show (-F square).
set -u

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") prog=$(abs "$2") work=$(abs "$3")
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! command -v python3 >/dev/null; then
	echo "SKIP: python3 is needed to read the output"
	exit 77
fi
n=40000
FDRTRACE_MODE=fdr "$prog" $n 2>run.err || { cat run.err; echo "FAIL: the target failed"; exit 1; }
set -- fdrtrace.*.fdr
[ "$#" -eq 1 ] || { echo "FAIL: expected one trace: $*"; exit 1; }
trace=$1

# The slices with args, in start order: "NAME k=v ..." (B/E pairs merged).
chrome_args() {
	python3 - "$1" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
out, open_ = [], {}
for e in ev:
    if e["ph"] not in "XBE":
        continue
    st = open_.setdefault((e["pid"], e["tid"]), [])
    if e["ph"] == "E":
        st.pop()[1].update(e.get("args", {}))
        continue
    sl = [e["name"], dict(e.get("args", {}))]
    out.append(sl)
    if e["ph"] == "B":
        st.append(sl)
for name, a in out:
    flat = {}
    for k, v in a.items():	# a typed event's object: event0.type=7 ...
        if isinstance(v, dict):
            flat.update(("%s.%s" % (k, kk), vv) for kk, vv in v.items())
        else:
            flat[k] = v
    a = flat
    kv = ["%s=%s" % (k, a[k]) for k in sorted(a) if k != "ended"]
    if kv:
        print(name + " " + " ".join(kv))
PY
}

# What both formats must have: each call's values, in start order.
{
	echo "square arg0=7"
	echo "add3 arg0=1 arg1=7 arg2=-5"
	echo "square arg0=4294967296"
	echo "ten arg0=0 arg1=1 arg2=2 arg3=3 arg4=4 arg5=5 arg6=6 arg7=7 args_left_out=2"
	echo 'report arg0=3 event0.size=5 event0.type=7 event0.value=ok"q\ event1.hex=0102ff event1.size=3 event1.type=9 event2.bytes_left_out=8 event2.size=40 event2.type=11 event2.value=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa event3.size=3 event3.type=12 event3.value=hi'
	echo "walk arg0=$n"
	for ((i = 0; i < n; i++)); do echo "leaf arg0=$i"; done
} >want.txt

check() {	# check NAME INPUT [convert options]: both formats
	local name=$1 in=$2 before=$fails
	shift 2
	"$fdr" convert "$@" "$in" -o "$name.json" 2>"$name.err" || { fail "$name: convert: $(cat "$name.err")"; return; }
	grep -v '^fdrtrace convert: read ' "$name.err" | grep . && fail "$name: convert reported imperfections"
	chrome_args "$name.json" >"$name.chrome-args" || { fail "$name: not JSON"; return; }
	diff -q want.txt "$name.chrome-args" >/dev/null ||
		fail "$name: Chrome args differ: $(diff want.txt "$name.chrome-args" | head -5)"
	"$fdr" convert --format perfetto "$@" "$in" -o "$name.pftrace" 2>/dev/null ||
		{ fail "$name: convert --format perfetto"; return; }
	python3 "$here/perfetto_check.py" --args="$name.pf-args" "$name.pftrace" >/dev/null 2>"$name.check" ||
		{ fail "$name: perfetto_check: $(cat "$name.check")"; return; }
	diff -q want.txt "$name.pf-args" >/dev/null ||
		fail "$name: Perfetto args differ: $(diff want.txt "$name.pf-args" | head -5)"
	if command -v protoc >/dev/null; then
		protoc --decode_raw <"$name.pftrace" >"$name.raw" || fail "$name: protoc cannot decode it"
	fi
	[ "$fails" -eq "$before" ] && echo "ok   $name"
}

check trace "$trace"
# the window wrote calls before their values came: the late path was taken
grep -q '"ph":"E",.*"args":{"arg0":' trace.json || fail "no value came after its call's begin event"
grep -q '"ph":"B".*"name":"walk"\|"name":"walk".*"ph":"B"' trace.json ||
	fail "walk() was not written as a begin event (the window)"

# Only the calls shown: -F square keeps square's values.
"$fdr" convert -F square "$trace" -o sel.json 2>/dev/null || fail "convert -F square"
chrome_args sel.json >sel.args
printf 'square arg0=7\nsquare arg0=4294967296\n' | diff -u - sel.args || fail "-F square's args"

# A value with no event to go on: leaf(K) got its value after its begin
# event went out (found in the full run: the value is on its end event),
# then exits inside it. The same calls come first, so the window does the
# same; the value is not in the output and convert says so.
k=$(python3 - trace.json $n <<'PY'
import json, sys
for e in json.load(open(sys.argv[1]))["traceEvents"]:	# end events have no name
    v = e.get("args", {}).get("arg0") if e["ph"] == "E" else None
    if isinstance(v, int) and v < int(sys.argv[2]):	# a leaf's i, not walk's N
        print(v); break
PY
)
if [ -z "$k" ]; then
	fail "no leaf's value came after its begin event"
else
	mkdir -p open
	(cd open && FDRTRACE_MODE=fdr "$prog" $n "$k" 2>run.err) || fail "the open run failed: $(cat open/run.err)"
	"$fdr" convert open/fdrtrace.*.fdr -o open.json 2>open.err || fail "convert open: $(cat open.err)"
	grep -q ': 1 logged values are not in the output' open.err ||
		fail "convert did not say leaf($k)'s value is missing: $(cat open.err)"
	grep -q "\"arg0\":$k[,}]" open.json && fail "leaf($k)'s value is in the output with no end"
fi

# A run directory: the same values.
"$fdr" record -d run -- "$prog" $n >/dev/null 2>record.err || fail "record: $(cat record.err)"
check run run

[ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "all ok"
