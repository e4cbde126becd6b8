/* SPDX-License-Identifier: MIT */
/*
 * bench/xray_workload.c - a call-heavy program traced by LLVM XRay's own
 * FDR runtime, to produce a large reference trace that both llvm-xray and
 * fdrtrace can read. Built by bench/reader_bench.py with
 * clang -fxray-instrument -fxray-instruction-threshold=1.
 *
 * Usage: xray_workload ITERATIONS
 */
#include <stdio.h>
#include <stdlib.h>

int __xray_log_init_mode(const char *mode, const char *cfg);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);
int __xray_patch(void);

static volatile unsigned sink;
static volatile unsigned depth = 10;	/* volatile: fib() must not be folded */

__attribute__((noinline)) static unsigned leaf(unsigned x)
{
	__asm__ volatile("" ::: "memory");
	return x * 2654435761u;
}

__attribute__((noinline)) static unsigned mid(unsigned x)
{
	return leaf(x) ^ leaf(x + 1);
}

__attribute__((noinline)) static unsigned fib(unsigned n)
{
	return n < 2 ? mid(n) : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	unsigned long iters = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	const char *cfg = getenv("WORKLOAD_XRAY_CFG");
	int st;

	st = __xray_log_init_mode("xray-fdr", cfg ? cfg :
				  "buffer_size=8388608:buffer_max=16:func_duration_threshold_us=0");
	__xray_patch();
	for (unsigned long i = 0; i < iters; i++)
		sink += fib(depth) + mid((unsigned)i);
	__xray_log_finalize();
	__xray_log_flushLog();
	return st == 2 ? 0 : 1;
}
