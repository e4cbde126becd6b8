/* SPDX-License-Identifier: MIT */
/*
 * runtime/base/libc_next.h - the next definition of an interposed call
 * (libc_next.c).
 */
#ifndef FDR_LIBC_NEXT_H
#define FDR_LIBC_NEXT_H

#include <stddef.h>

#include "compiler.h"

/*
 * The next definition of @name after libfdrtrace's (libc's, for the calls
 * it interposes) into the function pointer at @fn (@size bytes), or NULL
 * (a fully static program). dlsym: not async-signal-safe.
 */
void fdr_next_fn(const char *name, void *fn, size_t size) fdr_hidden;
#define FDR_NEXT(name, fnp) fdr_next_fn(name, fnp, sizeof(*(fnp)))

#endif /* FDR_LIBC_NEXT_H */
