// SPDX-License-Identifier: MIT
/*
 * test_ticks.c - ticks.h turns ticks into nanoseconds exactly: the nearest
 * integer to ticks * 10^9 / freq, halves up, for every count and frequency,
 * against 128-bit division (its fast path's reciprocals included), and
 * where doubles lose the low bits (convert printed times of LLVM-written
 * traces in steps of 256 ns).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>

#include "test_rnd.h"
#include "ticks.h"

static uint64_t rnd_state = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	return test_rnd(&rnd_state);
}

/* The definition, in 128 bits: floor((ticks * 10^9 + floor(freq / 2)) / freq). */
static uint64_t want_ns(uint64_t ticks, uint64_t freq)
{
	tk_u128 v;

	if (!freq)
		return ticks <= UINT64_MAX / 1000 ? ticks * 1000 : UINT64_MAX;
	v = ((tk_u128)ticks * 1000000000u + freq / 2) / freq;
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static unsigned checks;

static void check(const struct tk_ns *c, uint64_t ticks)
{
	uint64_t got = tk_ns(c, ticks), want = want_ns(ticks, c->freq);

	checks++;
	if (got != want)
		cr_assert_fail("freq %" PRIu64 " ticks %" PRIu64 ": %" PRIu64 " ns, want %" PRIu64,
			 c->freq, ticks, got, want);
}

/* The counts next to a frequency's multiples, half-way points and the limits. */
static void check_edges(uint64_t freq)
{
	struct tk_ns c;
	static const uint64_t fixed[] = {
		0, 1, 2, 3, 999, 1000, (1ull << 32) - 1, 1ull << 32, (1ull << 53) - 1,
		1ull << 53, (1ull << 53) + 1, (1ull << 63) - 1, 1ull << 63, UINT64_MAX - 1,
		UINT64_MAX,
	};

	tk_ns_init(&c, freq);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		check(&c, fixed[i]);
	for (uint64_t k = 0; k < 64 && freq; k++) {
		uint64_t base = (rnd() >> (rnd() % 64)) / freq * freq;

		check(&c, base);
		check(&c, base + 1);
		check(&c, base + freq - 1);
		check(&c, base ? base - 1 : 0);
		/* ticks whose exact value ends in .5 ns, when there are any (10^9 * t = f/2 mod f) */
		if (!(freq % 2)) {
			for (uint64_t t = 0; t < freq && t < 4096; t++) {
				if ((tk_u128)t * 1000000000u % freq == freq / 2) {
					check(&c, base + t);
					break;
				}
			}
		}
	}
	for (int k = 0; k < 2000; k++)
		check(&c, rnd() >> (rnd() % 64));
}

Test(ticks, frequencies_of_every_kind)
{
	static const uint64_t freqs[] = {
		0, 1, 2, 3, 7, 1000, 1000000, 32768, 999999937, 1000000000, 1000000001,
		2000000000, 2399998000, 2994374000, 3000000000, 4000000000, (1ull << 32) - 1,
		1ull << 32, (1ull << 32) + 1, 1ull << 33, TK_FAST_FREQ - 1, TK_FAST_FREQ,
		TK_FAST_FREQ + 1, 10000000000ull, 1ull << 40, UINT64_MAX,
	};

	for (size_t i = 0; i < sizeof(freqs) / sizeof(freqs[0]); i++)
		check_edges(freqs[i]);
	for (int i = 0; i < 3000; i++)
		check_edges(1 + (rnd() >> (rnd() % 64)) % 12000000000ull);
	cr_assert_gt(checks, 3000 * 2000);
}

/*
 * tk_ns_near() is tk_ns() whatever the order of the counts: mostly forward
 * in small steps (as convert writes them), with steps back, jumps of 2^31
 * to 2^40 ticks either way, the limits of the 2^32 window and of 2^64.
 */
Test(ticks, near_point_is_exact_in_any_order)
{
	static const uint64_t freqs[] = {
		0, 1, 2, 3, 1000000000, 2994374000, TK_FAST_FREQ, TK_FAST_FREQ + 1, 1ull << 40,
	};
	unsigned n = 0, moves = 0;

	for (int i = 0; i < 3000; i++) {
		uint64_t freq = i < 9 ? freqs[i] : 2 + (rnd() >> (rnd() % 64)) % 12000000000ull;
		uint64_t ticks = i % 3 ? rnd() >> (rnd() % 64) : UINT64_MAX - (rnd() % (1ull << 34));
		struct tk_ns c;
		struct tk_near near = { .ok = false };

		tk_ns_init(&c, freq);
		for (int k = 0; k < 700; k++) {
			uint64_t got, base = near.base;

			switch (rnd() % 16) {
			case 0: ticks -= rnd() % (1ull << 31); break;	/* behind the last */
			case 1: ticks += (rnd() % 2 ? 1 : -1) * (rnd() >> (24 + rnd() % 40)); break;
			case 2: ticks = near.base + (1ull << 32) - 1 + rnd() % 2; break;	/* the window's end */
			case 3: ticks = near.base - rnd() % 2; break;
			default: ticks += rnd() % 100000; break;
			}
			got = tk_ns_near(&c, &near, ticks);
			if (got != want_ns(ticks, freq))
				cr_assert_fail("freq %" PRIu64 " ticks %" PRIu64 " (point %" PRIu64
					       "): %" PRIu64 ", want %" PRIu64,
					       freq, ticks, near.base, got, want_ns(ticks, freq));
			moves += near.base != base;
			n++;
		}
	}
	cr_assert_eq(n, 3000 * 700);
	cr_assert_gt(moves, 3000, "the point moved (%u times)", moves);
	cr_assert_lt(moves, n / 4, "the point moved on most counts (%u of %u)", moves, n);
}

Test(ticks, fast_path_taken_where_promised)
{
	struct tk_ns c;

	tk_ns_init(&c, 2994374000u);
	cr_assert(c.fast && c.s >= 64, "a TSC's frequency takes the reciprocal");
	tk_ns_init(&c, TK_FAST_FREQ);
	cr_assert(c.fast);
	/* (freq - 1) * 10^9 + freq / 2 must stay below 2^63 */
	cr_assert((tk_u128)(TK_FAST_FREQ - 1) * 1000000000u + TK_FAST_FREQ / 2 < (tk_u128)1 << 63);
	cr_assert((tk_u128)TK_FAST_FREQ * 1000000000u + (TK_FAST_FREQ + 1) / 2 >= (tk_u128)1 << 63,
		  "TK_FAST_FREQ is the largest such frequency");
	tk_ns_init(&c, TK_FAST_FREQ + 1);
	cr_assert(!c.fast);
	tk_ns_init(&c, 1);
	cr_assert(!c.fast);
}

Test(ticks, rounding_and_the_precision_doubles_lose)
{
	struct tk_ns c;

	tk_ns_init(&c, 2000000000u);	/* half a nanosecond a tick */
	cr_assert_eq(tk_ns(&c, 1), 1, "0.5 ns rounds up");
	cr_assert_eq(tk_ns(&c, 3), 2, "1.5 ns rounds up");
	tk_ns_init(&c, 4000000000u);
	cr_assert_eq(tk_ns(&c, 1), 0);
	cr_assert_eq(tk_ns(&c, 3), 1);
	tk_ns_init(&c, 3);
	cr_assert_eq(tk_ns(&c, 1), 333333333);
	cr_assert_eq(tk_ns(&c, 2), 666666667);
	/*
	 * A CLOCK_REALTIME trace in ns (frequency 10^9): every time is itself.
	 * In doubles, 1795662229925690761 became a multiple of 256.
	 */
	tk_ns_init(&c, 1000000000u);
	cr_assert_eq(tk_ns(&c, 1795662229925690761ull), 1795662229925690761ull);
	cr_assert_eq(tk_ns(&c, 1795662229925690761ull) - tk_ns(&c, 1795662229925690671ull), 90);
	cr_assert_neq((uint64_t)((double)1795662229925690761ull * 1e9 / 1e9 + 0.5),
		      1795662229925690761ull, "the double arithmetic this replaces was inexact here");
	/* 200 days of a 3 GHz TSC: 5.18e16 ticks, past 2^53 ns */
	tk_ns_init(&c, 3000000000u);
	cr_assert_eq(tk_ns(&c, 51840000000000001ull), 17280000000000000ull);
	cr_assert_eq(tk_ns(&c, 51840000000000002ull), 17280000000000001ull);
	/* too large for 64 bits: saturated, never wrapped */
	tk_ns_init(&c, 1000u);
	cr_assert_eq(tk_ns(&c, UINT64_MAX / 2), UINT64_MAX);
	tk_ns_init(&c, 0);
	cr_assert_eq(tk_ns(&c, 5), 5000);
	cr_assert_eq(tk_ns(&c, UINT64_MAX / 999), UINT64_MAX);
}
