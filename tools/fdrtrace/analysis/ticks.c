// SPDX-License-Identifier: MIT
/*
 * ticks.c - the reciprocal of a frequency, and the 128-bit conversion (see
 * ticks.h).
 *
 * Contract: pure functions.
 */
#include "ticks.h"

void tk_ns_init(struct tk_ns *c, uint64_t freq)
{
	unsigned l = 0;

	c->freq = freq;
	c->m = 0;
	c->s = 0;
	c->fast = false;
	if (freq < 2 || freq > TK_FAST_FREQ)
		return;
	while (l < 64 && ((uint64_t)1 << l) < freq)
		l++;	/* the least l with 2^l >= freq */
	c->s = 63 + l;
	/* ceil(2^s / freq) < 2^64: freq > 2^(l-1); s >= 64: l >= 1 */
	c->m = (uint64_t)((((tk_u128)1 << c->s) + freq - 1) / freq);
	c->fast = true;
}

uint64_t tk_ns_slow(const struct tk_ns *c, uint64_t ticks)
{
	tk_u128 ns;

	if (!c->freq)
		return ticks <= UINT64_MAX / 1000 ? ticks * 1000 : UINT64_MAX;
	ns = ((tk_u128)ticks * 1000000000u + c->freq / 2) / c->freq;
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

void tk_near_set(const struct tk_ns *c, struct tk_near *n, uint64_t ticks)
{
	uint64_t base = ticks > TK_NEAR_BEHIND ? ticks - TK_NEAR_BEHIND : 0;
	uint64_t ns, rem;

	n->ok = false;
	if (base > UINT64_MAX - (UINT64_C(1) << 32) || !tk_exact(c, base, &ns, &rem))
		return;
	/* the largest result from this point: below 2^32 * 10^9 / freq + 1 past @ns */
	if (ns > UINT64_MAX - ((UINT64_C(1) << 32) * 1000000000ull / c->freq + 2))
		return;
	n->base = base;
	n->ns = ns;
	n->rem = rem;
	n->ok = true;
}
