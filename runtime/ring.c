// SPDX-License-Identifier: MIT
/*
 * runtime/ring.c - the ring policy: the pool as a flight recorder.
 *
 * Contract: in ring policy a thread hands a full buffer over by marking it
 * FULL with the next handover number (fdr_ring_put(); nothing is queued,
 * nothing is written). A thread that finds the free pool empty takes the
 * FULL buffer with the smallest number back (fdr_ring_take_oldest()),
 * counting its function records as OVERWRITTEN drops (process-wide, as
 * the buffer may be another thread's). So the pool holds the newest
 * buffers of the whole process, oldest overwritten first. A dump (exit,
 * fatal signal, snapshot) writes the FULL buffers oldest first
 * (fdr_ring_write(), caller holds the file lock), each claimed FULL ->
 * BUSY with a CAS so that no thread takes it back while it is written; a
 * snapshot puts them back to FULL afterwards. Threads skip BUSY buffers.
 * All of it is lock-free and async-signal-safe; the scans are linear in
 * buffer_max (once per buffer claimed when the pool is empty).
 *
 * Stacks: each thread keeps, in TLS, the function ids of its calls open at
 * the start of its current buffer. When it hands the buffer over it walks
 * the buffer's records to bring that stack to the buffer's end (the
 * owner alone reads and writes it; the hooks' fast path is untouched);
 * the next buffer starts with an FDRTRACE_EXT_STACK record of it, so a
 * reader can rebuild the calls of a trace that starts mid-stack. At most
 * FDR_STACK_MAX calls are kept (the innermost), and a stack record takes
 * at most a quarter of a buffer.
 */
#include <string.h>

#include "buffer_queue.h"
#include "ext_writer.h"
#include "runtime.h"

#define FDR_STACK_MAX 1024u

static _Atomic uint64_t ring_next_seq;
static fdr_tls uint32_t ring_stk[FDR_STACK_MAX];
static fdr_tls uint32_t ring_depth;

notrace void fdr_ring_reset(void)
{
	atomic_store_explicit(&ring_next_seq, 0, memory_order_relaxed);
}

notrace void fdr_ring_put(struct fdr_buffer *b)
{
	uint64_t seq = atomic_fetch_add_explicit(&ring_next_seq, 1, memory_order_relaxed) + 1;

	atomic_store_explicit(&b->ring_seq, seq, memory_order_relaxed);
	/* release: the buffer's bytes, @len and @ring_seq before FULL */
	atomic_store_explicit(&b->ring_state, FDR_RING_FULL, memory_order_release);
}

/* The FULL buffer with the smallest number greater than @after, up to @limit. */
static notrace struct fdr_buffer *ring_oldest(uint64_t after, uint64_t limit)
{
	struct fdr_buffer *best = NULL;
	uint64_t best_seq = UINT64_MAX;
	uint32_t count = fdr_pool_count();

	for (uint32_t i = 0; i < count; i++) {
		struct fdr_buffer *b = fdr_pool_buffer(i);
		uint64_t seq;

		if (atomic_load_explicit(&b->ring_state, memory_order_acquire) != FDR_RING_FULL)
			continue;
		seq = atomic_load_explicit(&b->ring_seq, memory_order_relaxed);
		if (seq > after && seq <= limit && seq < best_seq) {
			best = b;
			best_seq = seq;
		}
	}
	return best;
}

notrace struct fdr_buffer *fdr_ring_take_oldest(void)
{
	for (int tries = 0; tries < 8; tries++) {
		struct fdr_buffer *b = ring_oldest(0, UINT64_MAX);
		uint32_t expect = FDR_RING_FULL;
		uint64_t lost;

		if (!b)
			return NULL;
		/* acquire: the previous owner's bytes (we count them) */
		if (!atomic_compare_exchange_strong_explicit(&b->ring_state, &expect, FDR_RING_BUSY,
							     memory_order_acquire,
							     memory_order_relaxed))
			continue;
		lost = b->ring_records;
		atomic_fetch_add_explicit(&fdr_orphan_rec[FDRTRACE_DROP_OVERWRITTEN], lost,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&fdr_orphan_buf[FDRTRACE_DROP_OVERWRITTEN], 1,
					  memory_order_relaxed);
		atomic_store_explicit(&b->ring_state, FDR_RING_NONE, memory_order_relaxed);
		return b;
	}
	return NULL;
}

notrace void fdr_ring_write(bool keep)
{
	uint64_t limit = atomic_load_explicit(&ring_next_seq, memory_order_relaxed);
	uint64_t last = 0;
	struct fdr_buffer *b;

	while ((b = ring_oldest(last, limit))) {
		uint32_t expect = FDR_RING_FULL;
		uint64_t seq = atomic_load_explicit(&b->ring_seq, memory_order_relaxed);

		if (!atomic_compare_exchange_strong_explicit(&b->ring_state, &expect, FDR_RING_BUSY,
							     memory_order_acquire,
							     memory_order_relaxed))
			continue;	/* taken back meanwhile: look again */
		if (atomic_load_explicit(&b->ring_seq, memory_order_relaxed) != seq) {
			/* taken back and handed over again between the scan and the CAS */
			atomic_store_explicit(&b->ring_state, FDR_RING_FULL, memory_order_release);
			continue;
		}
		last = seq;
		if (b->len)
			fdr_file_write_buffer(b->data, b->len);
		if (keep)
			atomic_store_explicit(&b->ring_state, FDR_RING_FULL, memory_order_release);
	}
}

notrace uint64_t fdr_ring_stack_advance(const uint8_t *p, const uint8_t *end)
{
	uint32_t depth = ring_depth;
	uint64_t records = 0;

	while (p + FDRTRACE_FUNC_RECORD_SIZE <= end) {
		unsigned md = p[0] >> 1;
		uint32_t word;
		int32_t size;

		if (!(p[0] & 1)) {
			uint32_t id;

			memcpy(&word, p, sizeof(word));
			id = fdrtrace_func_word_id(word);
			p += FDRTRACE_FUNC_RECORD_SIZE;
			records++;
			switch (fdrtrace_func_word_action(word)) {
			case FDRTRACE_FN_ENTRY:
			case FDRTRACE_FN_ENTRY_ARGS:
				if (depth == FDR_STACK_MAX) {
					/* keep the innermost calls */
					memmove(ring_stk, ring_stk + 1,
						(FDR_STACK_MAX - 1) * sizeof(ring_stk[0]));
					depth--;
				}
				ring_stk[depth++] = id;
				break;
			default:
				/* an exit closes the innermost call of its function (longjmp skips some) */
				for (uint32_t d = depth; d > 0 && depth - d < 64; d--) {
					if (ring_stk[d - 1] == id) {
						depth = d - 1;
						break;
					}
				}
				break;
			}
			continue;
		}
		p += FDRTRACE_METADATA_RECORD_SIZE;
		if (md == FDRTRACE_MD_CUSTOM_EVENT || md == FDRTRACE_MD_TYPED_EVENT) {
			memcpy(&size, p - FDRTRACE_METADATA_RECORD_SIZE + 1, sizeof(size));
			if (size < 0 || size > end - p)
				break;
			p += size;
		}
	}
	ring_depth = depth;
	return records;
}

notrace size_t fdr_ring_stack_record(uint8_t *p, size_t room, int32_t tid, uint64_t tsc)
{
	uint32_t depth = ring_depth, skip = 0;
	size_t max_ids, n;

	if (!depth || room < 2 * FDRTRACE_METADATA_RECORD_SIZE + 8)
		return 0;
	room = room < fdr_cfg.buffer_size / 4 ? room : fdr_cfg.buffer_size / 4;
	/* marker, ext header, tid, depth, then the ids */
	max_ids = (room - FDRTRACE_METADATA_RECORD_SIZE - sizeof(struct fdrtrace_ext_header) - 8) / 4;
	if (depth > max_ids) {
		skip = depth - (uint32_t)max_ids;
		depth = (uint32_t)max_ids;
	}
	n = fdr_ext_stack(p + FDRTRACE_METADATA_RECORD_SIZE, room - FDRTRACE_METADATA_RECORD_SIZE,
			  (uint32_t)tid, depth, ring_stk + skip);
	if (!n)
		return 0;
	return fdr_custom_event_md(p, (uint32_t)n, tsc) + n;
}

notrace void fdr_ring_stack_gap(uint32_t exited, uint32_t depth, const uint32_t *ids)
{
	uint32_t d = ring_depth;

	d = exited < d ? d - exited : 0;
	for (uint32_t i = 0; i < depth; i++) {
		if (d == FDR_STACK_MAX) {
			memmove(ring_stk, ring_stk + 1, (FDR_STACK_MAX - 1) * sizeof(ring_stk[0]));
			d--;
		}
		ring_stk[d++] = ids[i];
	}
	ring_depth = d;
}
