/* SPDX-License-Identifier: MIT */
/*
 * symbolizer.c - function names, files and lines from ELF files, on
 * elfutils (see symbolizer.h).
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
#include "util.h"

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

/* ------------------------------------------------------------------ */
/* Images                                                              */
/* ------------------------------------------------------------------ */

static void sym_img_close(struct sym_img *im)
{
	if (im->elf)
		elf_end(im->elf);
	if (im->map)
		munmap(im->map, im->len);
	memset(im, 0, sizeof(*im));
}

/* The GNU build-id from the note sections, else from the PT_NOTE segments. */
static void sym_img_build_id(struct sym_img *im)
{
	Elf_Scn *scn = NULL;
	size_t i, nph = 0;

	while (!im->build_id_len && (scn = elf_nextscn(im->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_rawdata(scn, NULL);
		if (d && d->d_buf && d->d_size)
			im->build_id_len = fdr_build_id_in_notes(d->d_buf, d->d_size,
								 sh.sh_addralign, im->build_id);
	}
	if (im->build_id_len || elf_getphdrnum(im->elf, &nph))
		return;
	for (i = 0; i < nph && !im->build_id_len; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(im->elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
		    ph.p_offset > im->len || ph.p_filesz > im->len - ph.p_offset)
			continue;
		im->build_id_len = fdr_build_id_in_notes((const uint8_t *)im->map + ph.p_offset,
							 ph.p_filesz, ph.p_align, im->build_id);
	}
}

/* Is @name a section this file reads whole (symbols, notes, DWARF, XRay)? */
static bool sym_read_whole(const char *name)
{
	return !strncmp(name, ".debug", 6) || !strncmp(name, ".zdebug", 7) ||
	       !strcmp(name, "xray_instr_map") || !strcmp(name, ".gnu_debuglink");
}

/*
 * Why @im (mapped from @fd, @st) is not plausible as a module, or NULL: a
 * symbol or string table over SYM_TABLE_MAX, or a section that is read
 * whole lying, in part, in a hole of the file (checked when the file has
 * holes at all: fewer blocks than its size). A real ELF file's tables
 * hold no 4 KB of zeros; a hole reads as zeros, page after page.
 */
static const char *sym_img_implausible(const struct sym_img *im, int fd, const struct stat *st)
{
	bool sparse = (uint64_t)st->st_blocks * 512 < (uint64_t)st->st_size;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(im->elf, &shstrndx))
		shstrndx = 0;
	while ((scn = elf_nextscn(im->elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		bool table;
		off_t hole;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size ||
		    sh.sh_offset > im->len || sh.sh_size > im->len - sh.sh_offset)
			continue;	/* nothing in the file, or libelf refuses it */
		table = sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM ||
			sh.sh_type == SHT_STRTAB;
		if (table && sh.sh_size > SYM_TABLE_MAX)
			return "a symbol or string table over 1 GiB";
		if (!sparse)
			continue;
		name = shstrndx ? elf_strptr(im->elf, shstrndx, sh.sh_name) : NULL;
		if (!table && sh.sh_type != SHT_NOTE && !(name && sym_read_whole(name)))
			continue;
		hole = lseek(fd, (off_t)sh.sh_offset, SEEK_HOLE);
		if (hole >= 0 && (uint64_t)hole < sh.sh_offset + sh.sh_size)
			return "a section it would read lies in a hole of the sparse file";
	}
	return NULL;
}

/*
 * Open @path without blocking, accept a regular ELF file only, and map it.
 * A file refused by sym_img_implausible() is said on stderr.
 * Return: 0, or a negative errno (see sym_file_get()).
 */
static int sym_img_open(const char *path, struct sym_img *im)
{
	const char *why;
	struct stat st;
	GElf_Ehdr eh;
	void *map;
	int fd, rc = 0;

	memset(im, 0, sizeof(*im));
	/* O_NONBLOCK: opening a FIFO for reading must not wait for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL;
	else if ((uint64_t)st.st_size > SYM_FILE_MAX)
		rc = -EFBIG;
	else if ((uint64_t)st.st_size < sizeof(Elf32_Ehdr))
		rc = -ENOEXEC;
	if (rc) {
		close(fd);
		return rc;
	}
	/* Writable and private: libelf may write to its image, never to the file. */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		rc = -errno;
		close(fd);
		return rc;
	}
	im->map = map;
	im->len = (size_t)st.st_size;
	im->dev = st.st_dev;
	im->ino = st.st_ino;
	im->elf = elf_memory(map, im->len);
	if (!im->elf || elf_kind(im->elf) != ELF_K_ELF || !gelf_getehdr(im->elf, &eh)) {
		close(fd);
		sym_img_close(im);
		return -ENOEXEC;
	}
	why = sym_img_implausible(im, fd, &st);
	close(fd);
	if (why) {
		tool_err("%s: not used: %s (%llu bytes on disk, %llu long)", path, why,
			 (unsigned long long)st.st_blocks * 512, (unsigned long long)st.st_size);
		sym_img_close(im);
		return -EFBIG;
	}
	im->is_dyn = eh.e_type == ET_DYN;
	sym_img_build_id(im);
	return 0;
}

/* The first section of type @type with contents, or NULL. */
static Elf_Scn *sym_img_scn(const struct sym_img *im, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(im->elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type && sh->sh_size)
			return scn;
	return NULL;
}

/* The section named @name, or NULL. */
static Elf_Scn *sym_img_named(const struct sym_img *im, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(im->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(im->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh) || !(n = elf_strptr(im->elf, shstrndx, sh->sh_name)))
			continue;
		if (strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The separate debug file                                             */
/* ------------------------------------------------------------------ */

/* CRC-32 (IEEE, as .gnu_debuglink records it) of @len bytes. */
static uint32_t sym_crc32(const uint8_t *p, size_t len)
{
	static uint32_t table[256];
	uint32_t crc = 0xffffffffu;
	size_t i;

	if (!table[1]) {
		for (i = 0; i < 256; i++) {
			uint32_t c = (uint32_t)i;
			int k;

			for (k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	}
	for (i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

/*
 * Try @path as @f's debug file: it must be another file than @f, with
 * @f's build-id, or (when @f has none) the CRC @crc.
 */
static bool sym_try_debug(struct sym_file *f, const char *path, bool check_crc, uint32_t crc)
{
	struct sym_img d;

	if (sym_img_open(path, &d))
		return false;
	if ((d.dev == f->img.dev && d.ino == f->img.ino) ||
	    (f->img.build_id_len && (d.build_id_len != f->img.build_id_len ||
				     memcmp(d.build_id, f->img.build_id, d.build_id_len))) ||
	    (!f->img.build_id_len && (!check_crc || sym_crc32(d.map, d.len) != crc))) {
		sym_img_close(&d);
		return false;
	}
	f->dbg = d;
	return true;
}

/* Look for the separate debug file once: by build-id, then .gnu_debuglink. */
static bool sym_find_debug(struct sym_file *f)
{
	struct sym_ctx *c = f->ctx;
	char path[PATH_MAX], dir[PATH_MAX];
	const char *link, *slash;
	GElf_Word crc = 0;
	size_t i, dl;

	if (f->dbg_state)
		return f->dbg_state > 0;
	f->dbg_state = -1;
	for (i = 0; i < c->n_dirs && f->img.build_id_len; i++)
		if (!fdr_build_id_debug_path(c->dirs[i], f->img.build_id, f->img.build_id_len, path,
					     sizeof(path)) &&
		    sym_try_debug(f, path, false, 0))
			goto found;
	link = dwelf_elf_gnu_debuglink(f->img.elf, &crc);
	/* A file name only: the link is read from a file a trace named. */
	if (!link || !link[0] || strchr(link, '/') || !strcmp(link, ".") || !strcmp(link, ".."))
		return false;
	slash = strrchr(f->path, '/');
	dl = slash ? (size_t)(slash - f->path) : 0;
	if (dl >= sizeof(dir))
		return false;
	memcpy(dir, f->path, dl);
	dir[dl] = '\0';
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dl ? dir : ".", link) < sizeof(path) &&
	    sym_try_debug(f, path, true, crc))
		goto found;
	if ((size_t)snprintf(path, sizeof(path), "%s/.debug/%s", dl ? dir : ".", link) <
		    sizeof(path) &&
	    sym_try_debug(f, path, true, crc))
		goto found;
	for (i = 0; i < c->n_dirs && dir[0] == '/'; i++)
		if ((size_t)snprintf(path, sizeof(path), "%s%s/%s", c->dirs[i], dir, link) <
			    sizeof(path) &&
		    sym_try_debug(f, path, true, crc))
			goto found;
	return false;
found:
	f->dbg_state = 1;
	return true;
}

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
