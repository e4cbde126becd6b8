/* SPDX-License-Identifier: MIT */
/*
 * symbolizer_internal.h - what the symbolizer's three files share: the
 * context and its files (symbolizer.c: the cache, symbols, lookups), the
 * mapped ELF images (symbolizer_elf.c) and the DWARF index
 * (symbolizer_dwarf.c). Internal to the fdrtrace command; the API is
 * symbolizer.h. Single-threaded.
 */
#ifndef FDRTRACE_SYMBOLIZER_INTERNAL_H
#define FDRTRACE_SYMBOLIZER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "build_id.h"

/* No module has a symbol or string table this large (44 M symbols). */
#define SYM_TABLE_MAX (1ull << 30)

/* One function symbol. */
struct sym_ent {
	uint64_t addr;
	uint64_t size;
	const char *name;	/* in the mapped string table */
};

/* One mapped ELF image: the file, or its separate debug file. */
struct sym_img {
	Elf *elf;
	void *map;
	size_t len;
	dev_t dev;
	ino_t ino;
	uint8_t build_id[FDR_BUILD_ID_MAX];
	uint8_t build_id_len;
	bool is_dyn;
};

/* One function's code range in an indexed compile unit. */
struct sym_fn {
	uint64_t lo, hi;
	const char *file;	/* owned by libdw, lives until dwarf_end() */
	unsigned line;
};

/* A compile unit: its DIE offset, and its functions once indexed. */
struct sym_cu {
	Dwarf_Off off;
	struct sym_fn *fns;
	size_t n_fns;
	bool indexed;
};

/* A code range of a compile unit (index into sym_file.cus). */
struct sym_range {
	uint64_t lo, hi;
	size_t cu;
};

struct sym_file {
	char *path;
	struct sym_ctx *ctx;
	struct sym_img img;
	struct sym_img dbg;	/* the separate debug file, when found */
	int dbg_state;		/* 0 not looked for, 1 found, -1 none */

	int syms_state;		/* 0 not read, 1 read, -1 none */
	struct sym_ent *syms;
	size_t n_syms;
	uint32_t *name_hash;	/* symbol index + 1, 0 empty */
	size_t name_hash_cap;

	int dw_state;		/* 0 not opened, 1 open, -1 no DWARF */
	bool mismatch_said;	/* sym_file_first_mismatch() */
	Dwarf *dw;
	struct sym_cu *cus;
	size_t n_cus;
	struct sym_range *ranges;
	size_t n_ranges;
};

/* A path asked for: the file it opened, or the error it gave. */
struct sym_path {
	char *path;
	struct sym_file *file;
	int err;
};

struct sym_ctx {
	char **dirs;
	size_t n_dirs;
	struct sym_path *paths;	/* open-addressing hash by path */
	size_t n_paths, paths_cap;
	struct sym_file **files;	/* distinct files */
	size_t n_files, files_cap;
};

/**
 * sym_img_open - open @path without blocking, accept a regular ELF file
 * only, map it and check it is plausible as a module (symbolizer.c's
 * contract); a file refused as implausible is said on stderr
 * @path: the file
 * @im: filled in; sym_img_close() it after success
 *
 * Return: 0, or a negative errno (see sym_file_get()).
 */
int sym_img_open(const char *path, struct sym_img *im);

/* sym_img_close - unmap @im and end its libelf handle; @im is zeroed. */
void sym_img_close(struct sym_img *im);

/* sym_img_scn - @im's first section of @type, its header in @sh; NULL if none. */
Elf_Scn *sym_img_scn(const struct sym_img *im, Elf64_Word type, GElf_Shdr *sh);

/* sym_img_named - @im's section called @name, its header in @sh; NULL if none. */
Elf_Scn *sym_img_named(const struct sym_img *im, const char *name, GElf_Shdr *sh);

/**
 * sym_find_debug - look for @f's separate debug file once: by build-id
 * under the context's debug directories, then by .gnu_debuglink
 * @f: the file; on success its dbg image is mapped (freed with @f)
 *
 * Return: whether @f has a debug file.
 */
bool sym_find_debug(struct sym_file *f);

#endif /* FDRTRACE_SYMBOLIZER_INTERNAL_H */
