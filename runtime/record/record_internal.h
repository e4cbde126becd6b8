/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/record_internal.h - what the slow path's files share.
 * They form a stack, each calling only those below it: put.c (the
 * records put into a buffer) < held.c (calls kept from signal handlers)
 * < registry.c (the slots) < buffer.c (claim and handover) < slowpath.c
 * (the hooks' slow path), events.c < autoexclude.c < thread_exit.c <
 * inactive.c. Each group below is owned by the file it names. Nothing
 * outside runtime/record/ includes it; the interface is slowpath.h.
 */
#ifndef FDR_RECORD_INTERNAL_H
#define FDR_RECORD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer_queue.h"
#include "compiler.h"
#include "config.h"
#include "records.h"
#include "state.h"
#include "thread.h"

/*
 * The end of the room for records in @b: the buffer's end, less the v1
 * tail. Inline: the slow path asks it on every hook that comes there
 * (max_depth), from buffer.c, slowpath.c and the files above.
 */
static inline notrace uint8_t *slow_cap_end(struct fdr_buffer *b)
{
	return b->data + fdr_cfg.buffer_size - (fdr_cfg.format_version == 1 ? FDR_V1_TAIL : 0);
}

/* Calls kept by handlers (held.c, slow_hold()) and not yet written or counted? */
static inline notrace bool slow_held(const struct fdr_thread *t)
{
	return atomic_load_explicit(&t->held_tail, memory_order_relaxed) !=
	       atomic_load_explicit(&t->held_head, memory_order_relaxed);
}

/* put.c */
notrace void slow_count(struct fdr_thread *t, unsigned reason, uint64_t bufs) fdr_hidden;
notrace void slow_gap_note(struct fdr_gap *g, unsigned action, uint32_t id,
			   uint64_t tsc) fdr_hidden;
notrace uint8_t *slow_put_custom(struct fdr_thread *t, uint8_t *p, const uint8_t *payload,
				 size_t len) fdr_hidden;
notrace uint8_t *slow_put_drops(struct fdr_thread *t, uint8_t *p, uint8_t *lim,
				bool *short_of_room) fdr_hidden;
notrace uint8_t *slow_put_func(struct fdr_thread *t, uint8_t *p, unsigned action,
			       uint32_t id, uint64_t tsc) fdr_hidden;

/* held.c */
notrace uint32_t slow_held_cap(struct fdr_thread *t) fdr_hidden;
notrace void slow_held_grow(struct fdr_thread *t) fdr_hidden;
notrace bool slow_held_next(struct fdr_thread *t, uint64_t upto, struct fdr_held_call *h,
			    uintptr_t *addr, unsigned *action) fdr_hidden;
notrace uint32_t slow_held_id(struct fdr_thread *t, uintptr_t addr) fdr_hidden;
notrace bool slow_in_handler(struct fdr_thread *t) fdr_hidden;
notrace uint8_t *slow_put_held(struct fdr_thread *t, uint8_t *p, const uint8_t *lim,
			       uint64_t upto, bool *short_of_room) fdr_hidden;

/* registry.c */
#define FDR_MAX_THREADS 8192u
#define FDR_SLOT_LOCKED ((uintptr_t)1)	/* bit 0 of a slot: its lock */

/* a registered thread's struct per slot, 0 when free (fdr_threads_foreach()) */
extern _Atomic uintptr_t slow_slots[FDR_MAX_THREADS] fdr_hidden;
extern _Atomic uint32_t slow_slots_used fdr_hidden;	/* high-water mark */
extern _Atomic uint32_t slow_threads_seen fdr_hidden;
/* the key whose destructor is the thread's exit (thread_exit.c); valid once slow_key_ok */
extern pthread_key_t slow_key fdr_hidden;
extern bool slow_key_ok fdr_hidden;

notrace int slow_register(struct fdr_thread *t) fdr_hidden;
notrace void slow_slot_lock(uint32_t slot, struct fdr_thread *t) fdr_hidden;
notrace void slow_slot_unlock(uint32_t slot, struct fdr_thread *t) fdr_hidden;

/* buffer.c */
notrace int slow_claim(struct fdr_thread *t, uint64_t tsc, unsigned cpu) fdr_hidden;

#endif /* FDR_RECORD_INTERNAL_H */
