/* SPDX-License-Identifier: MIT */
/*
 * printable.c - names made safe for every output format (see printable.h).
 *
 * Contract: pure functions, any thread; allocates only the copy.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "printable.h"

/*
 * The length of the well-formed, allowed UTF-8 character at @p (at most
 * @n bytes available), or 0 when its first byte must be replaced.
 */
static size_t pr_char_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xbf;
	uint32_t cp;
	size_t len, i;

	if (c < 0x80)
		return c >= 0x20 && c != 0x7f && c != '"' && c != '\\';
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;	/* no overlong forms */
		else if (c == 0xed)
			hi = 0x9f;	/* no surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;	/* nothing above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 1; i < len; i++) {
		if (i > 1 && (p[i] < 0x80 || p[i] > 0xbf))
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp <= 0x9f || cp == 0xfffe || cp == 0xffff)
		return 0;	/* C1 controls; YAML's excluded noncharacters */
	return len;
}

char *printable_dup(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = malloc(len + 1);
	size_t i = 0, k;

	if (!out)
		return NULL;
	while (i < len) {
		k = pr_char_len(p + i, len - i);
		if (!k) {
			out[i++] = '?';
			continue;
		}
		memcpy(out + i, p + i, k);
		i += k;
	}
	out[len] = '\0';
	return out;
}

int printable_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0, k;

	while (i < n) {
		k = pr_char_len(p + i, n - i);
		if (!k)
			return 0;
		i += k;
	}
	return 1;
}
