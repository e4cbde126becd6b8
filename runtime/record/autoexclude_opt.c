// SPDX-License-Identifier: MIT
/*
 * runtime/record/autoexclude_opt.c - the auto_exclude option's text.
 *
 * Contract: pure functions, no allocation, no libc beyond string
 * comparison; called once at the start of recording (autoexclude.c) and
 * by the unit tests (tests/runtime/test_autoexclude_opt.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "autoexclude.h"

/* A whole number at *@p (advanced past it), at most @max. Return: 0 or -EINVAL. */
static notrace int axo_number(const char **p, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (n > (max - (uint64_t)(*s - '0')) / 10)
			return -EINVAL;
		n = n * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*v = n;
	return 0;
}

notrace int fdr_ax_parse(const char *text, uint64_t *ns, uint32_t *after, bool *patch)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = { { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 } };
	const char *p = text;
	uint64_t v, n = FDR_AX_AFTER_DEFAULT, scale = 0;
	bool seen_after = false, on = true, seen_patch = false;

	if (!text[0] || !strcmp(text, "off")) {
		*ns = 0;
		*after = FDR_AX_AFTER_DEFAULT;
		*patch = false;
		return 0;
	}
	/* at most an hour: a threshold beyond that means nothing for a call's mean */
	if (axo_number(&p, 3600000000000ull, &v) < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strncmp(p, units[i].unit, 2)) {
			scale = units[i].ns;
			p += 2;
			break;
		}
	}
	if (!scale || !v || v > 3600000000000ull / scale)
		return -EINVAL;
	/* then after=N and patch=on|off, each at most once, in any order */
	while (*p == ';' || *p == ',') {
		p++;
		if (!strncmp(p, "after=", 6) && !seen_after) {
			p += 6;
			if (axo_number(&p, FDR_AX_AFTER_MAX, &n) < 0 || n < FDR_AX_AFTER_MIN)
				return -EINVAL;
			seen_after = true;
		} else if (!strncmp(p, "patch=", 6) && !seen_patch) {
			p += 6;
			if (!strncmp(p, "on", 2) && (p[2] == ';' || p[2] == ',' || !p[2])) {
				on = true;
				p += 2;
			} else if (!strncmp(p, "off", 3)) {
				on = false;
				p += 3;
			} else {
				return -EINVAL;
			}
			seen_patch = true;
		} else {
			return -EINVAL;
		}
	}
	if (*p)
		return -EINVAL;
	*ns = v * scale;
	*after = (uint32_t)n;
	*patch = on;
	return 1;
}
