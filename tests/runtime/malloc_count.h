/* SPDX-License-Identifier: MIT */
/* tests/runtime/malloc_count.h - see malloc_count.c. */
#ifndef MALLOC_COUNT_H
#define MALLOC_COUNT_H
extern unsigned long malloc_count;
#endif
