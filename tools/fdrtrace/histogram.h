/* SPDX-License-Identifier: MIT */
/*
 * histogram.h - durations in bounded memory, for percentiles.
 *
 * A log-linear histogram in the manner of HdrHistogram: values below 128
 * are counted exactly; above, each power of two [2^k, 2^(k+1)) is cut into
 * 64 equal buckets. A percentile is reported as the middle of its bucket,
 * clamped to the exact minimum and maximum, so its relative error is at
 * most 1/128 (0.79%). The first HIST_SMALL values are kept in the struct
 * itself (64 bytes in all): nothing is allocated until a value more comes
 * (most functions of a large program are called a few times). Then the
 * table of groups (464 bytes) and each group on first use: a function whose
 * durations span a few powers of two costs about 512 bytes per power.
 * Results do not depend on when that happened: a rank among the inline
 * values is reported as its bucket's middle, clamped, as the buckets do.
 *
 * Percentile p of n values is the value of 0-based rank floor(n * p) (the
 * definition of llvm-xray account), capped at n - 1.
 *
 * Contract: single-threaded; no locking.
 */
#ifndef FDRTRACE_TOOL_HISTOGRAM_H
#define FDRTRACE_TOOL_HISTOGRAM_H

#include <stdint.h>

#define HIST_GROUPS 58	/* group 0: values 0..127; group g: [64 << g, 128 << g) */
#define HIST_SMALL 4	/* values kept inline before the groups exist */

/*
 * @n values counted, @min and @max exact; while @grp is NULL the values
 * are @small[0 .. n-1] (n <= HIST_SMALL), else they are all in @grp.
 */
struct hist {
	uint64_t n;
	uint64_t min, max;
	uint64_t small[HIST_SMALL];
	uint64_t **grp;		/* HIST_GROUPS group pointers, or NULL */
};

/**
 * hist_add - count one value
 * @h: the histogram (zero-initialised before first use)
 * @v: the value
 *
 * Return: 0, or -ENOMEM (the value is then not counted).
 */
int hist_add(struct hist *h, uint64_t v);

/**
 * hist_rank - the value of a 0-based rank
 * @h: the histogram
 * @num: rank numerator: the rank is floor(n * @num / @den)
 * @den: rank denominator
 *
 * Return: the value (bucket middle, clamped to min and max); 0 when empty.
 */
uint64_t hist_rank(const struct hist *h, uint64_t num, uint64_t den);

/**
 * hist_free - free the buckets
 * @h: the histogram
 */
void hist_free(struct hist *h);

#endif /* FDRTRACE_TOOL_HISTOGRAM_H */
