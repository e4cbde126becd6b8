/* SPDX-License-Identifier: MIT */
/*
 * demangle.c - C++ symbol names demangled (see demangle.h).
 *
 * Contract: single-threaded tool code (the demangler is looked up once,
 * without a lock). libstdc++ is not linked: its __cxa_demangle is found at
 * run time, in the process or in libstdc++.so.6, and names stay mangled
 * when there is none.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

typedef char *(*dm_fn)(const char *, char *, size_t *, int *);

/* __cxa_demangle from libstdc++, looked up once; NULL when unavailable. */
static dm_fn dm_demangler(void)
{
	static bool tried;
	static dm_fn fn;
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

char *demangle_cxx(const char *raw)
{
	dm_fn dm = raw && strncmp(raw, "_Z", 2) == 0 ? dm_demangler() : NULL;
	int status = -1;
	char *d = dm ? dm(raw, NULL, NULL, &status) : NULL;

	if (d && status != 0) {
		free(d);
		d = NULL;
	}
	return d;
}
