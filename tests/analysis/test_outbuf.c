// SPDX-License-Identifier: MIT
/*
 * test_outbuf.c - the printf-free formatters of outbuf.h print what printf
 * prints (replay's and convert's output must not change by a byte), and
 * the buffer passes any length through in order.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outbuf.h"
#include "test_rnd.h"

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	return test_rnd(&rnd_state);
}

static void check_fixed3(double x, unsigned width)
{
	char want[512], got[512];

	snprintf(want, sizeof(want), "%*.3f", (int)width, x);
	*fmt_fixed3_w(got, x, width) = '\0';
	cr_assert_str_eq(got, want, "%%%u.3f of %a", width, x);
}

Test(outbuf, fixed3_is_printf_on_random_durations)
{
	/* replay's values: ticks * 1e9 / freq, then / 1e3, 1e6 or 1e9 */
	for (int i = 0; i < 500000; i++) {
		uint64_t dur = rnd() >> (rnd() % 64);
		double freq = (double)(1 + rnd() % 4000000000ull);
		double ns = (double)dur * 1e9 / freq;

		check_fixed3(ns, 10);
		check_fixed3(ns / 1e3, 10);
		check_fixed3(ns / 1e6, 10);
		check_fixed3(ns / 1e9, 10);
	}
}

Test(outbuf, fixed3_rounds_ties_to_even_as_printf)
{
	/* k / 16: exact binary values whose fourth decimal is a 5 */
	for (uint64_t k = 0; k < 200000; k++) {
		check_fixed3((double)k / 16.0, 10);
		check_fixed3((double)k / 2000.0, 10);	/* near ties */
		check_fixed3((double)k / 1000.0, 0);
	}
	check_fixed3(0.0005, 10);
	check_fixed3(0.0015, 10);
	check_fixed3(0.0625, 10);
	check_fixed3(0.1875, 10);
	check_fixed3(999.9995, 10);
}

Test(outbuf, fixed3_formats_every_magnitude)
{
	check_fixed3(0.0, 10);
	check_fixed3(-0.0, 10);
	check_fixed3(-1.5, 10);
	check_fixed3(1e14 + 0.0625, 10);
	check_fixed3(1e15, 10);		/* snprintf's side of the line */
	check_fixed3(1.8446744073709552e19, 10);
	check_fixed3(1e300, 10);
	check_fixed3(INFINITY, 10);
	check_fixed3(NAN, 10);
	check_fixed3(5e-324, 10);
	for (int i = 0; i < 200000; i++) {
		double x;
		uint64_t bits = rnd() & 0x7fffffffffffffffull;	/* any positive double */

		memcpy(&x, &bits, sizeof(x));
		if (isfinite(x) && x < 1e20)
			check_fixed3(x, 10);
	}
}

static void check_dur(uint64_t freq, uint64_t dur)
{
	static struct fmt_dur d;	/* its tables are made once a clock */
	static bool have;
	char want[512], got[512];

	if (!have || d.freq != freq)
		fmt_dur_init(&d, freq);
	have = true;
	*fmt_dur_slow(want, freq, dur) = '\0';
	*fmt_dur(got, &d, dur) = '\0';
	cr_assert_str_eq(got, want, "%" PRIu64 " ticks at %" PRIu64 " Hz", dur, freq);
}

Test(outbuf, dur_slow_is_printf_of_the_scaled_nanoseconds)
{
	const uint64_t freq[] = { 0, 1000000000, 2899999000, 3 };

	for (int i = 0; i < 100000; i++) {
		uint64_t f = freq[i % 4], dur = rnd() >> (rnd() % 64);
		double ns = f ? (double)dur * 1e9 / (double)f : (double)dur;
		char want[512], got[512];

		if (ns < 1e3)
			snprintf(want, sizeof(want), "%10.3f ns", ns);
		else if (ns < 1e6)
			snprintf(want, sizeof(want), "%10.3f us", ns / 1e3);
		else if (ns < 1e9)
			snprintf(want, sizeof(want), "%10.3f ms", ns / 1e6);
		else
			snprintf(want, sizeof(want), "%10.3f  s", ns / 1e9);
		*fmt_dur_slow(got, f, dur) = '\0';
		cr_assert_str_eq(got, want);
	}
}

Test(outbuf, dur_is_dur_slow_on_random_clocks_and_durations)
{
	for (int c = 0; c < 100; c++) {
		uint64_t freq;

		switch (c % 5) {
		case 0: freq = 1000000000; break;	/* LLVM's traces, CLOCK_MONOTONIC */
		case 1: freq = 0; break;
		case 2: freq = 1000000000 + rnd() % 3000000000ull; break;	/* TSCs */
		case 3: freq = 1 + rnd() % 100000; break;
		default: freq = rnd() >> (rnd() % 64); break;
		}
		for (int i = 0; i < 3000; i++) {
			uint64_t dur = rnd() >> (rnd() % 64);

			check_dur(freq, dur);
			check_dur(freq, dur >> 40);	/* the short calls most lines are */
		}
	}
}

Test(outbuf, dur_is_dur_slow_at_ties_and_unit_bounds)
{
	const uint64_t freq[] = { 0, 1000000000, 2000000000, 2400000000ull, 2899999000,
				  3000000000ull, 1000000, 1193182, 33333333, 1 };

	for (size_t f = 0; f < sizeof(freq) / sizeof(freq[0]); f++) {
		double per_ns = freq[f] ? (double)freq[f] / 1e9 : 1.0;	/* ticks a ns */

		for (int i = 0; i < 20000; i++) {
			/* a value in thousandths of a unit ending in 5 (a tie) or a bound */
			double at[] = { (double)(rnd() % 1000000) + 0.5,
					((double)(rnd() % 1000000) + 0.5) * 1e3,
					((double)(rnd() % 1000000) + 0.5) * 1e6,
					((double)(rnd() % 1000000) + 0.5) * 1e9,
					1e3, 1e6, 1e9 };
			double ns = at[i % 7] / 1e3;

			if (i % 7 >= 4)
				ns = at[i % 7];
			for (int64_t dd = -3; dd <= 3; dd++) {
				int64_t dur = (int64_t)(ns * per_ns) + dd;

				if (dur >= 0)
					check_dur(freq[f], (uint64_t)dur);
			}
		}
	}
	for (uint64_t dur = 0; dur < 3000000; dur += 1 + dur / 5000)
		check_dur(1000000000, dur);
	for (uint64_t dur = 0; dur < 3000000; dur += 1 + dur / 5000)
		check_dur(2899999000, dur);
	check_dur(1000000000, UINT64_MAX);
	check_dur(1000000000, 1ull << 53);
	check_dur(1000000000, (1ull << 53) - 1);
	check_dur(1, UINT64_MAX >> 11);
	check_dur(UINT64_MAX, UINT64_MAX);
}

Test(outbuf, integers_are_printf)
{
	char want[64], got[64];
	const int64_t edge[] = { 0, 1, 9, 10, 99, 100, 999, 1000, -1, -10, 2147483647,
				 -2147483647 - 1, INT64_MAX, INT64_MIN };

	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		snprintf(want, sizeof(want), "%7" PRId64, edge[i]);
		*fmt_i64_w(got, edge[i], 7) = '\0';
		cr_assert_str_eq(got, want);
	}
	for (int i = 0; i < 1000000; i++) {
		uint64_t v = rnd() >> (rnd() % 64);

		snprintf(want, sizeof(want), "%" PRIu64, v);
		*fmt_u64(got, v) = '\0';
		cr_assert_str_eq(got, want);
		snprintf(want, sizeof(want), "%7" PRId64, (int64_t)v);
		*fmt_i64_w(got, (int64_t)v, 7) = '\0';
		cr_assert_str_eq(got, want);
	}
}

Test(outbuf, passes_any_length_through_in_order)
{
	char path[] = "/tmp/test_outbuf.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w+");
	struct obuf ob;
	size_t total = 5, k;
	char *big = malloc(3 * OB_SIZE), *want = malloc(200 * OB_SIZE), *back;

	cr_assert(f && big && want);
	unlink(path);
	for (size_t i = 0; i < 3 * OB_SIZE; i++)
		big[i] = (char)('a' + i % 26);
	cr_assert_eq(ob_init(&ob, f), 0);
	fputs("head\n", f);	/* stdio output before stays in front */
	memcpy(want, "head\n", 5);
	for (int round = 0; round < 50; round++) {
		char *p;

		/* small pieces, and some larger than the buffer */
		k = (size_t)(rnd() % (round % 5 ? 1000 : 3 * OB_SIZE));
		ob_put(&ob, big + round, k - (k ? round % 2 : 0));
		memcpy(want + total, big + round, k - (k ? round % 2 : 0));
		total += k - (k ? round % 2 : 0);
		ob_fill(&ob, ' ', k / 3);
		memset(want + total, ' ', k / 3);
		total += k / 3;
		p = ob_room(&ob);
		p = fmt_lit(p, "|");
		p = fmt_u64(p, (uint64_t)round);
		ob_commit(&ob, p);
		total += (size_t)sprintf(want + total, "|%d", round);
	}
	ob_fini(&ob);
	fflush(f);
	cr_assert_eq((size_t)ftell(f), total);
	back = malloc(total);
	rewind(f);
	cr_assert_eq(fread(back, 1, total, f), total);
	cr_assert(memcmp(back, want, total) == 0, "the output differs");
	free(back);
	free(want);
	free(big);
	fclose(f);
}
