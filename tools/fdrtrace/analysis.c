/* SPDX-License-Identifier: MIT */
/*
 * analysis.c - the streaming analysis core (see analysis.h).
 *
 * Contract: single-threaded tool code. Allocates per function, thread,
 * stack frame, calling-context node and (only when buffers must be
 * reordered) per buffer; never per record.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "analysis.h"
#include "shortname.h"
#include "printable.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* Functions and names                                                 */
/* ------------------------------------------------------------------ */

static uint32_t an_hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

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
static char *an_strdup_str(struct fdrtrace_str s)
{
	return printable_dup(s.ptr, s.len);
}

typedef char *(*an_demangle_fn)(const char *, char *, size_t *, int *);

/* __cxa_demangle from libstdc++, looked up once; NULL when unavailable. */
static an_demangle_fn an_demangler(void)
{
	static bool tried;
	static an_demangle_fn fn;
	void *lib, *sym;

	if (tried)
		return fn;
	tried = true;
	sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!sym) {
		lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (lib)
			sym = dlsym(lib, "__cxa_demangle");
	}
	/* POSIX lets a data pointer become a function pointer for dlsym. */
	memcpy(&fn, &sym, sizeof(fn));
	return fn;
}

char *an_demangle(const char *raw)
{
	an_demangle_fn dm = raw && strncmp(raw, "_Z", 2) == 0 ? an_demangler() : NULL;
	int status = -1;
	char *d = dm ? dm(raw, NULL, NULL, &status) : NULL;

	if (d && status != 0) {
		free(d);
		d = NULL;
	}
	return d;
}

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
		an_demangle_fn dm = a->demangle && strncmp(raw, "_Z", 2) == 0 ? an_demangler() : NULL;
		int status = -1;
		char *d = dm ? dm(raw, NULL, NULL, &status) : NULL;

		if (d && status == 0 && !a->full_names) {
			/* the short form names it; the whole one tells namesakes apart */
			f->full = printable_valid(d) ? d : printable_dup(d, strlen(d));
			if (f->full != d)
				free(d);
			f->base = f->full ? cxx_short_name(f->full, CXX_SHORT) : NULL;
			if (f->base && strcmp(f->base, f->full) == 0) {
				free(f->full);
				f->full = NULL;
			}
		} else if (d && status == 0 && printable_valid(d)) {
			f->base = d;
		} else if (d && status == 0) {
			/* The demangler may cut a multibyte character of a name. */
			f->base = printable_dup(d, strlen(d));
			free(d);
		} else {
			free(d);
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
static void an_names_settle(struct analysis *a)
{
	uint32_t i;

	for (i = 0; i < a->n_fns; i++)
		an_func_base(a, a->fns[i]);
}

/* Forget a function's name (a record named it after it was first named). */
static void an_func_rename(struct analysis *a, struct an_func *f)
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

double an_seconds(const struct analysis *a, uint64_t ticks)
{
	return a->freq ? (double)ticks / (double)a->freq : (double)ticks;
}

/* ------------------------------------------------------------------ */
/* Threads                                                             */
/* ------------------------------------------------------------------ */

/* Rebuild the tid hash (open addressing, load <= 1/2) at twice the size. */
static int an_thread_hash_grow(struct analysis *a)
{
	uint32_t cap = a->thread_hash_cap ? a->thread_hash_cap * 2 : 64, i, j;
	struct an_thread **h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (i = 0; i < a->n_threads; i++) {
		j = an_hash32((uint32_t)a->threads[i]->tid) & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = a->threads[i];
	}
	free(a->thread_hash);
	a->thread_hash = h;
	a->thread_hash_cap = cap;
	return 0;
}

static struct an_thread *an_thread_get(struct analysis *a, int32_t tid)
{
	struct an_thread *t;
	uint32_t j;

	if (a->cur && a->cur->tid == tid)
		return a->cur;
	if (a->thread_hash_cap) {
		j = an_hash32((uint32_t)tid) & (a->thread_hash_cap - 1);
		while ((t = a->thread_hash[j])) {
			if (t->tid == tid)
				return t;
			j = (j + 1) & (a->thread_hash_cap - 1);
		}
	}
	if ((a->n_threads + 1) * 2 > a->thread_hash_cap && an_thread_hash_grow(a))
		return NULL;
	if (a->n_threads == a->threads_cap) {
		uint32_t cap = a->threads_cap ? a->threads_cap * 2 : 16;
		struct an_thread **n = realloc(a->threads, cap * sizeof(*n));

		if (!n)
			return NULL;
		a->threads = n;
		a->threads_cap = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->index = a->n_threads;
	a->threads[a->n_threads++] = t;
	j = an_hash32((uint32_t)tid) & (a->thread_hash_cap - 1);
	while (a->thread_hash[j])
		j = (j + 1) & (a->thread_hash_cap - 1);
	a->thread_hash[j] = t;
	if (a->want_cct && a->cct_per_thread)
		t->root = an_node_child(a, 0, NULL, t);
	return t;
}

const char *an_thread_label(const struct an_thread *t, char *buf, size_t cap)
{
	if (t->name && t->name[0])
		snprintf(buf, cap, "%s", t->name);
	else
		snprintf(buf, cap, "thread %" PRId32, t->tid);
	return buf;
}

/* ------------------------------------------------------------------ */
/* Calling-context tree                                                */
/* ------------------------------------------------------------------ */

static uint64_t an_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int an_node_hash_grow(struct analysis *a)
{
	uint32_t cap = a->node_hash_cap ? a->node_hash_cap * 2 : 1024, i;
	uint64_t *k = calloc(cap, sizeof(*k));
	uint32_t *v = calloc(cap, sizeof(*v));

	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < a->node_hash_cap; i++) {
		uint32_t j;

		if (!a->node_hash[i])
			continue;
		j = (uint32_t)an_hash64(a->node_hash[i]) & (cap - 1);
		while (k[j])
			j = (j + 1) & (cap - 1);
		k[j] = a->node_hash[i];
		v[j] = a->node_hash_val[i];
	}
	free(a->node_hash);
	free(a->node_hash_val);
	a->node_hash = k;
	a->node_hash_val = v;
	a->node_hash_cap = cap;
	return 0;
}

uint32_t an_node_child(struct analysis *a, uint32_t parent, struct an_func *fn,
			      struct an_thread *thread)
{
	/* Function ids have 28 bits: thread roots use keys above them. */
	uint64_t key = ((uint64_t)parent << 32 |
			(fn ? fn->id : (1u << FDRTRACE_FUNC_ID_BITS) + thread->index)) + 1;
	uint32_t j, n;

	if (!a->n_nodes) {
		a->nodes = calloc(256, sizeof(*a->nodes));
		if (!a->nodes)
			return 0;
		a->nodes_cap = 256;
		a->n_nodes = 1;	/* the root */
	}
	if (a->node_hash_cap) {
		j = (uint32_t)an_hash64(key) & (a->node_hash_cap - 1);
		while (a->node_hash[j]) {
			if (a->node_hash[j] == key)
				return a->node_hash_val[j];
			j = (j + 1) & (a->node_hash_cap - 1);
		}
	}
	if ((a->n_nodes + 1) * 2 > a->node_hash_cap && an_node_hash_grow(a))
		return 0;
	if (a->n_nodes == a->nodes_cap) {
		struct an_node *nn = realloc(a->nodes, 2 * a->nodes_cap * sizeof(*nn));

		if (!nn)
			return 0;
		a->nodes = nn;
		a->nodes_cap *= 2;
	}
	n = a->n_nodes++;
	memset(&a->nodes[n], 0, sizeof(a->nodes[n]));
	a->nodes[n].parent = parent;
	a->nodes[n].depth = parent ? a->nodes[parent].depth + 1 : 1;
	a->nodes[n].fn = fn;
	a->nodes[n].thread = fn ? NULL : thread;
	j = (uint32_t)an_hash64(key) & (a->node_hash_cap - 1);
	while (a->node_hash[j])
		j = (j + 1) & (a->node_hash_cap - 1);
	a->node_hash[j] = key;
	a->node_hash_val[j] = n;
	return n;
}

/* ------------------------------------------------------------------ */
/* The call-stack machine                                              */
/* ------------------------------------------------------------------ */

/*
 * An exit whose id is not the top frame's is looked for down the stack.
 * On a deep stack, exits of ids that are not on it at all (damaged or
 * made-up traces: 100,000 nested entries then as many other exits took
 * 5 s, growing with the square of the count) would each walk all of it;
 * so past AN_WALK frames a thread counts its open frames per id, and an
 * exit whose id has none is unmatched at once. An exit that is found
 * closes every frame it walked past, so those walks add up to the frames
 * pushed. The counts are kept while the stack stays deeper than
 * AN_WALK / 2.
 */
#define AN_WALK 64u

/*
 * A thread keeps at most AN_DEPTH_MAX open calls (a frame each, and each
 * command's state per open call): 9 MB of zero bytes read as 1.1 M nested
 * entries took 80-200 MB. A call past that depth is counted
 * (an_stats.too_deep, in the summary), not timed and not given to the
 * command; the next exit closes the innermost such call. Real stacks stay
 * far shallower (an 8 MiB stack holds some 100,000 of the smallest frames).
 */
#define AN_DEPTH_MAX (1u << 16)

static struct an_open *an_open_slot(struct an_thread *t, uint32_t id)
{
	uint32_t j = (id * 0x9e3779b1u) & (t->open_cap - 1);

	while (t->open[j].key && t->open[j].key != id + 1)
		j = (j + 1) & (t->open_cap - 1);
	return &t->open[j];
}

/* Count the stack's frames afresh, in a table of room for twice the depth. */
static bool an_open_build(struct an_thread *t)
{
	uint32_t cap = 64;

	while (cap < 4 * t->depth)
		cap *= 2;
	free(t->open);
	t->open = calloc(cap, sizeof(*t->open));
	if (!t->open)
		return false;
	t->open_cap = cap;
	t->open_used = 0;
	for (uint32_t i = 0; i < t->depth; i++) {
		struct an_open *o = an_open_slot(t, t->stack[i].id);

		if (!o->key) {
			o->key = t->stack[i].id + 1;
			t->open_used++;
		}
		o->count++;
	}
	return true;
}

static void an_open_forget(struct an_thread *t)
{
	free(t->open);
	t->open = NULL;
	t->open_cap = t->open_used = 0;
}

/* A frame of @id pushed (+1) or popped (-1), while the counts are kept. */
static __attribute__((noinline)) void an_open_note(struct an_thread *t, uint32_t id, int delta)
{
	struct an_open *o;

	if (delta < 0 && t->depth <= AN_WALK / 2) {
		an_open_forget(t);	/* shallow again: the walk is short */
		return;
	}
	o = an_open_slot(t, id);
	if (!o->key) {
		/* ids with no frame left keep their slot: rebuild when half full */
		if ((t->open_used + 1) * 2 > t->open_cap) {
			if (!an_open_build(t))
				an_open_forget(t);
			return;	/* the rebuild counted the stack as it is */
		}
		o->key = id + 1;
		t->open_used++;
	}
	o->count += (uint32_t)delta;
}

/* Frames of @id open on @t; UINT32_MAX when not known (walk then). */
static uint32_t an_open_count(struct an_thread *t, uint32_t id)
{
	if (t->depth <= AN_WALK || (!t->open && !an_open_build(t)))
		return UINT32_MAX;
	return an_open_slot(t, id)->count;
}

/*
 * Is a call of @id open on @t (before the one being pushed)? Asked only
 * when another thread has calls of its function open too.
 */
static __attribute__((noinline)) bool an_open_on(struct an_thread *t, uint32_t id)
{
	uint32_t n = an_open_count(t, id), i;

	if (n != UINT32_MAX)
		return n != 0;
	for (i = 0; i < t->depth; i++)
		if (t->stack[i].id == id)
			return true;
	return false;
}

/*
 * A call of @fn is pushed on @t: is it nested in another of @fn's there?
 * One thread at a time counts its open calls in @fn (the common case: a
 * function recursing on one thread); a call on another thread meanwhile
 * walks its stack and is counted apart.
 */
static inline __attribute__((always_inline)) void an_open_enter(struct an_thread *t, struct an_func *fn, struct an_frame *f)
{
	uint32_t me = t->index + 1;

	if (__builtin_expect(fn->open_n == 0 && fn->open_far == 0, 1)) {
		fn->open_thread = me;
		fn->open_n = 1;
		f->counted = true;
		f->nested = false;
	} else if (fn->open_thread == me && fn->open_n) {
		fn->open_n++;
		f->counted = true;
		f->nested = true;
	} else {
		f->nested = an_open_on(t, fn->id);
		f->counted = false;
		fn->open_far++;
	}
}

/* The call @f of its function is no longer open. */
static inline __attribute__((always_inline)) void an_open_leave(const struct an_frame *f)
{
	if (f->counted)
		f->fn->open_n--;
	else
		f->fn->open_far--;
}

/*
 * @plain (a constant where it is inlined): the command has no enter or
 * exit callback and no calling-context tree is built, so neither is
 * looked for (account's loop).
 */
static inline __attribute__((always_inline)) struct an_frame *an_push(struct analysis *a, struct an_thread *t, struct an_func *fn,
				uint64_t tsc, bool partial, bool plain)
{
	struct an_frame *f;

	if (t->depth == t->cap) {
		/* Small at first: a trace may have many threads (<= 1 KiB each). */
		uint32_t cap = t->cap ? t->cap * 2 : 4;
		struct an_frame *n;

		if (t->depth >= AN_DEPTH_MAX) {
			/* counted, not kept: its exit is the next one (an_function()) */
			t->over++;
			a->st.too_deep++;
			return NULL;
		}
		n = realloc(t->stack, cap * sizeof(*n));
		if (!n)
			return NULL;
		t->stack = n;
		t->cap = cap;
	}
	f = &t->stack[t->depth];
	an_open_enter(t, fn, f);	/* before the push: the walk sees the calls below */
	t->depth++;
	f->fn = fn;
	f->id = fn->id;
	/* after the id: a rebuild of the counts reads the whole stack, this frame too */
	if (__builtin_expect(t->open != NULL, 0))
		an_open_note(t, fn->id, +1);
	f->tsc = tsc;
	f->children = 0;
	f->partial = partial;
	f->lost = false;
	f->holed = false;
	f->node = 0;
	if (!plain && a->want_cct)
		f->node = an_node_child(a, t->depth > 1 ? t->stack[t->depth - 2].node : t->root,
					fn, t);
	return f;
}

static inline __attribute__((always_inline)) void an_close_top(struct analysis *a, struct an_thread *t, uint64_t end, enum an_end how, bool plain)
{
	struct an_frame *f = &t->stack[t->depth - 1];
	struct an_func *fn = f->fn;
	uint64_t dur = 0, self;

	if (f->lost) {
		a->st.spanning++;
		fn->tally.spanning++;
	} else if (f->partial) {
		a->st.partial++;
	} else if (end >= f->tsc) {
		dur = end - f->tsc;
	} else {
		a->st.clamped++;
	}
	if (how == AN_END_UNWOUND) {
		a->st.unwound++;
		if (!f->partial)
			fn->tally.unwound++;
	}
	if (!plain && a->ops && a->ops->exit)
		a->ops->exit(a, t, f, end, dur, how);
	if (t == a->cur && t->depth - 1 < a->buf_low)
		a->buf_low = t->depth - 1;
	if (!f->partial) {
		self = dur > f->children ? dur - f->children : 0;
		if (__builtin_expect(f->holed, 0)) {
			self = 0;	/* its callees' time is not known */
			fn->tally.self_unknown++;
			a->st.holed++;
		}
		a->st.calls++;
		an_tally_add(&fn->tally, dur, self, a->want_hist);	/* out of memory: not in hist */
		if (!f->nested)
			fn->tally.total += dur;
		if (!plain && f->node) {
			a->nodes[f->node].calls++;
			a->nodes[f->node].incl += dur;
			a->nodes[f->node].self += self;
		}
		if (t->depth > 1)
			t->stack[t->depth - 2].children += dur;
	}
	t->depth--;
	an_open_leave(f);
	if (__builtin_expect(t->open != NULL, 0))
		an_open_note(t, f->id, -1);
}

/*
 * A gap read where the thread's records resume, kept until the first record
 * stamped at or after its first TSC (struct an_thread.held).
 */
struct an_gap_held {
	uint64_t first_tsc, last_tsc, records;
	uint32_t reason, exited, depth;
	uint32_t ids[];
};

static void an_gap_apply(struct analysis *a, struct an_thread *t);

static inline __attribute__((always_inline)) void an_function(struct analysis *a, struct an_thread *t, unsigned action, uint32_t id,
			uint64_t tsc, bool plain)
{
	struct an_func *fn;
	uint32_t i;

	/* a record stamped before a held gap began is applied before it */
	if (__builtin_expect(t->held != NULL, 0) && tsc >= t->held->first_tsc)
		an_gap_apply(a, t);
	switch (action) {
	case FDRTRACE_FN_ENTRY:
	case FDRTRACE_FN_ENTRY_ARGS:
		fn = an_func_get(a, id);
		if (!fn || !an_push(a, t, fn, tsc, false, plain))
			return;	/* out of memory: the call is lost, the stack stays right */
		if (!plain && a->ops && a->ops->enter)
			a->ops->enter(a, t, &t->stack[t->depth - 1]);
		return;
	case FDRTRACE_FN_EXIT:
	case FDRTRACE_FN_TAIL_EXIT:
		if (__builtin_expect(t->over != 0, 0)) {
			t->over--;	/* the innermost of the calls too deep to keep */
			return;
		}
		/* Mostly the innermost call's exit. */
		if (__builtin_expect(t->depth && t->stack[t->depth - 1].id == id, 1)) {
			an_close_top(a, t, tsc, AN_END_EXIT, plain);
			return;
		}
		if (an_open_count(t, id) == 0) {
			a->st.unmatched_exits++;
			return;
		}
		for (i = t->depth; i > 0; i--)
			if (t->stack[i - 1].id == id)
				break;
		if (i == 0) {
			a->st.unmatched_exits++;
			return;
		}
		while (t->depth > i)
			an_close_top(a, t, tsc, AN_END_UNWOUND, plain);
		an_close_top(a, t, tsc, AN_END_EXIT, plain);
		return;
	default:
		return;	/* actions 4..7 have no meaning */
	}
}

/* Forget the calls above @depth, whose exits were lost (an_ops.dropped). */
static void an_forget(struct analysis *a, struct an_thread *t, uint32_t depth)
{
	while (t->depth > depth) {
		if (a->ops && a->ops->dropped)
			a->ops->dropped(a, t, &t->stack[t->depth - 1]);
		an_open_leave(&t->stack[t->depth - 1]);
		t->depth--;
	}
	an_open_forget(t);	/* made again if needed */
	t->over = 0;	/* counted when entered; their ends are lost too */
}

static void an_gap(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x,
		   bool followed);

/*
 * Ring policy: buffers of @t between the one it read last and this one
 * (@x, numbered) were overwritten. Their records are a gap from the last
 * record read for @t to this buffer's start (@tsc), of as many function
 * records as the two buffers' numbering says: every call open across it
 * spans the loss. The calls of the stack record that the thread's stack
 * already had, outermost first, stay (lost); the others end at the gap,
 * the record's others are pushed (lost), as an FDRx drop gap does.
 * The first buffer read of a thread, numbered above 1: its earlier
 * buffers were overwritten, a gap at the thread's start of the records
 * its records_before says, whose first TSC is unknown (0; an_ops.gap).
 */
static void an_ring_gap(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x,
			uint64_t tsc)
{
	uint64_t seen = t->ring_before + (t->records - t->ring_records);
	struct fdrtrace_ext g;
	uint32_t same = 0, n = x->u.stack.depth;

	/* a stack record with its outer calls left out cannot be lined up */
	while (!x->u.stack.skipped && same < n && same < t->depth) {
		uint32_t id;

		memcpy(&id, x->u.stack.ids + 4 * same, 4);
		if (t->stack[same].id != id)
			break;
		same++;
	}
	memset(&g, 0, sizeof(g));
	g.kind = FDRTRACE_EXT_DROP;
	g.u.drop.tid = x->u.stack.tid;
	g.u.drop.reason = FDRTRACE_DROP_OVERWRITTEN;
	g.u.drop.records = x->u.stack.records_before > seen ? x->u.stack.records_before - seen : 0;
	g.u.drop.buffers = x->u.stack.buffer_no - t->ring_no - 1;
	g.u.drop.gap = true;
	g.u.drop.first_tsc = !t->ring_no ? 0 : t->last_tsc && t->last_tsc < tsc ? t->last_tsc : tsc;
	g.u.drop.last_tsc = tsc;
	g.u.drop.exited = t->depth - same;
	g.u.drop.depth = n - same;
	g.u.drop.ids = x->u.stack.ids + 4 * (size_t)same;
	an_gap(a, t, &g, false);
}

/*
 * FDRTRACE_EXT_STACK: the calls open on the thread when its buffer began.
 * Numbered (ring policy): a buffer number more than one past the thread's
 * previous one is a gap (an_ring_gap()).
 */
static void an_seed_stack(struct analysis *a, const struct fdrtrace_ext *x, uint64_t tsc)
{
	struct an_thread *t = an_thread_get(a, (int32_t)x->u.stack.tid);
	uint32_t i, n = x->u.stack.depth;
	bool same, gap;

	if (!t)
		return;
	if (x->u.stack.numbered && t->ring_no && x->u.stack.buffer_no <= t->ring_no &&
	    t == a->cur) {
		/*
		 * A buffer of the thread already read (or an older one): a
		 * snapshot can hold a thread's partial buffer twice, handed
		 * over and copied. Its records are not applied again.
		 */
		a->buf_repeat = true;
		a->st.repeated++;
		if (a->buf_ooo)
			a->st.out_of_order--;	/* not out of order: a repeat */
		a->buf_ooo = false;
		return;
	}
	if (x->u.stack.numbered) {
		/*
		 * A thread's first kept buffer numbered above 1 is a gap at its
		 * start, also when the buffer opens with a pool-empty gap (whose
		 * calls are on the stack already): records_before counts only
		 * records written in buffers, so the two never overlap.
		 */
		gap = t->ring_no ? x->u.stack.buffer_no > t->ring_no + 1 :
				   x->u.stack.buffer_no > 1 && !t->records;
		if (gap)
			an_ring_gap(a, t, x, tsc);
		t->ring_no = x->u.stack.buffer_no;
		t->ring_before = x->u.stack.records_before;
		t->ring_records = t->records;
		if (gap)
			return;
	}
	same = t->depth == n;
	for (i = 0; same && i < n; i++) {
		uint32_t id;

		memcpy(&id, x->u.stack.ids + 4 * i, 4);
		same = t->stack[i].id == id;
	}
	if (same)
		return;
	/* What we had does not match: the buffers in between were lost. */
	for (i = 0; i < t->depth; i++) {
		if (t->stack[i].lost) {
			a->st.spanning++;
			t->stack[i].fn->tally.spanning++;
		} else {
			a->st.unmatched_entries++;
		}
	}
	an_forget(a, t, 0);
	for (i = 0; i < n; i++) {
		uint32_t id;
		struct an_func *fn;

		memcpy(&id, x->u.stack.ids + 4 * i, 4);
		fn = an_func_get(a, id);
		if (!fn || !an_push(a, t, fn, tsc, true, false))
			return;
		if (a->ops && a->ops->enter)
			a->ops->enter(a, t, &t->stack[t->depth - 1]);
	}
}

/*
 * A gap in @t's records: every call open there spans the loss; the calls
 * the gap closed end at its start, those it opened are pushed, both
 * without a duration. @first_tsc 0: the thread's start (ring policy).
 */
static void an_gap_do(struct analysis *a, struct an_thread *t, uint64_t first_tsc,
		      uint64_t last_tsc, uint64_t records, unsigned reason, uint32_t exited,
		      uint32_t depth, const uint8_t *ids, bool followed)
{
	/* where the calls it closed end and those it opened begin (a thread's start: its end) */
	uint64_t at = first_tsc ? first_tsc : last_tsc;
	uint32_t i, n;

	a->st.gaps++;
	a->st.gap_records += records;
	/*
	 * The runtime followed the gap's calls (a drop record's exited and
	 * ids): the calls below those it closed are the same calls after it,
	 * so their exits are their own: timed, self unknown. Else (not
	 * followed; a ring's overwritten buffers, whose stack record matches
	 * by id only) none of them can be timed.
	 */
	followed = followed && exited != FDRTRACE_GAP_UNKNOWN;
	for (i = 0; i < t->depth; i++)
		t->stack[i].holed = followed && i + exited < t->depth && !t->stack[i].partial;
	if (a->ops && a->ops->gap)
		a->ops->gap(a, t, first_tsc, last_tsc, records, reason);
	for (i = 0; i < t->depth; i++) {
		if (!t->stack[i].holed) {
			t->stack[i].lost = true;
			t->stack[i].partial = true;
		}
	}
	if (exited == FDRTRACE_GAP_UNKNOWN)
		return;	/* which of them returned is not known: exits will say */
	for (n = exited; n && t->depth; n--)
		an_close_top(a, t, at, AN_END_LOST, false);
	for (i = 0; i < depth; i++) {
		struct an_func *fn;
		uint32_t id;

		memcpy(&id, ids + 4 * i, 4);
		fn = an_func_get(a, id);
		if (!fn || !an_push(a, t, fn, at, true, false))
			return;
		t->stack[t->depth - 1].lost = true;
		if (a->ops && a->ops->enter)
			a->ops->enter(a, t, &t->stack[t->depth - 1]);
	}
}

/*
 * A gap from a ring's numbering or (@followed) an FDRx drop record, applied
 * now.
 */
static void an_gap(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x,
		   bool followed)
{
	an_gap_do(a, t, x->u.drop.first_tsc, x->u.drop.last_tsc, x->u.drop.records,
		  x->u.drop.reason, x->u.drop.exited, x->u.drop.depth, x->u.drop.ids, followed);
}

/* The gap @t holds, applied where its time says (see an_gap_hold()). */
static __attribute__((noinline)) void an_gap_apply(struct analysis *a, struct an_thread *t)
{
	struct an_gap_held *g = t->held;

	t->held = NULL;
	an_gap_do(a, t, g->first_tsc, g->last_tsc, g->records, g->reason, g->exited, g->depth,
		  (const uint8_t *)g->ids, true);
	free(g);
}

/*
 * An FDRx drop gap in @t's own buffer, where its records resume. The hook
 * that was interrupted (re-entry) stamped its record before the signal
 * handler whose records were lost, and stores it after the drop record:
 * a record stamped before the gap's first TSC happened before the gap. So
 * the gap is held until the thread's first record stamped at or after its
 * first TSC, or anything else of the thread (an event, another extension
 * record, its next buffer, the end), and applied then: in time order.
 * Out of memory, it is applied at once, where it was read.
 */
static void an_gap_hold(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x)
{
	struct an_gap_held *g;
	uint32_t depth = x->u.drop.exited == FDRTRACE_GAP_UNKNOWN ? 0 : x->u.drop.depth;

	if (t->held)
		an_gap_apply(a, t);
	g = x->u.drop.first_tsc ? malloc(sizeof(*g) + 4 * (size_t)depth) : NULL;
	if (!g) {
		an_gap(a, t, x, true);
		return;
	}
	g->first_tsc = x->u.drop.first_tsc;
	g->last_tsc = x->u.drop.last_tsc;
	g->records = x->u.drop.records;
	g->reason = x->u.drop.reason;
	g->exited = x->u.drop.exited;
	g->depth = depth;
	if (depth)
		memcpy(g->ids, x->u.drop.ids, 4 * (size_t)depth);
	t->held = g;
}

/* Apply @t's held gap, if any, before what is not a function record. */
static inline void an_gap_settle(struct analysis *a, struct an_thread *t)
{
	if (t && t->held)
		an_gap_apply(a, t);
}

/*
 * An application's custom or typed event (its payload is not ours): counted,
 * and handed to the command.
 */
static void an_app_event(struct analysis *a, const struct fdrtrace_event *ev)
{
	if (a->pass_mode == 1 || a->buf_repeat)
		return;	/* the reordering pass sees it again; a repeated buffer was seen */
	an_gap_settle(a, a->cur);
	if (ev->type == FDRTRACE_EV_TYPED_EVENT)
		a->st.app_typed++;
	else
		a->st.app_custom++;
	if (a->ops && a->ops->event && a->cur)
		a->ops->event(a, a->cur, ev);
}

static void an_ext(struct analysis *a, const struct fdrtrace_event *ev)
{
	struct fdrtrace_ext x;
	struct an_thread *t;
	struct an_func *fn;
	int rc = fdrtrace_ext_decode(ev->u.event.data, ev->u.event.size, &x);

	if (rc == -ENOENT) {
		an_app_event(a, ev);
		return;
	}
	if (rc < 0)
		return;
	if (a->pass_mode != 1 && !a->buf_repeat)
		an_gap_settle(a, a->cur);
	if (x.kind == FDRTRACE_EXT_STACK) {
		if (a->pass_mode != 1)
			an_seed_stack(a, &x, ev->tsc);
		return;
	}
	if (x.kind == FDRTRACE_EXT_NATIVE_STACK) {
		/* in the pass that walks the calls: it belongs where it happened */
		t = a->pass_mode != 1 ? an_thread_get(a, (int32_t)x.u.native_stack.tid) : NULL;
		if (t && a->ops && a->ops->native)
			a->ops->native(a, t, &x, ev->tsc);
		return;
	}
	/* a gap or a wait is applied in time order, where the thread's buffer says */
	if (a->pass_mode != 1 && a->cur && !a->buf_repeat && x.kind == FDRTRACE_EXT_DROP &&
	    x.u.drop.gap && x.u.drop.tid == (uint32_t)a->cur->tid)
		an_gap_hold(a, a->cur, &x);
	if (a->pass_mode != 1 && a->cur && x.kind == FDRTRACE_EXT_WAIT &&
	    x.u.wait.tid == (uint32_t)a->cur->tid) {
		a->st.waits++;
		if (x.u.wait.last_tsc > x.u.wait.first_tsc)
			a->st.wait_ticks += x.u.wait.last_tsc - x.u.wait.first_tsc;
		if (a->ops && a->ops->wait)
			a->ops->wait(a, a->cur, x.u.wait.first_tsc, x.u.wait.last_tsc);
	}
	if (a->pass_mode == 2)
		return;	/* already collected by the first pass */
	switch (x.kind) {
	case FDRTRACE_EXT_PROCESS:
		if (!a->program) {
			a->program = an_strdup_str(x.u.process.program);
			a->pid = (int32_t)x.u.process.pid;
		}
		break;
	case FDRTRACE_EXT_FUNC:
		fn = an_func_get(a, x.u.func.func_id);
		if (!fn)
			break;
		fn->address = x.u.func.address;
		fn->module_id = x.u.func.module_id;
		if (x.u.func.name.len && !fn->name) {
			fn->name = an_strdup_str(x.u.func.name);
			an_func_rename(a, fn);
		}
		break;
	case FDRTRACE_EXT_MODULE_MAP:
		a->ns.no_elf = a->no_elf;
		a->ns.demangle = a->demangle;
		a->ns.sym = a->sym;	/* one symbolizer: each file opened once */
		ns_add_module(&a->ns, &x);
		if (a->n_mods == a->mods_cap) {
			uint32_t cap = a->mods_cap ? a->mods_cap * 2 : 16;
			struct an_module *nm = realloc(a->mods, cap * sizeof(*nm));

			if (!nm)
				break;
			a->mods = nm;
			a->mods_cap = cap;
		}
		{
			struct an_module *m = &a->mods[a->n_mods++];
			size_t bl = x.u.module_map.build_id_len;

			memset(m, 0, sizeof(*m));
			m->id = x.u.module_map.module_id;
			m->load_base = x.u.module_map.load_base;
			m->size = x.u.module_map.size;
			if (bl > sizeof(m->build_id))
				bl = 0;
			if (bl)
				memcpy(m->build_id, x.u.module_map.build_id, bl);
			m->build_id_len = (uint8_t)bl;
			m->path = malloc((size_t)x.u.module_map.path.len + 1);
			if (m->path) {
				if (x.u.module_map.path.len)
					memcpy(m->path, x.u.module_map.path.ptr,
					       x.u.module_map.path.len);
				m->path[x.u.module_map.path.len] = '\0';
			}
		}
		break;
	case FDRTRACE_EXT_THREAD_NAME:
		t = an_thread_get(a, (int32_t)x.u.thread_name.tid);
		if (t) {
			free(t->name);
			t->name = an_strdup_str(x.u.thread_name.name);
		}
		break;
	case FDRTRACE_EXT_DROP:
		a->st.dropped_records += x.u.drop.records;
		a->st.dropped_buffers += x.u.drop.buffers;
		break;
	case FDRTRACE_EXT_EXEC:
		a->exec_seen = true;
		if (x.u.exec.has_point && x.u.exec.tsc) {	/* 0: not filled in */
			a->exec_point = true;
			a->exec_tid = (int32_t)x.u.exec.tid;
			a->exec_tsc = x.u.exec.tsc;
		}
		break;
	case FDRTRACE_EXT_SPAWN:
		if (a->ops && a->ops->spawn)
			a->ops->spawn(a, (int32_t)x.u.spawn.tid, x.u.spawn.tsc, x.u.spawn.serial,
				      (int32_t)x.u.spawn.child_pid);
		break;
	case FDRTRACE_EXT_EXCLUDED:
		fn = an_func_get(a, x.u.excluded.func_id);
		if (fn && !x.u.excluded.undone && !fn->excluded) {
			fn->excluded = true;
			a->st.excluded_fns++;
		}
		break;
	case FDRTRACE_EXT_COUNTED: {
		uint32_t id;
		uint64_t calls;

		a->st.counted_lost += x.u.counted.lost;
		for (uint32_t i = 0; fdrtrace_ext_counted_pair(&x, i, &id, &calls) == 0; i++) {
			fn = calls ? an_func_get(a, id) : NULL;
			if (!fn)
				continue;
			if (!fn->counted)
				a->st.counted_fns++;
			fn->counted += calls;
			a->st.counted += calls;
		}
		break;
	}
	case FDRTRACE_EXT_CLOSE:
		a->st.have_close = true;
		a->st.stopped = x.u.close.how == FDRTRACE_CLOSE_STOPPED;
		a->st.stop_error = x.u.close.error;
		break;
	default:
		break;
	}
}

static void an_event(struct analysis *a, const struct fdrtrace_event *ev)
{
	struct an_thread *t;

	switch (ev->type) {
	case FDRTRACE_EV_HEADER:
		if (!a->have_hdr) {
			memcpy(&a->hdr, ev->raw, sizeof(a->hdr));
			a->have_hdr = true;
			a->version = ev->u.header.version;
			a->freq = ev->u.header.cycle_frequency;
		}
		return;
	case FDRTRACE_EV_NEW_BUFFER:
		if (a->pass_mode != 1)
			a->st.buffers++;
		a->cur = an_thread_get(a, ev->tid);
		if (a->pass_mode != 1)
			an_gap_settle(a, a->cur);
		a->buf_fresh = true;
		a->buf_repeat = false;
		a->buf_ooo = false;
		a->buf_low = a->cur ? a->cur->depth : 0;
		return;
	case FDRTRACE_EV_PID:
		if (a->cur)
			a->cur->pid = ev->pid;
		return;
	case FDRTRACE_EV_NEW_CPU_ID:
		t = a->cur;
		if (!t || a->pass_mode == 1 || !a->buf_fresh)
			return;
		/* The first reference of a buffer: is it before the thread's last? */
		a->buf_fresh = false;
		a->buf_ooo = t->last_tsc && ev->tsc < t->last_tsc;
		a->st.out_of_order += a->buf_ooo;
		return;
	case FDRTRACE_EV_FUNCTION:
		t = a->cur;
		if (!t || a->pass_mode == 1 || a->buf_repeat)
			return;
		if (ev->tsc > t->last_tsc)
			t->last_tsc = ev->tsc;
		t->records++;
		a->st.records++;
		an_function(a, t, ev->u.func.action, ev->u.func.func_id, ev->tsc, false);
		return;
	case FDRTRACE_EV_CUSTOM_EVENT:
		an_ext(a, ev);
		return;
	case FDRTRACE_EV_TYPED_EVENT:
		an_app_event(a, ev);
		return;
	case FDRTRACE_EV_CALL_ARGUMENT:
		t = a->cur;
		if (t && a->pass_mode != 1 && !a->buf_repeat && a->ops && a->ops->arg && t->depth)
			a->ops->arg(a, t, ev->u.arg.arg);
		return;
	default:
		return;
	}
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

/*
 * Every record comes from the reader (tools/reader), the one place the
 * format's grammar is enforced: plain function records in runs through its
 * batch path (fdrtrace_reader_read_functions(); one event each with
 * FDRTRACE_ANALYSIS_READER=1, for the tests), everything else one event at
 * a time. A regular file whose buffers are out of time order on some
 * thread is read twice: once in file order for the extension records, then
 * buffer by buffer in time order, each fed to a memory reader from a
 * window onto the file (an_buffer_at()).
 */

static void an_report(struct analysis *a, struct fdrtrace_reader *rd)
{
	uint64_t off = 0;
	enum fdrtrace_error e = fdrtrace_reader_error(rd, &off);

	if (e == FDRTRACE_E_TRUNCATED)
		a->st.truncated = true;
	tool_stderr_sync();
	fprintf(stderr, "%s:%" PRIu64 ": %s\n", a->path, off, fdrtrace_reader_errmsg(rd));
}

/*
 * A buffer was damaged: the calls it opened may have lost their exits with
 * the rest of it. Forget them (counted as entries without exit).
 */
static void an_drop_buffer_calls(struct analysis *a)
{
	struct an_thread *t = a->cur;

	an_gap_settle(a, t);
	if (!t || t->depth <= a->buf_low)
		return;
	a->st.unmatched_entries += t->depth - a->buf_low;
	an_forget(a, t, a->buf_low);
}

/*
 * The records of @run on @t, each as an_event() takes its event. @plain
 * is a constant where it is inlined: one loop each.
 */
static inline __attribute__((always_inline)) void
an_run_apply(struct analysis *a, struct an_thread *t, const struct fdrtrace_func_run *run,
	     bool plain)
{
	const uint8_t *p = run->records;
	const uint8_t *end = p + run->count * FDRTRACE_FUNC_RECORD_SIZE;
	uint64_t tsc = run->tsc_before;

	for (; p < end; p += FDRTRACE_FUNC_RECORD_SIZE) {
		uint32_t word, delta;

		memcpy(&word, p, 4);
		memcpy(&delta, p + 4, 4);
		tsc += delta;
		an_function(a, t, fdrtrace_func_word_action(word), fdrtrace_func_word_id(word), tsc,
			    plain);
	}
}

/*
 * A run of function records from the reader's batch path: what an_event()
 * does for FDRTRACE_EV_FUNCTION, record by record, without the events.
 * The thread's latest TSC is kept once per run: a run's TSC never wraps,
 * so its last record's is its largest (an_function() does not read it).
 */
static void an_functions(struct analysis *a, const struct fdrtrace_func_run *run)
{
	struct an_thread *t = a->cur;

	if (!t || a->pass_mode == 1 || a->buf_repeat)
		return;
	/* nothing to call back per call, no tree: account's loop */
	if (!a->want_cct && (!a->ops || (!a->ops->enter && !a->ops->exit)))
		an_run_apply(a, t, run, true);
	else
		an_run_apply(a, t, run, false);
	t->records += run->count;
	a->st.records += run->count;
	if (run->tsc > t->last_tsc)
		t->last_tsc = run->tsc;
}

/*
 * Everything @rd has, until it stops: at the end, at an error, or (memory
 * reader) where it must be fed. Return: the state it stopped in.
 */
static enum fdrtrace_state an_read(struct analysis *a, struct fdrtrace_reader *rd)
{
	struct fdrtrace_func_run run;
	struct fdrtrace_event ev;

	for (;;) {
		if (a->batch && fdrtrace_reader_read_functions(rd, &run, SIZE_MAX)) {
			an_functions(a, &run);
			continue;
		}
		if (fdrtrace_reader_read(rd, &ev))
			return ev.state;
		an_event(a, &ev);
	}
}

/*
 * Read the whole stream of @rd, skipping damaged buffers.
 * Return: 0, or -1 when the header itself could not be read.
 */
static int an_stream(struct analysis *a, struct fdrtrace_reader *rd, bool report)
{
	for (;;) {
		if (an_read(a, rd) != FDRTRACE_ERROR)
			return 0;
		if (report)
			an_report(a, rd);
		if (!a->have_hdr)
			return -1;
		if (a->pass_mode != 1)
			an_drop_buffer_calls(a);
		if (fdrtrace_reader_skip_buffer(rd))
			return 0;
		if (report)
			a->st.bad_buffers++;
		a->cur = NULL;
	}
}

/* ------------------------------------------------------------------ */
/* Buffers one by one, from a regular file                             */
/* ------------------------------------------------------------------ */

/*
 * The bytes the scan and the per-buffer readers take from a regular file
 * come through one window of AN_WIN_SIZE bytes (read ahead with pread,
 * whatever the buffer size): memory does not depend on the buffer size the
 * trace claims. The reader stages what a piece cuts in two.
 */
#define AN_WIN_SIZE (256u << 10)

/* A preamble's most bytes: BufferExtents NewBuffer WallTime Pid NewCPUId. */
#define AN_PREAMBLE_MAX (5u * FDRTRACE_METADATA_RECORD_SIZE)

/*
 * The @n bytes at file offset @off, contiguous; valid until the next call.
 * Return: a pointer into the window, or NULL on a read error or when the
 * file ends first (errno 0).
 */
static const uint8_t *an_win_get(struct analysis *a, uint64_t off, size_t n)
{
	size_t keep = 0;

	if (off >= a->win_pos && off - a->win_pos <= a->win_len &&
	    n <= a->win_len - (off - a->win_pos))
		return a->win + (off - a->win_pos);
	if (n > a->win_cap || !a->win) {
		size_t cap = n > AN_WIN_SIZE ? n : AN_WIN_SIZE;
		uint8_t *w = realloc(a->win, cap);

		if (!w) {
			errno = ENOMEM;
			return NULL;
		}
		a->win = w;
		a->win_cap = cap;
	}
	if (off >= a->win_pos && off - a->win_pos < a->win_len) {
		keep = a->win_len - (size_t)(off - a->win_pos);
		memmove(a->win, a->win + (off - a->win_pos), keep);
	}
	a->win_pos = off;
	a->win_len = keep;
	while (a->win_len < n) {
		ssize_t got = pread(a->fd, a->win + a->win_len, a->win_cap - a->win_len,
				    (off_t)(off + a->win_len));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = 0;
			return NULL;
		}
		a->win_len += (size_t)got;
	}
	return a->win;
}

static void an_io_error(struct analysis *a, uint64_t pos)
{
	if (errno == ENOMEM)
		tool_err("out of memory");
	else
		tool_err("%s: cannot read the buffer at offset %" PRIu64 ": %s", a->path, pos,
			 errno ? strerror(errno) : "short read");
}

/*
 * A memory reader for buffers read one by one: fed the file header (read
 * once already), it is between buffers at offset 32.
 * Return: the reader, NULL when out of memory.
 */
static struct fdrtrace_reader *an_mem_reader(struct analysis *a)
{
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;

	if (rd && (fdrtrace_reader_feed(rd, &a->hdr, sizeof(a->hdr)) ||
		   fdrtrace_reader_read(rd, &ev) != 0)) {
		fdrtrace_reader_close(rd);
		rd = NULL;
	}
	return rd;
}

/*
 * The buffer of @len bytes at file offset @pos (found by the scan), through
 * the memory reader *@rdp, fed from the window and told where the buffer
 * sits, so that every offset it reports (in the message too) is the file's.
 * A reader that stopped inside a buffer (an error) is replaced. Errors are
 * reported as an_stream() reports them.
 * Return: 0, -1 on a read error or ENOMEM (reported).
 */
static int an_buffer_at(struct analysis *a, struct fdrtrace_reader **rdp, uint64_t pos,
			uint64_t len)
{
	uint64_t fed = pos, end = pos + len;
	enum fdrtrace_state st;

	if (*rdp && fdrtrace_reader_set_offset(*rdp, pos)) {
		fdrtrace_reader_close(*rdp);
		*rdp = NULL;
	}
	if (!*rdp) {
		*rdp = an_mem_reader(a);
		if (!*rdp || fdrtrace_reader_set_offset(*rdp, pos)) {
			tool_err("out of memory");
			return -1;
		}
	}
	a->cur = NULL;
	for (;;) {
		size_t n = end - fed < AN_WIN_SIZE ? (size_t)(end - fed) : AN_WIN_SIZE;
		const uint8_t *p;

		st = an_read(a, *rdp);
		/* All of it read: the reader is between buffers. */
		if (st != FDRTRACE_REQUIRE_DATA || !n)
			break;
		p = an_win_get(a, fed, n);
		if (!p) {
			an_io_error(a, fed);
			return -1;
		}
		/* The reader is done with the previous piece: the window may move. */
		fdrtrace_reader_feed(*rdp, p, n);
		fed += n;
	}
	if (st == FDRTRACE_ERROR && a->pass_mode != 1) {
		an_report(a, *rdp);
		a->st.bad_buffers++;
		an_drop_buffer_calls(a);
	}
	return 0;
}

/* One buffer found by the preamble scan. */
struct an_buf {
	uint64_t offset, len, tsc;
};

static int an_buf_cmp(const void *x, const void *y)
{
	const struct an_buf *p = x, *q = y;

	if (p->tsc != q->tsc)
		return p->tsc < q->tsc ? -1 : 1;
	return p->offset < q->offset ? -1 : p->offset > q->offset;
}

/*
 * The preamble of the buffer at @pos, through the scan's memory reader @rd
 * (between buffers, at @pos), which steps over the rest: the buffer's
 * length *@len (16: an empty v2+ buffer, whose *@tid and *@tsc are not
 * set), its thread *@tid and first TSC *@tsc. Return: 0, or -1 when the
 * reader does not accept the preamble or the buffer does not fit in the
 * file (the scan gives up, and the trace is read in file order).
 */
static int an_scan_one(struct analysis *a, struct fdrtrace_reader *rd, uint64_t pos,
		       uint64_t fsize, uint64_t *len, int32_t *tid, uint64_t *tsc)
{
	size_t n = fsize - pos < AN_PREAMBLE_MAX ? (size_t)(fsize - pos) : AN_PREAMBLE_MAX;
	const uint8_t *b = an_win_get(a, pos, n);
	struct fdrtrace_event ev;

	if (!b || fdrtrace_reader_feed(rd, b, n))
		return -1;
	*len = a->hdr.buffer_size;	/* version 1 */
	while (fdrtrace_reader_read(rd, &ev) == 0) {
		switch (ev.type) {
		case FDRTRACE_EV_BUFFER_EXTENTS:
			if (ev.u.extents.size > fsize - pos - FDRTRACE_METADATA_RECORD_SIZE)
				return -1;
			*len = FDRTRACE_METADATA_RECORD_SIZE + ev.u.extents.size;
			if (!ev.u.extents.size)
				return fdrtrace_reader_leave_buffer(rd) ? -1 : 0;
			break;
		case FDRTRACE_EV_NEW_BUFFER:
			if (*len > fsize - pos)
				return -1;
			*tid = ev.tid;
			break;
		case FDRTRACE_EV_NEW_CPU_ID:
			*tsc = ev.tsc;
			return fdrtrace_reader_leave_buffer(rd) ? -1 : 0;
		default:
			break;
		}
	}
	return -1;
}

/*
 * Walk the buffer preambles. With @out NULL, only check the order
 * (Return: 1 out of order, 0 in order, -1 scan failed). Otherwise fill
 * *@out with every non-empty buffer (Return: the count, or -1).
 */
static long an_scan(struct analysis *a, uint64_t fsize, struct an_buf **out)
{
	struct fdrtrace_reader *rd = an_mem_reader(a);
	uint64_t pos = sizeof(a->hdr), len, tsc = 0;
	struct an_buf *v = NULL;
	long n = 0, cap = 0;
	int32_t tid = 0;
	bool disorder = false;
	uint32_t i;

	if (!rd)
		return -1;
	for (i = 0; i < a->n_threads; i++)
		a->threads[i]->scan_tsc = 0;
	while (pos < fsize) {
		if (an_scan_one(a, rd, pos, fsize, &len, &tid, &tsc))
			goto fail;
		if (len > FDRTRACE_METADATA_RECORD_SIZE) {
			if (out) {
				if (n == cap) {
					struct an_buf *nv;

					cap = cap ? cap * 2 : 256;
					nv = realloc(v, (size_t)cap * sizeof(*v));
					if (!nv)
						goto fail;
					v = nv;
				}
				v[n].offset = pos;
				v[n].len = len;
				v[n].tsc = tsc;
				n++;
			} else {
				struct an_thread *t = an_thread_get(a, tid);

				if (!t)
					goto fail;
				if (t->scan_tsc > tsc)
					disorder = true;
				t->scan_tsc = tsc;
			}
		}
		pos += len;
	}
	fdrtrace_reader_close(rd);
	if (!out)
		return disorder;
	*out = v;
	return n;
fail:
	fdrtrace_reader_close(rd);
	free(v);
	return -1;
}

/* Visit the buffers sorted by first TSC, each read by itself. */
static int an_reordered(struct analysis *a, uint64_t fsize)
{
	struct fdrtrace_reader *rd = NULL;
	struct an_buf *bufs = NULL;
	long n = an_scan(a, fsize, &bufs), i;
	int rc = 0;

	if (n < 0)
		return -1;
	if (n > 1)	/* bufs is NULL when there is none */
		qsort(bufs, (size_t)n, sizeof(*bufs), an_buf_cmp);
	a->pass_mode = 2;
	a->st.reordered = true;
	for (i = 0; i < n && !rc; i++)
		rc = an_buffer_at(a, &rd, bufs[i].offset, bufs[i].len);
	fdrtrace_reader_close(rd);
	free(bufs);
	return rc;
}

static void an_finish_threads(struct analysis *a)
{
	uint32_t i;

	for (i = 0; i < a->n_threads; i++) {
		struct an_thread *t = a->threads[i];

		an_gap_settle(a, t);
		for (uint32_t j = 0; j < t->depth; j++) {
			if (t->stack[j].lost) {
				a->st.spanning++;
				t->stack[j].fn->tally.spanning++;
			} else {
				a->st.unmatched_entries++;
			}
		}
		for (; t->depth; t->depth--) {
			if (a->ops && a->ops->unfinished)
				a->ops->unfinished(a, t, &t->stack[t->depth - 1]);
			an_open_leave(&t->stack[t->depth - 1]);
		}
		an_open_forget(t);
		t->over = 0;
	}
}

int an_run(struct analysis *a, const char *path)
{
	struct fdrtrace_reader *rd;
	struct stat sb;
	int fd, rc = 0;
	long order = 0;

	a->path = path;
	a->sym = sym_ctx_new(a->debug_dirs, a->n_debug_dirs);
	if (!a->sym) {
		tool_err("out of memory");
		return -1;
	}
	if (a->instr_map) {
		char err[512];

		if (xmap_load(a->sym, a->instr_map, &a->xmap, err, sizeof(err))) {
			tool_err("%s", err);
			return -1;
		}
	}
	fd = tool_open_input(path);
	if (fd < 0)
		return -1;
	rd = fdrtrace_reader_open(fd);
	if (!rd) {
		tool_err("%s: %s", path, strerror(errno));
		tool_close_input(fd);
		return -1;
	}
	/* The header first: the scan needs the version and buffer size. */
	{
		struct fdrtrace_event ev;

		if (fdrtrace_reader_read(rd, &ev) != 0) {
			if (ev.state == FDRTRACE_ERROR)
				an_report(a, rd);
			else
				tool_err("%s: empty trace", path);
			fdrtrace_reader_close(rd);
			tool_close_input(fd);
			return -1;
		}
		an_event(a, &ev);
	}
	/* FDRTRACE_ANALYSIS_READER=1: one event per record (for tests). */
	a->batch = !getenv("FDRTRACE_ANALYSIS_READER");
	a->fd = fd;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && lseek(fd, 0, SEEK_CUR) >= 0)
		order = an_scan(a, (uint64_t)sb.st_size, NULL);
	else
		order = -1;
	if (order == 1) {
		/* Out of order: names and the like first, then the buffers sorted. */
		a->pass_mode = 1;
		an_stream(a, rd, false);
		a->cur = NULL;
		if (an_reordered(a, (uint64_t)sb.st_size)) {
			tool_err("%s: cannot read the buffers in time order", path);
			rc = -1;
		}
	} else {
		rc = an_stream(a, rd, true);
	}
	an_finish_threads(a);
	an_names_settle(a);
	fdrtrace_reader_close(rd);
	tool_close_input(fd);
	return rc;
}

void an_summary(const struct analysis *a, const char *cmd)
{
	const struct an_stats *s = &a->st;

	if (a->quiet)
		return;
	tool_stderr_sync();	/* the output's last line first, whole (2>&1) */
	if (s->stopped)
		fprintf(stderr,
			"fdrtrace %s: %s: recording stopped early, a write failed (%s): what the "
			"program did after that is in no trace\n",
			cmd, a->path, s->stop_error ? strerror((int)s->stop_error) : "error not known");
	if (s->gaps || s->spanning)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " records lost in %" PRIu64 " gap%s; %" PRIu64
			" call%s spanning a loss left out of every duration, sum and self time\n",
			cmd, a->path, s->gap_records, s->gaps, s->gaps == 1 ? "" : "s", s->spanning,
			s->spanning == 1 ? "" : "s");
	if (s->holed)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " call%s timed across a loss (entry and exit "
			"recorded): duration exact, self time unknown and left out of self\n",
			cmd, a->path, s->holed, s->holed == 1 ? "" : "s");
	if (s->too_deep)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " call%s deeper than %u levels counted, not "
			"timed nor shown (a stack that deep is not kept)\n",
			cmd, a->path, s->too_deep, s->too_deep == 1 ? "" : "s", AN_DEPTH_MAX);
	if (s->repeated)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " buffer%s numbered as one already read "
			"(ring policy) left out\n",
			cmd, a->path, s->repeated, s->repeated == 1 ? "" : "s");
	if (s->counted)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " call%s of %" PRIu32 " function%s counted, "
			"not recorded (auto_exclude): in account's count, not timed, not shown; "
			"their time is in their callers' self time\n",
			cmd, a->path, s->counted, s->counted == 1 ? "" : "s", s->counted_fns,
			s->counted_fns == 1 ? "" : "s");
	if (s->counted_lost)
		fprintf(stderr,
			"fdrtrace %s: %s: %" PRIu64 " call%s neither recorded nor counted "
			"(auto_exclude's tables were full): counts are short by that many in all\n",
			cmd, a->path, s->counted_lost, s->counted_lost == 1 ? "" : "s");
	if (s->waits)
		fprintf(stderr,
			"fdrtrace %s: %s: threads waited %.6f s for free buffers in %" PRIu64
			" wait%s (on_full=wait; nothing lost)\n",
			cmd, a->path, an_seconds(a, s->wait_ticks), s->waits, s->waits == 1 ? "" : "s");
	if (!s->unmatched_exits && !s->unmatched_entries && !s->unwound && !s->partial &&
	    !s->clamped && !s->dropped_records && !s->dropped_buffers && !s->out_of_order &&
	    !s->bad_buffers && !s->reordered && !s->truncated)
		return;
	fprintf(stderr,
		"fdrtrace %s: %s: %" PRIu64 " calls; unmatched: %" PRIu64 " exits without entry, %"
		PRIu64 " entries without exit, %" PRIu64 " closed by an outer exit, %" PRIu64
		" partial; %" PRIu64 " clamped; dropped: %" PRIu64 " records, %" PRIu64
		" buffers; %" PRIu64 " damaged buffers skipped; %" PRIu64
		" buffers out of time order%s%s\n",
		cmd, a->path, s->calls, s->unmatched_exits, s->unmatched_entries, s->unwound,
		s->partial, s->clamped, s->dropped_records, s->dropped_buffers, s->bad_buffers,
		s->out_of_order,
		s->reordered ? "; buffers reordered by time" :
		s->out_of_order ? " (read from a file to reorder them)" : "",
		s->truncated ? "; trace truncated" : "");
}

void an_events_note(const struct analysis *a, const char *cmd)
{
	const struct an_stats *s = &a->st;
	uint64_t n = s->app_custom + s->app_typed;

	if (a->quiet || !n)
		return;
	tool_stderr_sync();
	fprintf(stderr,
		"fdrtrace %s: %s: %" PRIu64 " application event%s (custom %" PRIu64 ", typed %"
		PRIu64 "): see replay, convert or dump\n",
		cmd, a->path, n, n == 1 ? "" : "s", s->app_custom, s->app_typed);
}

void an_fini(struct analysis *a)
{
	uint32_t i;

	for (i = 0; i < a->n_fns; i++) {
		free(a->fns[i]->name);
		if (a->fns[i]->display != a->fns[i]->base)
			free(a->fns[i]->display);
		free(a->fns[i]->base);
		free(a->fns[i]->full);
		hist_free(&a->fns[i]->tally.hist);
		free(a->fns[i]->uptr);
		free(a->fns[i]);
	}
	free(a->fns);
	free(a->fn_hash);
	for (i = 0; i < a->n_threads; i++) {
		free(a->threads[i]->name);
		free(a->threads[i]->stack);
		free(a->threads[i]->open);
		free(a->threads[i]->held);
		free(a->threads[i]);
	}
	free(a->threads);
	free(a->thread_hash);
	for (i = 0; i < a->n_mods; i++)
		free(a->mods[i].path);
	free(a->mods);
	free(a->name_hash);
	ns_fini(&a->ns);
	xmap_free(&a->xmap);
	sym_ctx_free(a->sym);
	free(a->nodes);
	free(a->node_hash);
	free(a->node_hash_val);
	free(a->program);
	free(a->win);
	memset(a, 0, sizeof(*a));
}
