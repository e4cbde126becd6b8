/* SPDX-License-Identifier: MIT */
/*
 * runtime/base/fd_high.h - where the runtime's descriptors go (fd_high.c).
 */
#ifndef FDR_FD_HIGH_H
#define FDR_FD_HIGH_H

#include "compiler.h"

/* where fdr_fd_high() moves descriptors, from the descriptor limit (once, at start) */
void fdr_fd_floor_init(void) fdr_hidden;
/* a descriptor of ours, moved high, out of the program's way (async-signal-safe) */
int fdr_fd_high(int fd) fdr_hidden;

#endif /* FDR_FD_HIGH_H */
