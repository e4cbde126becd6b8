/* SPDX-License-Identifier: MIT */
/*
 * shortname.c - the short form of a demangled C++ name (shortname.h).
 *
 * One pass marks the characters that belong to operator names ('<' in
 * "operator<" is no bracket), a second matches the brackets outside them
 * ((), [], {}, <>) and finds, at the top level, the parameter list (the
 * last (...) followed only by qualifiers) and the spaces before the name
 * (a function template's return type). The name is then copied without
 * its template argument lists.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "shortname.h"

static bool sn_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* Operator symbols, longest first within each leading character. */
static const char *const sn_ops[] = {
	"<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--",
	"->", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "()", "[]", "+", "-", "*", "/",
	"%", "^", "&", "|", "~", "!", "=", "<", ">", ",",
};

/*
 * Mark in @op the characters of every operator name of @s (the keyword
 * and its symbol; "new[]", "delete", "\"\" _suffix"). Return: the offset
 * of the first top-level-looking "operator" keyword, or @n when none.
 */
static size_t sn_mark_ops(const char *s, size_t n, bool *op)
{
	size_t first = n, i = 0, k;

	while (i < n) {
		if (strncmp(s + i, "operator", 8) != 0 || (i && sn_ident(s[i - 1])) ||
		    (i + 8 < n && sn_ident(s[i + 8]))) {
			i++;
			continue;
		}
		if (first == n)
			first = i;
		for (k = i; k < i + 8; k++)
			op[k] = true;
		i += 8;
		if (i + 4 <= n && s[i] == ' ' && (!strncmp(s + i + 1, "new", 3) ||
						  !strncmp(s + i + 1, "delete", 6))) {
			size_t w = s[i + 1] == 'n' ? 4 : 7;

			for (k = i; k < i + w && k < n; k++)
				op[k] = true;
			i += w;
			if (i + 2 <= n && s[i] == '[' && s[i + 1] == ']') {
				op[i] = op[i + 1] = true;
				i += 2;
			}
			continue;
		}
		if (i + 2 <= n && s[i] == '"' && s[i + 1] == '"') {
			op[i] = op[i + 1] = true;
			i += 2;
			continue;
		}
		for (k = 0; k < sizeof(sn_ops) / sizeof(sn_ops[0]); k++) {
			size_t len = strlen(sn_ops[k]);

			if (i + len <= n && strncmp(s + i, sn_ops[k], len) == 0) {
				memset(op + i, true, len);
				i += len;
				break;
			}
		}
		/* else a conversion: its type is read as any other text */
	}
	return first;
}

static bool sn_open(char c)
{
	return c == '(' || c == '[' || c == '{' || c == '<';
}

static char sn_closer(char c)
{
	return c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>';
}

/* Are @s[@from..@to) only qualifiers after a parameter list (const, volatile, &, &&, noexcept)? */
static bool sn_qualifiers(const char *s, size_t from, size_t to)
{
	static const char *const words[] = { "const", "volatile", "noexcept", "&&", "&" };
	size_t i = from, k;

	while (i < to) {
		if (s[i] == ' ') {
			i++;
			continue;
		}
		for (k = 0; k < sizeof(words) / sizeof(words[0]); k++) {
			size_t len = strlen(words[k]);

			if (i + len <= to && strncmp(s + i, words[k], len) == 0 &&
			    (i + len == to || !sn_ident(s[i + len]) || !sn_ident(s[i]))) {
				i += len;
				break;
			}
		}
		if (k == sizeof(words) / sizeof(words[0]))
			return false;
	}
	return true;
}

/*
 * Append @s[@from..@to) to @out without its template argument lists
 * (brackets matched in @match: the offset of each opener's closer); with
 * @outer, the outermost lists stay, without the lists inside them.
 */
static char *sn_copy(char *out, const char *s, size_t from, size_t to, const bool *op,
		     const size_t *match, bool outer)
{
	size_t i = from;

	while (i < to) {
		if (s[i] == '<' && !op[i]) {
			if (outer) {
				*out++ = '<';
				out = sn_copy(out, s, i + 1, match[i], op, match, false);
				if (out[-1] == ' ')
					out--;	/* "> >" lost its inner list */
				*out++ = '>';
			}
			i = match[i] + 1;
			continue;
		}
		*out++ = s[i++];
	}
	return out;
}

/* Drop the spaces of a name left before "::" and at its end (operator< <T> lost its <T>). */
static void sn_tidy(char *s)
{
	char *r = s, *w = s;

	for (; *r; r++) {
		if (*r == ' ' && (r[1] == '\0' || (r[1] == ':' && r[2] == ':')))
			continue;
		*w++ = *r;
	}
	*w = '\0';
}

char *cxx_short_name(const char *full, enum cxx_form form)
{
	bool params = form != CXX_SHORT, outer = form == CXX_OUTER;
	size_t n = strlen(full), cut = n, i, depth = 0;
	size_t pstart = n, pend = n, first_op, name_start = 0, last_space = n, space_before = n;
	size_t *match = NULL, *stack = NULL;
	bool *op = NULL;
	char *out = NULL, *w;

	/* gcc's clone suffixes: " [clone .constprop.0]", possibly several */
	for (;;) {
		const char *c;
		size_t at;

		if (cut < 10 || full[cut - 1] != ']')
			break;
		for (at = cut - 1; at > 0 && full[at] != '['; at--)
			;
		c = full + at;
		if (at == 0 || full[at - 1] != ' ' || strncmp(c, "[clone ", 7) != 0)
			break;
		cut = at - 1;
	}
	op = calloc(n + 1, sizeof(*op));
	match = malloc((n + 1) * sizeof(*match));
	stack = malloc((n + 1) * sizeof(*stack));
	out = malloc(n + 1);
	if (!op || !match || !stack || !out)
		goto fail;
	first_op = sn_mark_ops(full, cut, op);

	for (i = 0; i < cut; i++) {
		char c = full[i];

		if (op[i])
			continue;
		if (sn_open(c)) {
			stack[depth++] = i;
			continue;
		}
		if (c == ')' || c == ']' || c == '}' || c == '>') {
			size_t o;

			if (!depth || sn_closer(full[stack[depth - 1]]) != c)
				goto whole;	/* not a name we can follow */
			o = stack[--depth];
			match[o] = i;
			if (!depth && c == ')') {
				/* no top-level space between o and i */
				pstart = o;
				pend = i;
				space_before = last_space;
			}
			continue;
		}
		if (c == ' ' && !depth && i < first_op)
			last_space = i;
	}
	if (depth)
		goto whole;
	/* a parameter list is followed by qualifiers only */
	if (pstart < cut && !sn_qualifiers(full, pend + 1, cut))
		pstart = pend = cut;
	if (pstart >= cut) {
		pstart = pend = cut;
		space_before = last_space;
	}
	if (space_before < pstart)
		name_start = space_before + 1;

	w = sn_copy(out, full, name_start, pstart, op, match, outer);
	*w = '\0';
	sn_tidy(out);
	w = out + strlen(out);
	if (params && pstart < cut)
		w = sn_copy(w, full, pstart, cut, op, match, outer);
	/* the clone suffix, as it was */
	memcpy(w, full + cut, n - cut);
	w[n - cut] = '\0';
	if (!out[0])
		goto whole;
	free(op);
	free(match);
	free(stack);
	return out;
whole:
	free(out);
	out = strdup(full);
fail:
	free(op);
	free(match);
	free(stack);
	return out;
}
