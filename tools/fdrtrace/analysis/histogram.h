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
 * hist_index - the group and bucket of a value
 * @v: the value
 * @g: its group: 0 for values below 128, else msb(@v) - 6
 * @i: its bucket in the group
 *
 * Branch-free: the analysis counts every call through here.
 */
static inline void hist_index(uint64_t v, unsigned *g, unsigned *i)
{
	/* v | 64: values below 128 have msb 6, so group 0, bucket v */
	unsigned msb = 63u - (unsigned)__builtin_clzll(v | 64u);

	*g = msb - 6u;
	*i = (unsigned)(v >> *g) - (*g ? 64u : 0u);
}

/* hist_add()'s slow path: the inline values, a group's first value. */
int hist_add_slow(struct hist *h, uint64_t v);

/**
 * hist_add - count one value
 * @h: the histogram (zero-initialised before first use)
 * @v: the value
 *
 * The fast path (the groups exist, and @v's group too) is inline.
 *
 * Return: 0, or -ENOMEM (the value is then not counted).
 */
static inline int hist_add(struct hist *h, uint64_t v)
{
	unsigned g, i;
	uint64_t *b;

	if (__builtin_expect(!h->grp, 0))
		return hist_add_slow(h, v);
	hist_index(v, &g, &i);
	b = h->grp[g];
	if (__builtin_expect(!b, 0))
		return hist_add_slow(h, v);
	b[i]++;
	/* h->n > 0 here: the groups exist only once a value was counted */
	h->min = v < h->min ? v : h->min;
	h->max = v > h->max ? v : h->max;
	h->n++;
	return 0;
}

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
 * hist_merge - add the values of @src to @dst (as if each was hist_add()ed)
 * @dst: the histogram that gets them
 * @src: the one they come from (unchanged)
 *
 * Return: 0, or -ENOMEM (then @dst misses some of them).
 */
int hist_merge(struct hist *dst, const struct hist *src);

/**
 * hist_free - free the buckets
 * @h: the histogram
 */
void hist_free(struct hist *h);

#endif /* FDRTRACE_TOOL_HISTOGRAM_H */
