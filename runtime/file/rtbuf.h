/* SPDX-License-Identifier: MIT */
/*
 * runtime/file/rtbuf.h - the runtime's own buffers (rtbuf.c).
 */
#ifndef FDR_RTBUF_H
#define FDR_RTBUF_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

/**
 * struct fdr_rtbuf - a runtime buffer: metadata the runtime writes itself
 * (process, config, modules, function names, drops, the close marker),
 * as custom events in a buffer of its own thread id.
 */
struct fdr_rtbuf {
	uint8_t *data;
	size_t cap;	/* usable bytes (buffer_size, minus EndOfBuffer in v1) */
	size_t len;	/* 0: not started */
	int32_t tid;
};

/* @rb empty, for thread @tid (its memory mapped at the first call). Return: 0 or -errno */
int fdr_rtbuf_init(struct fdr_rtbuf *rb, int32_t tid) fdr_hidden;
/*
 * One extension payload into @rb, as a custom event; a full @rb is written
 * first. Return: 0, -EMSGSIZE (never fits one buffer: dropped), -EINVAL,
 * or the write's -errno.
 */
int fdr_rtbuf_add(struct fdr_rtbuf *rb, const uint8_t *payload, size_t len) fdr_hidden;
/* write @rb (file lock held) and empty it. Return: 0 or the write's -errno */
int fdr_rtbuf_flush(struct fdr_rtbuf *rb) fdr_hidden;
void fdr_rtbuf_add_drops(struct fdr_rtbuf *rb, int32_t tid, const uint64_t *rec,
			 const uint64_t *bufs) fdr_hidden;

#endif /* FDR_RTBUF_H */
