/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/thread.h - one thread's recording state (struct
 * fdr_thread, initial-exec TLS).
 *
 * Its owner thread writes it (the hooks, the slow path, the thread-exit
 * destructor). Other threads (the finisher at exit, fdrtrace_flush(), the
 * fatal-signal handler) read @pos/@buf and kick @end/@flush_req, but only
 * while they hold the thread's registry slot (registry.c: slow_slot_lock()),
 * which the owner also takes to hand a buffer over or to leave the
 * registry. Seen by the record layer and the layers above it only.
 */
#ifndef FDR_THREAD_H
#define FDR_THREAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <fdrtrace/format.h>

#include "buffer_queue.h"
#include "compiler.h"

struct fdr_ax_thread;

/* Bytes a hook's slow path may need at once: NewCPUId + TSCWrap + record. */
#define FDR_SLOW_RESERVE 40u

/*
 * max_depth: open calls whose function a thread keeps, to match exits
 * with entries; deeper ones are counted, their nesting trusted.
 */
#define FDR_DEPTH_FNS 64u

/* The per-thread function id cache: direct-mapped, power of two. */
#define FDR_FCACHE_SIZE 256u

struct fdr_fcache_ent {
	uintptr_t addr;
	uint32_t id;
	/*
	 * auto_exclude (autoexclude.c): @id when the function is known to
	 * be timed for good; AX_SLOT_TAG | slot (autoexclude_internal.h):
	 * its calls are counted in that slot of the thread's table, when the
	 * slot holds @id; anything else (a stale value of another id: ids
	 * are unique) means "look it up". The fast path never reads it.
	 */
	uint32_t ax;
};

/* Calls entered during a gap whose ids are kept (deeper ones: counted). */
#define FDR_GAP_IDS 32u

/**
 * struct fdr_gap - a thread's records lost because the pool was empty,
 * followed by the hooks that dropped them (owner only, guard held), so
 * that its next buffer can say where the gap was and which calls it
 * opened and closed (FDRTRACE_EXT_DROP with a gap, format.h)
 * @first_tsc, @last_tsc: of the first and last record lost (0: no gap)
 * @exited: calls open before the gap that returned in it
 * @depth: calls entered in the gap and still open (@ids: the outermost
 *	FDR_GAP_IDS of them)
 * @unknown: an exit matched nothing the gap could follow
 */
struct fdr_gap {
	uint64_t first_tsc, last_tsc;
	uint32_t exited;
	uint32_t depth;
	bool unknown;
	uint32_t ids[FDR_GAP_IDS];
};

enum fdr_thread_state {
	FDR_T_NEW = 0,		/* never registered (zeroed TLS) or left the registry */
	FDR_T_ACTIVE = 1,
};

/*
 * One call of a signal handler's that interrupted a hook, kept for the
 * hook's thread to write (slow_hold()): its clock, and the function's address
 * with the action in the top byte (user addresses are below 2^57).
 */
struct fdr_held_call {
	uint64_t tsc;
	uint64_t fn_action;
};

#define FDR_HELD_CALLS 64u
#define FDR_HELD_ACTION_SHIFT 60
/*
 * on_full=wait: the held calls a thread keeps once it has waited for a
 * buffer (a 256 KiB ring it maps then, held.c, slow_held_grow()): a
 * handler runs all through a wait, and a 10 kHz timer's 4 calls a run
 * filled the 64 slots in 1.6 ms of a 12-33 ms wait (the reliability suite
 * beside a disk-heavy test). 0.4 s of that handler. A power of two.
 */
#define FDR_WAIT_HELD_CALLS 16384u

/**
 * struct fdr_thread - one thread's recording state (initial-exec TLS)
 *
 * The first cache line holds everything the fast path touches besides
 * the id cache entry. Trivially destructible: all zero means "new".
 *
 * @pos: where the next record goes. The owner stores it with release
 *	after writing the record's bytes; a reader in another thread loads it
 *	with acquire and sees only whole records before it.
 * @end: the fast path takes the slow path when @pos >= @end. Other
 *	threads store NULL here to make the owner look at @flush_req.
 * @last_tsc: the TSC reference the next delta is taken from
 * @cpu: the CPU of the last NewCPUId
 * @guard: nonzero while a hook (FDR_GUARD_HOOK) or the control API or
 *	the thread's exit (FDR_GUARD_BUSY) runs on this thread; a signal
 *	handler's calls meanwhile are kept (a hook's) or counted (re-entry).
 *	FDR_GUARD_VFORK in a vfork child, which runs on this thread's memory
 *	(vfork.c): its hooks record and count nothing
 */
struct fdr_thread {
	_Atomic(uint8_t *) pos;
	_Atomic(uint8_t *) end;
	uint64_t last_tsc;
	uint32_t cpu;
	uint32_t guard;
	int32_t tid;
	uint32_t state;
	struct fdr_buffer *buf;
	uint32_t slot;
	_Atomic uint32_t flush_req;
	bool starved;		/* in a pool-empty episode */
	bool ignored;		/* fdrtrace_thread_ignore(): hooks record nothing */
	bool snapped;		/* the final dump took this thread's buffer (slot lock) */
	/*
	 * Set by the pthread key destructor once it has reported this
	 * thread's drops, cleared when the thread registers again: a handler
	 * re-entering meanwhile counts process-wide (no buffer will say it).
	 */
	bool leaving;
	uint32_t depth_epoch;	/* max_depth: fdr_depth_epoch when @depth was last valid */
	uint8_t *rewind_floor;	/* func_duration_threshold_us: never erase below this */
	uint8_t *arg_end;	/* just after the last CallArgument (fdrtrace_log_arg) */
	uint64_t depth;		/* max_depth: calls open on this thread, counted (@depth_fn) */
	/* drops not yet reported in the trace, per reason */
	_Atomic uint64_t drop_rec[FDRTRACE_DROP_REASON_COUNT];
	_Atomic uint64_t drop_buf[FDRTRACE_DROP_REASON_COUNT];
	struct fdr_gap gap;		/* pool empty: the gap since the last buffer */
	/*
	 * Re-entry drops (a signal handler's calls while a hook of this thread
	 * ran): written by the handler, taken by the owner's slow path, which
	 * the handler sends there by clearing @end. @re_net is entries minus
	 * exits dropped, @re_low the lowest it went (below 0: an exit of a
	 * call the handler did not enter).
	 */
	_Atomic uint64_t re_first_tsc, re_last_tsc;
	_Atomic int32_t re_net, re_low;
	_Atomic bool re_pending;
	/*
	 * A handler's calls while a hook of this thread held the guard, kept
	 * (held.c, slow_hold()) for the owner to write once the hook is done:
	 * handlers claim slots at @held_tail, the owner writes them from
	 * @held_head on. Slot i is held[i % FDR_HELD_CALLS], or
	 * held_more[i % FDR_WAIT_HELD_CALLS] once the thread has waited
	 * (@held_more, at the end). Handlers on one thread nest, so a slot is
	 * whole when the owner runs again.
	 */
	_Atomic uint32_t held_tail, held_head;
	bool no_wait;		/* on_full=wait never waits on this thread (the flush thread) */
	uint64_t sigmask;	/* signals blocked when the thread registered (on_full=wait) */
	/* on_full=wait: the last wait, reported in the next buffer */
	uint64_t wait_first_tsc, wait_last_tsc;
	uint32_t vfork_guard;	/* @guard when vfork() was called, given back to the parent */
	struct fdr_held_call held[FDR_HELD_CALLS];
	struct fdr_fcache_ent cache[FDR_FCACHE_SIZE] __attribute__((aligned(FDR_CACHELINE)));
	/*
	 * max_depth: the functions of the outermost FDR_DEPTH_FNS calls open
	 * (@depth_fn[0] the outermost), so that an exit finds its entry
	 * (slowpath.c, slow_depth_deep()). After the id cache, which the fast path
	 * reaches at a fixed offset: nothing the hooks touch moves.
	 */
	uintptr_t depth_fn[FDR_DEPTH_FNS];
	/*
	 * on_full=wait: FDR_WAIT_HELD_CALLS slots for the held calls, mapped
	 * by the owner before its first wait and unmapped at its exit; NULL:
	 * @held. Set and cleared only while no handler can use it (signals
	 * blocked, or the guard not a hook's); read relaxed by a snapshot.
	 */
	_Atomic(struct fdr_held_call *) held_more;
	/*
	 * auto_exclude: the thread's counts (autoexclude.c), set by the owner
	 * at its first use. Last, so that nothing the fast path reads moves.
	 */
	_Atomic(struct fdr_ax_thread *) ax;
} __attribute__((aligned(FDR_CACHELINE)));

/* struct fdr_thread's @guard: a hook; the control API or the thread's exit; a vfork child (vfork.c) */
#define FDR_GUARD_HOOK 1u
#define FDR_GUARD_BUSY 2u
#define FDR_GUARD_VFORK 0x76666b31u

extern fdr_tls struct fdr_thread fdr_self fdr_hidden;

#endif /* FDR_THREAD_H */
