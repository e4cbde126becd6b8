// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_modules.c - module scans and symbol lookup.
 *
 * MODLIB_A and MODLIB_B are two builds of modlib.c (tags a and b),
 * MODLIB_STRIPPED a stripped copy of build a (or "" when strip is missing).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modules.h"

#define MAX_EVENTS 512

struct event {
	bool mapped;
	struct fdr_module m;
};

static struct event events[MAX_EVENTS];
static int nevents;

static void on_mapped(const struct fdr_module *m, void *arg)
{
	cr_assert_eq(arg, events);
	cr_assert_lt(nevents, MAX_EVENTS);
	events[nevents].mapped = true;
	events[nevents++].m = *m;
}

static void on_unmapped(const struct fdr_module *m, void *arg)
{
	cr_assert_lt(nevents, MAX_EVENTS);
	events[nevents].mapped = false;
	events[nevents++].m = *m;
}

static void scan(void)
{
	nevents = 0;
	cr_assert_eq(fdr_modules_scan(on_mapped, on_unmapped, events), 0);
}

static const struct event *find(bool mapped, const char *path_part)
{
	for (int i = 0; i < nevents; i++)
		if (events[i].mapped == mapped && strstr(events[i].m.path, path_part))
			return &events[i];
	return NULL;
}

static void fresh(void)
{
	fdr_modules_reset();
}

TestSuite(modules, .init = fresh, .fini = fresh);

/* The GNU build-id of an ELF file, read from its section headers. */
static size_t file_build_id(const char *path, uint8_t *out)
{
	static uint8_t f[64 << 20];
	Elf64_Ehdr eh;
	size_t len = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0, "open %s", path);
	while ((r = read(fd, f + len, sizeof(f) - len)) > 0)
		len += (size_t)r;
	close(fd);
	memcpy(&eh, f, sizeof(eh));
	for (int i = 0; i < eh.e_shnum; i++) {
		Elf64_Shdr sh;
		Elf64_Nhdr nh;

		memcpy(&sh, f + eh.e_shoff + (size_t)i * sizeof(sh), sizeof(sh));
		if (sh.sh_type != SHT_NOTE)
			continue;
		memcpy(&nh, f + sh.sh_offset, sizeof(nh));
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(f + sh.sh_offset + sizeof(nh), "GNU", 4) == 0) {
			memcpy(out, f + sh.sh_offset + sizeof(nh) + 4, nh.n_descsz);
			return nh.n_descsz;
		}
	}
	return 0;
}

Test(modules, scan_finds_this_program_with_its_build_id)
{
	char exe[PATH_MAX];
	uint8_t bid[64];
	size_t bl;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const struct event *e;

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	scan();
	e = find(true, exe);
	cr_assert_not_null(e, "the executable is listed");
	cr_assert_str_eq(e->m.path, exe);
	cr_assert_eq(e->m.id, 0, "the executable comes first");
	bl = file_build_id(exe, bid);
	cr_assert_gt(bl, 0, "the test binary was linked with a build-id");
	cr_assert_eq(e->m.build_id_len, bl);
	cr_assert_eq(memcmp(e->m.build_id, bid, bl), 0);
	cr_assert_gt(e->m.size, 0);
	cr_assert((uintptr_t)file_build_id >= e->m.start &&
		  (uintptr_t)file_build_id < e->m.start + e->m.size,
		  "a function of the test lies inside the executable's span");
}

Test(modules, scan_finds_libc_and_skips_the_vdso)
{
	uint8_t bid[64];
	const struct event *e;

	scan();
	e = find(true, "libc.so");
	cr_assert_not_null(e);
	cr_assert_eq(e->m.path[0], '/');
	cr_assert_gt(e->m.build_id_len, 0);
	cr_assert_eq(e->m.build_id_len, file_build_id(e->m.path, bid));
	cr_assert_eq(memcmp(e->m.build_id, bid, e->m.build_id_len), 0);
	/* A libc function no sanitizer intercepts lies inside libc's span. */
	cr_assert((uintptr_t)&gnu_get_libc_version >= e->m.start &&
		  (uintptr_t)&gnu_get_libc_version < e->m.start + e->m.size);
	cr_assert_null(find(true, "vdso"));
	for (int i = 0; i < nevents; i++) {
		cr_assert_eq(events[i].m.id, (uint32_t)i, "ids from 0, in order");
		cr_assert_neq(events[i].m.path[0], '\0', "every module has a path");
	}
}

Test(modules, second_scan_reports_nothing_new)
{
	scan();
	cr_assert_gt(nevents, 2);
	scan();
	cr_assert_eq(nevents, 0);
}

Test(modules, dlopen_and_dlclose_are_reported_once_each)
{
	void *h;
	const struct event *e;
	uint32_t id;

	scan();
	h = dlopen(MODLIB_A, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "%s", dlerror());
	scan();
	cr_assert_eq(nevents, 1);
	e = find(true, "modlib_a");
	cr_assert_not_null(e);
	cr_assert_str_eq(e->m.path, MODLIB_A);
	cr_assert_gt(e->m.build_id_len, 0);
	id = e->m.id;
	scan();
	cr_assert_eq(nevents, 0);

	dlclose(h);
	scan();
	cr_assert_eq(nevents, 1);
	e = find(false, "modlib_a");
	cr_assert_not_null(e, "dlclose is reported as unmapped");
	cr_assert_eq(e->m.id, id);
	scan();
	cr_assert_eq(nevents, 0, "reported once");

	h = dlopen(MODLIB_A, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h);
	scan();
	e = find(true, "modlib_a");
	cr_assert_not_null(e);
	cr_assert_neq(e->m.id, id, "a reloaded library is a new module");
	dlclose(h);
}

Test(modules, another_library_at_the_same_address_gets_a_new_id)
{
	void *ha, *hb;
	uint32_t ida;
	uint64_t base_a;
	const struct event *e;
	char name[256];
	uint32_t mid;

	scan();
	ha = dlopen(MODLIB_A, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(ha);
	scan();
	e = find(true, "modlib_a");
	cr_assert_not_null(e);
	ida = e->m.id;
	base_a = e->m.load_base;
	dlclose(ha);
	hb = dlopen(MODLIB_B, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(hb);
	scan();
	cr_assert_not_null(find(false, "modlib_a"));
	e = find(true, "modlib_b");
	cr_assert_not_null(e);
	cr_assert_neq(e->m.id, ida);
	if (e->m.load_base == base_a)
		cr_log_info("modlib_b reused modlib_a's address");
	/* Names come from the library now mapped, not the old one. */
	cr_assert_eq(fdr_symbol_lookup((uintptr_t)dlsym(hb, "modlib_public_b"), name,
				       sizeof(name), &mid), 0);
	cr_assert_str_eq(name, "modlib_public_b");
	cr_assert_eq(mid, e->m.id);
	dlclose(hb);
}

static __attribute__((noinline, used)) int this_file_static_function(int x)
{
	volatile int v = x;

	return v * 7 + 3;
}

Test(modules, lookup_finds_a_static_function_of_the_program_in_symtab)
{
	char name[256];
	uint32_t mid;
	Dl_info di;
	uintptr_t a = (uintptr_t)this_file_static_function;

	scan();
	/* dladdr() cannot name it: it is not in .dynsym. */
	cr_assert(!dladdr((void *)a, &di) || !di.dli_sname || strcmp(di.dli_sname, "this_file_static_function"));
	cr_assert_eq(fdr_symbol_lookup(a, name, sizeof(name), &mid), 0);
	cr_assert_str_eq(name, "this_file_static_function");
	cr_assert_eq(mid, 0, "the executable's id");
	/* An address inside the function names the function too. */
	cr_assert_eq(fdr_symbol_lookup(a + 2, name, sizeof(name), &mid), 0);
	cr_assert_str_eq(name, "this_file_static_function");
}

/* A global function and two local aliases of it: one address, three names. */
int modules_global_with_aliases(int x);
__attribute__((noinline, used)) int modules_global_with_aliases(int x)
{
	volatile int v = x;

	return v * 5 + 2;
}
static int aaa_local_alias(int x) __attribute__((alias("modules_global_with_aliases"), used));
static int zzz_local_alias(int x) __attribute__((alias("modules_global_with_aliases"), used));

/*
 * Once a module's symbol index is read, names come from it first (one
 * binary search, not dladdr()'s walk of every exported symbol); among
 * aliases it gives the global name, as dladdr() does, whatever the
 * local ones sort as.
 */
Test(modules, the_index_names_an_aliased_function_by_its_global_name)
{
	char name[256];
	uint32_t mid;

	(void)aaa_local_alias;
	(void)zzz_local_alias;
	scan();
	/* a static function: dladdr() has no name, so the index is read */
	cr_assert_eq(fdr_symbol_lookup((uintptr_t)this_file_static_function, name, sizeof(name),
				       &mid), 0);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(fdr_symbol_lookup((uintptr_t)modules_global_with_aliases, name,
					       sizeof(name), &mid), 0);
		cr_assert_str_eq(name, "modules_global_with_aliases");
	}
}

Test(modules, lookup_finds_public_and_static_functions_of_a_library)
{
	char name[256];
	uint32_t mid;
	void *h = dlopen(MODLIB_A, RTLD_NOW | RTLD_LOCAL);
	int (*(*static_addr)(void))(int);
	const struct event *e;

	cr_assert_not_null(h);
	scan();
	e = find(true, "modlib_a");
	cr_assert_not_null(e);
	cr_assert_eq(fdr_symbol_lookup((uintptr_t)dlsym(h, "modlib_public_a"), name, sizeof(name),
				       &mid), 0);
	cr_assert_str_eq(name, "modlib_public_a");
	cr_assert_eq(mid, e->m.id);
	*(void **)&static_addr = dlsym(h, "modlib_static_addr_a");
	cr_assert_not_null(static_addr);
	cr_assert_eq(fdr_symbol_lookup((uintptr_t)static_addr(), name, sizeof(name), &mid), 0);
	cr_assert_str_eq(name, "modlib_hidden_helper");
	cr_assert_eq(mid, e->m.id);
	dlclose(h);
}

Test(modules, stripped_library_has_no_static_names_but_a_module)
{
	char name[256];
	uint32_t mid;
	void *h;
	int (*(*static_addr)(void))(int);
	const struct event *e;

	if (!MODLIB_STRIPPED[0])
		cr_skip_test("strip was not found at configure time");
	h = dlopen(MODLIB_STRIPPED, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "%s", dlerror());
	scan();
	e = find(true, "modlib_stripped");
	cr_assert_not_null(e);
	*(void **)&static_addr = dlsym(h, "modlib_static_addr_a");
	cr_assert_eq(fdr_symbol_lookup((uintptr_t)static_addr(), name, sizeof(name), &mid),
		     -ENOENT);
	cr_assert_str_empty(name);
	cr_assert_eq(mid, e->m.id, "the module is still known");
	/* The exported one is still in .dynsym. */
	cr_assert_eq(fdr_symbol_lookup((uintptr_t)dlsym(h, "modlib_public_a"), name, sizeof(name),
				       &mid), 0);
	cr_assert_str_eq(name, "modlib_public_a");
	dlclose(h);
}

Test(modules, lookup_outside_every_module_is_unknown)
{
	char name[16] = "junk";
	uint32_t mid = 0;
	void *heap = malloc(64);

	scan();
	cr_assert_eq(fdr_symbol_lookup((uintptr_t)heap, name, sizeof(name), &mid), -ENOENT);
	cr_assert_str_empty(name);
	cr_assert_eq(mid, FDR_MODULE_UNKNOWN);
	free(heap);
}

Test(modules, long_names_are_cut_and_terminated)
{
	char name[8];
	uint32_t mid;

	scan();
	cr_assert_eq(fdr_symbol_lookup((uintptr_t)this_file_static_function, name, sizeof(name),
				       &mid), 0);
	cr_assert_str_eq(name, "this_fi");
}

Test(modules, reset_starts_ids_again_and_reports_everything)
{
	int first;

	scan();
	first = nevents;
	fdr_modules_reset();
	scan();
	cr_assert_eq(nevents, first);
	cr_assert_eq(events[0].m.id, 0);
}

Test(modules, callbacks_may_be_null)
{
	cr_assert_eq(fdr_modules_scan(NULL, NULL, NULL), 0);
	scan();
	cr_assert_eq(nevents, 0, "a scan without callbacks still records what it saw");
}

/* Copy @src to @dst (through a temporary and rename, as an update would). */
static void replace_file(const char *src, const char *dst, size_t max_len)
{
	static char data[8 << 20];
	char tmp[PATH_MAX];
	size_t len = 0;
	ssize_t r;
	int in, out;

	in = open(src, O_RDONLY);
	cr_assert_geq(in, 0, "%s", src);
	while (len < max_len && (r = read(in, data + len, sizeof(data) - len)) > 0)
		len += (size_t)r;
	close(in);
	if (len > max_len)
		len = max_len;
	snprintf(tmp, sizeof(tmp), "%s.new", dst);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	cr_assert_geq(out, 0);
	cr_assert_eq(write(out, data, len), (ssize_t)len);
	close(out);
	cr_assert_eq(rename(tmp, dst), 0);
}

/*
 * dlopen a private copy of modlib_a, then replace the file on disk with
 * @replacement (cut to @max_len bytes) before the first lookup. The static
 * function must not be named from the wrong file, and nothing may crash.
 */
static void check_replaced(const char *replacement, size_t max_len)
{
	char dir[] = "/tmp/fdrtrace-modules-XXXXXX", path[PATH_MAX], name[256];
	int (*(*static_addr)(void))(int);
	const struct event *e;
	uint32_t mid;
	void *h;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/libcopy.so", dir);
	replace_file(MODLIB_A, path, SIZE_MAX);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	cr_assert_not_null(h, "%s", dlerror());
	scan();
	e = find(true, "libcopy.so");
	cr_assert_not_null(e);
	replace_file(replacement, path, max_len);
	*(void **)&static_addr = dlsym(h, "modlib_static_addr_a");
	cr_assert_eq(fdr_symbol_lookup((uintptr_t)static_addr(), name, sizeof(name), &mid),
		     -ENOENT, "named from a replaced file: '%s'", name);
	cr_assert_eq(mid, e->m.id);
	dlclose(h);
	unlink(path);
	rmdir(dir);
}

Test(modules, a_rebuilt_file_on_disk_is_not_used_for_names)
{
	check_replaced(MODLIB_B, SIZE_MAX);
}

Test(modules, a_truncated_file_on_disk_is_not_used_for_names)
{
	check_replaced(MODLIB_A, 3000);
	check_replaced(MODLIB_A, 63);
}

Test(modules, a_non_elf_file_on_disk_is_not_used_for_names)
{
	check_replaced("/proc/self/cmdline", SIZE_MAX);
}

/*
 * The flush thread scans and looks names up while the program dlopens and
 * dlcloses: nothing may crash, and every name found must be right.
 */
#include <pthread.h>
#include <stdatomic.h>

static atomic_bool churn_stop;

static void *churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&churn_stop)) {
		void *h = dlopen(MODLIB_B, RTLD_NOW | RTLD_LOCAL);

		if (h)
			dlclose(h);
	}
	return NULL;
}

static void *lookups(void *arg)
{
	uintptr_t self = (uintptr_t)this_file_static_function;
	void *ha = arg;
	uintptr_t pub = (uintptr_t)dlsym(ha, "modlib_public_a");
	char name[256];
	uint32_t mid;
	long bad = 0;

	while (!atomic_load(&churn_stop)) {
		if (fdr_symbol_lookup(self, name, sizeof(name), &mid) != 0 ||
		    strcmp(name, "this_file_static_function") != 0)
			bad++;
		if (fdr_symbol_lookup(pub, name, sizeof(name), &mid) != 0 ||
		    strcmp(name, "modlib_public_a") != 0)
			bad++;
	}
	return (void *)bad;
}

Test(modules, scans_and_lookups_race_with_dlopen_and_dlclose, .timeout = 60)
{
	pthread_t c, l1, l2;
	void *ha = dlopen(MODLIB_A, RTLD_NOW | RTLD_LOCAL);
	void *r1, *r2;
	uint64_t start;
	struct timespec ts;
	int scans = 0;

	cr_assert_not_null(ha);
	scan();
	atomic_store(&churn_stop, false);
	pthread_create(&c, NULL, churn, NULL);
	pthread_create(&l1, NULL, lookups, ha);
	pthread_create(&l2, NULL, lookups, ha);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	start = (uint64_t)ts.tv_sec;
	do {
		cr_assert_eq(fdr_modules_scan(NULL, NULL, NULL), 0);
		scans++;
		clock_gettime(CLOCK_MONOTONIC, &ts);
	} while ((uint64_t)ts.tv_sec - start < 1);
	atomic_store(&churn_stop, true);
	pthread_join(c, NULL);
	pthread_join(l1, &r1);
	pthread_join(l2, &r2);
	cr_assert_eq((long)r1, 0, "wrong or missing names: %ld", (long)r1);
	cr_assert_eq((long)r2, 0, "wrong or missing names: %ld", (long)r2);
	cr_assert_gt(scans, 1);
	dlclose(ha);
}
