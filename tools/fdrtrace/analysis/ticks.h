/* SPDX-License-Identifier: MIT */
/*
 * ticks.h - a trace's ticks as nanoseconds, exactly: round(ticks * 10^9 /
 * freq), halves up, for every 64-bit tick count and frequency.
 *
 * In doubles (tool_scale()) a time of 2^53 ns or more (104 days of uptime
 * on a TSC clock; every trace whose clock is CLOCK_REALTIME in ns, such as
 * LLVM's XRay runtime writes where it finds no TSC frequency: 1.8 * 10^18)
 * loses its low bits: such a trace's convert output had every start time a
 * multiple of 256 ns, and a 90 ns call lasted 0 or 256 ns. Durations alone
 * stay small, but convert prints start and end times.
 *
 * Speed: convert turns two times per call it writes into nanoseconds. A
 * division by the frequency is a multiplication by its reciprocal, made once
 * per trace, and a shift (tk_div()): with m = ceil(2^s / d) and 2^s >= d *
 * 2^63, floor(n * m / 2^s) = floor(n / d) for every n < 2^63, because
 * n * m / 2^s exceeds n / d by less than n / 2^s < 1 / d, and n / d is at
 * least 1 / d below the next integer. ticks = q * freq + r then gives ns =
 * q * 10^9 + (r * 10^9 + freq / 2) / freq, both divisions so made when the
 * second numerator is below 2^63 (a frequency up to 9.2 GHz); larger values
 * take 128-bit divisions (tk_ns_slow()).
 * tests/analysis/test_ticks.c compares both with 128-bit arithmetic.
 *
 * Contract: pure functions; a struct tk_ns is made once and only read.
 */
#ifndef FDRTRACE_TOOL_TICKS_H
#define FDRTRACE_TOOL_TICKS_H

#include <stdbool.h>
#include <stdint.h>

__extension__ typedef unsigned __int128 tk_u128;

/**
 * struct tk_ns - one frequency's conversion
 * @freq: ticks a second; 0 when the trace has none (the ticks are then
 *	taken as microseconds, as every command takes them)
 * @m, @s: the reciprocal of @freq: n / @freq is (n * @m) >> @s for n < 2^63
 * @fast: @freq is from 2 to TK_FAST_FREQ: @s is at least 64, and the
 *	remainder's product fits
 */
struct tk_ns {
	uint64_t freq;
	uint64_t m;
	unsigned s;
	bool fast;
};

/* The most ticks a second for which (freq - 1) * 10^9 + freq / 2 < 2^63. */
#define TK_FAST_FREQ 9223372033ull

/**
 * tk_ns_init - make the conversion of @freq
 * @c: the result
 * @freq: ticks a second, 0 when unknown
 */
void tk_ns_init(struct tk_ns *c, uint64_t freq);

/**
 * tk_ns_slow - tk_ns() in 128-bit arithmetic, for every input
 * @c: the conversion
 * @ticks: a time or a duration in ticks
 *
 * Return: the nanoseconds, UINT64_MAX when they do not fit.
 */
uint64_t tk_ns_slow(const struct tk_ns *c, uint64_t ticks);

/* floor(@n / the divisor) for @n < 2^63, with its @m and @s (@s >= 64: one mul, one shift) */
static inline uint64_t tk_div(uint64_t n, uint64_t m, unsigned s)
{
	return (uint64_t)(((tk_u128)n * m) >> 64) >> (s - 64);
}

/**
 * tk_exact - the fast path of tk_ns(), with what it leaves out
 * @c: the conversion
 * @ticks: a count
 * @ns: tk_ns(@ticks)
 * @rem: (@ticks * 10^9 + freq / 2) mod freq
 *
 * With @ticks = q * freq + r: @ns = q * 10^9 + (r * 10^9 + freq / 2) / freq,
 * both divisions by the reciprocal. Shared by tk_ns() and tk_near_set().
 *
 * Return: false (nothing set) when the fast path does not apply: no
 * reciprocal, @ticks from 2^63, or a result that may not fit.
 */
static inline bool tk_exact(const struct tk_ns *c, uint64_t ticks, uint64_t *ns, uint64_t *rem)
{
	uint64_t q, x, q2;

	if (__builtin_expect(!c->fast || (ticks >> 63), 0))
		return false;
	q = tk_div(ticks, c->m, c->s);
	/* q * 10^9 plus at most 10^9 must fit (a slow clock and a huge count may not) */
	if (__builtin_expect(q > (UINT64_MAX - 1000000000ull) / 1000000000ull, 0))
		return false;
	x = (ticks - q * c->freq) * 1000000000ull + c->freq / 2;
	q2 = tk_div(x, c->m, c->s);
	*ns = q * 1000000000ull + q2;
	*rem = x - q2 * c->freq;
	return true;
}

/**
 * tk_ns - @ticks in nanoseconds, rounded to the nearest (halves up)
 * @c: the conversion (tk_ns_init())
 * @ticks: a time or a duration in ticks
 *
 * Inline: convert calls it twice per call it writes.
 *
 * Return: the nanoseconds, UINT64_MAX when they do not fit in 64 bits.
 */
static inline uint64_t tk_ns(const struct tk_ns *c, uint64_t ticks)
{
	uint64_t ns, rem;

	return tk_exact(c, ticks, &ns, &rem) ? ns : tk_ns_slow(c, ticks);
}

/**
 * struct tk_near - an exact point to convert nearby times from (tk_ns_near())
 * @base: a tick count; 0 with @ok false until the first conversion
 * @ns: tk_ns(@base)
 * @rem: (@base * 10^9 + freq / 2) mod freq, what @ns leaves out
 * @ok: @base, @ns and @rem are set, and every count up to @base + 2^32 - 1
 *	converts without overflow
 */
struct tk_near {
	uint64_t base, ns, rem;
	bool ok;
};

/* Counts up to this far behind a conversion that missed are taken from its point. */
#define TK_NEAR_BEHIND (UINT64_C(1) << 31)

/**
 * tk_near_set - make @n's point below @ticks, or mark it unusable
 * @c: the conversion
 * @n: the point
 * @ticks: the count that missed
 */
void tk_near_set(const struct tk_ns *c, struct tk_near *n, uint64_t ticks);

/**
 * tk_ns_near - tk_ns(), from a point a little earlier
 * @c: the conversion
 * @n: the point, moved when @ticks is not within 2^32 after it
 * @ticks: a time in ticks
 *
 * With B = @n->base, @ticks = B + d and B * 10^9 + freq / 2 = @n->ns * freq
 * + @n->rem: the result is @n->ns + (@n->rem + d * 10^9) / freq, one
 * multiplication and one division by the reciprocal when d < 2^32 (the
 * numerator is below freq + 2^32 * 10^9 < 2^63). The times convert writes
 * come nearly in order, so the point moves about once per 4 s of a 1 GHz
 * clock; it is placed 2^31 ticks below the count that missed, so that
 * slightly earlier times hit too. Exact: the same value as tk_ns().
 *
 * Return: the nanoseconds, UINT64_MAX when they do not fit.
 */
static inline uint64_t tk_ns_near(const struct tk_ns *c, struct tk_near *n, uint64_t ticks)
{
	uint64_t d = ticks - n->base;

	if (__builtin_expect(!n->ok || d >> 32, 0)) {
		tk_near_set(c, n, ticks);
		if (!n->ok)
			return tk_ns(c, ticks);
		d = ticks - n->base;
	}
	return n->ns + tk_div(n->rem + d * 1000000000ull, c->m, c->s);
}

#endif /* FDRTRACE_TOOL_TICKS_H */
