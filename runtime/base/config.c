// SPDX-License-Identifier: MIT
/*
 * runtime/base/config.c - FDRTRACE_MODE and FDRTRACE_OPTIONS, parsed.
 *
 * Contract: called from the runtime's initialisation, once, on one thread,
 * possibly from inside the program's first malloc(). So: no allocation, no
 * stdio, diagnostics with write(2) only, never abort. Every option comes
 * from config.def; this file only knows the four row kinds.
 *
 * Syntax of FDRTRACE_OPTIONS: key=value settings separated by spaces, tabs,
 * newlines, ':' or ','. A value may be "double quoted" (then \" and \\ are
 * escapes and separators are kept). Numbers are plain decimal; size options
 * take a K, M or G suffix, alone or with B or iB after it (powers of 1024
 * in every spelling). An unknown option name is reported with the nearest
 * known one. A bad setting is reported on one
 * line naming the option and the (sanitized, quoted) value, and the option
 * keeps the value it had. A later setting of the same key wins.
 *
 * When FDRTRACE_MODE does not turn recording on, FDRTRACE_OPTIONS is not
 * read at all: a preloaded but idle runtime says nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "compiler.h"
#include "config.h"

/* ------------------------------------------------------------------ */
/* The table                                                           */
/* ------------------------------------------------------------------ */

enum cfg_kind {
	CFG_U64,
	CFG_STR,
	CFG_ENUM,
};

/**
 * struct cfg_opt - one row of config.def, with accessors for its member
 * @set: store a number (CFG_U64, CFG_ENUM)
 * @get: read the number back
 * @str: the member's storage (CFG_STR), @str_cap its size
 */
struct cfg_opt {
	const char *name;
	enum cfg_kind kind;
	uint64_t def;
	const char *def_str;
	uint64_t min;
	uint64_t max;
	uint64_t multiple;
	bool suffixes;
	void (*set)(struct fdr_config *cfg, uint64_t v);
	uint64_t (*get)(const struct fdr_config *cfg);
	char *(*str)(struct fdr_config *cfg);
	size_t str_cap;
};

struct cfg_enum_val {
	const char *option;
	const char *text;
	uint64_t value;
};

/* Accessors, one pair per row, so each member keeps its own C type. */
#define FDR_OPT_U64(name, def, min, max, multiple, suffixes, doc)			\
	_Static_assert((uint64_t)(def) >= (uint64_t)(min) &&				\
		       (uint64_t)(def) <= (uint64_t)(max) &&				\
		       (uint64_t)(def) % (uint64_t)(multiple) == 0,			\
		       "default of " #name " breaks its own rules");			\
	static notrace void cfg_set_##name(struct fdr_config *c, uint64_t v)		\
	{										\
		c->name = v;								\
	}										\
	static notrace uint64_t cfg_get_##name(const struct fdr_config *c)		\
	{										\
		return c->name;								\
	}
#define FDR_OPT_ENUM(name, def, doc)							\
	static notrace void cfg_set_##name(struct fdr_config *c, uint64_t v)		\
	{										\
		c->name = (__typeof__(c->name))v;					\
	}										\
	static notrace uint64_t cfg_get_##name(const struct fdr_config *c)		\
	{										\
		return (uint64_t)c->name;						\
	}
#define FDR_OPT_STR(name, def, doc)							\
	_Static_assert(sizeof(def) <= sizeof(((struct fdr_config *)0)->name),		\
		       "default of " #name " is too long");				\
	static notrace char *cfg_str_##name(struct fdr_config *c)			\
	{										\
		return c->name;								\
	}
#include "config.def"

static const struct cfg_opt cfg_opts[] = {
#define FDR_OPT_U64(n_, def_, min_, max_, mult_, sfx_, doc_)				\
	{ .name = #n_, .kind = CFG_U64, .def = (def_), .min = (min_), .max = (max_),	\
	  .multiple = (mult_), .suffixes = (sfx_), .set = cfg_set_##n_,			\
	  .get = cfg_get_##n_ },
#define FDR_OPT_ENUM(n_, def_, doc_)							\
	{ .name = #n_, .kind = CFG_ENUM, .def_str = (def_), .set = cfg_set_##n_,	\
	  .get = cfg_get_##n_ },
#define FDR_OPT_STR(n_, def_, doc_)							\
	{ .name = #n_, .kind = CFG_STR, .def_str = (def_), .str = cfg_str_##n_,	\
	  .str_cap = sizeof(((struct fdr_config *)0)->n_) },
#include "config.def"
};

static const struct cfg_enum_val cfg_enum_vals[] = {
#define FDR_ENUM_VAL(option, text, value) { #option, text, (uint64_t)(value) },
#include "config.def"
};

/* ------------------------------------------------------------------ */
/* Diagnostics: one line, built in place, written with write(2)        */
/* ------------------------------------------------------------------ */

#define CFG_MSG_MAX 512
#define CFG_QUOTE_MAX 64	/* bytes of a user's value we repeat back */

struct cfg_msg {
	char buf[CFG_MSG_MAX];
	size_t len;
};

static notrace void cfg_msg_mem(struct cfg_msg *m, const char *s, size_t n)
{
	/* Keep one byte for the newline. */
	if (n > sizeof(m->buf) - 1 - m->len)
		n = sizeof(m->buf) - 1 - m->len;
	memcpy(m->buf + m->len, s, n);
	m->len += n;
}

static notrace void cfg_msg_str(struct cfg_msg *m, const char *s)
{
	cfg_msg_mem(m, s, strlen(s));
}

notrace void fdr_u64_text(char out[21], uint64_t v)
{
	char tmp[21];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = '\0';
}

static notrace void cfg_msg_u64(struct cfg_msg *m, uint64_t v)
{
	char t[21];

	fdr_u64_text(t, v);
	cfg_msg_str(m, t);
}

/*
 * The user's text between single quotes: printable ASCII as is, a quote or
 * backslash escaped, anything else as \xNN; cut after CFG_QUOTE_MAX input
 * bytes with "...".
 */
static notrace void cfg_msg_quoted(struct cfg_msg *m, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, lim = n > CFG_QUOTE_MAX ? CFG_QUOTE_MAX : n;

	cfg_msg_mem(m, "'", 1);
	for (i = 0; i < lim; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\'' || c == '\\') {
			char e[2] = { '\\', (char)c };

			cfg_msg_mem(m, e, 2);
		} else if (c >= 0x20 && c < 0x7f) {
			cfg_msg_mem(m, (const char *)&s[i], 1);
		} else {
			char e[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };

			cfg_msg_mem(m, e, 4);
		}
	}
	cfg_msg_mem(m, "'", 1);
	if (lim < n)
		cfg_msg_str(m, "...");
}

static notrace void cfg_msg_flush(struct cfg_msg *m, int fd)
{
	size_t off = 0;

	m->buf[m->len++] = '\n';
	if (fd < 0)
		return;
	while (off < m->len) {
		ssize_t r = write(fd, m->buf + off, m->len - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		off += (size_t)r;
	}
}

static notrace void cfg_msg_begin(struct cfg_msg *m)
{
	m->len = 0;
	cfg_msg_str(m, "fdrtrace: FDRTRACE_OPTIONS: ");
}

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

static notrace const struct cfg_enum_val *cfg_enum_by_text(const char *option, const char *s,
							   size_t n)
{
	size_t i;

	for (i = 0; i < FDR_ARRAY_SIZE(cfg_enum_vals); i++) {
		const struct cfg_enum_val *e = &cfg_enum_vals[i];

		if (strcmp(e->option, option) == 0 && strlen(e->text) == n &&
		    memcmp(e->text, s, n) == 0)
			return e;
	}
	return NULL;
}

static notrace const char *cfg_enum_text(const char *option, uint64_t value)
{
	size_t i;

	for (i = 0; i < FDR_ARRAY_SIZE(cfg_enum_vals); i++)
		if (strcmp(cfg_enum_vals[i].option, option) == 0 &&
		    cfg_enum_vals[i].value == value)
			return cfg_enum_vals[i].text;
	return NULL;
}

/*
 * Decimal digits, then (when @suffixes) a unit: K, M or G in either case,
 * alone or followed by B or iB (1M, 1MB and 1MiB are all 2^20: sizes are
 * powers of 1024 whatever the spelling), or a lone B (bytes). No sign, no
 * spaces, nothing after.
 * Return: 0, -EINVAL for anything else, -ERANGE when it does not fit 64 bits.
 */
static notrace int cfg_parse_u64(const char *s, size_t n, bool suffixes, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	size_t i = 0;
	bool range = false;

	if (n == 0 || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			range = true;	/* keep scanning: junk is reported first */
		else
			v = v * 10 + d;
	}
	if (i < n) {
		const char *u = s + i;
		size_t ul = n - i;

		if (!suffixes)
			return -EINVAL;
		switch (u[0]) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		case 'b': case 'B': shift = 0; break;
		default: return -EINVAL;
		}
		if (shift == 0) {
			if (ul != 1)
				return -EINVAL;
		} else if (!(ul == 1 || (ul == 2 && (u[1] == 'B' || u[1] == 'b')) ||
			     (ul == 3 && (u[1] == 'i' || u[1] == 'I') &&
			      (u[2] == 'B' || u[2] == 'b')))) {
			return -EINVAL;
		}
	}
	if (range || (shift && v > (UINT64_MAX >> shift)))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

/* Edit distance between @a (@an bytes) and @b, or a large number past 31 bytes. */
static notrace unsigned cfg_distance(const char *a, size_t an, const char *b)
{
	unsigned row[33];
	size_t bn = strlen(b);

	if (an > 31 || bn > 31)
		return UINT32_MAX;
	for (size_t j = 0; j <= bn; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= an; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= bn; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[bn];
}

/*
 * The known option nearest to the unknown @key: at most a third of its
 * length away (at least 2 edits allowed), or, for a key of 5 bytes or
 * more, one that shares its first 5 bytes or contains it ("verbose":
 * verbosity, "depth": max_depth). Return: its name, or NULL when none is
 * close.
 */
static notrace const char *cfg_nearest(const char *key, size_t klen)
{
	const char *best = NULL;
	unsigned best_d = UINT32_MAX;
	unsigned limit = klen / 3 > 2 ? (unsigned)(klen / 3) : 2;

	if (!klen)
		return NULL;
	for (size_t i = 0; i < FDR_ARRAY_SIZE(cfg_opts); i++) {
		const char *name = cfg_opts[i].name;
		size_t nl = strlen(name);
		unsigned d = cfg_distance(key, klen, name);

		if (klen >= 5 && nl >= 5 &&
		    (strncmp(name, key, 5) == 0 || memmem(name, nl, key, klen)))
			d = d < limit ? d : limit;
		if (d <= limit && d < best_d) {
			best = name;
			best_d = d;
		}
	}
	return best;
}

static notrace void cfg_msg_current(struct cfg_msg *m, const struct cfg_opt *o,
				    struct fdr_config *cfg)
{
	const char *t;

	cfg_msg_str(m, "; using ");
	switch (o->kind) {
	case CFG_U64:
		cfg_msg_u64(m, o->get(cfg));
		break;
	case CFG_ENUM:
		t = cfg_enum_text(o->name, o->get(cfg));
		if (t)
			cfg_msg_str(m, t);
		else
			cfg_msg_u64(m, o->get(cfg));
		break;
	case CFG_STR:
		t = o->str(cfg);
		cfg_msg_quoted(m, t, strlen(t));
		break;
	}
}

/* Return: 0 when @val was taken, 1 when it was bad (and reported). */
_Static_assert(FDR_ARRAY_SIZE(cfg_opts) <= 64, "set_mask has a bit per option");

/* @o was given a valid value: fdr_config_was_set() says so from now on. */
static notrace void cfg_mark_set(struct fdr_config *cfg, const struct cfg_opt *o)
{
	cfg->set_mask |= 1ull << (o - cfg_opts);
}

notrace bool fdr_config_was_set(const struct fdr_config *cfg, const char *name)
{
	for (size_t i = 0; i < FDR_ARRAY_SIZE(cfg_opts); i++)
		if (!strcmp(cfg_opts[i].name, name))
			return cfg->set_mask & (1ull << i);
	return false;
}

static notrace int cfg_apply(struct fdr_config *cfg, const struct cfg_opt *o, const char *val,
			     size_t n, int errfd)
{
	struct cfg_msg m;
	const struct cfg_enum_val *e;
	uint64_t v = 0;
	size_t i;
	int r;

	cfg_msg_begin(&m);
	cfg_msg_str(&m, o->name);
	cfg_msg_str(&m, "=");
	cfg_msg_quoted(&m, val, n);
	switch (o->kind) {
	case CFG_U64:
		r = cfg_parse_u64(val, n, o->suffixes, &v);
		if (r == -EINVAL) {
			cfg_msg_str(&m, o->suffixes ? " is not a size" : " is not a number");
			break;
		}
		if (r == -ERANGE || v < o->min || v > o->max) {
			cfg_msg_str(&m, " is out of range ");
			cfg_msg_u64(&m, o->min);
			cfg_msg_str(&m, "..");
			cfg_msg_u64(&m, o->max);
			break;
		}
		if (v % o->multiple) {
			cfg_msg_str(&m, " is not a multiple of ");
			cfg_msg_u64(&m, o->multiple);
			break;
		}
		o->set(cfg, v);
		cfg_mark_set(cfg, o);
		return 0;
	case CFG_ENUM:
		e = cfg_enum_by_text(o->name, val, n);
		if (e) {
			o->set(cfg, e->value);
			cfg_mark_set(cfg, o);
			return 0;
		}
		cfg_msg_str(&m, " is not one of ");
		for (i = 0, r = 0; i < FDR_ARRAY_SIZE(cfg_enum_vals); i++) {
			if (strcmp(cfg_enum_vals[i].option, o->name))
				continue;
			if (r++)
				cfg_msg_str(&m, ", ");
			cfg_msg_str(&m, cfg_enum_vals[i].text);
		}
		break;
	case CFG_STR:
		if (n >= o->str_cap) {
			cfg_msg_str(&m, " is too long (at most ");
			cfg_msg_u64(&m, o->str_cap - 1);
			cfg_msg_str(&m, " bytes)");
			break;
		}
		memcpy(o->str(cfg), val, n);
		o->str(cfg)[n] = '\0';
		cfg_mark_set(cfg, o);
		return 0;
	}
	cfg_msg_current(&m, o, cfg);
	cfg_msg_flush(&m, errfd);
	return 1;
}

static notrace void cfg_defaults(struct fdr_config *cfg)
{
	size_t i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < FDR_ARRAY_SIZE(cfg_opts); i++) {
		const struct cfg_opt *o = &cfg_opts[i];
		const struct cfg_enum_val *e;

		switch (o->kind) {
		case CFG_U64:
			o->set(cfg, o->def);
			break;
		case CFG_ENUM:
			e = cfg_enum_by_text(o->name, o->def_str, strlen(o->def_str));
			if (e)
				o->set(cfg, e->value);
			break;
		case CFG_STR:
			/* The _Static_assert above guarantees the fit. */
			memcpy(o->str(cfg), o->def_str, strlen(o->def_str) + 1);
			break;
		}
	}
}

/* ------------------------------------------------------------------ */
/* The option string                                                   */
/* ------------------------------------------------------------------ */

static notrace bool cfg_is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
	       c == ':' || c == ',';
}

static notrace int cfg_bad_token(const char *what, const char *s, size_t n, const char *tail,
				 int errfd)
{
	struct cfg_msg m;

	cfg_msg_begin(&m);
	cfg_msg_str(&m, what);
	cfg_msg_quoted(&m, s, n);
	cfg_msg_str(&m, tail);
	cfg_msg_flush(&m, errfd);
	return 1;
}

static notrace int cfg_parse_options(struct fdr_config *cfg, const char *p, int errfd)
{
	/* The unescaped text of a quoted value (at most one option's worth). */
	char qbuf[sizeof(cfg->logfile_base) + 1];
	int bad = 0;

	for (;;) {
		const char *key, *val;
		const struct cfg_opt *o = NULL;
		size_t klen, vlen, i;

		while (*p && cfg_is_sep(*p))
			p++;
		if (!*p)
			break;
		key = p;
		while (*p && *p != '=' && !cfg_is_sep(*p))
			p++;
		klen = (size_t)(p - key);
		if (*p != '=') {
			bad += cfg_bad_token("", key, klen, " is not key=value; ignored", errfd);
			continue;
		}
		p++;	/* '=' */
		if (*p == '"') {
			bool cut = false, closed = false;
			const char *start = p;

			vlen = 0;
			for (p++; *p; p++) {
				char c = *p;

				if (c == '"') {
					closed = true;
					p++;
					break;
				}
				if (c == '\\' && (p[1] == '"' || p[1] == '\\'))
					c = *++p;
				if (vlen < sizeof(qbuf) - 1)
					qbuf[vlen++] = c;
				else
					cut = true;
			}
			if (!closed) {
				struct cfg_msg m;

				cfg_msg_begin(&m);
				cfg_msg_mem(&m, key, klen);
				cfg_msg_str(&m, "=");
				cfg_msg_quoted(&m, start, (size_t)(p - start));
				cfg_msg_str(&m, " has no closing '\"'; ignored");
				cfg_msg_flush(&m, errfd);
				bad++;
				break;
			}
			if (*p && !cfg_is_sep(*p)) {
				const char *junk = p;

				while (*p && !cfg_is_sep(*p))
					p++;
				bad += cfg_bad_token("text after a closing quote: ", junk,
						     (size_t)(p - junk), "; setting ignored",
						     errfd);
				continue;
			}
			val = qbuf;
			if (cut)
				vlen = sizeof(qbuf);	/* longer than any option takes */
		} else {
			val = p;
			while (*p && !cfg_is_sep(*p))
				p++;
			vlen = (size_t)(p - val);
		}
		for (i = 0; i < FDR_ARRAY_SIZE(cfg_opts); i++) {
			if (strlen(cfg_opts[i].name) == klen &&
			    memcmp(cfg_opts[i].name, key, klen) == 0) {
				o = &cfg_opts[i];
				break;
			}
		}
		if (!o) {
			const char *near = cfg_nearest(key, klen);
			struct cfg_msg m;

			cfg_msg_begin(&m);
			cfg_msg_str(&m, "unknown option ");
			cfg_msg_quoted(&m, key, klen);
			if (near) {
				cfg_msg_str(&m, " (did you mean ");
				cfg_msg_str(&m, near);
				cfg_msg_str(&m, "?)");
			}
			cfg_msg_str(&m, "; ignored");
			cfg_msg_flush(&m, errfd);
			bad++;
			continue;
		}
		bad += cfg_apply(cfg, o, val, vlen, errfd);
	}
	return bad;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */
/* ------------------------------------------------------------------ */

notrace int fdr_config_parse(struct fdr_config *cfg, const char *mode, const char *options,
			     int errfd)
{
	cfg_defaults(cfg);
	if (!mode || !*mode || strcmp(mode, "off") == 0)
		return 0;
	if (strcmp(mode, "fdr") != 0) {
		struct cfg_msg m;

		m.len = 0;
		cfg_msg_str(&m, "fdrtrace: FDRTRACE_MODE=");
		cfg_msg_quoted(&m, mode, strlen(mode));
		cfg_msg_str(&m, " is not 'fdr' or 'off'; recording is off");
		cfg_msg_flush(&m, errfd);
		return 1;
	}
	cfg->enabled = true;
	if (!options)
		return 0;
	return cfg_parse_options(cfg, options, errfd);
}

notrace int fdr_config_load(struct fdr_config *cfg)
{
	/*
	 * A setuid/setgid program: secure_getenv() would return NULL anyway;
	 * checking AT_SECURE first keeps it quiet and explicit.
	 */
	if (getauxval(AT_SECURE)) {
		cfg_defaults(cfg);
		return 0;
	}
	return fdr_config_parse(cfg, secure_getenv("FDRTRACE_MODE"),
				secure_getenv("FDRTRACE_OPTIONS"), STDERR_FILENO);
}

notrace void fdr_config_foreach(const struct fdr_config *cfg,
				void (*fn)(const char *name, const char *value, void *arg), void *arg)
{
	size_t i;

	for (i = 0; i < FDR_ARRAY_SIZE(cfg_opts); i++) {
		const struct cfg_opt *o = &cfg_opts[i];
		char num[21];
		const char *t = NULL;

		switch (o->kind) {
		case CFG_U64:
			fdr_u64_text(num, o->get(cfg));
			t = num;
			break;
		case CFG_ENUM:
			t = cfg_enum_text(o->name, o->get(cfg));
			if (!t) {
				fdr_u64_text(num, o->get(cfg));
				t = num;
			}
			break;
		case CFG_STR:
			/* The member is ours to read; str() only takes a mutable pointer. */
			t = o->str((struct fdr_config *)cfg);
			break;
		}
		fn(o->name, t, arg);
	}
}
