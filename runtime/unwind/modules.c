// SPDX-License-Identifier: MIT
/*
 * runtime/unwind/modules.c - which objects are mapped, and what an address
 * is called.
 *
 * Contract: off the hot path. Called from the flush thread, and at init and
 * exit; never from a hook or a signal handler. May allocate, open files and
 * take mod_lock (a leaf lock: the callbacks of fdr_modules_scan() run with it
 * held and must not call back into this file). fdr_modules_reset() does not
 * take the lock: its caller guarantees no other thread is in here (the end
 * of the run, or the only thread of a fork child).
 *
 * A module is identified by (load base, path, build-id, span). A scan that
 * finds an object no live module matches gives it the next id; a live
 * module no longer mapped is reported once and its id is never reused, so a
 * library dlclose'd and another dlopen'ed at the same address get different
 * ids and a function record is never named after the wrong library.
 *
 * Symbols: the module file's .symtab (every function, static ones too),
 * read by mapping the file read-only once per module and indexing its FUNC
 * symbols in a sorted array, first for a module whose file is mapped
 * already (the main program, objects that call the hooks); dladdr()
 * (exported symbols, .dynsym, searched one by one) for the others, and
 * the index after it when dladdr() has no name. When the file has no .symtab, the separate debug file
 * /usr/lib/debug/.build-id/xx/rest.debug is tried. A file whose build-id
 * differs from the mapped module's (replaced on disk) is not used. Files
 * are opened with O_NONBLOCK and used only when regular.
 *
 * When: a module that can hold instrumented code (the main program, and
 * any object that imports __cyg_profile_func_enter) has its file mapped
 * as the scan first reports it; its symbols are indexed on the first
 * look-up. Others are mapped on their first look-up. The first scan runs
 * before the program's main() (the start records, which the constructor
 * waits for), so the files the runtime opens for names are opened while
 * no thread of the program runs: where the flush thread cannot have a
 * descriptor table of its own (placement.c, fl_own_files()), a file it
 * opened later would take, for a moment, the lowest free number, the one
 * a program that closed standard error is about to get from its next
 * open. Only an object dlopen'ed later is opened while the program runs.
 *
 * This is the runtime's own small reader, not elfutils (which the fdrtrace
 * command uses): it runs inside the traced program, which must not gain
 * libelf, libdw and their compression libraries as dependencies, nor
 * their allocations and locks; it needs names only (files and lines are
 * the command's job, from the module records and build-ids of the trace).
 * The build-id note parser and the debug path are shared with the command
 * (common/build_id.h). The fatal-signal path reads no ELF at all: it
 * writes names the flush thread looked up before (docs/design.md).
 * Every offset read from a file is bounds-checked against the file size.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_id.h"
#include "compiler.h"
#include "modules.h"

/* Files bigger than this are not read for symbols. */
#define MOD_FILE_MAX (4ull << 30)

struct mod_sym {
	uint64_t value;		/* link-time address */
	uint64_t size;
	const char *name;	/* into the mapped string table */
	bool global;		/* STB_GLOBAL or STB_WEAK: the name dladdr() would give */
};

/* Symbol state of a module. */
enum mod_sym_state {
	MOD_SYMS_UNREAD = 0,
	MOD_SYMS_MAPPED,	/* the file with the .symtab is mapped, not indexed yet */
	MOD_SYMS_READ,
	MOD_SYMS_NONE,		/* no file, no .symtab, or the wrong file */
};

struct mod_entry {
	struct fdr_module m;
	bool hooks;		/* may hold instrumented code: symbols read when reported */
	bool live;		/* mapped as of the last scan */
	bool seen;		/* found by the scan in progress */
	bool reported;		/* the mapped callback has run */
	enum mod_sym_state sym_state;
	struct mod_sym *syms;
	size_t nsyms;
	void *map;		/* the mapped ELF file the names point into */
	size_t map_len;
};

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mod_entry **mod_list;	/* index == id */
static size_t mod_count, mod_cap;
/*
 * The main program's path (/proc/self/exe), kept from the first scan that
 * could read it: a process that chroots (a daemon's worker: rsync's, with
 * "use chroot") reads nothing there any more, and the program read as ""
 * became a module unmapped and another mapped in its place, without names
 * (its file out of reach, the mapping of it made before dropped). The
 * image does not change under a pid but by exec, which starts all this
 * again. Under mod_lock.
 */
static char mod_exe[sizeof(((struct fdr_module *)0)->path)];
static bool mod_exe_known;

/* mod_exe, read when it is not known yet ("" when it cannot be). Under mod_lock. */
static notrace void mod_exe_read(void)
{
	ssize_t n;

	if (mod_exe_known)
		return;
	n = readlink("/proc/self/exe", mod_exe, sizeof(mod_exe) - 1);
	mod_exe[n > 0 ? n : 0] = '\0';
	mod_exe_known = n > 0;
}

notrace size_t fdr_modules_exe(char *path, size_t cap)
{
	size_t n;

	pthread_mutex_lock(&mod_lock);
	mod_exe_read();
	n = strnlen(mod_exe, sizeof(mod_exe));
	if (cap) {
		if (n >= cap)
			n = cap - 1;
		memcpy(path, mod_exe, n);
		path[n] = '\0';
	}
	pthread_mutex_unlock(&mod_lock);
	return n;
}

/* ------------------------------------------------------------------ */
/* ELF notes                                                           */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Scanning                                                            */
/* ------------------------------------------------------------------ */

struct mod_scan {
	uintptr_t vdso;
	bool main_seen;
	int err;
};

static notrace bool mod_same(const struct fdr_module *a, const struct fdr_module *b)
{
	return a->load_base == b->load_base && a->start == b->start && a->size == b->size &&
	       a->build_id_len == b->build_id_len &&
	       memcmp(a->build_id, b->build_id, a->build_id_len) == 0 &&
	       strcmp(a->path, b->path) == 0;
}

static notrace int mod_add(const struct fdr_module *m, bool hooks)
{
	struct mod_entry *e;
	size_t i;

	for (i = 0; i < mod_count; i++) {
		e = mod_list[i];
		if (e->live && !e->seen && mod_same(&e->m, m)) {
			e->seen = true;
			return 0;
		}
	}
	if (mod_count >= FDR_MODULE_UNKNOWN)
		return -EOVERFLOW;
	if (mod_count == mod_cap) {
		size_t cap = mod_cap ? mod_cap * 2 : 32;
		struct mod_entry **l = realloc(mod_list, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		mod_list = l;
		mod_cap = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->m = *m;
	e->m.id = (uint32_t)mod_count;
	e->hooks = hooks;
	e->live = true;
	e->seen = true;
	mod_list[mod_count++] = e;
	return 0;
}

/* An address of the object's dynamic section, relocated, or 0 when outside its span. */
static notrace uintptr_t mod_dyn_addr(const struct dl_phdr_info *info, uint64_t start,
				      uint64_t size, uint64_t p, uint64_t len)
{
	/* the loader relocates these in place, except where it left them as linked */
	if (p && p < info->dlpi_addr)
		p += info->dlpi_addr;
	if (!p || p < start || len > size || p - start > size - len)
		return 0;
	return (uintptr_t)p;
}

/*
 * Whether the object defines @name, by its GNU hash table @gh (symbols
 * @sym, names @str of @strsz bytes): undefined symbols are never in it.
 */
static notrace bool mod_gnu_defines(const uint32_t *gh, const Elf64_Sym *sym, const char *str,
				    uint64_t strsz, const char *name)
{
	uint32_t nbuckets = gh[0], first = gh[1], h = 5381, i;
	const uint64_t *bloom = (const uint64_t *)(gh + 4);
	const uint32_t *buckets = (const uint32_t *)(bloom + gh[2]);
	const uint32_t *chain = buckets + nbuckets;

	for (const char *c = name; *c; c++)
		h = h * 33 + (uint8_t)*c;
	if (!nbuckets)
		return false;
	i = buckets[h % nbuckets];
	if (i < first)
		return false;
	for (;; i++) {
		uint32_t h2 = chain[i - first];

		if ((h | 1) == (h2 | 1) && sym[i].st_name < strsz &&
		    !strncmp(str + sym[i].st_name, name, strsz - sym[i].st_name))
			return true;
		if (h2 & 1)
			return false;
	}
}

/*
 * Whether the object of @info (span [@start, @start + @size)) may call the
 * hooks: its dynamic string table names __cyg_profile_func_enter and it
 * does not define it (the C library and libfdrtrace do). Read in memory.
 */
static notrace bool mod_calls_hooks(const struct dl_phdr_info *info, uint64_t start, uint64_t size)
{
	static const char hook[] = "__cyg_profile_func_enter";
	const ElfW(Dyn) *d = NULL;
	uint64_t str = 0, strsz = 0, sym = 0, gh = 0;
	ElfW(Half) i;

	for (i = 0; i < info->dlpi_phnum && !d; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			str = d->d_un.d_ptr;
		else if (d->d_tag == DT_STRSZ)
			strsz = d->d_un.d_val;
		else if (d->d_tag == DT_SYMTAB)
			sym = d->d_un.d_ptr;
		else if (d->d_tag == DT_GNU_HASH)
			gh = d->d_un.d_ptr;
	}
	str = mod_dyn_addr(info, start, size, str, strsz);
	if (!str || !memmem((const void *)(uintptr_t)str, strsz, hook, sizeof(hook)))
		return false;
	sym = mod_dyn_addr(info, start, size, sym, sizeof(Elf64_Sym));
	gh = mod_dyn_addr(info, start, size, gh, 16);
	/* no hash table to tell: read it, as one that calls them would be */
	return !sym || !gh ||
	       !mod_gnu_defines((const uint32_t *)(uintptr_t)gh, (const Elf64_Sym *)(uintptr_t)sym,
				(const char *)(uintptr_t)str, strsz, hook);
}

static notrace int mod_phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mod_scan *s = arg;
	/* Static: dl_iterate_phdr holds the loader lock, keep the stack small. */
	static struct fdr_module m;
	uint64_t lo = UINT64_MAX, hi = 0;
	bool hooks = false;
	ElfW(Half) i;
	int r;

	memset(&m, 0, offsetof(struct fdr_module, path));
	m.path[0] = '\0';
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD) {
			if (ph->p_vaddr < lo)
				lo = ph->p_vaddr;
			if (ph->p_vaddr + ph->p_memsz > hi)
				hi = ph->p_vaddr + ph->p_memsz;
		}
	}
	if (lo >= hi)
		return 0;
	m.load_base = info->dlpi_addr;
	m.start = info->dlpi_addr + lo;
	m.size = hi - lo;
	if (s->vdso && m.start <= s->vdso && s->vdso < m.start + m.size)
		return 0;	/* the vDSO: no file, and no instrumented code */
	for (i = 0; i < info->dlpi_phnum && !m.build_id_len; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE && ph->p_filesz >= sizeof(Elf64_Nhdr))
			m.build_id_len = fdr_build_id_in_notes(
				(const uint8_t *)(info->dlpi_addr + ph->p_vaddr), ph->p_filesz,
				ph->p_align, m.build_id);
	}
	if (info->dlpi_name && info->dlpi_name[0]) {
		size_t n = strlen(info->dlpi_name);

		if (n >= sizeof(m.path))
			n = sizeof(m.path) - 1;
		memcpy(m.path, info->dlpi_name, n);
		m.path[n] = '\0';
	} else if (!s->main_seen) {
		mod_exe_read();
		memcpy(m.path, mod_exe, sizeof(m.path));
		s->main_seen = true;
		hooks = true;	/* the program: instrumented, or linked with a static libfdrtrace */
	}
	r = mod_add(&m, hooks || mod_calls_hooks(info, m.start, m.size));
	if (r && !s->err)
		s->err = r;
	(void)size;
	return 0;
}

static notrace void mod_free_syms(struct mod_entry *e)
{
	free(e->syms);
	e->syms = NULL;
	e->nsyms = 0;
	if (e->map)
		munmap(e->map, e->map_len);
	e->map = NULL;
	e->map_len = 0;
	e->sym_state = MOD_SYMS_UNREAD;
}

static notrace void mod_map_syms(struct mod_entry *e);

notrace int fdr_modules_scan(void (*mapped)(const struct fdr_module *m, void *arg),
			     void (*unmapped)(const struct fdr_module *m, void *arg), void *arg)
{
	struct mod_scan s = { .vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR) };
	size_t i;

	pthread_mutex_lock(&mod_lock);
	for (i = 0; i < mod_count; i++)
		mod_list[i]->seen = false;
	dl_iterate_phdr(mod_phdr_cb, &s);
	for (i = 0; i < mod_count; i++) {
		struct mod_entry *e = mod_list[i];

		if (!e->live)
			continue;
		if (!e->seen) {
			/* Gone: report once, drop its symbols, never match it again. */
			e->live = false;
			if (e->reported && unmapped)
				unmapped(&e->m, arg);
			mod_free_syms(e);
			e->sym_state = MOD_SYMS_NONE;
		} else if (!e->reported) {
			e->reported = true;
			if (e->hooks && e->sym_state == MOD_SYMS_UNREAD)
				mod_map_syms(e);	/* now, not while the program runs (top of file) */
			if (mapped)
				mapped(&e->m, arg);
		}
	}
	pthread_mutex_unlock(&mod_lock);
	return s.err;
}

notrace void fdr_modules_foreach_reported(void (*fn)(const struct fdr_module *m, void *arg),
					  void *arg)
{
	size_t i;

	pthread_mutex_lock(&mod_lock);
	for (i = 0; i < mod_count; i++)
		if (mod_list[i]->live && mod_list[i]->reported)
			fn(&mod_list[i]->m, arg);
	pthread_mutex_unlock(&mod_lock);
}

notrace void fdr_modules_reset(void)
{
	size_t i;

	for (i = 0; i < mod_count; i++) {
		mod_free_syms(mod_list[i]);
		free(mod_list[i]);
	}
	free(mod_list);
	mod_list = NULL;
	mod_count = 0;
	mod_cap = 0;
	/* A fork child may have inherited the lock held by another thread. */
	pthread_mutex_init(&mod_lock, NULL);
}

/* ------------------------------------------------------------------ */
/* .symtab                                                             */
/* ------------------------------------------------------------------ */

static notrace int mod_sym_cmp(const void *a, const void *b)
{
	const struct mod_sym *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	/* Sized symbols first, so that a lookup prefers them. */
	if ((x->size == 0) != (y->size == 0))
		return (x->size == 0) - (y->size == 0);
	/*
	 * Aliases: local ones first, so that mod_sym_find(), which walks back
	 * from the last, meets a global one first (the exported name, as
	 * dladdr() gives it); then by name, the same order every run.
	 */
	if (x->global != y->global)
		return x->global ? 1 : -1;
	return strcmp(x->name, y->name);
}

static notrace bool mod_range_ok(uint64_t off, uint64_t len, size_t file_len)
{
	return off <= file_len && len <= file_len - off;
}

/* Map @path read-only. Return: 0, or a negative errno. */
static notrace int mod_map_file(const char *path, void **map, size_t *len)
{
	struct stat st;
	void *p;
	int fd;

	/* O_NONBLOCK: a FIFO put where a module file was must not block. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr) ||
	    (uint64_t)st.st_size > MOD_FILE_MAX) {
		close(fd);
		return -ENOEXEC;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	*map = p;
	*len = (size_t)st.st_size;
	return 0;
}

/*
 * Index the FUNC symbols of the ELF image @f (@len bytes) into @e, when its
 * build-id is the module's (or either has none); with @fill false, only
 * say whether it has a .symtab to index (its entries unread).
 * Return: 0 when a .symtab (with FUNC symbols, when @fill) was found,
 * -ENOENT when there is none, -ENOEXEC for a malformed or foreign file.
 */
static notrace int mod_index_symtab(struct mod_entry *e, const uint8_t *f, size_t len, bool fill)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strsh;
	const Elf64_Shdr *symsh = NULL;
	Elf64_Shdr symsh_copy;
	uint8_t bid[FDR_BUILD_ID_MAX];
	struct mod_sym *syms;
	size_t i, n, count = 0;

	memcpy(&eh, f, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !mod_range_ok(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), len))
		return -ENOEXEC;

	for (i = 0; i < eh.e_shnum; i++) {
		memcpy(&sh, f + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_type == SHT_NOTE && e->m.build_id_len && sh.sh_size >= sizeof(Elf64_Nhdr) &&
		    mod_range_ok(sh.sh_offset, sh.sh_size, len)) {
			uint8_t bl = fdr_build_id_in_notes(f + sh.sh_offset, sh.sh_size,
						       sh.sh_addralign, bid);

			if (bl && (bl != e->m.build_id_len || memcmp(bid, e->m.build_id, bl)))
				return -ENOEXEC;	/* another build of the file */
		}
		if (sh.sh_type == SHT_SYMTAB && !symsh) {
			symsh_copy = sh;
			symsh = &symsh_copy;
		}
	}
	if (!symsh)
		return -ENOENT;
	if (symsh->sh_entsize != sizeof(Elf64_Sym) || symsh->sh_link >= eh.e_shnum ||
	    !mod_range_ok(symsh->sh_offset, symsh->sh_size, len))
		return -ENOEXEC;
	memcpy(&strsh, f + eh.e_shoff + symsh->sh_link * sizeof(strsh), sizeof(strsh));
	if (strsh.sh_type != SHT_STRTAB || !mod_range_ok(strsh.sh_offset, strsh.sh_size, len) ||
	    strsh.sh_size == 0 || f[strsh.sh_offset + strsh.sh_size - 1] != '\0')
		return -ENOEXEC;

	if (!fill)
		return 0;	/* not a page of the table read: done before main() */
	n = symsh->sh_size / sizeof(Elf64_Sym);
	for (i = 0; i < n; i++) {
		Elf64_Sym sym;

		memcpy(&sym, f + symsh->sh_offset + i * sizeof(sym), sizeof(sym));
		if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF &&
		    sym.st_name && sym.st_name < strsh.sh_size)
			count++;
	}
	if (!count)
		return -ENOENT;
	syms = malloc(count * sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	for (i = 0, count = 0; i < n; i++) {
		Elf64_Sym sym;

		memcpy(&sym, f + symsh->sh_offset + i * sizeof(sym), sizeof(sym));
		if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_name || sym.st_name >= strsh.sh_size)
			continue;
		syms[count].value = sym.st_value;
		syms[count].size = sym.st_size;
		syms[count].name = (const char *)f + strsh.sh_offset + sym.st_name;
		syms[count].global = ELF64_ST_BIND(sym.st_info) != STB_LOCAL;
		count++;
	}
	qsort(syms, count, sizeof(*syms), mod_sym_cmp);
	e->syms = syms;
	e->nsyms = count;
	return 0;
}

/* Map the module's file that has its FUNC symbols: its own, or its debug file. */
static notrace void mod_map_syms(struct mod_entry *e)
{
	char dbg[512];
	const char *paths[2] = { e->m.path, dbg };
	int i;

	e->sym_state = MOD_SYMS_NONE;
	fdr_build_id_debug_path("/usr/lib/debug", e->m.build_id, e->m.build_id_len, dbg,
				sizeof(dbg));
	for (i = 0; i < 2; i++) {
		void *map = NULL;
		size_t len = 0;

		if (!paths[i][0] || mod_map_file(paths[i], &map, &len))
			continue;
		if (mod_index_symtab(e, map, len, false) == 0) {
			e->map = map;
			e->map_len = len;
			e->sym_state = MOD_SYMS_MAPPED;
			return;
		}
		munmap(map, len);
	}
}

/*
 * Index the module's symbols, mapping its file first if it is not yet.
 * A mapped file whose .symtab turns out to hold no FUNC symbol leaves the
 * module unnamed (its debug file is not tried then).
 */
static notrace void mod_load_syms(struct mod_entry *e)
{
	if (e->sym_state == MOD_SYMS_UNREAD)
		mod_map_syms(e);
	if (e->sym_state != MOD_SYMS_MAPPED)
		return;
	e->sym_state = mod_index_symtab(e, e->map, e->map_len, true) ? MOD_SYMS_NONE :
								       MOD_SYMS_READ;
}

/* The symbol containing link-time address @rel, or NULL. */
static notrace const struct mod_sym *mod_sym_find(const struct mod_entry *e, uint64_t rel)
{
	size_t lo = 0, hi = e->nsyms, k;

	/* Find the first symbol with value > rel. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].value <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * Walk back from the nearest symbol at or below @rel: aliases share an
	 * address, and a sized symbol may enclose a smaller one. A few steps
	 * are enough; the first that contains @rel wins.
	 */
	for (k = lo; k > 0 && lo - k < 64; k--) {
		const struct mod_sym *s = &e->syms[k - 1];

		if (rel - s->value < s->size || (s->size == 0 && s->value == rel))
			return s;
	}
	return NULL;
}

static notrace void mod_copy_name(char *out, size_t cap, const char *s)
{
	size_t n;

	if (!cap)
		return;
	n = strlen(s);
	if (n >= cap)
		n = cap - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/*
 * @addr's name from module @e's symbol index, into @name: the index is
 * built from the file when it is mapped already, or also when @read_file
 * and it is not read yet. Takes mod_lock; a module a scan retired
 * meanwhile has none (entries are never freed). Return: found.
 */
static notrace bool mod_index_name(struct mod_entry *e, uintptr_t addr, bool read_file,
				   char *name, size_t name_len)
{
	const struct mod_sym *s = NULL;

	pthread_mutex_lock(&mod_lock);
	if (e->live) {
		if (e->sym_state == MOD_SYMS_MAPPED ||
		    (read_file && e->sym_state == MOD_SYMS_UNREAD))
			mod_load_syms(e);
		if (e->sym_state == MOD_SYMS_READ)
			s = mod_sym_find(e, (uint64_t)addr - e->m.load_base);
		if (s)
			mod_copy_name(name, name_len, s->name);
	}
	pthread_mutex_unlock(&mod_lock);
	return s != NULL;
}

notrace int fdr_symbol_lookup(uintptr_t addr, char *name, size_t name_len, uint32_t *module_id)
{
	struct mod_entry *e = NULL;
	Dl_info di;
	size_t i;

	if (name_len)
		name[0] = '\0';
	*module_id = FDR_MODULE_UNKNOWN;

	pthread_mutex_lock(&mod_lock);
	for (i = 0; i < mod_count; i++) {
		struct mod_entry *c = mod_list[i];

		if (c->live && addr >= c->m.start && addr - c->m.start < c->m.size) {
			e = c;
			*module_id = c->m.id;
			break;
		}
	}
	pthread_mutex_unlock(&mod_lock);

	/*
	 * A module whose symbol file is mapped already (the main program, an
	 * object that calls the hooks): its index first. dladdr() searches
	 * the object's exported symbols one by one, which for bash (2,346 of
	 * them, some 600 functions named per process) was 1.4 ms of every
	 * process's CPU; the index is one binary search, built once. Other
	 * modules: dladdr() first, their file read only when it has no name.
	 */
	if (e && mod_index_name(e, addr, false, name, name_len))
		return 0;
	if (dladdr((void *)addr, &di) && di.dli_sname && di.dli_sname[0]) {
		mod_copy_name(name, name_len, di.dli_sname);
		return 0;
	}
	return e && mod_index_name(e, addr, true, name, name_len) ? 0 : -ENOENT;
}
