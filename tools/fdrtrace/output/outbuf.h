/* SPDX-License-Identifier: MIT */
/*
 * outbuf.h - the text output of the commands that write a line per call
 * (replay; convert's formats format into it too): one large buffer handed
 * to stdio a megabyte at a time, and number formatting without printf.
 *
 * A line is built in place: ob_room() gives room for a bounded piece
 * (flushing first when the buffer is nearly full), the formatters append
 * and return the end, ob_commit() takes it. Pieces of any length (names,
 * indentation) go through ob_put() and ob_fill(). ob_flush() writes with
 * fwrite() on the stream, so stdio keeps the error state that
 * tool_finish_stdout() checks, and what the command printed with stdio
 * before stays in front. A full buffer is written by a second thread
 * (out_thread.h) while the command fills another: nothing else may write to
 * the stream between ob_init() and ob_fini().
 *
 * The formatters print exactly what printf prints for the same value:
 * fmt_fixed3() is "%.3f" of a double, rounded from its exact binary value
 * half to even as glibc does (tests/analysis/test_outbuf.c compares them
 * with snprintf() on millions of values, ties included).
 *
 * Contract: single-threaded tool code; no allocation after ob_init() but
 * the writer's second buffer and thread, at the first full buffer.
 */
#ifndef FDRTRACE_TOOL_OUTBUF_H
#define FDRTRACE_TOOL_OUTBUF_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "out_thread.h"

#define OB_SIZE (1u << 20)	/* bytes handed to stdio at a time */
#define OB_PIECE 512u		/* the most ob_room() gives */

/**
 * struct obuf - buffered output to a stdio stream
 * @buf: OB_SIZE bytes
 * @len: bytes waiting
 * @f: the stream
 * @w: writes full buffers while the next one fills
 */
struct obuf {
	char *buf;
	size_t len;
	FILE *f;
	struct out_thread w;
};

/**
 * ob_init - set up an output buffer on @f
 * @ob: the buffer
 * @f: the stream (stdout)
 *
 * Return: 0, or -ENOMEM.
 */
int ob_init(struct obuf *ob, FILE *f);

/**
 * ob_flush - hand what waits to the writer (fwrite; errors stay in the stream)
 * @ob: the buffer
 */
void ob_flush(struct obuf *ob);

/**
 * ob_fini - flush, wait until all is written, and free
 * @ob: the buffer (ob_init() may have failed)
 */
void ob_fini(struct obuf *ob);

/* ob_put() and ob_fill() when the buffer has no room for them. */
void ob_put_slow(struct obuf *ob, const void *p, size_t n);
void ob_fill_slow(struct obuf *ob, char c, size_t n);

/**
 * ob_put - append @n bytes, any number
 * @ob: the buffer
 * @p: the bytes
 * @n: how many
 */
static inline void ob_put(struct obuf *ob, const void *p, size_t n)
{
	if (__builtin_expect(n > OB_SIZE - ob->len, 0)) {
		ob_put_slow(ob, p, n);
		return;
	}
	memcpy(ob->buf + ob->len, p, n);
	ob->len += n;
}

/**
 * ob_fill - append @n copies of byte @c, any number
 * @ob: the buffer
 * @c: the byte
 * @n: how many
 */
static inline void ob_fill(struct obuf *ob, char c, size_t n)
{
	if (__builtin_expect(n > OB_SIZE - ob->len, 0)) {
		ob_fill_slow(ob, c, n);
		return;
	}
	memset(ob->buf + ob->len, c, n);
	ob->len += n;
}

/**
 * ob_room - where to write up to OB_PIECE bytes
 * @ob: the buffer
 *
 * Return: the end of what waits; commit with ob_commit().
 */
static inline char *ob_room(struct obuf *ob)
{
	if (__builtin_expect(OB_SIZE - ob->len < OB_PIECE, 0))
		ob_flush(ob);
	return ob->buf + ob->len;
}

/**
 * ob_commit - take what was written since ob_room()
 * @ob: the buffer
 * @end: one past the last byte written
 */
static inline void ob_commit(struct obuf *ob, char *end)
{
	ob->len = (size_t)(end - ob->buf);
}

/* Append @s (a literal) at @p. */
#define fmt_lit(p, s) ((char *)memcpy((p), (s), sizeof(s) - 1) + sizeof(s) - 1)

extern const char fmt_digits2[200];

/**
 * fmt_u32 - append @v in decimal ("%" PRIu32)
 * @p: where (room for 10 bytes)
 * @v: the value
 *
 * Return: the end.
 */
static inline char *fmt_u32(char *p, uint32_t v)
{
	unsigned n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 :
		     v < 100000 ? 5 : v < 1000000 ? 6 : v < 10000000 ? 7 :
		     v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
	char *e = p + n;

	while (v >= 100) {
		unsigned d = (v % 100) * 2;

		v /= 100;
		e -= 2;
		e[0] = fmt_digits2[d];
		e[1] = fmt_digits2[d + 1];
	}
	if (v >= 10) {
		e[-2] = fmt_digits2[v * 2];
		e[-1] = fmt_digits2[v * 2 + 1];
	} else {
		e[-1] = (char)('0' + v);
	}
	return p + n;
}

/* Append exactly eight digits of @v (below 10^8), leading zeros included. */
static inline char *fmt_8digits(char *p, uint32_t v)
{
	uint32_t hi = v / 10000, lo = v % 10000;

	p[0] = fmt_digits2[hi / 100 * 2];
	p[1] = fmt_digits2[hi / 100 * 2 + 1];
	p[2] = fmt_digits2[hi % 100 * 2];
	p[3] = fmt_digits2[hi % 100 * 2 + 1];
	p[4] = fmt_digits2[lo / 100 * 2];
	p[5] = fmt_digits2[lo / 100 * 2 + 1];
	p[6] = fmt_digits2[lo % 100 * 2];
	p[7] = fmt_digits2[lo % 100 * 2 + 1];
	return p + 8;
}

/**
 * fmt_u64 - append @v in decimal ("%" PRIu64)
 * @p: where (room for 20 bytes)
 * @v: the value
 *
 * In 32-bit pieces of eight digits: timestamps have twelve or more.
 *
 * Return: the end.
 */
static inline char *fmt_u64(char *p, uint64_t v)
{
	uint64_t hi;

	if (v <= UINT32_MAX)
		return fmt_u32(p, (uint32_t)v);
	hi = v / 100000000;
	if (hi <= UINT32_MAX) {
		p = fmt_u32(p, (uint32_t)hi);
	} else {
		p = fmt_u32(p, (uint32_t)(hi / 100000000));
		p = fmt_8digits(p, (uint32_t)(hi % 100000000));
	}
	return fmt_8digits(p, (uint32_t)(v % 100000000));
}

/**
 * fmt_i64 - append @v in decimal ("%" PRId64)
 * @p: where (room for 20 bytes)
 * @v: the value
 *
 * Return: the end.
 */
static inline char *fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return fmt_u64(p, 0 - (uint64_t)v);
	}
	return fmt_u64(p, (uint64_t)v);
}

/**
 * fmt_i64_w - append @v in decimal, right-aligned in @width ("%*" PRId64)
 * @p: where (room for 20 bytes or @width)
 * @v: the value
 * @width: the least width; spaces on the left
 *
 * Return: the end.
 */
static inline char *fmt_i64_w(char *p, int64_t v, unsigned width)
{
	char tmp[24];
	size_t n = (size_t)(fmt_i64(tmp, v) - tmp);

	if (n < width) {
		memset(p, ' ', width - n);
		p += width - n;
	}
	memcpy(p, tmp, n);
	return p + n;
}

/* fmt_fixed3_w() for the values its inline part leaves (snprintf()'s). */
char *fmt_fixed3_slow(char *p, double x, unsigned width);

/**
 * fmt_fixed3_w - append @x as printf's "%*.3f" does
 * @p: where (room for 320 bytes, or @width + 8 when more: "%.3f" of
 *	DBL_MAX is 313 bytes)
 * @x: the value
 * @width: the least width; spaces on the left
 *
 * Exact: the value is rounded from its binary value, ties to even, as
 * glibc's printf rounds in the default rounding mode. Values from 0 to
 * 10^6 are formatted here; the others by fmt_fixed3_slow().
 *
 * Return: the end.
 */
static inline char *fmt_fixed3_w(char *p, double x, unsigned width)
{
#if LDBL_MANT_DIG >= 64
	if (x >= 0.0 && x < 1e6 && width <= 16 && !signbit(x)) {
		/*
		 * x is m * 2^e with m < 2^53, and 1000 is 125 * 2^3 with
		 * 125 < 2^7: the product has at most 60 significant bits, so it
		 * is exact in the x87 format's 64, and so are its integer part
		 * and its fraction.
		 */
		long double y = (long double)x * 1000.0L;
		uint64_t q = (uint64_t)(int64_t)y, ip;
		long double frac = y - (long double)q;
		unsigned r, len = 5;
		char *e;

		if (frac > 0.5L || (frac == 0.5L && (q & 1)))
			q++;
		ip = q / 1000;
		r = (unsigned)(q % 1000);
		for (uint64_t k = ip; k >= 10; k /= 10)
			len++;
		memset(p, ' ', 16);
		e = p + (len > width ? len : width);
		e[-1] = fmt_digits2[(r % 100) * 2 + 1];
		e[-2] = fmt_digits2[(r % 100) * 2];
		e[-3] = (char)('0' + r / 100);
		e[-4] = '.';
		p = e - 4;
		do {
			*--p = (char)('0' + ip % 10);
			ip /= 10;
		} while (ip);
		return e;
	}
#endif
	return fmt_fixed3_slow(p, x, width);
}

__extension__ typedef unsigned __int128 fmt_u128;

/**
 * struct fmt_dur - a trace's clock, made once for fmt_dur()
 * @freq: ticks a second (0: the ticks are nanoseconds)
 * @hi, @lo: thousandths of a nanosecond a tick, 10^12 / @freq (10^3 for
 *	@freq 0), in 64.64 fixed point, truncated: @hi the integer part
 * @fast: @hi < 2^32 (@freq above 232 Hz): fmt_dur() may compute
 * @int4: "%3u." of 0..999
 * @frac4: "%03u " of 0..999
 */
struct fmt_dur {
	uint64_t freq;
	uint64_t hi, lo;
	bool fast;
	char int4[1000][4];
	char frac4[1000][4];
};

/**
 * fmt_dur_init - make the fixed-point form of a clock and the digit tables
 * @d: the result
 * @freq: ticks a second, 0 when the ticks are nanoseconds
 */
void fmt_dur_init(struct fmt_dur *d, uint64_t freq);

/**
 * fmt_dur_slow - the definition of fmt_dur(), in double arithmetic
 * @p: where (room for OB_PIECE bytes)
 * @freq: ticks a second, 0 when the ticks are nanoseconds
 * @dur: ticks
 *
 * ns = @dur * 1e9 / @freq in doubles, then "%10.3f" of ns, ns / 1e3,
 * ns / 1e6 or ns / 1e9 with " ns", " us", " ms" or "  s", the first whose
 * value is below 1e3 (the last else).
 *
 * Return: the end.
 */
char *fmt_dur_slow(char *p, uint64_t freq, uint64_t dur);

/**
 * fmt_dur - append a duration as fmt_dur_slow() does, without floating point
 * @p: where (room for OB_PIECE bytes)
 * @d: the clock (fmt_dur_init())
 * @dur: ticks
 *
 * E, the exact duration in thousandths of a nanosecond, is computed as
 * @dur * @d's fixed-point rate: integer part @i, fraction @f / 2^64, too
 * small by less than @dur units of 2^-64. fmt_dur_slow() rounds three
 * times (ticks * 1e9, / freq, / 1000^k for unit k: a relative error below
 * 2^-51), then prints its value rounded to thousandths of the unit,
 * exactly (ties to even). So the two pick the same unit and print the
 * same digits unless E is within G = E * 2^-51 + @dur units of 2^-64 of a
 * unit's bound (10^6, 10^9, 10^12 thousandths of ns) or of a half-way point
 * between two printed values (1000^k / 2 past a multiple of 1000^k). With
 * @dur < 2^32 and E < 10^12, G is below one (2^-24 in ns units): fmt_dur_slow()
 * decides when @i is next to a bound or a half-way point (about 2 values in
 * 1000 in microseconds, 2 in 10^6 in milliseconds, 1 in 2^23 in
 * nanoseconds), and every duration from a second (E >= 10^12 - 1) or
 * 2^32 ticks. tests/analysis/test_outbuf.c compares the two on millions of
 * values, ties and bounds included.
 *
 * Return: the end.
 */
static inline char *fmt_dur(char *p, const struct fmt_dur *d, uint64_t dur)
{
	fmt_u128 m;
	uint64_t i, f, q, r;
	char u;

	if (__builtin_expect((dur >> 32) || !d->fast, 0))
		return fmt_dur_slow(p, d->freq, dur);
	m = (fmt_u128)dur * d->lo;
	f = (uint64_t)m;
	i = dur * d->hi + (uint64_t)(m >> 64);	/* < 2^64: dur, hi < 2^32 */
	if (i < 1000000u) {
		/* ns: E's fraction decides, unless it is near 1/2 (G < 2^38) */
		if (__builtin_expect(i == 999999u || f - ((1ull << 63) - (1ull << 40)) < (1ull << 41), 0))
			return fmt_dur_slow(p, d->freq, dur);
		q = i + (f > (1ull << 63));
		u = 'n';
	} else if (i < 1000000000u) {
		/* us: E's integer part decides, unless it is 499 or 500 past 1000s */
		if (__builtin_expect(i == 1000000u || i == 999999999u, 0))
			return fmt_dur_slow(p, d->freq, dur);
		q = i / 1000u;
		r = i % 1000u;
		if (__builtin_expect(r - 499u < 2u, 0))
			return fmt_dur_slow(p, d->freq, dur);
		q += r > 500u;
		u = 'u';
	} else if (i < 999999999999ull) {
		if (__builtin_expect(i == 1000000000u, 0))
			return fmt_dur_slow(p, d->freq, dur);
		q = i / 1000000u;
		r = i % 1000000u;
		if (__builtin_expect(r - 499999u < 2u, 0))
			return fmt_dur_slow(p, d->freq, dur);
		q += r > 500000u;
		u = 'm';
	} else {
		return fmt_dur_slow(p, d->freq, dur);
	}
	if (__builtin_expect(q >= 1000000u, 0))
		return fmt_dur_slow(p, d->freq, dur);	/* "1000.000": rounded up */
	/* q < 10^6: "%10.3f" of q / 1000 is three blanks, "%3u." and "%03u" */
	memcpy(p, "   ", 3);
	memcpy(p + 3, d->int4[q / 1000u], 4);
	memcpy(p + 7, d->frac4[q % 1000u], 4);
	p[11] = u;
	p[12] = 's';
	return p + 13;
}

#endif /* FDRTRACE_TOOL_OUTBUF_H */
