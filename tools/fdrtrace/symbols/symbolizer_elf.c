/* SPDX-License-Identifier: MIT */
/*
 * symbolizer_elf.c - the symbolizer's ELF images: a file opened without
 * blocking, checked, mapped and handed to libelf (elf_memory); its
 * build-id and sections; the separate debug file found by build-id or
 * .gnu_debuglink. The bounds and plausibility rules are symbolizer.c's
 * contract.
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
/* Images                                                              */
/* ------------------------------------------------------------------ */

void sym_img_close(struct sym_img *im)
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
int sym_img_open(const char *path, struct sym_img *im)
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
Elf_Scn *sym_img_scn(const struct sym_img *im, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(im->elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type && sh->sh_size)
			return scn;
	return NULL;
}

/* The section named @name, or NULL. */
Elf_Scn *sym_img_named(const struct sym_img *im, const char *name, GElf_Shdr *sh)
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
bool sym_find_debug(struct sym_file *f)
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
