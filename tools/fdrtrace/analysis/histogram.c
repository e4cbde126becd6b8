/* SPDX-License-Identifier: MIT */
/*
 * histogram.c - log-linear duration histogram (see histogram.h).
 *
 * Contract: single-threaded; allocates one bucket group per power of two
 * on first use, never per value.
 */
#include <errno.h>
#include <stdlib.h>

#include "histogram.h"

static unsigned hist_group_len(unsigned g)
{
	return g ? 64u : 128u;
}

/* What a bucket reports for @v: the middle of its bucket, clamped. */
static uint64_t hist_report(const struct hist *h, uint64_t v)
{
	unsigned g, i;

	hist_index(v, &g, &i);
	if (g)
		v = ((uint64_t)(64u + i) << g) + (1ull << (g - 1));
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

static int hist_count(struct hist *h, uint64_t v)
{
	unsigned g, i;

	hist_index(v, &g, &i);
	if (!h->grp[g]) {
		h->grp[g] = calloc(hist_group_len(g), sizeof(uint64_t));
		if (!h->grp[g])
			return -ENOMEM;
	}
	h->grp[g][i]++;
	return 0;
}

int hist_add_slow(struct hist *h, uint64_t v)
{
	unsigned k;

	if (!h->grp && h->n < HIST_SMALL) {
		h->small[h->n] = v;
	} else {
		if (!h->grp) {
			/* The first value that does not fit inline: move them out. */
			h->grp = calloc(HIST_GROUPS, sizeof(*h->grp));
			if (!h->grp)
				return -ENOMEM;
			for (k = 0; k < h->n; k++) {
				if (hist_count(h, h->small[k])) {
					hist_free(h);
					return -ENOMEM;
				}
			}
		}
		if (hist_count(h, v))
			return -ENOMEM;
	}
	if (!h->n || v < h->min)
		h->min = v;
	if (!h->n || v > h->max)
		h->max = v;
	h->n++;
	return 0;
}

uint64_t hist_rank(const struct hist *h, uint64_t num, uint64_t den)
{
	uint64_t r, rank, seen = 0, v, sorted[HIST_SMALL];
	unsigned g, i, j;

	if (!h->n)
		return 0;
	/* floor(n * num / den) without overflow, for num <= den <= 2^32 */
	r = h->n / den * num + h->n % den * num / den;
	rank = r >= h->n ? h->n - 1 : (uint64_t)r;
	if (rank == 0)
		return h->min;
	if (rank == h->n - 1)
		return h->max;
	if (!h->grp) {
		for (i = 0; i < h->n; i++) {	/* insertion sort of at most 4 */
			v = h->small[i];
			for (j = i; j > 0 && sorted[j - 1] > v; j--)
				sorted[j] = sorted[j - 1];
			sorted[j] = v;
		}
		return hist_report(h, sorted[rank]);
	}
	for (g = 0; g < HIST_GROUPS; g++) {
		if (!h->grp[g])
			continue;
		for (i = 0; i < hist_group_len(g); i++) {
			seen += h->grp[g][i];
			if (seen <= rank)
				continue;
			if (g == 0)
				v = i;
			else
				v = ((uint64_t)(64u + i) << g) + (1ull << (g - 1));
			return hist_report(h, v);
		}
	}
	return h->max;
}

int hist_merge(struct hist *dst, const struct hist *src)
{
	unsigned g, i;
	uint64_t k;

	if (!src->n)
		return 0;
	if (!src->grp) {
		for (k = 0; k < src->n; k++)
			if (hist_add(dst, src->small[k]))
				return -ENOMEM;
		return 0;
	}
	if (!dst->grp) {
		/* @dst's inline values go to buckets, as hist_add_slow() does */
		dst->grp = calloc(HIST_GROUPS, sizeof(*dst->grp));
		if (!dst->grp)
			return -ENOMEM;
		for (k = 0; k < dst->n; k++)
			if (hist_count(dst, dst->small[k]))
				return -ENOMEM;
	}
	for (g = 0; g < HIST_GROUPS; g++) {
		if (!src->grp[g])
			continue;
		if (!dst->grp[g]) {
			dst->grp[g] = calloc(hist_group_len(g), sizeof(uint64_t));
			if (!dst->grp[g])
				return -ENOMEM;
		}
		for (i = 0; i < hist_group_len(g); i++)
			dst->grp[g][i] += src->grp[g][i];
	}
	if (!dst->n || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->n += src->n;
	return 0;
}

void hist_free(struct hist *h)
{
	unsigned g;

	if (h->grp) {
		for (g = 0; g < HIST_GROUPS; g++)
			free(h->grp[g]);
		free(h->grp);
	}
	h->grp = NULL;
	h->n = 0;
}
