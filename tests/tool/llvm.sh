#!/bin/bash
# llvm.sh FDRTRACE CLANG WORKDIR [LLVM_XRAY]
#
# A real trace written by LLVM's own XRay FDR runtime (version 5, with the
# stale bytes it leaves in reserved fields): build a small threaded C
# program with clang -fxray-instrument, run it, and check that
#   - fdrtrace verify accepts the trace;
#   - dump | assemble gives back the identical file;
#   - info reads it (two threads);
#   - llvm-xray (when given) and fdrtrace agree on the number of function
#     records.
# Skips (77) when clang is missing or cannot link an XRay program.
set -eu

# Paths given relative to the directory meson runs us in stay valid after cd.
abs() { case $1 in /*) echo "$1" ;; '') echo "" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$1 clang=$2 work=$3 xray=${4:-}
fdr=$(abs "$fdr") work=$(abs "$work")

if [ -z "$clang" ] || [ "$clang" = none ] || ! [ -x "$clang" ]; then
	echo "SKIP: clang not found"
	exit 77
fi
[ -x "$fdr" ] || { echo "llvm.sh: $fdr is not executable" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cd "$work"

cat >p.c <<'EOC'
#include <pthread.h>

int __xray_log_init_mode(const char *mode, const char *cfg);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);
int __xray_patch(void);

static volatile int sink;

__attribute__((noinline)) static void leaf(int i) { sink += i; }
__attribute__((noinline)) static void mid(int i) { leaf(i); leaf(i + 1); }

static void *worker(void *arg)
{
	for (int i = 0; i < 50; i++)
		mid(i);
	return arg;
}

int main(void)
{
	pthread_t t;

	/* Returns XRayLogInitStatus; 2 is XRAY_LOG_INITIALIZED. */
	if (__xray_log_init_mode("xray-fdr",
				 "buffer_size=4096:buffer_max=64:func_duration_threshold_us=0") != 2)
		return 2;
	__xray_patch();
	pthread_create(&t, 0, worker, 0);
	for (int i = 0; i < 100; i++)
		mid(i);
	pthread_join(t, 0);
	__xray_log_finalize();
	__xray_log_flushLog();
	return 0;
}
EOC
if ! "$clang" -fxray-instrument -fxray-instruction-threshold=1 -fxray-modes=xray-fdr \
	p.c -o p -lpthread 2>clang.err; then
	echo "SKIP: clang cannot build an XRay FDR program here:"
	cat clang.err
	exit 77
fi

XRAY_OPTIONS="patch_premain=false xray_mode=xray-fdr xray_logfile_base=$PWD/xr- verbosity=0" \
	./p 2>run.err || { echo "FAIL: the XRay program failed:" >&2; cat run.err >&2; exit 1; }
set -- xr-p.*
if [ "$#" -ne 1 ] || ! [ -s "$1" ]; then
	echo "FAIL: expected one trace file xr-p.*, found: $*" >&2
	cat run.err >&2
	exit 1
fi
trace=$1
echo "--- trace $trace ($(wc -c <"$trace") bytes)"

"$fdr" verify -v "$trace"
"$fdr" dump "$trace" >trace.dump
"$fdr" assemble trace.dump -o again.fdr
cmp "$trace" again.fdr
echo "--- round trip identical"

grep -q '^hdr fdr version=5 type=1 ' trace.dump
"$fdr" info "$trace" >info.out
grep -q '^threads:         2:' info.out

ours=$(grep -c '^fun ' trace.dump)
# 2 calls of leaf per mid, 150 mids: 450 entries and 450 exits, plus main's.
if [ "$ours" -lt 900 ]; then
	echo "FAIL: only $ours function records" >&2
	exit 1
fi
if [ -n "$xray" ]; then
	"$xray" fdr-dump --verify "$trace" >/dev/null
	theirs=$("$xray" fdr-dump "$trace" | grep -c '<Function ')
	if [ "$ours" -ne "$theirs" ]; then
		echo "FAIL: fdrtrace sees $ours function records, llvm-xray $theirs" >&2
		exit 1
	fi
	echo "--- llvm-xray agrees: $ours function records"
fi
echo ok
