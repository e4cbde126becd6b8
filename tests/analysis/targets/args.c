// SPDX-License-Identifier: MIT
/*
 * args.c - functions that log their arguments (fdrtrace_log_arg()), traced
 * through libfdrtrace:
 *   square(7); add3(1, 7, -5), which calls square(2^32);
 *   ten(0..9): ten values logged, more than convert keeps;
 *   report(3): a value, then typed events: type 7 'ok"q\' (quote and
 *   backslash to escape), type 9 bytes 01 02 ff, type 11 forty 'a's
 *   (longer than convert keeps), type 12 "hi" with its NUL;
 *   walk(N): N calls of leaf(i), each logging i, under one open call:
 *   more calls than convert's reorder window, which then writes calls
 *   as begin events before their values came.
 * Exits 1 when the library refuses a value (the test then fails instead
 * of missing it). argv[1]: N (default 40000). argv[2]: K, leaf(K) calls
 * exit() once it has logged K: a call (and walk, main) that never ends.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fdrtrace/fdrtrace.h>

static volatile uint64_t sink;
static int refused;
static long exit_at = -1;

/* A macro, not a function: a traced call before it would make it -ENOENT. */
#define logged(v)                                                              \
	do {                                                                   \
		int rc_ = fdrtrace_log_arg((uint64_t)(v));                    \
		if (rc_ && !refused) {                                         \
			fprintf(stderr, "args: fdrtrace_log_arg: %d\n", rc_);  \
			refused = 1;                                           \
		}                                                              \
	} while (0)

__attribute__((noinline)) static uint64_t square(uint64_t x)
{
	logged(x);
	return x * x;
}

__attribute__((noinline)) static int64_t add3(int64_t a, int64_t b, int64_t c)
{
	logged((uint64_t)a);
	logged((uint64_t)b);
	logged((uint64_t)c);
	sink += square(1ull << 32);
	return a + b + c;
}

__attribute__((noinline)) static void ten(void)
{
	for (uint64_t k = 0; k < 10; k++)
		logged(k);
}

/*
 * A typed event; a refusal fails the run as a refused value does. Not
 * traced: the event is report()'s.
 */
__attribute__((no_instrument_function)) static void typed(uint16_t type, const void *data,
							  size_t len)
{
	int rc = fdrtrace_typed_event(type, data, len);

	if (rc && !refused) {
		fprintf(stderr, "args: fdrtrace_typed_event: %d\n", rc);
		refused = 1;
	}
}

__attribute__((noinline)) static void report(uint64_t v)
{
	static const unsigned char bin[] = { 0x01, 0x02, 0xff };
	char as[40];

	logged(v);
	typed(7, "ok\"q\\", 5);
	typed(9, bin, sizeof(bin));
	memset(as, 'a', sizeof(as));
	typed(11, as, sizeof(as));
	typed(12, "hi", 3);
}

__attribute__((noinline)) static void leaf(long i)
{
	logged((uint64_t)i);
	sink += (uint64_t)i;
	if (i == exit_at)
		exit(refused);
}

__attribute__((noinline)) static void walk(long n)
{
	logged((uint64_t)n);
	for (long i = 0; i < n; i++)
		leaf(i);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 40000;

	if (argc > 2)
		exit_at = atol(argv[2]);

	sink += square(7);
	sink += (uint64_t)add3(1, 7, -5);
	ten();
	report(3);
	walk(n);
	return refused;
}
