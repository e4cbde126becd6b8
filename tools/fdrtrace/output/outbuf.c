/* SPDX-License-Identifier: MIT */
/*
 * outbuf.c - buffered output and printf-exact number formatting (see
 * outbuf.h).
 *
 * Contract: single-threaded tool code.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "outbuf.h"

const char fmt_digits2[200] =
	"00010203040506070809" "10111213141516171819" "20212223242526272829"
	"30313233343536373839" "40414243444546474849" "50515253545556575859"
	"60616263646566676869" "70717273747576777879" "80818283848586878889"
	"90919293949596979899";

int ob_init(struct obuf *ob, FILE *f)
{
	ob->buf = malloc(OB_SIZE);
	ob->len = 0;
	ob->f = f;
	ot_init(&ob->w, f, OB_SIZE);
	return ob->buf ? 0 : -ENOMEM;
}

void ob_flush(struct obuf *ob)
{
	if (ob->len)
		ob->buf = ot_hand(&ob->w, ob->buf, ob->len);
	ob->len = 0;
}

void ob_fini(struct obuf *ob)
{
	if (ob->buf)
		ob_flush(ob);
	ot_drain(&ob->w);
	free(ob->buf);
	ob->buf = NULL;
}

void ob_put_slow(struct obuf *ob, const void *p, size_t n)
{
	ob_flush(ob);
	if (n > OB_SIZE / 2) {
		ot_drain(&ob->w);	/* behind what was handed over */
		fwrite(p, 1, n, ob->f);
		return;
	}
	memcpy(ob->buf, p, n);
	ob->len = n;
}

void ob_fill_slow(struct obuf *ob, char c, size_t n)
{
	while (n) {
		size_t k;

		if (ob->len == OB_SIZE)
			ob_flush(ob);
		k = OB_SIZE - ob->len < n ? OB_SIZE - ob->len : n;
		memset(ob->buf + ob->len, c, k);
		ob->len += k;
		n -= k;
	}
}

char *fmt_fixed3_slow(char *p, double x, unsigned width)
{
#if LDBL_MANT_DIG >= 64
	if (!signbit(x) && x < 1e15) {
		/* exact, as in fmt_fixed3_w(): at most 60 significant bits */
		long double y = (long double)x * 1000.0L;
		uint64_t q = (uint64_t)y;
		long double frac = y - (long double)q;
		char tmp[32], *e;
		unsigned r;
		size_t n;

		if (frac > 0.5L || (frac == 0.5L && (q & 1)))
			q++;
		e = fmt_u64(tmp, q / 1000);
		r = (unsigned)(q % 1000);
		*e++ = '.';
		*e++ = (char)('0' + r / 100);
		*e++ = fmt_digits2[(r % 100) * 2];
		*e++ = fmt_digits2[(r % 100) * 2 + 1];
		n = (size_t)(e - tmp);
		if (n < width) {
			memset(p, ' ', width - n);
			p += width - n;
		}
		memcpy(p, tmp, n);
		return p + n;
	}
#endif
	{
		size_t room = (size_t)width + 320;
		int n = snprintf(p, room, "%*.3f", (int)width, x);

		return p + (n < 0 ? 0 : (size_t)n < room ? (size_t)n : room - 1);
	}
}

void fmt_dur_init(struct fmt_dur *d, uint64_t freq)
{
	fmt_u128 rate = freq ? ((fmt_u128)1000000000000ull << 64) / freq :
					(fmt_u128)1000u << 64;

	d->freq = freq;
	d->hi = (uint64_t)(rate >> 64);
	d->lo = (uint64_t)rate;
	d->fast = d->hi < (1ull << 32);
	for (unsigned v = 0; v < 1000; v++) {
		char tmp[8];

		snprintf(tmp, sizeof(tmp), "%3u.", v);
		memcpy(d->int4[v], tmp, 4);
		snprintf(tmp, sizeof(tmp), "%03u ", v);
		memcpy(d->frac4[v], tmp, 4);
	}
}

char *fmt_dur_slow(char *p, uint64_t freq, uint64_t dur)
{
	double ns = freq ? (double)dur * 1e9 / (double)freq : (double)dur;

	if (ns < 1e3)
		return fmt_lit(fmt_fixed3_w(p, ns, 10), " ns");
	if (ns < 1e6)
		return fmt_lit(fmt_fixed3_w(p, ns / 1e3, 10), " us");
	if (ns < 1e9)
		return fmt_lit(fmt_fixed3_w(p, ns / 1e6, 10), " ms");
	return fmt_lit(fmt_fixed3_w(p, ns / 1e9, 10), "  s");
}
