#!/bin/bash
# symbols.sh FDRTRACE LIBFDRTRACE WORKDIR [CLANG LLVM_XRAY]
#
# Names, source files and lines from ELF files (tools/fdrtrace/symbols/symbolizer.c),
# on real programs traced with fdrtrace's runtime (preloaded), on a trace
# written by LLVM's XRay runtime, and on crafted traces:
#   1. two static functions named helper in a.c and b.c: every command
#      (account, replay, stack, graph, convert, extract-map) shows
#      'helper (a.c:3)' and 'helper (b.c:5)', with their own call counts;
#      once the program is rebuilt with a change, replay --locations shows
#      no line from it and warns once, naming it and both build-ids;
#   2. a stripped program whose debug file (objcopy --only-keep-debug,
#      its debug sections compressed) sits in a build-id tree: no names
#      without --debug-dir, names and lines with it; the same debug file
#      found through .gnu_debuglink next to the program;
#   3. a C++ program: demangled names with file and line (--locations);
#   4. a module path that names a FIFO: no command blocks (run under
#      timeout), names fall back to #ID@0xADDRESS; --instr-map FIFO fails;
#   5. 200 module records naming one large library: peak RSS stays within
#      8 MiB of the same trace with one module record (the library is read
#      once, mapped, not copied);
#   6. with CLANG and LLVM_XRAY: a clang -fxray-instrument program's FDR
#      trace, named through --instr-map BINARY exactly as llvm-xray account
#      -m BINARY names it (same ids, counts and names), and through a YAML
#      map from llvm-xray extract with the names it holds;
#   7. 60 corrupted copies of these ELF files, named by a trace and given to
#      --instr-map: every command ends with 0 or 1 (no signal, no sanitizer
#      report in the sanitized build).
set -eu

abs() { case $1 in /*) echo "$1" ;; '') echo "" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") lib=$(abs "$2") work=$(abs "$3") clang=${4:-} xray=${5:-}
rm -rf "$work"
mkdir -p "$work"
cd "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }
cc=${CC:-cc}
# A sanitized libfdrtrace cannot be preloaded into an unsanitized program:
# then the parts that trace a program with it are skipped.
sanitized=${FDRTRACE_TEST_SANITIZED:-0}
command -v "$cc" >/dev/null || { echo "SKIP: no C compiler"; exit 77; }

# trace_of PROGRAM: run it preloaded with the runtime, print the trace's path.
trace_of() {
	local dir
	dir=$(mktemp -d "$work/run.XXXX")
	FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="logfile_base=$dir/t." LD_PRELOAD=$lib "$@" \
		>"$dir/out" 2>"$dir/err" || { cat "$dir/err" >&2; fail "$1 failed"; }
	set -- "$dir"/t.*
	[ "$#" -eq 1 ] && [ -s "$1" ] || fail "expected one trace in $dir: $*"
	echo "$1"
}

echo "=== 1. two static functions named helper"
cat >a.c <<'EOF'
static volatile int sink;

static int helper(int x)
{
	sink += x;
	return x + 1;
}

int from_a(int x)
{
	return helper(x);
}
EOF
cat >b.c <<'EOF'
static volatile int sink;

/* another helper */

static int helper(int x) { sink -= x; return x * 2; }

int from_b(int x)
{
	return helper(x);
}
EOF
cat >main.c <<'EOF'
int from_a(int x);
int from_b(int x);

int main(void)
{
	int s = 0;

	for (int i = 0; i < 3; i++)
		s += from_a(i);
	for (int i = 0; i < 5; i++)
		s += from_b(i);
	return s < 0;
}
EOF
"$cc" -O0 -g -finstrument-functions main.c a.c b.c -o dup
if [ "$sanitized" = 0 ]; then
	t=$(trace_of ./dup)
	"$fdr" account -q -f csv "$t" | tail -n +2 | awk -F, '{ n = $10; gsub(/"/, "", n); print n, $2 }' |
		sort >dup.account
	cat dup.account
	grep -qx 'helper (a.c:3) 3' dup.account || fail "account: helper (a.c:3) with 3 calls"
	grep -qx 'helper (b.c:5) 5' dup.account || fail "account: helper (b.c:5) with 5 calls"
	grep -qx 'from_a 3' dup.account || fail "account: from_a is unique, no location"
	"$fdr" replay -q "$t" >dup.replay
	[ "$(grep -c 'helper() (a.c:3);' dup.replay)" -eq 3 ] || fail "replay: 3 calls of helper() (a.c:3)"
	[ "$(grep -c 'helper() (b.c:5);' dup.replay)" -eq 5 ] || fail "replay: 5 calls of helper() (b.c:5)"
	"$fdr" stack -q -c "$t" >dup.stack
	grep -q '^main;from_a;helper (a.c:3) 3$' dup.stack || fail "stack: main;from_a;helper (a.c:3)"
	grep -q '^main;from_b;helper (b.c:5) 5$' dup.stack || fail "stack: main;from_b;helper (b.c:5)"
	"$fdr" graph --format dot -q "$t" >dup.dot
	grep -q 'label="helper (a.c:3)' dup.dot || fail "graph: helper (a.c:3)"
	grep -q 'label="helper (b.c:5)' dup.dot || fail "graph: helper (b.c:5)"
	"$fdr" convert -q --format chrome "$t" -o dup.json
	[ "$(grep -o '"name":"helper (a.c:3)"' dup.json | wc -l)" -eq 3 ] || fail "convert: helper (a.c:3)"
	[ "$(grep -o '"name":"helper (b.c:5)"' dup.json | wc -l)" -eq 5 ] || fail "convert: helper (b.c:5)"
	"$fdr" extract-map "$t" -o dup.yaml
	grep -q "function-name: 'helper (a.c:3)'" dup.yaml || fail "extract-map: helper (a.c:3)"
	# --locations: every name, unique or not
	"$fdr" account -q --locations -f csv "$t" | grep -q '"from_b (b.c:7)"' ||
		fail "account --locations: from_b (b.c:7)"
	"$fdr" replay -q --locations "$t" | grep -q 'main() (main.c:4) {' ||
		fail "replay --locations: main() (main.c:4)"
	# rebuilt since the trace: its lines are not used, and replay says so,
	# once for the module, with both build-ids (issue 33: it said nothing)
	"$fdr" replay --locations "$t" >/dev/null 2>same.err
	grep -q build-id same.err && fail "replay --locations: a warning about the same build"
	traced=$("$fdr" dump "$t" |
		sed -n 's/.*FDRx module_map .*build_id=\([0-9a-f]*\) .*path=".*\/dup".*/\1/p' | head -n 1)
	[ -n "$traced" ] || fail "no module_map record of dup in the trace"
	sed 's/s += from_b(i);/s += from_b(i) + 1;/' main.c >changed.c
	"$cc" -O0 -g -finstrument-functions changed.c a.c b.c -o dup
	now=$(readelf -n dup | awk '/Build ID:/ { print $3 }')
	[ "$now" != "$traced" ] || fail "the rebuilt dup has the traced build-id"
	"$fdr" replay --locations "$t" >rebuilt.replay 2>rebuilt.err
	cat rebuilt.err
	grep -q '(main.c:' rebuilt.replay && fail "replay --locations: lines from the rebuilt file"
	[ "$(grep -c 'build-id' rebuilt.err)" -eq 1 ] || fail "replay --locations: not one warning"
	grep -qF "/dup has build-id ${now:0:40}" rebuilt.err ||
		fail "replay --locations: the warning does not name dup and its build-id"
	grep -qF "the trace recorded ${traced:0:40}" rebuilt.err ||
		fail "replay --locations: the warning does not give the traced build-id"
	"$fdr" replay -q --locations "$t" 2>&1 >/dev/null | grep -q build-id &&
		fail "replay -q: the warning is not silenced"
else
	echo "(sanitized runtime: cannot be preloaded into this program, skipped)"
fi

echo "=== 2. a stripped program, its debug file in a build-id tree"
"$cc" -O0 -g -finstrument-functions -Wl,--build-id main.c a.c b.c -o full
objcopy --only-keep-debug --compress-debug-sections=zlib full full.debug
readelf -S -W full.debug | grep -q '\.debug_info .* C ' ||
	fail "the debug file's sections are not compressed"
cp full stripped
strip --strip-all stripped
readelf -S stripped | grep -q '\.symtab' && fail "stripped still has .symtab"
id=$(readelf -n full 2>/dev/null | awk '/Build ID:/ { print $3 }')
[ -n "$id" ] || fail "no build-id"
mkdir -p "dbg/.build-id/${id:0:2}"
cp full.debug "dbg/.build-id/${id:0:2}/${id:2}.debug"
if [ "$sanitized" = 0 ]; then
	t=$(trace_of ./stripped)
	"$fdr" account -q -f csv "$t" >nodbg.csv
	grep -q '"from_a"' nodbg.csv && fail "a name without the debug file: is the program stripped?"
	grep -q '"#[0-9]*@0x' nodbg.csv || fail "no #ID@0xADDRESS names without the debug file"
	"$fdr" account -q -f csv --debug-dir /nonexistent --debug-dir "$work/dbg/" "$t" |
		tail -n +2 | awk -F, '{ n = $10; gsub(/"/, "", n); print n, $2 }' | sort >dbg.account
	diff -u dup.account dbg.account || fail "names through the build-id tree differ"
	"$fdr" account -q --locations --debug-dir dbg -f csv "$t" | grep -q '"from_a (a.c:9)"' ||
		fail "no line from the compressed debug file"
	echo "--- through .gnu_debuglink"
	mkdir -p link
	cp stripped link/prog
	cp full.debug link/prog.debug
	objcopy --add-gnu-debuglink=link/prog.debug link/prog
	t=$(trace_of ./link/prog)
	"$fdr" account -q -f csv "$t" | tail -n +2 | awk -F, '{ n = $10; gsub(/"/, "", n); print n, $2 }' |
		sort >link.account
	diff -u dup.account link.account || fail "names through .gnu_debuglink differ"
else
	echo "(sanitized runtime: skipped)"
fi

echo "=== 3. C++: demangled names, file and line"
cxx=${CXX:-c++}
if [ "$sanitized" = 0 ] && command -v "$cxx" >/dev/null; then
	cat >shapes.cc <<'EOF'
#include <cstdio>

namespace geo {
struct shape {
	virtual ~shape() {}
	virtual double area() const = 0;
};

struct square : shape {
	double side;
	explicit square(double s) : side(s) {}
	double area() const override;
};

double square::area() const
{
	return side * side;
}
}

template <typename T> T twice(T x)
{
	return x + x;
}

int main()
{
	geo::square sq(3);
	geo::shape *s = &sq;
	double a = 0;

	for (int i = 0; i < 4; i++)
		a += s->area() + twice(i) + twice(0.5 * i);
	std::printf("%g\n", a);
	return 0;
}
EOF
	"$cxx" -O0 -g -finstrument-functions shapes.cc -o shapes
	t=$(trace_of ./shapes)
	"$fdr" account -q --locations --full-names -f csv "$t" >cxx.csv
	cat cxx.csv
	grep -q ',"geo::square::area() const (shapes.cc:15)",' cxx.csv ||
		fail "C++: geo::square::area() const (shapes.cc:15)"
	grep -q '^[0-9]*,4,.*"int twice<int>(int) (shapes.cc:21)",' cxx.csv ||
		fail "C++: int twice<int>(int) (shapes.cc:21), 4 calls"
	grep -q '"double twice<double>(double) (shapes.cc:21)",' cxx.csv ||
		fail "C++: double twice<double>(double) (shapes.cc:21)"
	grep -q '"geo::square::square(double) (shapes.cc:11)",' cxx.csv ||
		fail "C++: the constructor geo::square::square(double) (shapes.cc:11)"
	# by default the short form: no template arguments, no return type, the
	# parameters only where they tell overloads (twice's instances) apart
	"$fdr" account -q --locations -f csv "$t" >cxx-short.csv
	grep -q ',"geo::square::area (shapes.cc:15)",' cxx-short.csv &&
		grep -q '^[0-9]*,4,.*,"twice(int) (shapes.cc:21)",' cxx-short.csv &&
		grep -q ',"twice(double) (shapes.cc:21)",' cxx-short.csv &&
		grep -q ',"geo::square::square (shapes.cc:11)",' cxx-short.csv ||
		{ cat cxx-short.csv; fail "C++: the short names"; }
	"$fdr" account -q --no-demangle -f csv "$t" | grep -q '"_ZNK3geo6square4areaEv"' ||
		fail "C++: --no-demangle shows the symbol"
	# a destructor's variants (deleting D0, base D2) demangle alike and sit
	# on one line: the module offset tells them apart
	cat >dtor.cc <<'EOF'
struct base {
	virtual ~base() {}
};
struct derived : base {
	~derived() override {}
};

int main()
{
	base *b = new derived;
	delete b;
	derived d;
	return 0;
}
EOF
	"$cxx" -O0 -g -finstrument-functions dtor.cc -o dtor
	t=$(trace_of ./dtor)
	"$fdr" account -q "$t" >dtor.account
	n=$(grep -c ' derived::~derived() (dtor.cc:5, dtor+0x[0-9a-f]*)$' dtor.account || true)
	m=$(grep ' derived::~derived() ' dtor.account | sed 's/.*(//' | sort -u | wc -l)
	[ "$n" = 2 ] && [ "$m" = 2 ] ||
		{ cat dtor.account; fail "C++: a destructor's two variants are not told apart"; }
	# a crash's native stack is named as the calls are: demangled (std::terminate()
	# from an uncaught exception, the function that threw), or not with --no-demangle
	cat >boom.cc <<'EOF'
#include <stdexcept>

namespace geo {
__attribute__((noinline)) void boom(int i)
{
	if (i > 2)
		throw std::runtime_error("boom");
}
}

int main()
{
	for (int i = 0; i < 4; i++)
		geo::boom(i);
	return 0;
}
EOF
	"$cxx" -O0 -g -finstrument-functions boom.cc -o boom
	dir=$(mktemp -d "$work/run.XXXX")
	FDRTRACE_MODE=fdr FDRTRACE_OPTIONS="logfile_base=$dir/t." LD_PRELOAD=$lib ./boom \
		>/dev/null 2>&1 && fail "C++: the uncaught exception did not abort"
	t=$(echo "$dir"/t.*)
	"$fdr" info "$t" >boom.info
	grep -q ' std::terminate() (libstdc++' boom.info && grep -q ' geo::boom(int) (boom+0x' boom.info ||
		{ cat boom.info; fail "C++: the crash stack's frames are not demangled"; }
	"$fdr" replay --no-demangle "$t" | grep -q '_ZN3geo4boomEi (boom+0x' ||
		fail "C++: replay --no-demangle shows the crash stack's symbols"
else
	echo "(no C++ compiler, or a sanitized runtime: skipped)"
fi

echo "=== 4. a module path that names a FIFO"
mkfifo fifo
addr=$(printf '0x%x' "0x$(nm full | awk '$3 == "from_a" { print $1 }')")
{
	echo 'hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096'
	echo 'buf ext size=auto'
	echo 'buf new tid=7'
	echo 'buf wal sec=1700000000 usec=0'
	echo 'buf pid pid=7'
	echo 'cpu new cpu=0 tsc=1000'
	echo "ext module_map delta=0 module_id=0 load_base=0 size=0x100000 path=$work/fifo"
	echo "ext module_map delta=0 module_id=1 load_base=0 size=0x100000 path=$work/dbg"
	echo "ext func delta=0 func_id=1 address=$addr module_id=0"
	echo "ext func delta=0 func_id=2 address=$addr module_id=1"
	echo 'fun ent id=1 delta=0'
	echo 'fun ent id=2 delta=10'
	echo 'fun exi id=2 delta=10'
	echo 'fun exi id=1 delta=10'
} >fifo.txt
"$fdr" assemble fifo.txt -o fifo.fdr
for cmd in "account -q" "replay -q" "stack -q" "graph -q" "convert -q --format chrome" \
	extract-map; do
	rc=0
	timeout 20 "$fdr" $cmd --locations fifo.fdr >fifo.out 2>fifo.err || rc=$?
	[ $rc -eq 124 ] && fail "$cmd blocked on the FIFO"
	[ $rc -eq 0 ] || { cat fifo.err >&2; fail "$cmd failed ($rc)"; }
	grep -q "#1@$addr" fifo.out || fail "$cmd: no #1@$addr fallback name"
done
rc=0
timeout 20 "$fdr" account --instr-map fifo fifo.fdr >/dev/null 2>fifo.err || rc=$?
[ $rc -eq 1 ] && grep -q 'fifo: not a regular file' fifo.err ||
	fail "--instr-map FIFO: exit $rc, $(cat fifo.err)"

echo "=== 5. 200 module records naming one large library"
big=
for l in /usr/lib/x86_64-linux-gnu/libLLVM-1[0-9].so.1 /usr/lib/x86_64-linux-gnu/libicudata.so.*; do
	[ -f "$l" ] && [ "$(stat -L -c %s "$l")" -gt 30000000 ] && nm -D --defined-only "$l" |
		grep -q ' T ' && { big=$(readlink -f "$l"); break; }
done
if [ -n "$big" ]; then
	echo "library: $big ($(stat -c %s "$big") bytes)"
	nm -D --defined-only "$big" | awk '$2 == "T" { print $1, $3 }' | head -n 2000 |
		awk 'NR % 10 == 1' | head -n 200 >big.syms
	[ "$(wc -l <big.syms)" -eq 200 ] || fail "not 200 symbols in $big"
	mk() {	# mk N: a trace with N module records of the library, 200 functions
		echo 'hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096'
		echo 'buf ext size=auto'
		echo 'buf new tid=7'
		echo 'buf wal sec=1700000000 usec=0'
		echo 'buf pid pid=7'
		echo 'cpu new cpu=0 tsc=1000'
		local i=0 m base a name
		while read -r a name; do
			m=$((i % $1)) base=$(((i % $1) * 0x10000000))
			[ "$i" -lt "$1" ] && printf 'ext module_map delta=0 module_id=%d load_base=0x%x size=0x10000000 path=%s\n' \
				"$m" "$base" "$big"
			i=$((i + 1))
			printf 'ext func delta=0 func_id=%d address=0x%x module_id=%d\n' "$i" \
				$((base + 0x$a)) "$m"
		done <big.syms
		echo 'buf ext size=auto'
		echo 'buf new tid=7'
		echo 'buf wal sec=1700000000 usec=0'
		echo 'buf pid pid=7'
		echo 'cpu new cpu=0 tsc=2000'
		for i in $(seq 1 200); do
			echo "fun ent id=$i delta=1"
			echo "fun exi id=$i delta=1"
		done
	}
	mk 1 >one.txt
	mk 200 >many.txt
	"$fdr" assemble one.txt -o one.fdr
	"$fdr" assemble many.txt -o many.fdr
	[ "$(grep -c 'module_map' many.txt)" -eq 200 ] || fail "not 200 module records"
	# peak RSS (KiB) of a command, from wait4()
	rss() {
		python3 -c 'import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
if os.waitstatus_to_exitcode(status): sys.exit("command failed")
print(ru.ru_maxrss)' "$@"
	}
	r1=$(rss "$fdr" account -q one.fdr)
	r200=$(rss "$fdr" account -q many.fdr)
	echo "peak RSS: 1 module record $r1 KiB, 200 records $r200 KiB"
	[ "$r200" -le $((r1 + 8192)) ] || fail "200 module records cost $r200 KiB (1: $r1 KiB)"
	# every function named from the library, through each of the 200 records
	n=$("$fdr" account -q -f csv many.fdr | tail -n +2 | grep -vc '"#' || true)
	[ "$n" -eq 200 ] || fail "$n of 200 functions named from $big"
else
	echo "(no library over 30 MB with symbols: skipped)"
fi

echo "=== 6. a trace written by LLVM's XRay runtime, --instr-map"
if [ -n "$clang" ] && [ "$clang" != none ] && [ -x "$clang" ] && [ -n "$xray" ] &&
	command -v "$xray" >/dev/null; then
	cat >xr.cc <<'EOF'
extern "C" int __xray_log_init_mode(const char *mode, const char *cfg);
extern "C" int __xray_log_finalize(void);
extern "C" int __xray_log_flushLog(void);
extern "C" int __xray_patch(void);

static volatile int sink;

namespace geo {
struct box {
	int w;
	__attribute__((noinline)) int area() const { sink++; return w * w; }
};
}

template <typename T> __attribute__((noinline)) T twice(T x) { sink++; return x + x; }
__attribute__((noinline)) static void leaf(int i) { sink += i; }
__attribute__((noinline)) extern "C" void mid(int i) { leaf(i); leaf(i + 1); }

int main()
{
	geo::box b{3};

	if (__xray_log_init_mode("xray-fdr",
				 "buffer_size=4096:buffer_max=64:func_duration_threshold_us=0") != 2)
		return 2;
	__xray_patch();
	for (int i = 0; i < 10; i++) {
		mid(i);
		b.area();
		twice(i);
		twice(1.5 * i);
	}
	__xray_log_finalize();
	__xray_log_flushLog();
	return 0;
}
EOF
	clangxx=$(dirname "$clang")/$(basename "$clang" | sed 's/clang/clang++/')
	[ -x "$clangxx" ] || clangxx=$clang
	if "$clangxx" -g -fxray-instrument -fxray-instruction-threshold=1 -fxray-modes=xray-fdr \
		xr.cc -o xr 2>xr.err; then
		XRAY_OPTIONS="patch_premain=false xray_mode=xray-fdr xray_logfile_base=$PWD/xr- verbosity=0" \
			./xr 2>xr.run || { cat xr.run >&2; fail "the XRay program failed"; }
		set -- xr-xr.*
		[ "$#" -eq 1 ] || fail "expected one XRay trace: $*"
		"$xray" account -f csv -m xr "$1" | tail -n +2 | awk -F, '{ print $1, $2, $NF }' |
			sort >xr.llvm
		# llvm-xray names functions whole: so does --full-names
		"$fdr" account -q -f csv --full-names --instr-map xr "$1" | tail -n +2 |
			awk -F, '{ print $1, $2, $10 }' | sort >xr.ours
		cat xr.ours
		[ "$(wc -l <xr.ours)" -ge 5 ] || fail "fewer than 5 functions"
		grep -q '"#' xr.ours && fail "an unnamed function"
		diff -u xr.llvm xr.ours || fail "names differ from llvm-xray account -m"
		"$fdr" account -q -f csv "$1" | grep -q '"#2"' || fail "without a map: #ID names"
		# llvm-xray extract's YAML: ids from the map, names it holds
		"$xray" extract -s xr >xr.yaml
		"$fdr" account -q -f csv --full-names --instr-map xr.yaml "$1" | tail -n +2 |
			awk -F, '{ print $1, $2, $10 }' | sort >xr.yaml-names
		diff -u xr.ours xr.yaml-names || fail "names from the YAML map differ"
		"$fdr" replay -q --locations --full-names --instr-map xr "$1" | grep -q 'geo::box::area() const (xr.cc:11)' ||
			fail "replay --locations --instr-map: geo::box::area() const (xr.cc:11)"
	else
		echo "(clang cannot build an XRay program here: skipped)"
		cat xr.err
	fi
else
	echo "(no clang or llvm-xray: skipped)"
fi
echo "=== 7. corrupted ELF files named by a trace and by --instr-map"
# 60 copies of the test's ELF files with bytes overwritten or cut short:
# every command ends (exit 0 or 1, never a signal; under the sanitizers,
# no report).
python3 - "$fdr" "$addr" <<'EOF'
import os, random, subprocess, sys
fdr, addr = sys.argv[1], int(sys.argv[2], 16)
random.seed(13)
srcs = [f for f in ("full", "full.debug", "shapes", "xr") if os.path.exists(f)]
xrt = [f for f in os.listdir(".") if f.startswith("xr-xr.")]
for it in range(60):
    data = bytearray(open(random.choice(srcs), "rb").read())
    for _ in range(random.choice([1, 4, 16, 64])):
        lim = len(data) if random.random() < 0.5 else min(len(data), 4096)
        data[random.randrange(lim)] = random.randrange(256)
    if random.random() < 0.1:
        data = data[:random.randrange(len(data))]
    open("bad.elf", "wb").write(data)
    open("bad.txt", "w").write(
        "hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096\n"
        "buf ext size=auto\nbuf new tid=7\nbuf wal sec=1700000000 usec=0\nbuf pid pid=7\n"
        "cpu new cpu=0 tsc=1000\n"
        f"ext module_map delta=0 module_id=0 load_base=0 size=0x100000 path={os.getcwd()}/bad.elf\n"
        f"ext func delta=0 func_id=1 address={addr:#x} module_id=0\n"
        f"ext func delta=0 func_id=2 address={addr:#x} module_id=0\n"
        "fun ent id=1 delta=0\nfun ent id=2 delta=10\nfun exi id=2 delta=10\nfun exi id=1 delta=10\n")
    subprocess.run([fdr, "assemble", "bad.txt", "-o", "bad.fdr"], check=True)
    runs = [["account", "-q", "--locations", "bad.fdr"], ["replay", "-q", "--locations", "bad.fdr"]]
    if xrt:
        runs.append(["account", "-q", "--locations", "--instr-map", "bad.elf", xrt[0]])
    for args in runs:
        p = subprocess.run([fdr] + args, capture_output=True, timeout=120)
        err = p.stderr.decode(errors="replace")
        if p.returncode not in (0, 1) or "Sanitizer" in err or "runtime error" in err:
            sys.exit(f"FAIL: corrupted ELF {it}: {args}: exit {p.returncode}\n{err[-3000:]}")
print("60 corrupted files: every command ended")
EOF
echo ok
