// SPDX-License-Identifier: MIT
/*
 * runtime/file/rtbuf.c - the runtime's own buffers: the metadata the runtime
 * writes itself (process, config, modules, names, drops, the close), as
 * custom events in a buffer of the flush thread's id, written to the trace
 * file when full or flushed.
 *
 * Contract: a runtime buffer belongs to one thread at a time (the flush
 * thread's, the finisher's, a dump's); its writes take the file lock's
 * holder's way (fdr_file_write_buffer()). Async-signal-safe but for
 * fdr_rtbuf_init()'s first call (mmap).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "buffer_queue.h"
#include "clock.h"
#include "ext_encode.h"
#include "records.h"
#include "rtbuf.h"
#include "state.h"
#include "trace_file.h"

/* ---- runtime buffers ---- */

static notrace size_t rtbuf_cap(void)
{
	return fdr_cfg.buffer_size - (fdr_cfg.format_version == 1 ? FDR_V1_TAIL : 0);
}

/*
 * Not populated (2026-12-02): most runtime buffers hold a few hundred
 * bytes (a short process's start records, its names and close); two of
 * them populated at every start were 16 pages each, 0.05 ms on this
 * project's VM. A page a runtime record touches first faults then, in the
 * flush thread, the finisher, or a dump (a fault is async-signal-safe).
 */
notrace int fdr_rtbuf_init(struct fdr_rtbuf *rb, int32_t tid)
{
	if (!rb->data) {
		void *m = mmap(NULL, fdr_cfg.buffer_size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return -errno;
		rb->data = m;
	}
	rb->cap = rtbuf_cap();
	rb->len = 0;
	rb->tid = tid;
	return 0;
}

static uint64_t rtbuf_tsc;

notrace int fdr_rtbuf_add(struct fdr_rtbuf *rb, const uint8_t *payload, size_t len)
{
	unsigned cpu;

	if (!rb->data || !len)
		return -EINVAL;
	if (rb->len && rb->len + FDRTRACE_METADATA_RECORD_SIZE + len > rb->cap) {
		int err = fdr_rtbuf_flush(rb);

		if (err)
			return err;
	}
	if (!rb->len) {
		rtbuf_tsc = fdr_clock_read(&cpu);
		rb->len = fdr_preamble(rb->data, rb->tid, cpu, rtbuf_tsc);
	}
	if (rb->len + FDRTRACE_METADATA_RECORD_SIZE + len > rb->cap)
		return -EMSGSIZE;	/* never fits in one buffer: dropped */
	rb->len += fdr_custom_event_md(rb->data + rb->len, (uint32_t)len, rtbuf_tsc);
	memcpy(rb->data + rb->len, payload, len);
	rb->len += len;
	return 0;
}

/**
 * fdr_rtbuf_add_drops - add one drop record per reason with a count to @rb
 * @rb:		the runtime buffer
 * @tid:	the thread that dropped them (0: the process)
 * @rec:	records dropped, by reason
 * @bufs:	buffers dropped, by reason
 *
 * Context: whoever owns @rb; async-signal-safe.
 */
notrace void fdr_rtbuf_add_drops(struct fdr_rtbuf *rb, int32_t tid, const uint64_t *rec,
				 const uint64_t *bufs)
{
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		uint8_t p[64];
		size_t n;

		if (!rec[r] && !bufs[r])
			continue;
		n = fdr_ext_drop(p, sizeof(p), (uint32_t)tid, (uint8_t)r, rec[r], bufs[r]);
		if (n)
			fdr_rtbuf_add(rb, p, n);
	}
}

notrace int fdr_rtbuf_flush(struct fdr_rtbuf *rb)
{
	int err;

	if (!rb->len)
		return 0;
	err = fdr_file_write_buffer(rb->data, rb->len);
	rb->len = 0;
	return err;
}
