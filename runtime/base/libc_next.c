// SPDX-License-Identifier: MIT
/*
 * runtime/base/libc_next.c - the C library's definition of a call the runtime
 * interposes (exec, spawn, set*id, sigaction), past libfdrtrace's own.
 *
 * Contract: dlsym is not async-signal-safe: callers look the function up
 * outside signal handlers (initialisation, or a first call).
 */
#include <dlfcn.h>
#include <string.h>

#include "libc_next.h"

notrace void fdr_next_fn(const char *name, void *fn, size_t size)
{
	void *sym = dlsym(RTLD_NEXT, name);

	/* POSIX lets dlsym's data pointer become a function pointer */
	memcpy(fn, &sym, size);
}
