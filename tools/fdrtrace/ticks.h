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
	uint64_t q, r;

	if (__builtin_expect(!c->fast || (ticks >> 63), 0))
		return tk_ns_slow(c, ticks);
	q = tk_div(ticks, c->m, c->s);
	r = ticks - q * c->freq;
	/* q * 10^9 plus at most 10^9 must fit (a slow clock and a huge count may not) */
	if (__builtin_expect(q > (UINT64_MAX - 1000000000ull) / 1000000000ull, 0))
		return tk_ns_slow(c, ticks);
	return q * 1000000000ull + tk_div(r * 1000000000ull + c->freq / 2, c->m, c->s);
}

/* The longest duration tk_ns_span() takes inline: dur * 10^9 + freq < 2^63 */
#define TK_SPAN_TICKS ((UINT64_C(1) << 63) / 1000000000u - 10)

/**
 * tk_ns_span - tk_ns() of a start and of start + duration, together
 * @c: the conversion
 * @ticks: the start
 * @dur: the duration; @ticks + @dur must not wrap
 * @start: tk_ns(@ticks)
 * @end: tk_ns(@ticks + @dur)
 *
 * With ticks * 10^9 + freq / 2 = A * freq + B (A the start's nanoseconds,
 * B < freq), the end is A + (B + dur * 10^9) / freq: one division more
 * instead of two, when dur * 10^9 + B stays below 2^63 (9.2 s at 1 GHz;
 * longer calls take tk_ns() twice). Inline: convert calls it per call.
 */
static inline void tk_ns_span(const struct tk_ns *c, uint64_t ticks, uint64_t dur,
			      uint64_t *start, uint64_t *end)
{
	uint64_t q, x, q2, a, b;

	if (__builtin_expect(!c->fast || (ticks >> 63) || dur > TK_SPAN_TICKS, 0))
		goto slow;
	q = tk_div(ticks, c->m, c->s);
	if (__builtin_expect(q > (UINT64_MAX - 1000000000ull) / 1000000000ull, 0))
		goto slow;
	x = (ticks - q * c->freq) * 1000000000ull + c->freq / 2;
	q2 = tk_div(x, c->m, c->s);
	b = x - q2 * c->freq;
	a = q * 1000000000ull + q2;
	x = tk_div(b + dur * 1000000000ull, c->m, c->s);
	if (__builtin_expect(a > UINT64_MAX - x, 0))
		goto slow;
	*start = a;
	*end = a + x;
	return;
slow:
	*start = tk_ns(c, ticks);
	*end = tk_ns(c, ticks + dur);
}

#endif /* FDRTRACE_TOOL_TICKS_H */
