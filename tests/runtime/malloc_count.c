// SPDX-License-Identifier: MIT
/*
 * tests/runtime/malloc_count.c - count allocations made by the code under
 * test. Linked with -Wl,--wrap=malloc,... so that calls from the objects of
 * the test executable (the runtime sources) go through here; Criterion, a
 * shared library, is not affected.
 */
#include <stddef.h>

#include "malloc_count.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

unsigned long malloc_count;

void *__wrap_malloc(size_t n)
{
	malloc_count++;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	malloc_count++;
	return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	malloc_count++;
	return __real_realloc(p, n);
}
