/* SPDX-License-Identifier: MIT */
/*
 * symbolizer.c - function names, files and lines from ELF files, on
 * elfutils (see symbolizer.h): the files opened once per context (a hash
 * by path, a file by device and inode), their function symbols and the
 * lookups by address and by name. Reading an ELF image and finding its
 * separate debug file is symbolizer_elf.c, the DWARF's files and lines
 * symbolizer_dwarf.c; what the three share is symbolizer_internal.h.
 *
 * Contract: single-threaded tool code. Every file is opened with
 * O_NONBLOCK, checked to be a regular file of at most SYM_FILE_MAX bytes,
 * mapped (MAP_PRIVATE: nothing ever reaches the file) and closed; libelf
 * reads the mapping (elf_memory), so section data, symbol and string tables
 * are used in place, never copied. libelf and libdw check every offset
 * they read; what this file reads beyond them (notes, program headers, the
 * XRay map's users) is bounds-checked here. What is mapped and read is
 * bounded by what a module can plausibly hold: a file whose symbol or
 * string table is over SYM_TABLE_MAX, or one of whose sections read here
 * lies in a hole of a sparse file (12 KB on disk, 3.7 GB long, with the
 * right build-id: 3.5 GB of RSS and 10 s reading zeros as symbols) is
 * refused, with one line on stderr naming it.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_id.h"
#include "symbolizer.h"
#include "symbolizer_internal.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* Symbols                                                             */
/* ------------------------------------------------------------------ */

static int sym_ent_cmp(const void *x, const void *y)
{
	const struct sym_ent *p = x, *q = y;
	size_t lp, lq;

	if (p->addr != q->addr)
		return p->addr < q->addr ? -1 : 1;
	/* Among aliases, the sized one first, then the shorter name. */
	if ((p->size == 0) != (q->size == 0))
		return p->size ? -1 : 1;
	lp = strlen(p->name);
	lq = strlen(q->name);
	if (lp != lq)
		return lp < lq ? -1 : 1;
	return strcmp(p->name, q->name);
}

/* Read the function symbols of the first table of @type in @im. */
static int sym_read_table(struct sym_file *f, const struct sym_img *im, Elf64_Word type)
{
	GElf_Shdr sh;
	Elf_Scn *scn = sym_img_scn(im, type, &sh);
	Elf_Data *d;
	size_t i, n, cap = 0;

	if (!scn || sh.sh_entsize != gelf_fsize(im->elf, ELF_T_SYM, 1, EV_CURRENT) ||
	    !(d = elf_getdata(scn, NULL)) || !d->d_size)
		return -ENOENT;
	n = d->d_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int t;

		if (!gelf_getsym(d, (int)i, &s))
			break;
		t = GELF_ST_TYPE(s.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		name = elf_strptr(im->elf, sh.sh_link, s.st_name);
		if (!name || !name[0])
			continue;
		if (f->n_syms == cap) {
			struct sym_ent *v;

			cap = cap ? cap * 2 : 256;
			v = realloc(f->syms, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			f->syms = v;
		}
		f->syms[f->n_syms++] = (struct sym_ent){ s.st_value, s.st_size, name };
	}
	if (!f->n_syms)
		return -ENOENT;
	qsort(f->syms, f->n_syms, sizeof(*f->syms), sym_ent_cmp);
	return 0;
}

/* .symtab, else the debug file's .symtab, else .dynsym: once. */
static bool sym_load_syms(struct sym_file *f)
{
	if (f->syms_state)
		return f->syms_state > 0;
	f->syms_state = -1;
	if (!sym_read_table(f, &f->img, SHT_SYMTAB) ||
	    (sym_find_debug(f) && !sym_read_table(f, &f->dbg, SHT_SYMTAB)) ||
	    !sym_read_table(f, &f->img, SHT_DYNSYM))
		f->syms_state = 1;
	return f->syms_state > 0;
}

const char *sym_name(struct sym_file *f, uint64_t addr)
{
	size_t lo = 0, hi;
	const struct sym_ent *s;

	if (!sym_load_syms(f))
		return NULL;
	hi = f->n_syms;
	/* The last symbol at or below @addr... */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* ...the first of its aliases (sorted to prefer the sized one). */
	while (lo > 1 && f->syms[lo - 2].addr == f->syms[lo - 1].addr)
		lo--;
	s = &f->syms[lo - 1];
	if (s->size && addr - s->addr >= s->size)
		return NULL;
	return s->name;
}

static uint64_t sym_str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

unsigned sym_name_count(struct sym_file *f, const char *name)
{
	size_t i, j, mask;
	unsigned count = 0;
	uint64_t last = 0;

	if (!sym_load_syms(f))
		return 0;
	if (!f->name_hash) {
		size_t cap = 16;

		while (cap < 2 * f->n_syms)
			cap *= 2;
		f->name_hash = calloc(cap, sizeof(*f->name_hash));
		if (!f->name_hash)
			return 0;
		f->name_hash_cap = cap;
		for (i = 0; i < f->n_syms; i++) {
			j = sym_str_hash(f->syms[i].name) & (cap - 1);
			while (f->name_hash[j])
				j = (j + 1) & (cap - 1);
			f->name_hash[j] = (uint32_t)(i + 1);
		}
	}
	mask = f->name_hash_cap - 1;
	/*
	 * Entries of one name were inserted in address order, so they are met
	 * in address order along the probe sequence: aliases of one address
	 * are counted once.
	 */
	for (j = sym_str_hash(name) & mask; f->name_hash[j]; j = (j + 1) & mask) {
		const struct sym_ent *s = &f->syms[f->name_hash[j] - 1];

		if (strcmp(s->name, name) == 0 && (!count || s->addr != last)) {
			count++;
			last = s->addr;
		}
	}
	return count;
}

/* ------------------------------------------------------------------ */
/* Files and the context                                               */
/* ------------------------------------------------------------------ */

static void sym_file_free(struct sym_file *f)
{
	size_t i;

	for (i = 0; i < f->n_cus; i++)
		free(f->cus[i].fns);
	free(f->cus);
	free(f->ranges);
	if (f->dw)
		dwarf_end(f->dw);
	free(f->syms);
	free(f->name_hash);
	sym_img_close(&f->dbg);
	sym_img_close(&f->img);
	free(f->path);
	free(f);
}

struct sym_ctx *sym_ctx_new(const char *const *debug_dirs, size_t n_dirs)
{
	static const char *const dflt[] = { "/usr/lib/debug" };
	struct sym_ctx *c = calloc(1, sizeof(*c));
	size_t i;

	if (!c)
		return NULL;
	elf_version(EV_CURRENT);
	if (!n_dirs) {
		debug_dirs = dflt;
		n_dirs = 1;
	}
	c->dirs = calloc(n_dirs, sizeof(*c->dirs));
	if (!c->dirs) {
		free(c);
		return NULL;
	}
	for (i = 0; i < n_dirs; i++) {
		size_t n = strlen(debug_dirs[i]);

		/* "DIR/" and "DIR" are the same directory. */
		while (n > 1 && debug_dirs[i][n - 1] == '/')
			n--;
		c->dirs[i] = strndup(debug_dirs[i], n);
		if (!c->dirs[i]) {
			c->n_dirs = i;
			sym_ctx_free(c);
			return NULL;
		}
	}
	c->n_dirs = n_dirs;
	return c;
}

void sym_ctx_free(struct sym_ctx *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n_files; i++)
		sym_file_free(c->files[i]);
	free(c->files);
	for (i = 0; i < c->paths_cap; i++)
		free(c->paths[i].path);
	free(c->paths);
	for (i = 0; i < c->n_dirs; i++)
		free(c->dirs[i]);
	free(c->dirs);
	free(c);
}

/* The slot of @path in the path hash (empty when absent). */
static struct sym_path *sym_path_slot(struct sym_path *v, size_t cap, const char *path)
{
	size_t j = sym_str_hash(path) & (cap - 1);

	while (v[j].path && strcmp(v[j].path, path))
		j = (j + 1) & (cap - 1);
	return &v[j];
}

static int sym_paths_grow(struct sym_ctx *c)
{
	size_t cap = c->paths_cap ? c->paths_cap * 2 : 64, i;
	struct sym_path *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < c->paths_cap; i++)
		if (c->paths[i].path)
			*sym_path_slot(v, cap, c->paths[i].path) = c->paths[i];
	free(c->paths);
	c->paths = v;
	c->paths_cap = cap;
	return 0;
}

/* Open @path as a new file, or find the open file it is another name of. */
static int sym_file_open(struct sym_ctx *c, const char *path, struct sym_file **out)
{
	struct sym_file *f;
	size_t i;
	int rc;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	rc = sym_img_open(path, &f->img);
	if (rc) {
		free(f);
		return rc;
	}
	for (i = 0; i < c->n_files; i++) {
		if (c->files[i]->img.dev == f->img.dev && c->files[i]->img.ino == f->img.ino) {
			sym_img_close(&f->img);
			free(f);
			*out = c->files[i];
			return 0;
		}
	}
	if (c->n_files == c->files_cap) {
		size_t cap = c->files_cap ? c->files_cap * 2 : 16;
		struct sym_file **v = realloc(c->files, cap * sizeof(*v));

		if (!v)
			goto oom;
		c->files = v;
		c->files_cap = cap;
	}
	f->path = strdup(path);
	if (!f->path)
		goto oom;
	f->ctx = c;
	c->files[c->n_files++] = f;
	*out = f;
	return 0;
oom:
	sym_img_close(&f->img);
	free(f);
	return -ENOMEM;
}

int sym_file_get(struct sym_ctx *c, const char *path, struct sym_file **out)
{
	struct sym_path *p;
	struct sym_file *f = NULL;
	int rc;

	*out = NULL;
	if (c->paths_cap) {
		p = sym_path_slot(c->paths, c->paths_cap, path);
		if (p->path) {
			*out = p->file;
			return p->err;
		}
	}
	if ((c->n_paths + 1) * 2 > c->paths_cap && sym_paths_grow(c))
		return -ENOMEM;
	rc = sym_file_open(c, path, &f);
	if (rc == -ENOMEM)
		return rc;	/* not remembered: may work later */
	p = sym_path_slot(c->paths, c->paths_cap, path);
	p->path = strdup(path);
	if (!p->path)
		return -ENOMEM;
	p->file = f;
	p->err = rc;
	c->n_paths++;
	*out = f;
	return rc;
}

bool sym_file_build_id_is(const struct sym_file *f, const uint8_t *id, size_t len)
{
	return !len || (f->img.build_id_len == len && memcmp(f->img.build_id, id, len) == 0);
}

size_t sym_file_build_id(const struct sym_file *f, const uint8_t **id)
{
	*id = f->img.build_id;
	return f->img.build_id_len;
}

bool sym_file_first_mismatch(struct sym_file *f)
{
	bool first = !f->mismatch_said;

	f->mismatch_said = true;
	return first;
}

bool sym_file_is_dyn(const struct sym_file *f)
{
	return f->img.is_dyn;
}

const char *sym_file_path(const struct sym_file *f)
{
	return f->path;
}

int sym_section(struct sym_file *f, const char *name, const uint8_t **data, uint64_t *size,
		uint64_t *addr)
{
	GElf_Shdr sh;
	Elf_Scn *scn = sym_img_named(&f->img, name, &sh);
	Elf_Data *d;

	if (!scn || sh.sh_type == SHT_NOBITS || !(d = elf_rawdata(scn, NULL)) || !d->d_buf)
		return -ENOENT;
	*data = d->d_buf;
	*size = d->d_size;
	*addr = sh.sh_addr;
	return 0;
}

/* ------------------------------------------------------------------ */
/* One-off questions about a program (fdrtrace record)                 */
/* ------------------------------------------------------------------ */

int sym_needs(const char *path, const char *prefix)
{
	struct sym_img im;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *d;
	size_t i, n, plen = strlen(prefix);
	int rc = sym_img_open(path, &im), found = 0;

	if (rc)
		return rc;
	scn = sym_img_scn(&im, SHT_DYNAMIC, &sh);
	d = scn ? elf_getdata(scn, NULL) : NULL;
	n = d && sh.sh_entsize ? d->d_size / sh.sh_entsize : 0;
	for (i = 0; i < n && !found; i++) {
		GElf_Dyn dyn;
		const char *name;

		if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag != DT_NEEDED)
			continue;
		name = elf_strptr(im.elf, sh.sh_link, dyn.d_un.d_val);
		found = name && strncmp(name, prefix, plen) == 0;
	}
	sym_img_close(&im);
	return found;
}

int sym_references(const char *path, const char *name)
{
	static const Elf64_Word types[] = { SHT_SYMTAB, SHT_DYNSYM };
	struct sym_img im;
	int rc = sym_img_open(path, &im), found = 0;

	if (rc)
		return rc;
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]) && !found; t++) {
		GElf_Shdr sh;
		Elf_Scn *scn = sym_img_scn(&im, types[t], &sh);
		Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
		size_t n = d && sh.sh_entsize ? d->d_size / sh.sh_entsize : 0;

		for (size_t i = 0; i < n && !found; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(d, (int)i, &sym) || !sym.st_name)
				continue;
			s = elf_strptr(im.elf, sh.sh_link, sym.st_name);
			found = s && strcmp(s, name) == 0;
		}
	}
	sym_img_close(&im);
	return found;
}

int sym_defines(const char *path, const char *name)
{
	struct sym_ctx *c = sym_ctx_new(NULL, 0);
	struct sym_file *f;
	int rc;

	if (!c)
		return -ENOMEM;
	rc = sym_file_get(c, path, &f);
	if (!rc)
		rc = sym_name_count(f, name) > 0;
	sym_ctx_free(c);
	return rc;
}
