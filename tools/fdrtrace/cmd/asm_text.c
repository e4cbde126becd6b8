/* SPDX-License-Identifier: MIT */
/*
 * asm_text.c - the text side of "fdrtrace assemble": a line split into its
 * type, subtype and key=value fields (quoted strings decoded), and the
 * fields read as integers, hex bytes and reserved bytes, each marked used
 * so that a field no record takes is an error. Errors name "TEXT:LINE".
 *
 * Contract: single-threaded; a line's fields point into the line's text,
 * decoded in place.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm.h"
#include "util.h"

/* Errors name the text and the line (asm.h). */
int asm_err(struct asm_state *s, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%lu: ", s->text_name, s->lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

/* The field @key of @l, marked used (asm_check_used() reports the others). */
struct asm_field *asm_find(struct asm_line *l, const char *key)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->f[i].key, key) == 0) {
			l->f[i].used = true;
			return &l->f[i];
		}
	return NULL;
}

/*
 * Parse field @key as an integer of @bits bits (signed or unsigned: any
 * value in -2^(bits-1) .. 2^bits-1 is taken, two's complement). Absent:
 * @def. "auto" is accepted only when @is_auto is not NULL.
 */
int asm_int(struct asm_state *s, struct asm_line *l, const char *key, unsigned bits,
	    uint64_t def, uint64_t *out, bool *is_auto)
{
	struct asm_field *f = asm_find(l, key);
	const char *v;
	char *end;
	uint64_t max = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;

	if (is_auto)
		*is_auto = false;
	if (!f) {
		*out = def;
		return 0;
	}
	v = f->val;
	if (is_auto && strcmp(v, "auto") == 0) {
		*is_auto = true;
		*out = 0;
		return 0;
	}
	errno = 0;
	if (v[0] == '-') {
		long long x = strtoll(v, &end, 0);
		long long min = bits >= 64 ? INT64_MIN : -(1LL << (bits - 1));

		if (errno || end == v || end != v + f->len || x < min)
			return asm_err(s, "%s=%s: not a %u-bit integer", key, v, bits);
		*out = (uint64_t)x & max;
		return 0;
	}
	*out = strtoull(v, &end, 0);
	if (errno || end == v || end != v + f->len || *out > max)
		return asm_err(s, "%s=%s: not a %u-bit integer", key, v, bits);
	return 0;
}

static int asm_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Parse field @key as hex bytes ('_' separators allowed) into a fresh
 * allocation. Absent: *out NULL, *n 0. @max limits the byte count (0: none).
 */
int asm_hex(struct asm_state *s, struct asm_line *l, const char *key, size_t max,
	    uint8_t **out, size_t *n)
{
	struct asm_field *f = asm_find(l, key);
	const char *p;
	uint8_t *b;
	size_t k = 0;
	int hi = -1;

	*out = NULL;
	*n = 0;
	if (!f)
		return 0;
	b = malloc(f->len / 2 + 1);
	if (!b) {
		tool_err("out of memory");
		return -ENOMEM;
	}
	for (p = f->val; p < f->val + f->len; p++) {
		int d;

		if (*p == '_')
			continue;
		d = asm_hexval((unsigned char)*p);
		if (d < 0) {
			free(b);
			return asm_err(s, "%s=: '%c' is not a hex digit", key, *p);
		}
		if (hi < 0) {
			hi = d;
		} else {
			b[k++] = (uint8_t)(hi << 4 | d);
			hi = -1;
		}
	}
	if (hi >= 0) {
		free(b);
		return asm_err(s, "%s=: odd number of hex digits", key);
	}
	if (max && k > max) {
		free(b);
		return asm_err(s, "%s=: %zu bytes, at most %zu fit", key, k, max);
	}
	*out = b;
	*n = k;
	return 0;
}

/* The reserved bytes "rsv=" into @dst (@n bytes, zero-filled). */
int asm_rsv(struct asm_state *s, struct asm_line *l, uint8_t *dst, size_t n)
{
	uint8_t *b;
	size_t k;
	int rc = asm_hex(s, l, "rsv", n, &b, &k);

	if (rc)
		return rc;
	memset(dst, 0, n);
	if (b)
		memcpy(dst, b, k);
	free(b);
	return 0;
}

int asm_check_used(struct asm_state *s, struct asm_line *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!l->f[i].used)
			return asm_err(s, "'%s %s' has no field '%s'", l->type, l->subtype,
				       l->f[i].key);
	return 0;
}

int asm_need_hdr(struct asm_state *s, const char *what)
{
	if (!s->have_hdr)
		return asm_err(s, "%s before the 'hdr' line: the version is unknown", what);
	return 0;
}

/*
 * Split off the next token at *@pp. Blanks end a token, '#' starts a
 * comment; inside "..." neither does, and \" \\ \n \t \xNN are decoded (in
 * place: the decoded text is never longer). Sets *@len to the decoded
 * length. Return: 1 with *@tok, 0 at the end of the line, or -EINVAL.
 */
static int asm_token(struct asm_state *s, char **pp, char **tok, size_t *len)
{
	char *p = *pp, *out;

	if (!p)
		return 0;
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	if (!*p || *p == '#')
		return 0;
	*tok = out = p;
	while (*p && !strchr(" \t\r\n#", *p)) {
		if (*p != '"') {
			*out++ = *p++;
			continue;
		}
		for (p++; *p != '"'; p++) {
			if (!*p || *p == '\n')
				return asm_err(s, "a string is not closed with '\"'");
			if (*p != '\\') {
				*out++ = *p;
				continue;
			}
			p++;
			if (*p == '"' || *p == '\\') {
				*out++ = *p;
			} else if (*p == 'n') {
				*out++ = '\n';
			} else if (*p == 't') {
				*out++ = '\t';
			} else if (*p == 'x' && asm_hexval((unsigned char)p[1]) >= 0 &&
				   asm_hexval((unsigned char)p[2]) >= 0) {
				*out++ = (char)(asm_hexval((unsigned char)p[1]) << 4 |
						asm_hexval((unsigned char)p[2]));
				p += 2;
			} else {
				return asm_err(s, "unknown escape in a string (use \\\" \\\\ \\n \\t \\xNN)");
			}
		}
		p++;
	}
	/* A comment right after the token ends the line. */
	*pp = *p == '#' || !*p ? NULL : p + 1;
	*len = (size_t)(out - *tok);
	*out = '\0';
	return 1;
}

int asm_parse_line(struct asm_state *s, char *text, struct asm_line *l)
{
	char *p = text, *tok;
	size_t len;
	int rc;

	l->n = 0;
	if ((rc = asm_token(s, &p, &tok, &len)) <= 0)
		return rc;
	l->type = tok;
	if ((rc = asm_token(s, &p, &tok, &len)) < 0)
		return rc;
	if (!rc || strchr(tok, '='))
		return asm_err(s, "'%s' needs a subtype (e.g. 'fun ent', 'buf new')", l->type);
	l->subtype = tok;
	while ((rc = asm_token(s, &p, &tok, &len)) == 1) {
		char *eq = memchr(tok, '=', len);
		int i;

		if (!eq || eq == tok)
			return asm_err(s, "'%s': fields are key=value", tok);
		*eq = '\0';
		for (i = 0; i < l->n; i++)
			if (strcmp(l->f[i].key, tok) == 0)
				return asm_err(s, "field '%s' given twice", tok);
		if (l->n == ASM_MAX_FIELDS)
			return asm_err(s, "too many fields");
		l->f[l->n].key = tok;
		l->f[l->n].val = eq + 1;
		l->f[l->n].len = len - (size_t)(eq + 1 - tok);
		l->f[l->n].used = false;
		l->n++;
	}
	return rc < 0 ? rc : 1;
}
