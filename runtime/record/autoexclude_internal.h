/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/autoexclude_internal.h - what auto_exclude's two files
 * share: autoexclude.c (the hook, the decisions) and autoexclude_counts.c
 * (the tables of counts and decisions, and putting them in the trace).
 * autoexclude.c uses autoexclude_counts.c, never the other way round.
 * Record layer only.
 */
#ifndef FDR_AUTOEXCLUDE_INTERNAL_H
#define FDR_AUTOEXCLUDE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

/*
 * 512: Lua's workload.lua counts calls of about 300 functions on its one
 * thread (most of them only inside counted calls); 256 sent the rest to
 * the process-wide table's locked adds (2% of a run's samples).
 */
#define AX_SLOT_BITS 9u
#define AX_SLOTS (1u << AX_SLOT_BITS)	/* a thread's table of counts */
/*
 * Slots looked at for an id before the process-wide table. Linear probing
 * clusters: with 8, Lua's nested counted calls (a few hundred functions)
 * sent 450 000 calls a run to the process-wide table's locked adds, out of
 * line; with 32, none. The hook counts in the slot its id cache entry
 * names (AX_SLOT_TAG) without probing: probes are out of line.
 */
#define AX_PROBE 32u
#define AX_NEST 64u		/* open counted calls whose address is kept */
#define AX_SHADOW 32u		/* open recorded calls of undecided functions, per thread */
#define AX_GLOBAL (1u << 14)	/* the process-wide table (power of two) */
#define AX_GPROBE 64u
#define AX_DECISIONS 4096u	/* functions that may be decided counted-only */
#define AX_CHUNK 128u		/* pairs in one FDRTRACE_EXT_COUNTED record */
/*
 * Call sites patched to count without the hooks (autoexclude_patch.c):
 * functions with a count of their own in every thread (@fast), and the
 * call sites a thread asks for, the most recent AX_WANT (a ring).
 */
#define AX_FAST 512u
#define AX_WANT 64u
/*
 * An id cache entry's @ax (thread.h) that is AX_SLOT_TAG | slot: the
 * function counted in that slot of this thread's table, when the slot
 * holds its id (autoexclude.c, ax_nest_enter()). Ids are below it.
 */
#define AX_SLOT_TAG 0x80000000u

struct ax_open {
	uintptr_t addr;
	uint32_t id;
	uint64_t tsc;
};

/* A function's calls counted on one thread: one cache line has both (16 bytes). */
struct ax_slot {
	_Atomic uint32_t id;		/* 0: free; set once, after the first count */
	_Atomic uint64_t count;
};

/*
 * One thread's state (initial-exec TLS, all zero at the start). @nest,
 * @nest_addr, @open, @shadow, @epoch, @pending_id and @sample_*: owner
 * only. @nest_addr[i]: the address of the counted call open at level i,
 * or ~address (top bit set) when its exit must go out of line: a call
 * left out (filter, max_depth; its exit counts a drop) or the outermost
 * call being sampled (@sample_id). @slot: written by the owner, read by
 * emitters under the slot lock; @taken:
 * written by emitters under the slot lock, read by the owner once it has
 * left the registry (fdr_ax_thread_exit()).
 */
struct fdr_ax_thread {
	uint32_t nest;
	uint32_t open;
	uint32_t epoch;
	uint32_t pending_id;	/* ax_slow() to ax_record_slow(): the undecided function */
	uint32_t sample_left;	/* outermost counted calls until the next one timed */
	uint32_t sample_id;	/* the one being timed (0: none) */
	uint64_t sample_tsc;	/* its entry */
	uint32_t want_head;	/* @want[want_head % AX_WANT] is the next one written */
	uintptr_t nest_addr[AX_NEST + 1];	/* [AX_NEST]: scratch, never read */
	struct ax_open shadow[AX_SHADOW];
	struct ax_slot slot[AX_SLOTS];
	_Atomic uint64_t taken[AX_SLOTS];
	/*
	 * Patched call sites (autoexclude_patch.c): @fast[k], the calls of
	 * ax_fast_id[k] the patched sites counted on this thread, written by
	 * the owner's patched sites only (one add each), read like @slot;
	 * @fast_taken[k], like @taken. @want: call sites of counted calls,
	 * (return address, function address | action << 63), written by the
	 * owner, read racily by the flush thread, which checks each.
	 */
	_Atomic uint64_t fast[AX_FAST];
	_Atomic uint64_t fast_taken[AX_FAST];
	_Atomic uintptr_t want[AX_WANT][2];
};

struct ax_global_slot {
	_Atomic uint32_t id;
	_Atomic uint64_t pending;	/* not yet in the trace */
	_Atomic uint64_t total;		/* since the process's trace began (snapshots) */
};

struct ax_decision {
	_Atomic uint32_t ready;
	uint32_t id, calls;
	uint64_t tsc, sum;
	bool undone;		/* timed again: @calls and @sum are the samples */
};

extern uint64_t ax_ticks fdr_hidden;	/* DURATION, clock ticks (fdr_ax_init()) */
extern uint32_t ax_after fdr_hidden;	/* N (fdr_ax_init()) */
extern struct ax_global_slot *ax_global fdr_hidden;	/* AX_GLOBAL slots, mapped by fdr_ax_init() */
extern struct ax_decision ax_dec[AX_DECISIONS] fdr_hidden;
extern _Atomic uint32_t ax_dec_next fdr_hidden;	/* entries of ax_dec[] claimed */
extern fdr_tls struct fdr_ax_thread ax_self fdr_hidden;
extern bool ax_patching fdr_hidden;	/* call sites are patched (set by fdr_ax_init()) */
extern uint32_t ax_fast_id[AX_FAST] fdr_hidden;	/* @fast[k]'s function id; 0: not yet */
extern _Atomic uint32_t ax_fast_n fdr_hidden;	/* entries of ax_fast_id[] in use */

/* ax_fn[id].state of a function decided counted-only (autoexclude.c) */
#define AX_STATE_COUNTED 2u
/* The address of function @id's state, which a patched site's stub reads (autoexclude.c). */
const _Atomic uint32_t *ax_state_of(uint32_t id) fdr_hidden;

/*
 * A counted call at the call site that returns to @site: remember it, for
 * the flush thread to patch (fdr_ax_patch_round()). Owner, in the hook.
 */
static fdr_always_inline notrace void ax_want(struct fdr_ax_thread *x, const void *site,
					      uintptr_t fn, unsigned action)
{
	_Atomic uintptr_t *w = x->want[x->want_head++ % AX_WANT];

	/* relaxed: the reader checks each word on its own (autoexclude_patch.c) */
	atomic_store_explicit(&w[0], (uintptr_t)site, memory_order_relaxed);
	atomic_store_explicit(&w[1], fn | (uintptr_t)(action != 0) << 63, memory_order_relaxed);
}

/* @n calls of @id into the process-wide table; lost when it has no room. Any thread. */
void ax_count_global(uint32_t id, uint64_t n) fdr_hidden;
/* Write a decision down for the flush thread. Return: false when there is no room. */
bool ax_note(uint32_t id, uint32_t calls, uint64_t sum, uint64_t tsc, bool undone) fdr_hidden;

#endif /* FDR_AUTOEXCLUDE_INTERNAL_H */
