// SPDX-License-Identifier: MIT
/*
 * runtime/record/ring.c - the ring policy: the pool as a flight recorder.
 *
 * Contract: in ring policy a thread hands a full buffer over by marking it
 * FULL with the next handover number (fdr_ring_put(); nothing is queued,
 * nothing is written). A thread that finds the free pool empty takes the
 * FULL buffer with the smallest number back (fdr_ring_take_oldest()),
 * counting its function records as OVERWRITTEN drops (process-wide, as
 * the buffer may be another thread's), and the drops its FDRx drop
 * records reported (a gap before it) under their own reasons, so that
 * records kept + records dropped = records made still holds. So the pool holds the newest
 * buffers of the whole process, oldest overwritten first. A dump (exit,
 * fatal signal, snapshot) writes the FULL buffers oldest first
 * (fdr_ring_write(), caller holds the file lock), each claimed FULL ->
 * BUSY with a CAS so that no thread takes it back while it is written; a
 * snapshot puts them back to FULL afterwards. Threads skip BUSY buffers.
 * All of it is lock-free and async-signal-safe; the scans are linear in
 * buffer_max (once per buffer claimed when the pool is empty).
 * A dump writes the ring only up to the handover number it read before it
 * took the threads' partial buffers (fdr_ring_newest()), so that a thread's
 * buffer numbers in a dump only grow and none is written twice: a buffer
 * handed over after its partial copy was taken is newer than the bound.
 *
 * Stacks: each thread keeps, in TLS, the function ids of its calls open at
 * the start of its current buffer. When it hands the buffer over it walks
 * the buffer's records to bring that stack to the buffer's end (the
 * owner alone reads and writes it; the hooks' fast path is untouched);
 * the next buffer starts with an FDRTRACE_EXT_STACK record of it, so a
 * reader can rebuild the calls of a trace that starts mid-stack. At most
 * FDR_STACK_MAX calls are kept (the innermost), and a stack record takes
 * at most a quarter of a buffer. Every buffer of a thread starts with one
 * (depth 0 too), numbered: the thread's buffer number (from 1) and the
 * function records it wrote in its earlier buffers, so that a reader sees
 * when buffers of the thread between two it holds were overwritten
 * (docs/format.md 5.2) instead of joining calls across them.
 */
#include <string.h>

#include "buffer_queue.h"
#include "config.h"
#include "ext_encode.h"
#include "fdr_walk.h"
#include "records.h"
#include "ring.h"
#include "state.h"
#include "thread.h"

#define FDR_STACK_MAX 1024u

static _Atomic uint64_t ring_next_seq;
static fdr_tls uint32_t ring_stk[FDR_STACK_MAX];
static fdr_tls uint32_t ring_depth;
static fdr_tls uint64_t ring_bufno;	/* buffers this thread began */
static fdr_tls uint64_t ring_recs;	/* function records in the buffers it handed over */

/*
 * After fork, in the child's only thread (the one that forked), before
 * fdr_pool_reset(). Its stack is brought to the fork through the records
 * of the buffer it was filling (the parent's, abandoned in the child) or
 * the calls of the gap it was in, so that the child's first buffer's
 * stack record holds the calls open at fork: without this, it held those
 * open when that buffer began, and a reader matched the child's first
 * exits against calls that had already returned. Its buffers are
 * numbered anew (the child's trace holds none of the parent's records).
 */
notrace void fdr_ring_fork_child(struct fdr_thread *t)
{
	if (fdr_cfg.policy == FDR_POLICY_RING) {
		const struct fdr_gap *g = &t->gap;

		if (t->buf)
			fdr_ring_stack_advance(t->buf, atomic_load_explicit(&t->pos,
									    memory_order_relaxed));
		else if (g->first_tsc)
			fdr_ring_stack_gap(g);
	}
	atomic_store_explicit(&ring_next_seq, 0, memory_order_relaxed);
	ring_bufno = 0;
	ring_recs = 0;
}

notrace void fdr_ring_put(struct fdr_buffer *b)
{
	uint64_t seq = atomic_fetch_add_explicit(&ring_next_seq, 1, memory_order_relaxed) + 1;

	atomic_store_explicit(&b->ring_seq, seq, memory_order_relaxed);
	/* release: the buffer's bytes, @len and @ring_seq before FULL */
	atomic_store_explicit(&b->ring_state, FDR_RING_FULL, memory_order_release);
}

/*
 * The FULL buffer with the smallest number greater than @after, up to
 * @limit; its number, as the scan read it, in *@seq. The buffer may be
 * taken back and handed over again (a larger number) as soon as the scan
 * has read it: a caller that claims it checks the number it then holds
 * against *@seq, never against a number read again after the scan.
 */
static notrace struct fdr_buffer *ring_oldest(uint64_t after, uint64_t limit, uint64_t *seq)
{
	struct fdr_buffer *best = NULL;
	uint64_t best_seq = UINT64_MAX;
	uint32_t count = fdr_pool_count();

	for (uint32_t i = 0; i < count; i++) {
		struct fdr_buffer *b = fdr_pool_buffer(i);
		uint64_t n;

		if (atomic_load_explicit(&b->ring_state, memory_order_acquire) != FDR_RING_FULL)
			continue;
		n = atomic_load_explicit(&b->ring_seq, memory_order_relaxed);
		if (n > after && n <= limit && n < best_seq) {
			best = b;
			best_seq = n;
		}
	}
	*seq = best_seq;
	return best;
}

notrace struct fdr_buffer *fdr_ring_take_oldest(void)
{
	for (int tries = 0; tries < 8; tries++) {
		uint64_t seq;
		struct fdr_buffer *b = ring_oldest(0, UINT64_MAX, &seq);
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
		/* the drops it reported (a gap before it) go with it: count them process-wide */
		for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
			if (b->drops[r])
				atomic_fetch_add_explicit(&fdr_orphan_rec[r], b->drops[r],
							  memory_order_relaxed);
			if (b->drop_bufs[r])
				atomic_fetch_add_explicit(&fdr_orphan_buf[r], b->drop_bufs[r],
							  memory_order_relaxed);
		}
		atomic_store_explicit(&b->ring_state, FDR_RING_NONE, memory_order_relaxed);
		return b;
	}
	return NULL;
}

/**
 * fdr_ring_newest - the handover number of the newest buffer handed over so far
 *
 * A dump that copies threads' partial buffers reads it before the copies
 * and writes the ring only up to it (fdr_ring_write()): a buffer handed
 * over after its copy was taken then has a larger number, so it is not
 * written twice, and no buffer of a thread newer than its copied partial
 * one is written before it.
 *
 * Context: any thread; async-signal-safe.
 * Return: the number (0 when none was handed over).
 */
notrace uint64_t fdr_ring_newest(void)
{
	return atomic_load_explicit(&ring_next_seq, memory_order_relaxed);
}

/**
 * fdr_ring_write - write the FULL buffers handed over up to @upto, oldest first
 * @keep:	put them back FULL afterwards (a snapshot); else they stay BUSY
 * @upto:	the newest handover number to write (fdr_ring_newest() read
 *		before the dump copied partial buffers), UINT64_MAX: all
 * @write:	writes one buffer's bytes (the file layer's
 *		fdr_file_write_buffer(); passed in, the file layer being above)
 *
 * Context: the caller holds the file lock; async-signal-safe.
 */
notrace void fdr_ring_write(bool keep, uint64_t upto,
			    int (*write)(const uint8_t *data, uint64_t len))
{
	uint64_t now = fdr_ring_newest();
	uint64_t limit = upto < now ? upto : now;
	uint64_t last = 0, seq;
	struct fdr_buffer *b;

	/*
	 * Invariant: every buffer written so far was handed over with a number
	 * in (0, @limit], in increasing order, @last the largest; so none is
	 * newer than the partial copies a snapshot writes after them.
	 */
	while ((b = ring_oldest(last, limit, &seq))) {
		uint32_t expect = FDR_RING_FULL;

		if (!atomic_compare_exchange_strong_explicit(&b->ring_state, &expect, FDR_RING_BUSY,
							     memory_order_acquire,
							     memory_order_relaxed))
			continue;	/* taken back meanwhile: look again */
		/*
		 * Acquire above: the number of the handover that made it FULL.
		 * Compared with the scan's: a buffer taken back and handed over
		 * again between the scan and the CAS has a number past @limit
		 * (it may hold the records of a partial copy already taken) and
		 * is not written; read again here, it would pass.
		 */
		if (atomic_load_explicit(&b->ring_seq, memory_order_relaxed) != seq) {
			atomic_store_explicit(&b->ring_state, FDR_RING_FULL, memory_order_release);
			continue;
		}
		last = seq;
		if (b->len)
			write(b->data, b->len);
		if (keep)
			atomic_store_explicit(&b->ring_state, FDR_RING_FULL, memory_order_release);
	}
}

/* The drop counts of an FDRx drop record whose payload is @q..@q+@size, into @b. */
static notrace void ring_note_drop(struct fdr_buffer *b, const uint8_t *q, int32_t size)
{
	/* header (magic, version, kind, body_len), then tid u32, reason u8, records, buffers */
	uint64_t rec, bufs;

	if (size < 8 + 4 + 1 + 16 || memcmp(q, FDRTRACE_EXT_MAGIC, FDRTRACE_EXT_MAGIC_LEN) ||
	    q[5] != FDRTRACE_EXT_DROP || !q[12] || q[12] >= FDRTRACE_DROP_REASON_COUNT)
		return;
	memcpy(&rec, q + 13, sizeof(rec));
	memcpy(&bufs, q + 21, sizeof(bufs));
	b->drops[q[12]] += rec;
	b->drop_bufs[q[12]] += bufs;
}

notrace void fdr_ring_stack_advance(struct fdr_buffer *b, const uint8_t *end)
{
	const uint8_t *p = b->data;
	uint32_t depth = ring_depth;
	uint64_t records = 0;

	memset(b->drops, 0, sizeof(b->drops));
	memset(b->drop_bufs, 0, sizeof(b->drop_bufs));
	while (p < end) {
		struct fdr_walk_rec rec;
		uint32_t word, id;
		long n = fdr_walk_next(p, (size_t)(end - p), &rec);

		/* by the format's rules (fdr_walk.h); a damaged or cut record ends the walk */
		if (n < 0)
			break;
		if (rec.kind != FDR_WALK_FUNCTION) {
			if (rec.kind == FDRTRACE_MD_CUSTOM_EVENT)
				ring_note_drop(b, p + FDRTRACE_METADATA_RECORD_SIZE, (int32_t)rec.payload);
			p += n;
			continue;
		}
		memcpy(&word, p, sizeof(word));
		id = fdrtrace_func_word_id(word);
		p += n;
		records++;
		switch (rec.action) {
		case FDRTRACE_FN_ENTRY:
		case FDRTRACE_FN_ENTRY_ARGS:
			if (depth == FDR_STACK_MAX) {
				/* keep the innermost calls */
				memmove(ring_stk, ring_stk + 1, (FDR_STACK_MAX - 1) * sizeof(ring_stk[0]));
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
	}
	ring_depth = depth;
	ring_recs += records;
	b->ring_records = records;
}

notrace size_t fdr_ring_stack_record(uint8_t *p, size_t room, int32_t tid, uint64_t tsc)
{
	struct fdr_ext_bufpos pos = { .buffer_no = ring_bufno + 1, .records_before = ring_recs };
	uint32_t depth = ring_depth;
	size_t max_ids, n, fixed = FDRTRACE_METADATA_RECORD_SIZE +
				   sizeof(struct fdrtrace_ext_header) + 8 + 20;

	room = room < fdr_cfg.buffer_size / 4 ? room : fdr_cfg.buffer_size / 4;
	if (room < fixed)
		return 0;
	/* marker, ext header, tid, depth, the ids, then the buffer's position */
	max_ids = (room - fixed) / 4;
	if (depth > max_ids) {
		pos.skipped = depth - (uint32_t)max_ids;
		depth = (uint32_t)max_ids;
	}
	n = fdr_ext_stack(p + FDRTRACE_METADATA_RECORD_SIZE, room - FDRTRACE_METADATA_RECORD_SIZE,
			  (uint32_t)tid, depth, ring_stk + pos.skipped, &pos);
	if (!n)
		return 0;
	ring_bufno++;
	return fdr_custom_event_md(p, (uint32_t)n, tsc) + n;
}

notrace void fdr_ring_stack_gap(const struct fdr_gap *g)
{
	uint32_t exited = g->exited, depth = g->depth;
	const uint32_t *ids = g->ids;
	uint32_t d = ring_depth;

	if (g->unknown || depth > FDR_GAP_IDS)
		return;	/* the gap's calls are not known: the stack stays as it was */
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
