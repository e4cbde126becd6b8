// SPDX-License-Identifier: MIT
/*
 * test_histogram.c - the percentile histogram of fdrtrace account.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "histogram.h"

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

Test(histogram, is_exact_below_128_ticks)
{
	struct hist h = { 0 };
	uint64_t v;

	for (v = 0; v < 100; v++)
		cr_assert_eq(hist_add(&h, v), 0);
	cr_assert_eq(h.n, 100);
	cr_assert_eq(hist_rank(&h, 1, 2), 50);	/* rank floor(100 / 2) = 50 */
	cr_assert_eq(hist_rank(&h, 9, 10), 90);
	cr_assert_eq(hist_rank(&h, 99, 100), 99);
	cr_assert_eq(hist_rank(&h, 0, 1), 0);
	hist_free(&h);
}

Test(histogram, ranks_like_llvm_xray_for_small_counts)
{
	struct hist h = { 0 };

	hist_add(&h, 10);
	hist_add(&h, 100);
	hist_add(&h, 50);
	hist_add(&h, 100);
	/* sorted 10 50 100 100: median rank 2, p90 rank 3, p99 rank 3 */
	cr_assert_eq(hist_rank(&h, 1, 2), 100);
	cr_assert_eq(hist_rank(&h, 9, 10), 100);
	cr_assert_eq(hist_rank(&h, 1, 4), 50);
	hist_free(&h);
}

Test(histogram, empty_gives_zero)
{
	struct hist h = { 0 };

	cr_assert_eq(hist_rank(&h, 1, 2), 0);
}

Test(histogram, stays_within_0_79_percent_on_any_magnitude)
{
	enum { N = 20001 };
	static uint64_t v[N];
	struct hist h = { 0 };
	static const uint64_t p[][2] = { { 1, 2 }, { 9, 10 }, { 99, 100 }, { 1, 3 }, { 1, 1000 } };
	unsigned i, k;

	srand(12345);
	for (i = 0; i < N; i++) {
		/* log-uniform over 2^0 .. 2^50 */
		unsigned bits = (unsigned)(rand() % 50);

		v[i] = ((uint64_t)rand() << 31 ^ (uint64_t)rand()) & ((2ull << bits) - 1);
		cr_assert_eq(hist_add(&h, v[i]), 0);
	}
	qsort(v, N, sizeof(v[0]), cmp_u64);
	cr_assert_eq(h.min, v[0]);
	cr_assert_eq(h.max, v[N - 1]);
	for (k = 0; k < sizeof(p) / sizeof(p[0]); k++) {
		uint64_t want = v[(uint64_t)N * p[k][0] / p[k][1]];
		uint64_t got = hist_rank(&h, p[k][0], p[k][1]);
		double err = want ? ((double)got - (double)want) / (double)want : (double)got;

		cr_assert(err <= 1.0 / 128 && err >= -1.0 / 128,
			  "p=%llu/%llu: got %llu, want %llu (error %g)",
			  (unsigned long long)p[k][0], (unsigned long long)p[k][1],
			  (unsigned long long)got, (unsigned long long)want, err);
	}
	hist_free(&h);
}

Test(histogram, keeps_the_largest_values)
{
	struct hist h = { 0 };

	hist_add(&h, UINT64_MAX);
	hist_add(&h, UINT64_MAX - 1);
	hist_add(&h, 1ull << 63);
	cr_assert_eq(hist_rank(&h, 99, 100), UINT64_MAX);
	cr_assert_eq(hist_rank(&h, 0, 1), 1ull << 63);
	hist_free(&h);
}

Test(histogram, keeps_a_few_values_inline_and_reports_them_as_the_buckets_would)
{
	struct hist h = { 0 }, g = { 0 };
	static const uint64_t v[] = { 1000, 2000, 2000, 2000, 3000 };
	unsigned i;

	hist_add(&h, 1000);
	hist_add(&h, 2000);
	hist_add(&h, 3000);
	cr_assert_null(h.grp, "three values need no bucket table");
	/* 2000 is in [1984, 2000 + 15]: the bucket middle is 2008 */
	cr_assert_eq(hist_rank(&h, 1, 2), 2008);
	for (i = 0; i < 5; i++)
		cr_assert_eq(hist_add(&g, v[i]), 0);
	cr_assert_not_null(g.grp, "a fifth value moves them to buckets");
	cr_assert_eq(hist_rank(&g, 1, 2), 2008);
	cr_assert_eq(hist_rank(&g, 0, 1), 1000);
	cr_assert_eq(hist_rank(&g, 99, 100), 3000);
	hist_free(&h);
	hist_free(&g);
}
