// SPDX-License-Identifier: MIT
/*
 * bench/firstcall/firstcall.c - what the first call of a function costs.
 *
 * 5,000 distinct functions, each a few instructions, built with
 * -finstrument-functions. Pass 1 calls each once (every call meets a new
 * function id); pass 2 calls each once more (every id is known). Each call
 * is timed on its own (CLOCK_MONOTONIC around it: the clock's cost is in
 * both passes alike), so the output gives, per pass, the total, the median
 * the slowest call, the sum of the fastest 99% of calls (on a shared
 * machine the rare slow ones are mostly preemption), the number of calls
 * of 5 us or more, and the minor page faults of this thread
 * (RUSAGE_THREAD: the runtime's flush thread is not counted). Peak RSS is
 * read from /proc/self/status before pass 1 and after pass 2 and an
 * fdrtrace_flush() (so the names the flush thread looked up are counted).
 *
 * usage: firstcall [FUNCS]   (at most 5000; prints one key=value line)
 * Run by bench/firstcall.py, traced and untraced.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <fdrtrace/fdrtrace.h>

static volatile unsigned long sink;

/* the harness itself is not traced: only the 5,000 functions and main are */
#define NOTRACE __attribute__((no_instrument_function))

#define F(n) __attribute__((noinline)) static void f##n(void) { sink += n##u; }
#define R10(p) F(p##0) F(p##1) F(p##2) F(p##3) F(p##4) F(p##5) F(p##6) F(p##7) F(p##8) F(p##9)
#define R100(p) R10(p##0) R10(p##1) R10(p##2) R10(p##3) R10(p##4) R10(p##5) R10(p##6) \
	R10(p##7) R10(p##8) R10(p##9)
#define R1000(p) R100(p##0) R100(p##1) R100(p##2) R100(p##3) R100(p##4) R100(p##5) \
	R100(p##6) R100(p##7) R100(p##8) R100(p##9)
R1000(1) R1000(2) R1000(3) R1000(4) R1000(5)
#undef F
#define F(n) f##n,
static void (*const fns[])(void) = { R1000(1) R1000(2) R1000(3) R1000(4) R1000(5) };
#define NFNS (sizeof(fns) / sizeof(fns[0]))
/* calls at least this long are counted apart (preemption, faults, one-time work) */
#define SLOW_NS 5000u

static unsigned long slow_n;
/* the sum of the fastest 99% of a pass's calls (rare preemption left out) */
static uint64_t trim_sum;

NOTRACE static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

NOTRACE static long hwm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

NOTRACE static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

NOTRACE static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One pass over the first @n functions; per-call times into @t. */
NOTRACE static void pass(size_t n, uint64_t *t, uint64_t *total, long *faults)
{
	long f0 = minflt();
	uint64_t start = now_ns();

	for (size_t i = 0; i < n; i++) {
		uint64_t a = now_ns();

		fns[i]();
		t[i] = now_ns() - a;
	}
	*total = now_ns() - start;
	*faults = minflt() - f0;
	qsort(t, n, sizeof(*t), cmp_u64);
	trim_sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i] >= SLOW_NS)
			slow_n++;
		if (i < n - n / 100)
			trim_sum += t[i];
	}
}

/*
 * Two names for the two passes, so that callgrind counts each apart (each
 * stores its own number, or the compiler would fold them into one).
 */
static volatile int pass_no;

NOTRACE __attribute__((noinline)) static void first_pass(size_t n, uint64_t *t, uint64_t *total,
							  long *faults)
{
	pass_no = 1;
	pass(n, t, total, faults);
}

NOTRACE __attribute__((noinline)) static void second_pass(size_t n, uint64_t *t, uint64_t *total,
							   long *faults)
{
	pass_no = 2;
	pass(n, t, total, faults);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? (size_t)atol(argv[1]) : NFNS;
	uint64_t *t1, *t2, tot1, tot2;
	long flt1, flt2, hwm0, hwm1;

	if (n == 0 || n > NFNS)
		n = NFNS;
	t1 = calloc(n, sizeof(*t1));
	t2 = calloc(n, sizeof(*t2));
	if (!t1 || !t2)
		return 1;
	/* touch the result arrays and the clock before measuring */
	memset(t1, 0, n * sizeof(*t1));
	memset(t2, 0, n * sizeof(*t2));
	now_ns();
	/*
	 * A first call in a running process: the runtime's flush thread
	 * faults in the id map's and the pool's pages ahead as it starts,
	 * beside the program's first fraction of a millisecond (a call that
	 * comes before may fault a page in). A flush returns once that thread
	 * has written a buffer, which it does after that (untraced: -ENODEV).
	 */
	fdrtrace_flush();
	hwm0 = hwm_kb();
	unsigned long s1n;
	uint64_t trim1;

	first_pass(n, t1, &tot1, &flt1);
	s1n = slow_n;
	trim1 = trim_sum;
	slow_n = 0;
	second_pass(n, t2, &tot2, &flt2);
	/* let the flush thread write and name everything so far (untraced: -ENODEV) */
	fdrtrace_flush();
	hwm1 = hwm_kb();
	printf("funcs=%zu pass1_ns=%llu pass2_ns=%llu pass1_median=%llu pass2_median=%llu "
	       "pass1_p99=%llu pass2_p99=%llu pass1_max=%llu pass2_max=%llu "
	       "pass1_faults=%ld pass2_faults=%ld hwm_delta_kb=%ld "
	       "pass1_slow=%lu pass2_slow=%lu pass1_trim_ns=%llu pass2_trim_ns=%llu\n",
	       n, (unsigned long long)tot1, (unsigned long long)tot2,
	       (unsigned long long)t1[n / 2], (unsigned long long)t2[n / 2],
	       (unsigned long long)t1[n * 99 / 100], (unsigned long long)t2[n * 99 / 100],
	       (unsigned long long)t1[n - 1], (unsigned long long)t2[n - 1], flt1, flt2,
	       hwm1 - hwm0, s1n, slow_n, (unsigned long long)trim1, (unsigned long long)trim_sum);
	free(t1);
	free(t2);
	return 0;
}
