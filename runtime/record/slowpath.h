/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/slowpath.h - the hooks' slow path, the thread registry and
 * the per-thread
 * buffers (slowpath.c), as the layers above use them.
 */
#ifndef FDR_SLOWPATH_H
#define FDR_SLOWPATH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fdrtrace/format.h>

#include "thread.h"

void fdr_record_slow(struct fdr_thread *t, uintptr_t addr, unsigned action, uint64_t tsc,
		     unsigned cpu) fdr_hidden fdr_noinline fdr_cold;
void fdr_record_inactive(void *fn, unsigned action) fdr_hidden fdr_noinline fdr_cold;
/* A hook while the thread's guard is held (a handler, or the runtime's own call): keep or count */
void fdr_record_reentry(struct fdr_thread *t, uintptr_t addr, unsigned action) fdr_hidden
	fdr_noinline fdr_cold;
int fdr_thread_emit_ext(struct fdr_thread *t, const uint8_t *payload, size_t len) fdr_hidden;
int fdr_thread_emit_event(struct fdr_thread *t, int typed, uint16_t type, const void *data,
			  size_t len) fdr_hidden;
int fdr_thread_log_arg(struct fdr_thread *t, uint64_t value) fdr_hidden;
void fdr_thread_set_ignored(struct fdr_thread *t) fdr_hidden;
/* the largest payload of one custom or typed event */
size_t fdr_event_max(void) fdr_hidden;
int fdr_thread_handover(struct fdr_thread *t) fdr_hidden;
int fdr_thread_ensure(struct fdr_thread *t) fdr_hidden;
int fdr_writer_init(void) fdr_hidden;
void fdr_writer_after_fork_child(void) fdr_hidden;
/* visit every registered thread, slot locked: @fn(t, arg) */
void fdr_threads_foreach(void (*fn)(struct fdr_thread *t, void *arg), void *arg,
			 unsigned spin_limit) fdr_hidden;
uint32_t fdr_threads_seen(void) fdr_hidden;
uint32_t fdr_threads_slots_used(void) fdr_hidden;
void fdr_snapshot_thread(struct fdr_thread *t, struct fdr_buffer *node) fdr_hidden;
void fdr_orphan_drops(uint64_t *rec, uint64_t *bufs, bool take) fdr_hidden;
/* buffers handed over to the queue (stream policy) */
extern _Atomic uint64_t fdr_enqueued fdr_hidden;
/* on_full=wait: clock ticks all threads spent waiting for a free buffer */
extern _Atomic uint64_t fdr_wait_ticks fdr_hidden;

#endif /* FDR_SLOWPATH_H */
