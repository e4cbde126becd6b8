// SPDX-License-Identifier: MIT
/*
 * nstack.c - naming the frames of native stacks (see nstack.h).
 *
 * Contract: single-threaded tool code; files are read through the shared
 * symbolizer (symbolizer.h: each file opened once, never blocking, regular
 * files only; .symtab, else the build-id debug file's, else .dynsym).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "nstack.h"
#include "printable.h"
#include "symbolizer.h"

struct ns_module {
	uint32_t id;
	uint64_t load_base, size;
	uint8_t build_id[64];
	uint8_t build_id_len;
	char *path;
	char *label;		/* the path's file name, printable (printable.h) */
	int loaded;		/* 0 not tried, 1 usable, -1 failed */
	struct sym_file *file;	/* shared by the records of one file */
};

void ns_add_module(struct nstack *ns, const struct fdrtrace_ext *x)
{
	struct ns_module *m;
	size_t bl = x->u.module_map.build_id_len;

	if (ns->n == ns->cap) {
		uint32_t cap = ns->cap ? ns->cap * 2 : 16;
		struct ns_module *nm = realloc(ns->mods, cap * sizeof(*nm));

		if (!nm)
			return;	/* its frames stay unnamed */
		ns->mods = nm;
		ns->cap = cap;
	}
	m = &ns->mods[ns->n];
	memset(m, 0, sizeof(*m));
	m->id = x->u.module_map.module_id;
	m->load_base = x->u.module_map.load_base;
	m->size = x->u.module_map.size;
	if (bl > sizeof(m->build_id) || !x->u.module_map.build_id)
		bl = 0;
	memcpy(m->build_id, x->u.module_map.build_id, bl);
	m->build_id_len = (uint8_t)bl;
	m->path = malloc((size_t)x->u.module_map.path.len + 1);
	if (!m->path)
		return;
	memcpy(m->path, x->u.module_map.path.ptr, x->u.module_map.path.len);
	m->path[x->u.module_map.path.len] = '\0';
	ns->n++;
}

static const char *ns_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* The module's file name for output: any bytes in a trace become printable. */
static const char *ns_label(struct ns_module *m)
{
	if (!m->label) {
		const char *base = ns_base(m->path);

		m->label = printable_dup(base, strlen(base));
	}
	return m->label ? m->label : "?";
}

/* The last record of @id: a fork child may number its modules again. */
static struct ns_module *ns_module(struct nstack *ns, uint32_t id)
{
	for (uint32_t i = ns->n; i > 0; i--)
		if (ns->mods[i - 1].id == id)
			return &ns->mods[i - 1];
	return NULL;
}

/* The symbol at a run-time address of @m. */
static const char *ns_lookup(struct nstack *ns, struct ns_module *m, uint64_t run)
{
	const char *name;

	if (ns->no_elf)
		return NULL;
	if (!m->loaded) {
		m->loaded = -1;
		if (!ns->sym) {
			ns->sym = sym_ctx_new(NULL, 0);
			ns->own_sym = true;
		}
		if (ns->sym && !sym_file_get(ns->sym, m->path, &m->file) &&
		    sym_file_build_id_is(m->file, m->build_id, m->build_id_len))
			m->loaded = 1;
	}
	if (m->loaded != 1)
		return NULL;
	name = sym_name(m->file, sym_file_is_dyn(m->file) ? run - m->load_base : run);
	if (name && ns->demangle) {
		char *d = demangle_cxx(name);

		if (d) {
			free(ns->name_buf);
			/* the demangler may cut a multibyte character of a name */
			ns->name_buf = printable_valid(d) ? d : printable_dup(d, strlen(d));
			if (ns->name_buf != d)
				free(d);
			return ns->name_buf;
		}
	}
	if (!name || printable_valid(name))
		return name;
	/* an ELF file's names are any bytes too */
	free(ns->name_buf);
	ns->name_buf = printable_dup(name, strlen(name));
	return ns->name_buf;
}

int ns_resolve(struct nstack *ns, const struct fdrtrace_ext *x, uint32_t i, uint64_t *addr,
	       struct ns_frame *out)
{
	struct ns_module *m;
	uint32_t mod;
	uint64_t look;

	memset(out, 0, sizeof(*out));
	if (fdrtrace_ext_native_frame(x, i, addr, &mod) < 0)
		return -EINVAL;
	m = mod == 0xffffffffu ? NULL : ns_module(ns, mod);
	if (!m || !m->path)
		return 0;
	out->module = ns_label(m);
	out->offset = *addr - m->load_base;
	/* a return address: the call is the byte before it */
	look = (i == 0 && ns_kind(x) != NS_START) || !*addr ? *addr
										  : *addr - 1;
	out->name = ns_lookup(ns, m, look);
	return 0;
}

void ns_print(struct nstack *ns, const struct fdrtrace_ext *x, FILE *out, const char *indent)
{
	struct ns_frame f;
	uint64_t addr;

	for (uint32_t i = 0; ns_resolve(ns, x, i, &addr, &f) == 0; i++) {
		fprintf(out, "%s#%-2" PRIu32 " 0x%016" PRIx64 "  %s", indent, i, addr,
			f.name ? f.name : "??");
		if (f.module)
			fprintf(out, " (%s+0x%" PRIx64 ")\n", f.module, f.offset);
		else
			fputs(" (unknown module)\n", out);
	}
}

void ns_fini(struct nstack *ns)
{
	for (uint32_t i = 0; i < ns->n; i++) {
		free(ns->mods[i].path);
		free(ns->mods[i].label);
	}
	free(ns->mods);
	free(ns->name_buf);
	if (ns->own_sym)
		sym_ctx_free(ns->sym);
	memset(ns, 0, sizeof(*ns));
}

enum ns_kind ns_kind(const struct fdrtrace_ext *x)
{
	switch (x->u.native_stack.why) {
	case FDRTRACE_NATIVE_SIGNAL:
		return ns_signal_crashed(x->u.native_stack.signal) ? NS_CRASH : NS_KILLED;
	case FDRTRACE_NATIVE_SENT:
		return NS_KILLED;
	default:
		return NS_START;
	}
}

bool ns_signal_crashed(unsigned sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGABRT || sig == SIGSYS || sig == SIGTRAP;
}
