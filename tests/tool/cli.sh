#!/bin/bash
# cli.sh FDRTRACE GOLDEN_DIR WORKDIR
#
# The command line itself: help, version, usage errors (exit 2), assemble's
# TEXT:LINE messages (exit 1, no output file left behind), unreadable
# inputs, several files in verify, and a closed output pipe (exit 1 with a
# message, not a silent death by SIGPIPE).
set -eu

# Paths given relative to the directory meson runs us in stay valid after cd.
abs() { case $1 in /*) echo "$1" ;; '') echo "" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$1 golden=$2 work=$3
fdr=$(abs "$fdr") golden=$(abs "$golden") work=$(abs "$work")

[ -x "$fdr" ] || { echo "cli.sh: $fdr is not executable" >&2; exit 1; }
[ -d "$golden" ] || { echo "cli.sh: no directory $golden" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cd "$work"

fails=0
# check NAME WANT_RC COMMAND...: run with stdout/stderr in out/err
check() {
	local name=$1 want=$2 rc=0
	shift 2
	"$@" >out 2>err || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL $name: '$*' exited $rc, expected $want" >&2
		sed 's/^/  stderr: /' err >&2
		fails=$((fails + 1))
		return 1
	fi
	echo "ok   $name"
}
# has FILE TEXT: FILE contains the fixed string TEXT
has() {
	if ! grep -qF -- "$2" "$1"; then
		echo "FAIL: $1 lacks '$2':" >&2
		sed 's/^/  /' "$1" >&2
		fails=$((fails + 1))
	fi
}

check help 0 "$fdr" --help && has out "Commands:" && has out "assemble"
check version 0 "$fdr" --version && has out "fdrtrace "
check no-args 2 "$fdr" && has err "Usage:"
check unknown-command 2 "$fdr" frobnicate && has err "unknown command 'frobnicate'"
check unknown-global-option 2 "$fdr" --frob && has err "unknown option '--frob'"
for c in dump assemble verify info; do
	check "$c-help" 0 "$fdr" $c --help && has out "Usage: fdrtrace $c"
	check "$c-unknown-option" 2 "$fdr" $c --frob x && has err "fdrtrace $c: unknown option '--frob'"
	check "$c-missing-arg" 2 "$fdr" $c
done
check dump-two-files 2 "$fdr" dump a b && has err "one FILE only"
check assemble-o-needs-arg 2 "$fdr" assemble x -o && has err "option '-o' needs an argument"
check verify-missing-file 1 "$fdr" verify does-not-exist.fdr && has err "does-not-exist.fdr: No such file or directory"
check dump-missing-file 1 "$fdr" dump does-not-exist.fdr && has err "does-not-exist.fdr: No such file or directory"

# assemble: errors name TEXT:LINE and leave no output behind.
asm_err() {	# asm_err NAME LINE MESSAGE TEXT...
	local name=$1 line=$2 msg=$3
	shift 3
	printf '%s\n' "$@" >"$name.txt"
	rm -f "$name.fdr"
	check "assemble-$name" 1 "$fdr" assemble "$name.txt" -o "$name.fdr" &&
		has err "$name.txt:$line: $msg"
	if [ -e "$name.fdr" ]; then
		echo "FAIL assemble-$name: left $name.fdr behind" >&2
		fails=$((fails + 1))
	fi
}
H='hdr fdr version=5'
asm_err unknown-record 3 "unknown record 'fun xyz'" "$H" '# comment' 'fun xyz id=1'
asm_err unknown-field 2 "'fun ent' has no field 'tsc'" "$H" 'fun ent id=1 tsc=5'
asm_err duplicate-field 2 "field 'id' given twice" "$H" 'fun ent id=1 id=2'
asm_err no-subtype 1 "'hdr' needs a subtype" 'hdr version=5'
asm_err not-key-value 2 "'id': fields are key=value" "$H" 'fun ent id'
asm_err too-big 2 "id=268435456: not a 28-bit integer" "$H" 'fun ent id=268435456'
asm_err not-a-number 2 "delta=12ab: not a 32-bit integer" "$H" 'fun ent delta=12ab'
asm_err too-negative 2 "cpu=-32769: not a 16-bit integer" "$H" 'cpu new cpu=-32769'
asm_err bad-hex 2 "data=: 'z' is not a hex digit" "$H" 'raw hex data=0z'
asm_err odd-hex 2 "data=: odd number of hex digits" "$H" 'raw hex data=abc'
asm_err rsv-too-long 2 "rsv=: 8 bytes, at most 7 fit" "$H" 'cpu wrp rsv=0102030405060708'
asm_err event-before-hdr 1 "'evt cus' before the 'hdr' line" 'evt cus data=00'
asm_err pad-auto-no-size 2 "len=auto needs a non-zero buffer_size" 'hdr fdr version=1' 'buf pad len=auto'
asm_err unknown-ext 2 "unknown extension 'ext bogus'" "$H" 'ext bogus'
asm_err open-string 2 "a string is not closed" "$H" 'ext func name="abc'
asm_err bad-escape 2 "unknown escape in a string" "$H" 'ext func name="a\qb"'
asm_err bad-reason 2 "reason=sometimes: not a number or a known name" "$H" 'ext drop reason=sometimes'
asm_err bad-ids 2 "ids=1,x: expected a comma-separated list" "$H" 'ext stack ids=1,x'
asm_err ext-field-of-other-kind 2 "'ext func' has no field 'tid'" "$H" 'ext func tid=1'
asm_err nul-in-number 2 "id=1: not a 28-bit integer" "$H" 'fun ent id="1\x002"'

# assemble accepts: comments, blank lines, any field order, defaults, hex
# and negative numbers, '_' in hex, size=auto, and '-' for stdin/stdout.
printf '%s\n' '# c' '' 'hdr fdr buffer_size=0x1000 version=5   # v5' 'buf ext size=auto' \
	'buf new tid=-1' 'raw hex data=ab_cd' | "$fdr" assemble - >friendly.fdr
if [ "$(od -An -tx1 -v friendly.fdr | tr -d ' \n')" != \
     "05000100000000000000000000000000001000000000000000000000000000000f12000000000000000000000000000001ffffffff0000000000000000000000abcd" ]; then
	echo "FAIL: friendly assemble wrote:" >&2
	od -An -tx1 -v friendly.fdr >&2
	fails=$((fails + 1))
else
	echo "ok   assemble-friendly"
fi

# ext: quoted strings keep blanks, '#' and escapes; the payload is exactly
# the FDRx header and body of format.h.
printf '%s\n' 'hdr fdr version=5' 'ext thread_name tid=0x01020304 name="a #b\"\\\x01" # c' |
	"$fdr" assemble - >ext.fdr
# 32 header + marker (0x0b, size 21, delta 0) + "FDRx" 01 06 000d + tid + len 7 + text
want="0b150000000000000000000000000000""4644527801060d00""04030201""0700""61202362225c01"
if [ "$(od -An -tx1 -v -j32 ext.fdr | tr -d ' \n')" != "$want" ]; then
	echo "FAIL: ext thread_name wrote:" >&2
	od -An -tx1 -v -j32 ext.fdr >&2
	fails=$((fails + 1))
else
	echo "ok   assemble-ext-string"
fi

# verify: several files, -v, one bad among good ones.
"$fdr" assemble "$golden/v5.txt" -o good.fdr
"$fdr" assemble "$golden/v1.txt" -o good1.fdr
printf '%s\n' 'hdr fdr version=9' | "$fdr" assemble - -o bad.fdr
check verify-all-good 0 "$fdr" verify good.fdr good1.fdr && [ ! -s out ] ||
	{ echo "FAIL: verify printed on success" >&2; fails=$((fails + 1)); }
check verify-verbose 0 "$fdr" verify -v good.fdr && has out "good.fdr: ok:"
check verify-one-bad 1 "$fdr" verify good.fdr bad.fdr good1.fdr &&
	has out "bad.fdr:0: FDR version 9: not supported"
check verify-stdin 0 "$fdr" verify - <good.fdr

# A closed pipe (| head): dump must stop with status 1, quietly, not die of SIGPIPE.
big=big.txt
{
	echo 'hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096'
	for b in $(seq 40); do
		echo 'buf ext size=auto'
		echo "buf new tid=$b"
		echo 'buf wal sec=1'
		echo 'cpu new tsc=1'
		for i in $(seq 200); do echo "fun ent id=$i delta=1"; done
	done
} >"$big"
"$fdr" assemble "$big" -o big.fdr
# verdict NAME BAD MESSAGE [FILE]: BAD true (0) is a failure, said with
# MESSAGE and FILE's text on stderr; otherwise NAME passed
verdict() {
	if [ "$2" -eq 0 ]; then
		echo "FAIL: $3" >&2
		[ -z "${4:-}" ] || cat "$4" >&2
		fails=$((fails + 1))
	else
		echo "ok   $1"
	fi
}
# closed_pipe NAME ARGS...: fdrtrace ARGS into | head -n 1: status 1, nothing on stderr
closed_pipe() {
	local name=$1 bad=1
	shift
	{ "$fdr" "$@" 2>pipe.err; echo $? >pipe.rc; } | head -n 1 >/dev/null || true
	{ [ "$(cat pipe.rc)" -ne 1 ] || [ -s pipe.err ]; } && bad=0
	verdict "$name" $bad "$* into a closed pipe: status $(cat pipe.rc), stderr:" pipe.err
}
closed_pipe dump-closed-pipe dump big.fdr
if [ -w /dev/full ]; then
	rc=0
	"$fdr" dump good.fdr >/dev/full 2>full.err || rc=$?
	if [ "$rc" -ne 1 ] || ! grep -qF "write error" full.err; then
		echo "FAIL: dump to /dev/full: status $rc" >&2
		fails=$((fails + 1))
	else
		echo "ok   dump-full-disk"
	fi
fi

# replay and convert hand each full megabyte of output to a second thread
# (out_thread.c) that writes it while the next one is formatted. Outputs of
# several megabytes: complete and in order, and a failed write still ends
# the command with status 1 and the right message (the thread's errno).
awk 'BEGIN {
	print "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096"
	id = 0
	for (b = 0; b < 640; b++) {
		print "buf ext size=auto"; print "buf new tid=7"; print "buf wal sec=1"
		print "cpu new tsc=" (1 + b * 100000)
		for (i = 0; i < 120; i++) {
			id++
			print "fun ent id=" (id % 50 + 1) " delta=3"
			print "fun exi id=" (id % 50 + 1) " delta=5"
		}
	}
}' >many.txt
"$fdr" assemble many.txt -o many.fdr
calls=$((640 * 120))
check replay-many-calls 0 "$fdr" replay many.fdr &&
	if [ "$(grep -c '^ .*#[0-9]*();$' out)" -ne "$calls" ] || [ "$(wc -c <out)" -lt 2097152 ]; then
		echo "FAIL: replay of $calls calls printed $(grep -c '();$' out) calls, $(wc -c <out) bytes" >&2
		fails=$((fails + 1))
	fi
# the lines come in the trace's order: the ids cycle 1..50 from id 2
grep -o '#[0-9]*();$' out | tr -d '#();' | awk -v n="$calls" '
	{ want = NR % 50 + 1; if ($1 != want) { print "FAIL: replay line " NR ": #" $1 ", want #" want; bad = 1; exit } }
	END { if (!bad && NR != n) print "FAIL: " NR " calls in order, want " n }' >order.err
bad=1
[ -s order.err ] && bad=0
verdict replay-many-calls-in-order $bad "replay of many.fdr out of order:" order.err
check convert-many-calls 0 "$fdr" convert --format chrome many.fdr -o many.json &&
	if ! python3 - "$calls" <<'EOF'
import json, sys
ev = json.load(open("many.json"))["traceEvents"]
x = [e for e in ev if e.get("ph") == "X"]
ts = [e["ts"] for e in x]
sys.exit(len(x) != int(sys.argv[1]) or ts != sorted(ts))
EOF
	then
		echo "FAIL: many.json is not $calls complete events in time order" >&2
		fails=$((fails + 1))
	fi
# convert's times are exact to the nanosecond at any magnitude (ticks.h):
# a trace whose clock is CLOCK_REALTIME in ns (LLVM's XRay runtime writes
# such traces where it finds no TSC frequency) has times near 1.8e18, where
# doubles step by 256 ns: a 90 ns call was printed lasting 0.000 us.
cat >realtime.txt <<'EOF'
hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096
buf ext size=auto
buf new tid=7
buf wal sec=1
cpu new tsc=1795662229925690671
fun ent id=1 delta=0
fun ent id=2 delta=100
fun exi id=2 delta=90
fun exi id=1 delta=33
EOF
"$fdr" assemble realtime.txt -o realtime.fdr
check convert-realtime-ns 0 "$fdr" convert --format chrome realtime.fdr &&
	has out '"ts":1795662229925690.671,"dur":0.223,' &&
	has out '"ts":1795662229925690.771,"dur":0.090,'
if command -v protoc >/dev/null; then
	"$fdr" convert --format perfetto realtime.fdr -o realtime.pftrace
	protoc --decode_raw <realtime.pftrace | grep -E '^  8: ' | tr -d ' ' >realtime.ts
	bad=1
	[ "$(tr '\n' ' ' <realtime.ts)" != "8:1795662229925690671 8:1795662229925690771 8:1795662229925690861 8:1795662229925690894 " ] && bad=0
	verdict convert-realtime-ns-perfetto $bad "perfetto times of realtime.fdr:" realtime.ts
fi
closed_pipe replay-closed-pipe replay many.fdr
closed_pipe convert-closed-pipe convert --format chrome many.fdr
if [ -w /dev/full ]; then
	for cmd in "replay many.fdr" "convert --format perfetto many.fdr"; do
		rc=0
		# shellcheck disable=SC2086
		"$fdr" $cmd >/dev/full 2>full.err || rc=$?
		if [ "$rc" -ne 1 ] || ! grep -qF "write error on standard output: No space left on device" full.err; then
			echo "FAIL: $cmd to /dev/full: status $rc, stderr:" >&2
			cat full.err >&2
			fails=$((fails + 1))
		else
			echo "ok   ${cmd%% *}-full-disk"
		fi
	done
	# with -o, the message names the output, not "standard output"
	rc=0
	"$fdr" convert --format chrome many.fdr -o /dev/full 2>full.err || rc=$?
	bad=1
	{ [ "$rc" -ne 1 ] || ! grep -qF "write error on /dev/full: No space left on device" full.err; } && bad=0
	verdict convert-o-full-disk-names-the-output $bad "convert -o /dev/full: status $rc, stderr:" full.err
fi

# assemble's limits (issue #11, class 7): a padding longer than the
# header's buffer_size (len=-1 wrote zeros until killed), or than 64 KiB
# without a header, is refused with its line; a size=auto buffer too big to
# hold for a pipe is refused with its line, in bounded memory (ulimit -v);
# to a regular file it is patched in place and the trace verifies.
printf 'hdr fdr version=1 buffer_size=4096\nbuf pad len=-1\n' >pad1.txt
check assemble-pad-minus-one 1 "$fdr" assemble pad1.txt -o pad1.fdr &&
	has err "pad1.txt:2: len=18446744073709551615 is more than a padding can be: 4096 bytes"
[ ! -e pad1.fdr ] || { echo "FAIL: pad1.fdr left behind" >&2; fails=$((fails + 1)); }
printf 'buf pad len=100000\n' >pad2.txt
check assemble-pad-no-header 1 "$fdr" assemble pad2.txt -o pad2.fdr &&
	has err "pad2.txt:1: len=100000 is more than a padding can be: 65536 bytes"
printf 'hdr fdr version=1 buffer_size=0x7fffffffffffffff\nbuf pad len=0x7000000000000000\n' >pad3.txt
check assemble-pad-huge 1 "$fdr" assemble pad3.txt -o pad3.fdr && has err "pad3.txt:2: len=" &&
	has err "1073741824 bytes (the most assemble writes)"
{ printf 'hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096\n'
  printf 'buf ext size=auto\nbuf new tid=1\nbuf wal sec=1 usec=0\ncpu new cpu=0 tsc=1\n'
  yes 'fun ent id=1 delta=1' | head -n 1200000; } >auto.txt
# The 32 MiB address-space limit proves the bound; a sanitized build
# (FDRTRACE_TEST_SANITIZED=1) cannot start under it (ASan reserves terabytes
# of shadow), so there only the behaviour is checked.
vlimit=32768
[ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ] && vlimit=unlimited
rc=0
(ulimit -v $vlimit; "$fdr" assemble auto.txt | cat >/dev/null; exit "${PIPESTATUS[0]}") 2>auto.err || rc=$?
if [ "$rc" = 1 ] && grep -qF "auto.txt:1048574: a 'buf ext size=auto' buffer longer than 8388608 bytes" auto.err; then
	echo "ok   assemble-auto-to-pipe-bounded"
else
	echo "FAIL: assemble size=auto to a pipe: status $rc" >&2; cat auto.err >&2; fails=$((fails + 1))
fi
if (ulimit -v $vlimit; "$fdr" assemble auto.txt -o auto.fdr) && "$fdr" verify auto.fdr &&
   [ "$("$fdr" info auto.fdr | grep -c .)" -gt 0 ] && [ "$(stat -c %s auto.fdr)" = $((32 + 64 + 9600000)) ]; then
	echo "ok   assemble-auto-to-file-patched"
else
	echo "FAIL: assemble size=auto to a file" >&2; fails=$((fails + 1))
fi
rm -f auto.txt auto.fdr

# info of an empty input: the summary so far, the error, status 1.
check info-empty 1 "$fdr" info - </dev/null && has err "-:0: truncated: the file header needs 32 bytes" && has out "error:"

# info of the README example: the facts the README quotes.
"$fdr" assemble "$golden/readme-example.txt" -o demo.fdr
check info-demo 0 "$fdr" info demo.fdr &&
	has out "threads:         2: 4242 (demo), 4243 (worker-1)" &&
	has out "closed:          yes, exit: 16 function records" &&
	has out "source rdtscp, frequency calibrated"

if [ "$fails" -ne 0 ]; then
	echo "$fails failure(s)" >&2
	exit 1
fi
echo "all ok"
