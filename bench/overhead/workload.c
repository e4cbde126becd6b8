/* SPDX-License-Identifier: MIT */
/*
 * bench/overhead/workload.c - the call-heavy workload of the overhead
 * benchmark: recursion plus a loop over small non-inlined functions, with a
 * known number of calls.
 *
 * Built once per configuration by bench/overhead.sh (plain, empty hooks,
 * minimal reference hooks, fdrtrace, LLVM XRay FDR). Each thread runs the
 * loop and times it with CLOCK_MONOTONIC; the program prints the calls made
 * and the mean ns per call over the slowest thread.
 *
 * Usage: workload ITERATIONS THREADS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef USE_XRAY
int __xray_log_init_mode(const char *mode, const char *cfg);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);
int __xray_patch(void);
#endif

#define DEPTH 16
/* rec(DEPTH): DEPTH+1 rec, 1 leaf_a, DEPTH leaf_b; plus leaf_c, leaf_d. */
#define CALLS_PER_ITER (2 * DEPTH + 4)

static unsigned long iterations;
static volatile unsigned sink;

__attribute__((noinline)) static unsigned leaf_a(unsigned x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

__attribute__((noinline)) static unsigned leaf_b(unsigned x)
{
	__asm__ volatile("" ::: "memory");
	return x ^ 0x5bd1e995u;
}

__attribute__((noinline)) static unsigned leaf_c(unsigned x)
{
	__asm__ volatile("" ::: "memory");
	return x + 7;
}

__attribute__((noinline)) static unsigned leaf_d(unsigned x)
{
	__asm__ volatile("" ::: "memory");
	return x << 1;
}

__attribute__((noinline)) static unsigned rec(unsigned n)
{
	if (n == 0)
		return leaf_a(n);
	return rec(n - 1) + leaf_b(n);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *worker(void *arg)
{
	double *ns = arg;
	double t0 = now_ns();

	for (unsigned long i = 0; i < iterations; i++)
		sink += rec(DEPTH) + leaf_c((unsigned)i) + leaf_d((unsigned)i);
	*ns = now_ns() - t0;
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned nthreads;
	pthread_t tids[64];
	double ns[64], worst = 0;

	iterations = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	nthreads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 1;
	if (nthreads < 1 || nthreads > 64)
		nthreads = 1;
#ifdef USE_XRAY
	{
		const char *cfg = getenv("WORKLOAD_XRAY_CFG");

		if (__xray_log_init_mode("xray-fdr", cfg ? cfg : "func_duration_threshold_us=0") != 2) {
			fprintf(stderr, "workload: XRay FDR init failed\n");
			return 1;
		}
		__xray_patch();
	}
#endif
	for (unsigned t = 0; t < nthreads; t++)
		pthread_create(&tids[t], NULL, worker, &ns[t]);
	for (unsigned t = 0; t < nthreads; t++) {
		pthread_join(tids[t], NULL);
		if (ns[t] > worst)
			worst = ns[t];
	}
#ifdef USE_XRAY
	__xray_log_finalize();
	__xray_log_flushLog();
#endif
	printf("calls_per_thread=%lu threads=%u ns_per_call=%.3f\n",
	       iterations * CALLS_PER_ITER, nthreads, worst / (double)(iterations * CALLS_PER_ITER));
	return 0;
}
