/* SPDX-License-Identifier: MIT */
/*
 * symbolizer_dwarf.c - a function's declaration file and line from the
 * DWARF of its file, else of its separate debug file (sym_location()).
 * The DWARF is opened once per file and its compile units' code ranges
 * indexed; a compile unit's functions are indexed the first time an
 * address falls in it. libdw inflates compressed sections itself.
 *
 * Contract: single-threaded tool code.
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
/* DWARF: declaration file and line                                    */
/* ------------------------------------------------------------------ */

static bool sym_img_has_dwarf(const struct sym_img *im)
{
	GElf_Shdr sh;

	if (sym_img_named(im, ".debug_info", &sh) && sh.sh_type != SHT_NOBITS && sh.sh_size)
		return true;
	return sym_img_named(im, ".zdebug_info", &sh) && sh.sh_type != SHT_NOBITS && sh.sh_size;
}

static int sym_range_cmp(const void *x, const void *y)
{
	const struct sym_range *p = x, *q = y;

	return p->lo < q->lo ? -1 : p->lo > q->lo;
}

/* Open the DWARF once (the file's own, else the debug file's); index the CUs' ranges. */
static bool sym_open_dwarf(struct sym_file *f)
{
	const struct sym_img *im;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t unit_type;
	size_t cu_cap = 0, r_cap = 0;

	if (f->dw_state)
		return f->dw_state > 0;
	f->dw_state = -1;
	if (sym_img_has_dwarf(&f->img))
		im = &f->img;
	else if (sym_find_debug(f) && sym_img_has_dwarf(&f->dbg))
		im = &f->dbg;
	else
		return false;
	/* libdw inflates SHF_COMPRESSED and .zdebug sections itself. */
	f->dw = dwarf_begin_elf(im->elf, DWARF_C_READ, NULL);
	if (!f->dw)
		return false;
	while (dwarf_get_units(f->dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t o = 0;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		if (f->n_cus == cu_cap) {
			struct sym_cu *v;

			cu_cap = cu_cap ? cu_cap * 2 : 64;
			v = realloc(f->cus, cu_cap * sizeof(*v));
			if (!v)
				break;
			f->cus = v;
		}
		f->cus[f->n_cus] = (struct sym_cu){ .off = dwarf_dieoffset(&cudie) };
		while ((o = dwarf_ranges(&cudie, o, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (f->n_ranges == r_cap) {
				struct sym_range *v;

				r_cap = r_cap ? r_cap * 2 : 256;
				v = realloc(f->ranges, r_cap * sizeof(*v));
				if (!v)
					break;
				f->ranges = v;
			}
			f->ranges[f->n_ranges++] = (struct sym_range){ lo, hi, f->n_cus };
		}
		f->n_cus++;
	}
	if (f->n_ranges)
		qsort(f->ranges, f->n_ranges, sizeof(*f->ranges), sym_range_cmp);
	f->dw_state = 1;
	return true;
}

struct sym_fn_vec {
	struct sym_fn *v;
	size_t n, cap;
	bool oom;
};

/*
 * DW_AT_decl_file of @die (through DW_AT_specification and
 * DW_AT_abstract_origin), from the file table of the unit that holds the
 * attribute. Not dwarf_decl_file(): elfutils 0.188 refuses index 0, which
 * DWARF 5 (clang's default) uses for the unit's primary file.
 */
static const char *sym_decl_file(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	Dwarf_Word idx;
	Dwarf_Files *files;
	Dwarf_Die cudie;
	size_t n;

	if (!dwarf_attr_integrate(die, DW_AT_decl_file, &at) || dwarf_formudata(&at, &idx) ||
	    !dwarf_cu_die(at.cu, &cudie, NULL, NULL, NULL, NULL, NULL, NULL) ||
	    dwarf_getsrcfiles(&cudie, &files, &n) || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static void sym_add_fn(struct sym_fn_vec *fv, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t o = 0;
	const char *file = sym_decl_file(die);
	int line = 0;

	if (!file || dwarf_decl_line(die, &line) || line <= 0)
		return;
	while ((o = dwarf_ranges(die, o, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (fv->n == fv->cap) {
			size_t cap = fv->cap ? fv->cap * 2 : 64;
			struct sym_fn *v = realloc(fv->v, cap * sizeof(*v));

			if (!v) {
				fv->oom = true;
				return;
			}
			fv->v = v;
			fv->cap = cap;
		}
		fv->v[fv->n++] = (struct sym_fn){ lo, hi, file, (unsigned)line };
	}
}

/* The functions under @parent: at CU level, in namespaces, classes, modules. */
static void sym_walk(struct sym_fn_vec *fv, Dwarf_Die *parent, int depth)
{
	Dwarf_Die die;

	if (depth > 64 || dwarf_child(parent, &die) != 0)
		return;
	do {
		switch (dwarf_tag(&die)) {
		case DW_TAG_subprogram:
			sym_add_fn(fv, &die);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			sym_walk(fv, &die, depth + 1);
			break;
		default:
			break;
		}
	} while (!fv->oom && dwarf_siblingof(&die, &die) == 0);
}

static int sym_fn_cmp(const void *x, const void *y)
{
	const struct sym_fn *p = x, *q = y;

	return p->lo < q->lo ? -1 : p->lo > q->lo;
}

static void sym_index_cu(struct sym_file *f, struct sym_cu *cu)
{
	struct sym_fn_vec fv = { 0 };
	Dwarf_Die cudie;

	cu->indexed = true;
	if (!dwarf_offdie(f->dw, cu->off, &cudie))
		return;
	sym_walk(&fv, &cudie, 0);
	if (fv.n)
		qsort(fv.v, fv.n, sizeof(*fv.v), sym_fn_cmp);
	cu->fns = fv.v;
	cu->n_fns = fv.n;
}

/* The innermost function of @cu whose code holds @addr, or NULL. */
static const struct sym_fn *sym_cu_find(const struct sym_cu *cu, uint64_t addr)
{
	size_t lo = 0, hi = cu->n_fns, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cu->fns[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* A few steps back: ranges may nest (a nested function). */
	for (k = lo; k > 0 && lo - k < 16; k--)
		if (addr < cu->fns[k - 1].hi)
			return &cu->fns[k - 1];
	return NULL;
}

int sym_location(struct sym_file *f, uint64_t addr, const char **file, unsigned *line)
{
	size_t lo = 0, hi, k;

	if (!sym_open_dwarf(f))
		return -ENOENT;
	hi = f->n_ranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k > 0 && lo - k < 16; k--) {
		const struct sym_range *r = &f->ranges[k - 1];
		struct sym_cu *cu = &f->cus[r->cu];
		const struct sym_fn *fn;

		if (addr >= r->hi)
			continue;
		if (!cu->indexed)
			sym_index_cu(f, cu);
		fn = sym_cu_find(cu, addr);
		if (fn) {
			*file = fn->file;
			*line = fn->line;
			return 0;
		}
	}
	return -ENOENT;
}
