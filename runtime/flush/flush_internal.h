/* SPDX-License-Identifier: MIT */
/*
 * runtime/flush/flush_internal.h - what the files of the flush layer share.
 * The files form a stack, each calling only those below it: placement.c
 * (where the thread runs), flush_state.c (the shared state and the
 * wake-up) < names.c (function names, start
 * records), pool.c (the pool's growth) < snapshot.c (snapshot files) <
 * flush_thread.c (the thread). Each group below is owned by the file it
 * names. Nothing outside runtime/flush/ includes it; the layer's
 * interface is flush.h.
 *
 * The flush thread's own state is changed by the flush thread, or under
 * fl_mutex, unless its comment says otherwise.
 */
#ifndef FDR_FLUSH_INTERNAL_H
#define FDR_FLUSH_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "flush.h"
#include "rtbuf.h"

struct fdr_module;
struct fdr_thread;

#define FL_THREAD_NAME "fdrtrace-flush"
/*
 * Ring policy: an id's name, looked up while the program runs (names.c);
 * @name published with a release store, never freed.
 */
struct fl_cname {
	_Atomic(char *) name;
	uint32_t module;
};
/* flush_state.c */
extern uint8_t *fl_emitted fdr_hidden;	/* per id: FDRTRACE_EXT_FUNC written */
extern struct fdr_rtbuf fl_rb fdr_hidden;
extern bool fl_running fdr_hidden;
extern uint32_t fl_scan_from fdr_hidden;
extern uint8_t fl_scratch[8192] fdr_hidden;
extern _Atomic uint32_t fl_seq fdr_hidden;	/* the futex word fdr_flush_wake() bumps */
extern _Atomic int fl_sleeping fdr_hidden;	/* the flush thread waits on fl_seq */

/* placement.c: where the flush thread runs (the bottom of the layer's stack) */
/* its time slice and its own descriptor table: once, after its first wait */
void fl_place_set_up(void) fdr_hidden;
/* after a drain: to the next CPU when it waited for one an eighth of its time */
void fl_spread(void) fdr_hidden;
/* the starter, around pthread_create(): the new thread starts on the starter's CPU */
void fl_pin_here(void) fdr_hidden;
/* the starter's mask back on the starter, after its pthread_create() */
void fl_unpin(void) fdr_hidden;
/* the thread, as its first wait ends: off the starter's CPU, the starter's mask back */
void fl_leave_pin(void) fdr_hidden;
/* a fork child: the parent thread's schedstat and times are not its own */
void fl_place_reset_child(void) fdr_hidden;
/* names.c */
extern struct fl_cname *fl_cache fdr_hidden;
extern _Atomic uint32_t fl_cache_upto fdr_hidden;

notrace void fl_cache_names(void) fdr_hidden;
notrace int fl_emitted_init(void) fdr_hidden;
notrace size_t fl_id_bytes(void) fdr_hidden;
notrace void fl_module_again(const struct fdr_module *m, void *arg) fdr_hidden;
notrace void fl_module_mapped(const struct fdr_module *m, void *arg) fdr_hidden;
notrace void fl_module_unmapped(const struct fdr_module *m, void *arg) fdr_hidden;

/* pool.c */
extern uint32_t fl_grow_target fdr_hidden;
/* the handover rate's window: its start and the buffers queued then (fl_rate_target()) */
extern uint64_t fl_rate_t0 fdr_hidden, fl_rate_n0 fdr_hidden;
extern _Atomic int fl_pressure fdr_hidden;	/* the pool ran low: grow it (fl_grow()) */
extern _Atomic uint64_t fl_stalled_at fdr_hidden;

notrace bool fl_can_grow(void) fdr_hidden;
notrace void fl_grow(struct fdr_rtbuf *rb) fdr_hidden;
notrace bool fl_growing(void) fdr_hidden;

/* snapshot.c */
extern _Atomic int fl_snap_req fdr_hidden;
extern _Atomic uint32_t fl_snaps fdr_hidden;	/* snapshots written (or failed) */
/* latency triggers fired, snapshots not yet written */
extern _Atomic uint32_t fl_trig_req fdr_hidden;

notrace void fl_request(struct fdr_thread *t, void *arg) fdr_hidden;
notrace void fl_requested_snapshots(void) fdr_hidden;

#endif /* FDR_FLUSH_INTERNAL_H */
