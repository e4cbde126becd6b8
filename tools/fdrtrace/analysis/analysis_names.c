/* SPDX-License-Identifier: MIT */
/*
 * analysis_names.c - the analysis' functions and their names: the table of
 * functions by id, the modules they are in, and the name each one is
 * printed with (see an_func_name()).
 *
 * Contract: single-threaded tool code. Allocates per function and per name;
 * never per record.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_names.h"
#include "demangle.h"
#include "printable.h"
#include "shortname.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* Functions by id                                                     */
/* ------------------------------------------------------------------ */

static int an_fn_hash_grow(struct analysis *a)
{
	uint32_t cap = a->fn_hash_cap ? a->fn_hash_cap * 2 : 256, i;
	struct an_func **h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (i = 0; i < a->n_fns; i++) {
		uint32_t j = an_hash32(a->fns[i]->id) & (cap - 1);

		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = a->fns[i];
	}
	free(a->fn_hash);
	a->fn_hash = h;
	a->fn_hash_cap = cap;
	return 0;
}

struct an_func *an_func_get_slow(struct analysis *a, uint32_t id)
{
	struct an_func *f;
	uint32_t j;

	if (a->fn_hash_cap) {
		j = an_hash32(id) & (a->fn_hash_cap - 1);
		while ((f = a->fn_hash[j])) {
			if (f->id == id)
				return f;
			j = (j + 1) & (a->fn_hash_cap - 1);
		}
	}
	if ((a->n_fns + 1) * 2 > a->fn_hash_cap && an_fn_hash_grow(a))
		return NULL;
	if (a->n_fns == a->fns_cap) {
		uint32_t cap = a->fns_cap ? a->fns_cap * 2 : 64;
		struct an_func **n = realloc(a->fns, cap * sizeof(*n));

		if (!n)
			return NULL;
		a->fns = n;
		a->fns_cap = cap;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	if (id < AN_FN_DIRECT)
		a->fn_direct[id] = f;
	f->id = id;
	f->module_id = 0xffffffffu;
	a->fns[a->n_fns++] = f;
	j = an_hash32(id) & (a->fn_hash_cap - 1);
	while (a->fn_hash[j])
		j = (j + 1) & (a->fn_hash_cap - 1);
	a->fn_hash[j] = f;
	return f;
}

/* Names go into CSV, JSON, YAML and DOT: printable, valid UTF-8. */
char *an_strdup_str(struct fdrtrace_str s)
{
	return printable_dup(s.ptr, s.len);
}

/* ------------------------------------------------------------------ */
/* Modules and names                                                   */
/* ------------------------------------------------------------------ */

static struct an_module *an_module_find(struct analysis *a, uint32_t id)
{
	uint32_t i;

	for (i = a->n_mods; i > 0; i--)	/* the latest mapping of an id wins */
		if (a->mods[i - 1].id == id)
			return &a->mods[i - 1];
	return NULL;
}

const char *an_func_module(struct analysis *a, const struct an_func *f)
{
	const struct an_module *m = f->module_id != 0xffffffffu ? an_module_find(a, f->module_id) : NULL;
	const char *slash;

	if (!m || !m->path || !m->path[0])
		return NULL;
	slash = strrchr(m->path, '/');
	return slash && slash[1] ? slash + 1 : m->path;
}

/* Up to 20 bytes of a build-id in hex, "..." after: the message stays short. */
static void an_hex_id(char *out, const uint8_t *id, size_t len)
{
	size_t i, n = len < 20 ? len : 20;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	strcpy(out + 2 * n, len > n ? "..." : "");
}

/*
 * A module's file is another build than the one traced (rebuilt since): its
 * names and source lines would be another program's, so they are not used.
 * Said once per file on stderr, as names and file:line then go missing.
 */
static void an_build_id_mismatch(struct analysis *a, struct an_module *m)
{
	char traced[64], now[64];
	const uint8_t *id;
	size_t len = sym_file_build_id(m->file, &id);

	if (a->quiet || !sym_file_first_mismatch(m->file))
		return;
	an_hex_id(traced, m->build_id, m->build_id_len);
	an_hex_id(now, id, len);
	tool_err("%s: %s has build-id %s, the trace recorded %s (rebuilt since?): its names "
		 "and source lines are not used", a->path, m->path, len ? now : "(none)", traced);
}

/*
 * The ELF file of a module record, opened on first use through the shared
 * symbolizer (so 200 records of one library open it once); NULL when it
 * cannot be used: no file, not a regular ELF file, or another build than
 * the one the trace recorded.
 */
static struct sym_file *an_module_file(struct analysis *a, struct an_module *m)
{
	if (!m->loaded) {
		m->loaded = -1;
		if (a->sym && m->path && m->path[0] && !sym_file_get(a->sym, m->path, &m->file)) {
			if (sym_file_build_id_is(m->file, m->build_id, m->build_id_len))
				m->loaded = 1;
			else
				an_build_id_mismatch(a, m);
		}
	}
	return m->loaded > 0 ? m->file : NULL;
}

/*
 * Where a function's code is: its ELF file and link-time address (the
 * instrumentation map's binary, else the recorded module's file).
 * Return: the file, or NULL when unknown.
 */
static struct sym_file *an_func_origin(struct analysis *a, const struct an_func *f,
				       uint64_t *addr)
{
	struct an_module *m;
	struct sym_file *file;

	if (a->xmap.n) {
		const struct xmap_fn *x = xmap_find(&a->xmap, f->id);

		if (x && a->xmap.bin && x->addr) {
			*addr = x->addr;
			return a->xmap.bin;
		}
		return NULL;
	}
	if (a->no_elf || !f->address || f->module_id == 0xffffffffu)
		return NULL;
	m = an_module_find(a, f->module_id);
	if (!m || f->address < m->load_base || !(file = an_module_file(a, m)))
		return NULL;
	*addr = sym_file_is_dyn(file) ? f->address - m->load_base : f->address;
	return file;
}

/*
 * The symbol name of a function as in its file or record (mangled), or
 * NULL: the map's, the recorded one, the ELF symbol.
 */
static const char *an_func_raw(struct analysis *a, const struct an_func *f)
{
	struct sym_file *file;
	uint64_t addr;

	if (a->xmap.n) {
		const struct xmap_fn *x = xmap_find(&a->xmap, f->id);

		if (x && x->name)
			return x->name;
	} else if (f->name && f->name[0]) {
		return f->name;
	}
	file = an_func_origin(a, f, &addr);
	return file ? sym_name(file, addr) : NULL;
}

static uint64_t an_str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* A deleted slot of the name hash: lookups go on past it. */
#define AN_NAME_GONE ((struct an_func *)1)

static int an_name_hash_grow(struct analysis *a)
{
	uint32_t cap = a->name_hash_cap ? a->name_hash_cap * 2 : 256, i;
	struct an_func **h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (i = 0; i < a->name_hash_cap; i++) {
		struct an_func *f = a->name_hash[i];
		uint32_t j;

		if (!f || f == AN_NAME_GONE)
			continue;
		j = (uint32_t)an_str_hash(f->base) & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = f;
	}
	free(a->name_hash);
	a->name_hash = h;
	a->name_hash_cap = cap;
	return 0;
}

/* The slot of the name hash whose functions are named @base, or the empty one it would take. */
static uint32_t an_name_slot(const struct analysis *a, const char *base)
{
	uint32_t j = (uint32_t)an_str_hash(base) & (a->name_hash_cap - 1);
	struct an_func *g;

	while ((g = a->name_hash[j]) && (g == AN_NAME_GONE || strcmp(g->base, base) != 0))
		j = (j + 1) & (a->name_hash_cap - 1);
	return j;
}

/*
 * Enter @f (its base just made) in the name hash; mark it and its namesakes.
 * One slot per name, its functions chained: a name shared by 80,000
 * functions took a walk past all of them per function (15 s).
 */
static void an_name_enter(struct analysis *a, struct an_func *f)
{
	struct an_func *g;
	uint32_t j;

	if ((a->n_named + 1) * 2 > a->name_hash_cap && an_name_hash_grow(a))
		return;
	j = an_name_slot(a, f->base);
	g = a->name_hash[j];
	if (g) {
		/* the older ones were marked when the second came */
		g->collides = f->collides = true;
		f->same_next = g;
		g->same_prev = f;
	} else {
		a->n_named++;
	}
	a->name_hash[j] = f;
}

/* Take @f out of the name hash (its name is about to change). */
static void an_name_leave(struct analysis *a, struct an_func *f)
{
	uint32_t j;

	if (!f->base || !a->name_hash_cap)
		return;
	if (f->same_prev) {
		f->same_prev->same_next = f->same_next;
	} else {
		j = an_name_slot(a, f->base);
		if (a->name_hash[j] == f)
			a->name_hash[j] = f->same_next ? f->same_next : AN_NAME_GONE;
	}
	if (f->same_next)
		f->same_next->same_prev = f->same_prev;
	f->same_next = f->same_prev = NULL;
}

/* The printable name without location, made once. */
static const char *an_func_base(struct analysis *a, struct an_func *f)
{
	const char *raw;
	char buf[64];

	if (f->base)
		return f->base;
	raw = an_func_raw(a, f);
	if (raw && raw[0]) {
		char *d = a->demangle ? demangle_cxx(raw) : NULL;

		if (d && !a->full_names) {
			/* the short form names it; the whole one tells namesakes apart */
			f->full = printable_valid(d) ? d : printable_dup(d, strlen(d));
			if (f->full != d)
				free(d);
			f->base = f->full ? cxx_short_name(f->full, CXX_SHORT) : NULL;
			if (f->base && strcmp(f->base, f->full) == 0) {
				free(f->full);
				f->full = NULL;
			}
		} else if (d && printable_valid(d)) {
			f->base = d;
		} else if (d) {
			/* The demangler may cut a multibyte character of a name. */
			f->base = printable_dup(d, strlen(d));
			free(d);
		} else {
			f->base = an_strdup_str((struct fdrtrace_str){ raw,
								       (uint16_t)strnlen(raw, 4096) });
		}
	} else {
		const struct xmap_fn *x = a->xmap.n ? xmap_find(&a->xmap, f->id) : NULL;
		uint64_t addr = x ? x->addr : f->address;

		if (addr)
			snprintf(buf, sizeof(buf), "#%" PRIu32 "@0x%" PRIx64, f->id, addr);
		else
			snprintf(buf, sizeof(buf), "#%" PRIu32, f->id);
		f->base = strdup(buf);
	}
	if (!f->base)
		return "#?";
	f->base_len = (uint32_t)strlen(f->base);
	an_name_enter(a, f);
	return f->base;
}

static const char *an_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/*
 * Does a namesake of @f in the trace come from the same file and line:
 * copies of one inline function (gcc gives each translation unit's its
 * own id), or a C++ constructor's or destructor's variants (D0 and D2
 * demangle alike)? Then the place alone does not tell them apart. Past
 * AN_PLACE_WALK namesakes, assumed so.
 */
#define AN_PLACE_WALK 64

static bool an_same_place(struct analysis *a, const struct an_func *f, const char *src,
			  unsigned line)
{
	unsigned walked = 0;

	for (int next = 0; next < 2; next++)
		for (const struct an_func *g = next ? f->same_next : f->same_prev; g;
		     g = next ? g->same_next : g->same_prev) {
			const char *gs;
			struct sym_file *gf;
			uint64_t ga = 0;
			unsigned gl;

			if (++walked > AN_PLACE_WALK)
				return true;
			gf = an_func_origin(a, g, &ga);
			if (gf && !sym_location(gf, ga, &gs, &gl) && gl == line && !strcmp(gs, src))
				return true;
		}
	return false;
}

/*
 * Is @name, @form (shortname.h) of @f's whole name, @f's alone among its
 * namesakes (the first AN_PLACE_WALK each way; past them, assumed not)?
 * @form -1: the whole name.
 */
static bool an_form_unique(const struct an_func *f, const char *name, int form)
{
	unsigned walked = 0;

	for (int next = 0; next < 2; next++)
		for (const struct an_func *g = next ? f->same_next : f->same_prev; g;
		     g = next ? g->same_next : g->same_prev) {
			const char *gw = g->full ? g->full : g->base;
			char *gn;
			bool same;

			if (++walked > AN_PLACE_WALK)
				return false;
			gn = form >= 0 ? cxx_short_name(gw, (enum cxx_form)form) : NULL;
			same = strcmp(gn ? gn : gw, name) == 0;
			free(gn);
			if (same)
				return false;
		}
	return true;
}

/*
 * The name of a C++ function whose short form a namesake shares: the
 * first of its longer forms no namesake has (with its parameter list:
 * overloads; with the outermost template arguments: instances of a
 * template), else whole. Return: a new string, or NULL (out of memory:
 * the short form stays). *@unique: no namesake has it.
 */
static char *an_func_longer(const struct an_func *f, bool *unique)
{
	static const enum cxx_form forms[] = { CXX_PARAMS, CXX_OUTER };

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char *p = cxx_short_name(f->full, forms[i]);

		if (p && an_form_unique(f, p, (int)forms[i])) {
			*unique = true;
			return p;
		}
		free(p);
	}
	*unique = an_form_unique(f, f->full, -1);
	return strdup(f->full);
}

const char *an_func_name(struct analysis *a, struct an_func *f)
{
	struct sym_file *file;
	const char *base, *raw, *src;
	char *longer = NULL;
	uint64_t addr = 0;
	unsigned line;
	bool collide;
	char *d;
	int n;

	if (f->display)
		return f->display;
	base = an_func_base(a, f);
	if (!f->base)
		return base;
	file = an_func_origin(a, f, &addr);
	collide = f->collides;
	if (collide && f->full) {
		bool unique = false;

		if ((longer = an_func_longer(f, &unique))) {
			base = longer;
			collide = !unique;
		}
	}
	if (!collide && file && (raw = an_func_raw(a, f)))
		collide = sym_name_count(file, raw) > 1;
	if (!collide && !a->locations) {
		f->display = longer ? longer : f->base;
		return f->display;
	}
	if (file && !sym_location(file, addr, &src, &line)) {
		char *place = NULL;

		/* @src may live only until the next look-up: keep it */
		if (collide && (place = strdup(src)) && an_same_place(a, f, place, line))
			n = asprintf(&d, "%s (%s:%u, %s+0x%" PRIx64 ")", base, an_basename(place),
				     line, an_basename(sym_file_path(file)), addr);
		else
			n = asprintf(&d, "%s (%s:%u)", base, an_basename(place ? place : src), line);
		free(place);
	} else if (!collide)
		n = asprintf(&d, "%s", base);	/* --locations, and nothing is known */
	else if (file)
		n = asprintf(&d, "%s (%s+0x%" PRIx64 ")", base, an_basename(sym_file_path(file)),
			     addr);
	else
		n = asprintf(&d, "%s (#%" PRIu32 ")", base, f->id);
	free(longer);
	if (n < 0) {
		f->display = f->base;
	} else if (!printable_valid(d)) {
		/* a DWARF file name is any bytes, as symbol names are */
		f->display = printable_dup(d, strlen(d));
		free(d);
		if (!f->display)
			f->display = f->base;
	} else {
		f->display = d;
	}
	return f->display;
}

/* Every function's base name, before the commands that print after the run. */
void an_names_settle(struct analysis *a)
{
	uint32_t i;

	for (i = 0; i < a->n_fns; i++)
		an_func_base(a, a->fns[i]);
}

/* Forget a function's name (a record named it after it was first named). */
void an_func_rename(struct analysis *a, struct an_func *f)
{
	an_name_leave(a, f);
	if (f->display != f->base)
		free(f->display);
	free(f->base);
	free(f->full);
	f->display = f->base = f->full = NULL;
	f->base_len = 0;
	f->collides = false;
	f->name_gen++;
}
