/* SPDX-License-Identifier: MIT */
/*
 * elfsym.c - DT_NEEDED, build-id and function symbols of ELF64 files (see
 * elfsym.h).
 *
 * Contract: single-threaded tool code. Every offset and size read from the
 * file is checked against the file's size before use.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsym.h"

struct elf_file {
	int fd;
	uint64_t size;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
};

static void elf_close(struct elf_file *e)
{
	free(e->sh);
	if (e->fd >= 0)
		close(e->fd);
}

/* Read @len bytes at @off into new memory (one spare NUL byte after them). */
static void *elf_read(const struct elf_file *e, uint64_t off, uint64_t len)
{
	uint8_t *p;

	if (off > e->size || len > e->size - off || len > (1ull << 31))
		return NULL;
	p = malloc(len + 1);
	if (!p)
		return NULL;
	if (pread(e->fd, p, len, (off_t)off) != (ssize_t)len) {
		free(p);
		return NULL;
	}
	p[len] = 0;
	return p;
}

static int elf_open(const char *path, struct elf_file *e)
{
	struct stat sb;

	memset(e, 0, sizeof(*e));
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		return -errno;
	if (fstat(e->fd, &sb) || !S_ISREG(sb.st_mode))
		goto noexec;
	e->size = (uint64_t)sb.st_size;
	if (pread(e->fd, &e->eh, sizeof(e->eh), 0) != (ssize_t)sizeof(e->eh))
		goto noexec;
	if (memcmp(e->eh.e_ident, ELFMAG, SELFMAG) || e->eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->eh.e_ident[EI_DATA] != ELFDATA2LSB || e->eh.e_shentsize != sizeof(Elf64_Shdr))
		goto noexec;
	if (e->eh.e_shnum) {
		e->sh = elf_read(e, e->eh.e_shoff, (uint64_t)e->eh.e_shnum * sizeof(Elf64_Shdr));
		if (!e->sh)
			goto noexec;
	}
	return 0;
noexec:
	elf_close(e);
	return -ENOEXEC;
}

/* The section linked from @s (its string table), or NULL. */
static const Elf64_Shdr *elf_link(const struct elf_file *e, const Elf64_Shdr *s)
{
	return s->sh_link < e->eh.e_shnum ? &e->sh[s->sh_link] : NULL;
}

int elf_needs(const char *path, const char *prefix)
{
	struct elf_file e;
	size_t plen = strlen(prefix);
	int rc = elf_open(path, &e), found = 0;
	unsigned i;

	if (rc)
		return rc;
	for (i = 0; i < e.eh.e_shnum && !found; i++) {
		const Elf64_Shdr *s = &e.sh[i], *str;
		Elf64_Dyn *d;
		char *names;
		uint64_t k, n;

		if (s->sh_type != SHT_DYNAMIC || !(str = elf_link(&e, s)))
			continue;
		d = elf_read(&e, s->sh_offset, s->sh_size);
		names = elf_read(&e, str->sh_offset, str->sh_size);
		n = s->sh_size / sizeof(Elf64_Dyn);
		for (k = 0; d && names && k < n && d[k].d_tag != DT_NULL; k++)
			if (d[k].d_tag == DT_NEEDED && d[k].d_un.d_val < str->sh_size &&
			    strncmp(names + d[k].d_un.d_val, prefix, plen) == 0)
				found = 1;
		free(d);
		free(names);
	}
	elf_close(&e);
	return found;
}

/* Does the file's NT_GNU_BUILD_ID note equal @id? */
static bool elf_build_id_is(const struct elf_file *e, const uint8_t *id, size_t len)
{
	unsigned i;

	for (i = 0; i < e->eh.e_shnum; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		uint8_t *p;
		uint64_t off = 0;
		bool same = false, seen = false;

		if (s->sh_type != SHT_NOTE)
			continue;
		p = elf_read(e, s->sh_offset, s->sh_size);
		if (!p)
			continue;
		while (off + sizeof(Elf64_Nhdr) <= s->sh_size) {
			Elf64_Nhdr nh;
			uint64_t name_sz, desc_sz;

			memcpy(&nh, p + off, sizeof(nh));
			name_sz = ((uint64_t)nh.n_namesz + 3) & ~3ull;
			desc_sz = ((uint64_t)nh.n_descsz + 3) & ~3ull;
			if (name_sz + desc_sz > s->sh_size - off - sizeof(nh))
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp(p + off + sizeof(nh), "GNU", 4) == 0) {
				seen = true;
				same = nh.n_descsz == len &&
				       memcmp(p + off + sizeof(nh) + name_sz, id, len) == 0;
				break;
			}
			off += sizeof(nh) + name_sz + desc_sz;
		}
		free(p);
		if (seen)
			return same;
	}
	return false;
}

static int elf_sym_cmp(const void *x, const void *y)
{
	const struct elf_sym *p = x, *q = y;

	if (p->addr != q->addr)
		return p->addr < q->addr ? -1 : 1;
	/* Among aliases, prefer the sized one, then the shorter name. */
	if ((p->size == 0) != (q->size == 0))
		return p->size ? -1 : 1;
	return (int)(strlen(p->name) - strlen(q->name));
}

int elf_syms_load(const char *path, const uint8_t *build_id, size_t build_id_len,
		  struct elf_syms *out)
{
	struct elf_file e;
	const Elf64_Shdr *tab = NULL, *str;
	Elf64_Sym *syms = NULL;
	uint64_t k, n;
	unsigned i;
	int rc = elf_open(path, &e);

	memset(out, 0, sizeof(*out));
	if (rc)
		return rc;
	if (build_id && build_id_len && !elf_build_id_is(&e, build_id, build_id_len)) {
		elf_close(&e);
		return -ESTALE;
	}
	for (i = 0; i < e.eh.e_shnum; i++)
		if (e.sh[i].sh_type == SHT_SYMTAB)
			tab = &e.sh[i];
	for (i = 0; !tab && i < e.eh.e_shnum; i++)
		if (e.sh[i].sh_type == SHT_DYNSYM)
			tab = &e.sh[i];
	if (!tab || !(str = elf_link(&e, tab)) || tab->sh_entsize != sizeof(Elf64_Sym)) {
		elf_close(&e);
		return -ENOENT;
	}
	syms = elf_read(&e, tab->sh_offset, tab->sh_size);
	out->strings = elf_read(&e, str->sh_offset, str->sh_size);
	n = tab->sh_size / sizeof(Elf64_Sym);
	out->v = calloc(n ? n : 1, sizeof(*out->v));
	if (!syms || !out->strings || !out->v) {
		free(syms);
		elf_close(&e);
		elf_syms_free(out);
		return -ENOMEM;
	}
	for (k = 0; k < n; k++) {
		if (ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC || !syms[k].st_value ||
		    syms[k].st_shndx == SHN_UNDEF || syms[k].st_name >= str->sh_size ||
		    !out->strings[syms[k].st_name])
			continue;
		out->v[out->n].addr = syms[k].st_value;
		out->v[out->n].size = syms[k].st_size;
		out->v[out->n].name = out->strings + syms[k].st_name;
		out->n++;
	}
	out->is_dyn = e.eh.e_type == ET_DYN;
	free(syms);
	elf_close(&e);
	qsort(out->v, out->n, sizeof(*out->v), elf_sym_cmp);
	return out->n ? 0 : -ENOENT;
}

const char *elf_syms_find(const struct elf_syms *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	/* The last symbol at or below @addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* First of the aliases at that address (sorted to prefer sized ones). */
	while (lo > 1 && s->v[lo - 2].addr == s->v[lo - 1].addr)
		lo--;
	if (s->v[lo - 1].size && addr >= s->v[lo - 1].addr + s->v[lo - 1].size)
		return NULL;
	return s->v[lo - 1].name;
}

void elf_syms_free(struct elf_syms *s)
{
	free(s->v);
	free(s->strings);
	memset(s, 0, sizeof(*s));
}
