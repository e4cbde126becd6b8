// SPDX-License-Identifier: MIT
/*
 * tests/reliability/targets/malloc_preload.c - an instrumented malloc,
 * preloaded: every allocation (the runtime's own included) runs the hooks.
 */
#include <stddef.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);
void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void *realloc(void *p, size_t n);
void free(void *p);

void *malloc(size_t n)
{
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	return __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}
