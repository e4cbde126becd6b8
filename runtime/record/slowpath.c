// SPDX-License-Identifier: MIT
/*
 * runtime/record/slowpath.c - the hooks' slow path, the thread registry and the
 * per-thread buffers.
 *
 * Contract: fdr_record_slow() runs on the hook's thread with its guard
 * set, possibly inside a signal handler; it may not take a lock that a
 * hook could hold, call malloc or stdio, or block. It may make a few
 * syscalls (gettid once per thread, clock_gettime in the vDSO per buffer,
 * futex wake per buffer handed over; with on_full=wait, the waits, and
 * once per thread an mmap of its larger held-call ring, wr_held_grow()).
 * It saves and restores errno.
 * One exception to "never block": with filter/exclude set, the first call
 * of each function waits (nanosleep, at most 100 ms) for the flush thread
 * to decide whether it is recorded (flush_thread.c, fdr_filter_skip()).
 *
 * Policies: in ring policy a full buffer is marked FULL in place
 * (ring.c) instead of being queued, and a thread that finds the pool
 * empty takes the oldest FULL buffer back; each new buffer then starts
 * with an FDRTRACE_EXT_STACK record. max_depth keeps @end NULL so that
 * every hook comes here to count depth; a function that filter/exclude
 * leaves out has ~addr in the id cache, so its calls miss the cache and
 * return from here after one compare.
 *
 * The thread registry is an array of slots, each holding a pointer to a
 * registered thread's TLS struct, with bit 0 as a tiny lock. The owner
 * takes its own slot lock only to hand a buffer over or to leave; the
 * finisher, fdrtrace_flush() and the fatal-signal handler take it to read
 * another thread's buffer. The owner never spins on its own slot for long:
 * the other holders only copy a few words under it (no I/O).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "autoexclude.h"
#include "buffer_queue.h"
#include "clock.h"
#include "config.h"
#include "drain.h"
#include "ext_encode.h"
#include "filter.h"
#include "fork_stack.h"
#include "funcid_map.h"
#include "records.h"
#include "ring.h"
#include "slowpath.h"
#include "state.h"
#include "sysunwind.h"
#include "thread.h"
#include "trigger.h"
#include "fastpath_inline.h"

fdr_tls struct fdr_thread fdr_self;
/* buffers handed over to the queue (stream policy); the flush thread counts them written */
_Atomic uint64_t fdr_enqueued;
_Atomic uint64_t fdr_wait_ticks;

#define FDR_MAX_THREADS 8192u
#define FDR_SLOT_LOCKED ((uintptr_t)1)

static _Atomic uintptr_t wr_slots[FDR_MAX_THREADS];
static _Atomic uint32_t wr_slots_used;	/* high-water mark */
static _Atomic uint32_t wr_threads_seen;
static pthread_key_t wr_key;
static bool wr_key_ok;

static void wr_thread_exit(void *arg);

notrace int fdr_writer_init(void)
{
	if (!wr_key_ok) {
		if (pthread_key_create(&wr_key, wr_thread_exit))
			return -EAGAIN;
		wr_key_ok = true;
	}
	return 0;
}

notrace uint32_t fdr_threads_slots_used(void)
{
	return atomic_load_explicit(&wr_slots_used, memory_order_acquire);
}

notrace uint32_t fdr_threads_seen(void)
{
	return atomic_load_explicit(&wr_threads_seen, memory_order_relaxed);
}

static notrace void wr_count(struct fdr_thread *t, unsigned reason, uint64_t bufs)
{
	atomic_fetch_add_explicit(&t->drop_rec[reason], 1, memory_order_relaxed);
	if (bufs)
		atomic_fetch_add_explicit(&t->drop_buf[reason], bufs, memory_order_relaxed);
}

/*
 * A hook that found the gate neither ON nor OFF. LAZY: recording was asked
 * for and this is the process's first hook (or one racing it): start the
 * runtime (lifecycle.c, fdr_drain_start(): one thread starts, the others
 * wait for it), then record this call as any other. Not recursive: the
 * call is recorded only once the gate is ON. COUNTED: recording with
 * auto_exclude, every hook goes to autoexclude.c.
 */
static notrace fdr_noinline void wr_inactive(void *fn, unsigned action, int g)
{
	if (g == FDR_GATE_LAZY) {
		if (fdr_drain_start())
			fdr_record(fn, action);
	} else if (g == FDR_GATE_BEFORE_INIT)
		atomic_fetch_add_explicit(&fdr_before_init_drops, 1, memory_order_relaxed);
	else if (g == FDR_GATE_AFTER_FINI)
		atomic_fetch_add_explicit(&fdr_after_fini_drops, 1, memory_order_relaxed);
}

notrace void fdr_record_inactive(void *fn, unsigned action)
{
	int g = atomic_load_explicit(&fdr_gate, memory_order_relaxed);

	/* auto_exclude's every call: a jump, no frame (the rest in wr_inactive()) */
	if (likely(g == FDR_GATE_COUNTED))
		fdr_ax_record(fn, action);
	else
		wr_inactive(fn, action, g);
}

/* Calls kept by handlers (wr_hold()) and not yet written or counted? */
static notrace bool wr_held(const struct fdr_thread *t)
{
	return atomic_load_explicit(&t->held_tail, memory_order_relaxed) !=
	       atomic_load_explicit(&t->held_head, memory_order_relaxed);
}

/* How many calls the thread's held ring holds: 64, or more once it has waited (wr_held_grow()). */
static notrace uint32_t wr_held_cap(struct fdr_thread *t)
{
	return atomic_load_explicit(&t->held_more, memory_order_relaxed) ? FDR_WAIT_HELD_CALLS
									 : FDR_HELD_CALLS;
}

/* Held call @i's slot. Owner or its handlers. */
static notrace struct fdr_held_call *wr_held_slot(struct fdr_thread *t, uint32_t i)
{
	struct fdr_held_call *more = atomic_load_explicit(&t->held_more, memory_order_relaxed);

	return more ? &more[i % FDR_WAIT_HELD_CALLS] : &t->held[i % FDR_HELD_CALLS];
}

/*
 * A signal handler's call while this thread's hook holds the guard: keep
 * it for the owner, whose slow path writes it (wr_put_held(), from the
 * interrupted hook's slow path or the next hook's): ahead of the hook's
 * record when it came before the hook's clock (the guard is taken before
 * the clock is read), after it otherwise. Not while a counted gap is open
 * (the gap follows what was kept), not on an ignored thread, nor where
 * the slow path does more per call than write it (max_depth, short calls
 * erased, triggers: those count as before), nor when all slots are taken.
 * With on_full=wait, a thread that has waited has FDR_WAIT_HELD_CALLS
 * slots, so that a handler that runs all through a wait is kept too.
 * Async-signal-safe; handlers on one thread nest, so a handler that
 * interrupts this one between the claim and the store has finished
 * before this one goes on. Return: true when kept.
 */
static notrace bool wr_hold(struct fdr_thread *t, uintptr_t addr, unsigned action, uint64_t tsc)
{
	uint32_t i;

	if (t->guard != FDR_GUARD_HOOK || t->ignored || fdr_all_slow || fdr_min_ticks ||
	    fdr_triggering || atomic_load_explicit(&t->re_first_tsc, memory_order_relaxed))
		return false;
	i = atomic_fetch_add_explicit(&t->held_tail, 1, memory_order_relaxed);
	if (i - atomic_load_explicit(&t->held_head, memory_order_relaxed) >= wr_held_cap(t)) {
		atomic_fetch_sub_explicit(&t->held_tail, 1, memory_order_relaxed);
		return false;
	}
	*wr_held_slot(t, i) = (struct fdr_held_call){
		.tsc = tsc, .fn_action = addr | (uint64_t)action << FDR_HELD_ACTION_SHIFT
	};
	atomic_signal_fence(memory_order_seq_cst);
	/* the thread's next hook takes the slow path, which writes it (wr_resume()) */
	atomic_store_explicit(&t->re_pending, true, memory_order_relaxed);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
	return true;
}

notrace void fdr_record_reentry(struct fdr_thread *t, uintptr_t addr, unsigned action)
{
	uint64_t none = 0, tsc;
	int32_t net, low;
	unsigned cpu;

	if (t->guard == FDR_GUARD_VFORK)
		return;	/* a vfork child: not this thread's calls, and not lost (vfork.c) */
	tsc = fdr_clock_read(&cpu);
	if (!t->leaving && wr_hold(t, addr, action, tsc))
		return;
	if (t->leaving) {
		/* the thread's counts are reported already (wr_thread_exit()) */
		atomic_fetch_add_explicit(&fdr_orphan_rec[FDRTRACE_DROP_REENTRY], 1,
					  memory_order_relaxed);
		return;
	}
	/* also while the thread registers: the counters survive registration */
	wr_count(t, FDRTRACE_DROP_REENTRY, 0);
	atomic_compare_exchange_strong_explicit(&t->re_first_tsc, &none, tsc, memory_order_relaxed,
						memory_order_relaxed);
	atomic_store_explicit(&t->re_last_tsc, tsc, memory_order_relaxed);
	net = atomic_fetch_add_explicit(&t->re_net, action == FDRTRACE_FN_ENTRY ? 1 : -1,
					memory_order_relaxed) + (action == FDRTRACE_FN_ENTRY ? 1 : -1);
	low = atomic_load_explicit(&t->re_low, memory_order_relaxed);
	if (net < low)
		atomic_store_explicit(&t->re_low, net, memory_order_relaxed);
	atomic_store_explicit(&t->re_pending, true, memory_order_relaxed);
	/*
	 * The thread's next hook takes the slow path, which writes the gap
	 * there (wr_put_drops()). The slow path this handler may have
	 * interrupted checks @re_pending again before it ends.
	 */
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
}

/*
 * Pool empty: follow the calls of the records dropped, so that the next
 * buffer can say which calls the gap closed and opened. Owner, guard held.
 */
static notrace void wr_gap_note(struct fdr_gap *g, unsigned action, uint32_t id, uint64_t tsc)
{
	uint32_t d;

	if (!g->first_tsc)
		g->first_tsc = tsc;
	g->last_tsc = tsc;
	if (action == FDRTRACE_FN_ENTRY || action == FDRTRACE_FN_ENTRY_ARGS) {
		if (g->depth < FDR_GAP_IDS)
			g->ids[g->depth] = id;
		g->depth++;
		return;
	}
	if (!g->depth) {
		g->exited++;	/* a call open before the gap */
		return;
	}
	if (g->depth > FDR_GAP_IDS) {
		g->depth--;	/* deeper than the ids kept: trust the nesting */
		return;
	}
	/* the innermost call of this function entered in the gap (a longjmp skips some) */
	for (d = g->depth; d > 0; d--) {
		if (g->ids[d - 1] == id) {
			g->depth = d - 1;
			return;
		}
	}
	/* an older call's exit that unwound the gap's calls: how far, we cannot tell */
	g->unknown = true;
	g->depth = 0;
}

/* ---- registry ---- */

static notrace void wr_slot_lock(uint32_t slot, struct fdr_thread *t)
{
	uintptr_t expect = (uintptr_t)t;

	while (!atomic_compare_exchange_weak_explicit(&wr_slots[slot], &expect,
						      (uintptr_t)t | FDR_SLOT_LOCKED,
						      memory_order_acquire, memory_order_relaxed)) {
		expect = (uintptr_t)t;
		__asm__ __volatile__("pause");
	}
}

static notrace void wr_slot_unlock(uint32_t slot, struct fdr_thread *t)
{
	atomic_store_explicit(&wr_slots[slot], (uintptr_t)t, memory_order_release);
}

static notrace int wr_register(struct fdr_thread *t)
{
	uint32_t used = atomic_load_explicit(&wr_slots_used, memory_order_relaxed);

	t->tid = (int32_t)syscall(SYS_gettid);
	t->leaving = false;
	t->cpu = UINT32_MAX;
	t->buf = NULL;
	t->starved = false;
	t->snapped = false;
	memset(&t->gap, 0, sizeof(t->gap));
	t->wait_first_tsc = t->wait_last_tsc = 0;
	t->sigmask = 0;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &t->sigmask, sizeof(t->sigmask));
	atomic_store_explicit(&t->pos, NULL, memory_order_relaxed);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
	for (uint32_t i = 0; i < FDR_MAX_THREADS; i++) {
		uintptr_t expect = 0;

		if (atomic_compare_exchange_strong_explicit(&wr_slots[i], &expect, (uintptr_t)t,
							    memory_order_acq_rel,
							    memory_order_relaxed)) {
			t->slot = i;
			while (used <= i &&
			       !atomic_compare_exchange_weak_explicit(&wr_slots_used, &used, i + 1,
								      memory_order_relaxed,
								      memory_order_relaxed))
				;
			break;
		}
		if (i == FDR_MAX_THREADS - 1)
			return -EAGAIN;
	}
	if (wr_key_ok)
		pthread_setspecific(wr_key, t);
	atomic_fetch_add_explicit(&wr_threads_seen, 1, memory_order_relaxed);
	t->state = FDR_T_ACTIVE;
	return 0;
}

notrace void fdr_threads_foreach(void (*fn)(struct fdr_thread *t, void *arg), void *arg,
				 unsigned spin_limit)
{
	uint32_t used = atomic_load_explicit(&wr_slots_used, memory_order_acquire);

	for (uint32_t i = 0; i < used; i++) {
		uintptr_t v = atomic_load_explicit(&wr_slots[i], memory_order_acquire);
		unsigned spins = 0;

		while (v) {
			if (v & FDR_SLOT_LOCKED) {
				if (spin_limit && ++spins > spin_limit)
					break;
				__asm__ __volatile__("pause");
				v = atomic_load_explicit(&wr_slots[i], memory_order_acquire);
				continue;
			}
			if (atomic_compare_exchange_weak_explicit(&wr_slots[i], &v,
								  v | FDR_SLOT_LOCKED,
								  memory_order_acquire,
								  memory_order_acquire)) {
				fn((struct fdr_thread *)v, arg);
				atomic_store_explicit(&wr_slots[i], v, memory_order_release);
				break;
			}
		}
	}
}

/* ---- buffers ---- */

static notrace uint8_t *wr_cap_end(struct fdr_buffer *b)
{
	return b->data + fdr_cfg.buffer_size - (fdr_cfg.format_version == 1 ? FDR_V1_TAIL : 0);
}

/* Append a custom event (marker + payload) at @p; the caller checked room. */
static notrace uint8_t *wr_put_custom(struct fdr_thread *t, uint8_t *p, const uint8_t *payload,
				      size_t len)
{
	p += fdr_custom_event_md(p, (uint32_t)len, t->last_tsc);
	memcpy(p, payload, len);
	return p + len;
}

/*
 * Report this thread's pending drops into its buffer at @p, where the
 * thread's records resume: a pool-empty gap or re-entry drops with their
 * span and the calls they opened and closed (format.h), others as counts.
 * Owner only, guard held. @short_of_room (may be NULL) is set when a
 * report did not fit below @lim (it stays pending). A signal handler may
 * run at any point in here and add re-entry drops: what it adds after the
 * count is read stays pending, never lost. Return: the new end of the
 * buffer's records (the caller publishes it).
 */
static notrace uint8_t *wr_put_drops(struct fdr_thread *t, uint8_t *p, uint8_t *lim,
				     bool *short_of_room)
{
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		uint64_t n = atomic_load_explicit(&t->drop_rec[r], memory_order_relaxed);
		uint64_t nb = atomic_load_explicit(&t->drop_buf[r], memory_order_relaxed);
		uint8_t payload[64 + 4 * FDR_GAP_IDS];
		size_t len;

		if (!n && !nb)
			continue;
		if (r == FDRTRACE_DROP_REENTRY && wr_held(t))
			continue;	/* a gap opens after the calls kept: those first (wr_resume()) */
		if (r == FDRTRACE_DROP_POOL_EMPTY && t->gap.first_tsc) {
			struct fdr_gap *g = &t->gap;
			bool known = !g->unknown && g->depth <= FDR_GAP_IDS;

			len = fdr_ext_gap(payload, sizeof(payload), (uint32_t)t->tid, (uint8_t)r, n, nb,
					  g->first_tsc, g->last_tsc,
					  known ? g->exited : FDRTRACE_GAP_UNKNOWN, known ? g->depth : 0,
					  g->ids);
		} else if (r == FDRTRACE_DROP_REENTRY &&
			   atomic_load_explicit(&t->re_first_tsc, memory_order_relaxed)) {
			/* a handler's calls nest inside the interrupted one: the stack is as it was */
			bool balanced = !atomic_load_explicit(&t->re_net, memory_order_relaxed) &&
					!atomic_load_explicit(&t->re_low, memory_order_relaxed);

			len = fdr_ext_gap(payload, sizeof(payload), (uint32_t)t->tid, (uint8_t)r, n, nb,
					  atomic_load_explicit(&t->re_first_tsc, memory_order_relaxed),
					  atomic_load_explicit(&t->re_last_tsc, memory_order_relaxed),
					  balanced ? 0 : FDRTRACE_GAP_UNKNOWN, 0, NULL);
		} else {
			len = fdr_ext_drop(payload, sizeof(payload), (uint32_t)t->tid, (uint8_t)r, n,
					   nb);
		}
		if (!len || p + FDRTRACE_METADATA_RECORD_SIZE + len > lim) {
			if (short_of_room)
				*short_of_room = true;
			break;
		}
		p = wr_put_custom(t, p, payload, len);
		if (r == FDRTRACE_DROP_REENTRY) {
			/*
			 * The gap is said: a handler interrupting us from here on
			 * starts a new one. Reset before the count is taken, so
			 * that a handler after the reset leaves a whole gap
			 * pending (its count, span and @re_pending); one between
			 * the count's read above and here keeps its count pending,
			 * reported with the next gap or alone.
			 */
			atomic_store_explicit(&t->re_pending, false, memory_order_relaxed);
			atomic_store_explicit(&t->re_first_tsc, 0, memory_order_relaxed);
			atomic_store_explicit(&t->re_net, 0, memory_order_relaxed);
			atomic_store_explicit(&t->re_low, 0, memory_order_relaxed);
			atomic_signal_fence(memory_order_seq_cst);
		}
		atomic_fetch_sub_explicit(&t->drop_rec[r], n, memory_order_relaxed);
		atomic_fetch_sub_explicit(&t->drop_buf[r], nb, memory_order_relaxed);
		if (r == FDRTRACE_DROP_POOL_EMPTY) {
			if (fdr_cfg.policy == FDR_POLICY_RING)
				fdr_ring_stack_gap(&t->gap);
			memset(&t->gap, 0, sizeof(t->gap));
		}
	}
	if (t->wait_last_tsc) {
		uint8_t payload[64];
		size_t len = fdr_ext_wait(payload, sizeof(payload), (uint32_t)t->tid,
					  t->wait_first_tsc, t->wait_last_tsc);

		if (len && p + FDRTRACE_METADATA_RECORD_SIZE + len <= lim) {
			p = wr_put_custom(t, p, payload, len);
			t->wait_first_tsc = t->wait_last_tsc = 0;
		} else if (short_of_room) {
			*short_of_room = true;
		}
	}
	return p;
}

/*
 * One function record at @p, after a TSCWrap when its delta from the last
 * record does not fit 32 bits (or the clock went back). Owner only, guard
 * held, room checked by the caller, which publishes @pos. Return: the new
 * end of the buffer's records.
 */
static notrace uint8_t *wr_put_func(struct fdr_thread *t, uint8_t *p, unsigned action, uint32_t id,
				    uint64_t tsc)
{
	uint64_t rec;

	if (tsc - t->last_tsc > UINT32_MAX) {
		struct fdrtrace_md_tsc_wrap m = { .type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_TSC_WRAP),
						  .tsc = tsc };

		memcpy(p, &m, sizeof(m));
		p += sizeof(m);
		t->buf->meta += sizeof(m);
		t->rewind_floor = p;	/* short calls are never erased into it */
		t->last_tsc = tsc;
	}
	rec = fdrtrace_func_word(action, id) | ((tsc - t->last_tsc) << 32);
	memcpy(p, &rec, sizeof(rec));
	t->last_tsc = tsc;
	return p + sizeof(rec);
}

/*
 * The oldest call a handler kept (wr_hold()), copied to @h, when it came
 * at or before @upto: later ones interrupted the hook that is writing them,
 * and follow its record. Owner only, guard held.
 */
static notrace bool wr_held_next(struct fdr_thread *t, uint64_t upto, struct fdr_held_call *h,
				 uintptr_t *addr, unsigned *action)
{
	uint32_t head = atomic_load_explicit(&t->held_head, memory_order_relaxed);

	if (head == atomic_load_explicit(&t->held_tail, memory_order_relaxed))
		return false;
	/* the slot is read after the claim that covers it (the handler has returned) */
	atomic_signal_fence(memory_order_seq_cst);
	*h = *wr_held_slot(t, head);
	if (h->tsc > upto)
		return false;
	*addr = (uintptr_t)(h->fn_action & ((UINT64_C(1) << FDR_HELD_ACTION_SHIFT) - 1));
	*action = (unsigned)(h->fn_action >> FDR_HELD_ACTION_SHIFT);
	return true;
}

/* That call's function id, or 0 when filter/exclude leaves it out (counted so). */
static notrace uint32_t wr_held_id(struct fdr_thread *t, uintptr_t addr)
{
	const struct fdr_fcache_ent *ce = &t->cache[(addr >> 4) & (FDR_FCACHE_SIZE - 1)];
	uint32_t id = 0;

	if (ce->addr == addr)
		return ce->id;
	if (ce->addr != ~addr) {
		id = fdr_funcid_get(addr);
		if (id && fdr_filtering && fdr_filter_skip(id))
			id = 0;
	}
	if (!id)
		wr_count(t, FDRTRACE_DROP_FILTERED, 0);
	return id;
}

/*
 * Write the calls handlers kept that came at or before @upto, oldest first,
 * as the hook would have (a TSCWrap where the delta does not fit). Owner
 * only, guard held; a handler may keep more meanwhile (they wait for the
 * next hook). @short_of_room is set when the rest does not fit below
 * @lim. Return: the new end of the buffer's records (the caller publishes
 * it).
 */
static notrace uint8_t *wr_put_held(struct fdr_thread *t, uint8_t *p, const uint8_t *lim,
				    uint64_t upto, bool *short_of_room)
{
	struct fdr_held_call h;
	uintptr_t addr;
	unsigned action;
	uint32_t id;

	while (wr_held_next(t, upto, &h, &addr, &action)) {
		if (p + sizeof(struct fdrtrace_md_tsc_wrap) + FDRTRACE_FUNC_RECORD_SIZE > lim) {
			*short_of_room = true;
			break;
		}
		id = wr_held_id(t, addr);
		if (id)
			p = wr_put_func(t, p, action, id, h.tsc);
		atomic_fetch_add_explicit(&t->held_head, 1, memory_order_relaxed);
	}
	return p;
}

/*
 * No buffer for them: the calls handlers kept that came at or before
 * @upto go into the pool-empty gap, as the hook's own record does after
 * them (wr_gap_note()). Owner only, guard held.
 */
static notrace void wr_held_to_gap(struct fdr_thread *t, uint64_t upto)
{
	struct fdr_held_call h;
	uintptr_t addr;
	unsigned action;
	uint32_t id;

	while (wr_held_next(t, upto, &h, &addr, &action)) {
		id = wr_held_id(t, addr);
		if (id) {
			wr_count(t, FDRTRACE_DROP_POOL_EMPTY, 0);
			wr_gap_note(&t->gap, action, id, h.tsc);
		}
		atomic_fetch_add_explicit(&t->held_head, 1, memory_order_relaxed);
	}
}

/*
 * on_full=wait: is this thread running a signal handler (so it must not
 * wait)? Its stack says so: a frame a signal interrupted is on it, or the
 * whole stack was walked without one (sysunwind.c). Only where the walk
 * cannot tell (no libgcc_s, a frame without unwind information), the
 * signal mask guesses: a handler runs with its signal blocked (unless
 * SA_NODEFER), so a signal blocked now that was not when the thread
 * registered says "handler". That guess alone took every thread of a
 * program that blocks a signal for good after its start (GNU make blocks
 * SIGCHLD) for a handler, and on_full=wait dropped there. It errs only
 * towards dropping, never towards waiting in a handler.
 */
static notrace bool wr_in_handler(struct fdr_thread *t)
{
	uint64_t cur = 0;
	int known = fdr_sysunwind_in_handler();

	if (known >= 0)
		return known;
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, sizeof(cur)) < 0)
		return true;
	return (cur & ~t->sigmask) != 0;
}

/*
 * on_full=wait, before the thread's first wait: a hook that waits holds
 * the guard all along, and a handler that runs meanwhile can only keep
 * its calls (wr_hold()); 64 slots were full 1.6 ms into a wait with a
 * 10 kHz timer, and waits of 12 and 33 ms beside a disk-heavy process
 * counted 124 and 592 of its records as re-entry drops. So the thread
 * maps FDR_WAIT_HELD_CALLS slots (256 KiB, touched only as used) for the
 * rest of its life (wr_thread_exit() unmaps them), and moves the calls
 * kept so far there with its signals blocked: a handler never sees the
 * ring half moved. No mapping: the 64 slots stay. Owner, guard held, not
 * in a handler.
 */
static notrace void wr_held_grow(struct fdr_thread *t)
{
	const size_t len = FDR_WAIT_HELD_CALLS * sizeof(struct fdr_held_call);
	uint64_t all = ~UINT64_C(0), old = 0;
	struct fdr_held_call *more;
	void *m;

	if (atomic_load_explicit(&t->held_more, memory_order_relaxed))
		return;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return;
	more = m;
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof(all)) < 0) {
		munmap(m, len);
		return;
	}
	for (uint32_t i = atomic_load_explicit(&t->held_head, memory_order_relaxed);
	     i != atomic_load_explicit(&t->held_tail, memory_order_relaxed); i++)
		more[i % FDR_WAIT_HELD_CALLS] = t->held[i % FDR_HELD_CALLS];
	atomic_store_explicit(&t->held_more, more, memory_order_relaxed);
	/* the slots and the pointer before a handler can run again */
	atomic_signal_fence(memory_order_seq_cst);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
}

/* on_full=wait: a buffer the flush thread returns, or NULL (drop). */
static notrace struct fdr_buffer *wr_wait(struct fdr_thread *t)
{
	struct fdr_buffer *b;
	uint64_t t0, t1;
	unsigned cpu;

	/* the stall first: a starved thread drops each call, and the stack walk is slow */
	if (t->no_wait || fdr_drain_wait_stalled() || wr_in_handler(t))
		return NULL;
	wr_held_grow(t);
	t0 = fdr_clock_read(&cpu);
	b = fdr_drain_wait_buffer();
	t1 = fdr_clock_read(&cpu);
	if (!t->wait_last_tsc)
		t->wait_first_tsc = t0;
	t->wait_last_tsc = t1 > t0 ? t1 : t0;
	atomic_fetch_add_explicit(&fdr_wait_ticks, t1 > t0 ? t1 - t0 : 0, memory_order_relaxed);
	return b;
}

/* Take a buffer from the pool and write its preamble. Return: 0 or -ENOBUFS. */
static notrace int wr_claim(struct fdr_thread *t, uint64_t tsc, unsigned cpu)
{
	struct fdr_buffer *b = fdr_pool_get();
	uint8_t *p, *pre, *cap_end;

	/*
	 * A record (or a drop) is on its way: the process needs its trace
	 * file. The flush thread creates it; wake it once (as a handover does).
	 */
	if (!atomic_load_explicit(&fdr_recorded, memory_order_relaxed) &&
	    !atomic_exchange_explicit(&fdr_recorded, true, memory_order_acq_rel))
		fdr_drain_wake();

	if (!b && fdr_cfg.policy == FDR_POLICY_RING)
		b = fdr_ring_take_oldest();
	else if (!b && fdr_cfg.on_full == FDR_ON_FULL_WAIT)
		b = wr_wait(t);	/* asks for a larger pool while it waits */
	if (!b) {
		fdr_fork_stack_record(t, NULL, 0, 0);	/* a gap comes first: its calls no longer known */
		if (fdr_cfg.policy == FDR_POLICY_STREAM)
			fdr_drain_starved();	/* a larger pool, while it may grow */
		if (!t->starved) {
			t->starved = true;
			atomic_fetch_add_explicit(&t->drop_buf[FDRTRACE_DROP_POOL_EMPTY], 1,
						  memory_order_relaxed);
		}
		return -ENOBUFS;
	}
	t->starved = false;
	b->tid = t->tid;
	b->len = 0;
	cap_end = wr_cap_end(b);
	p = b->data + fdr_preamble(b->data, t->tid, cpu, tsc);
	pre = p;
	t->last_tsc = tsc;
	t->cpu = cpu;
	/* the gap first, then (ring) the calls open once it is accounted for */
	p = wr_put_drops(t, p, cap_end - FDR_SLOW_RESERVE, NULL);
	if (fdr_cfg.policy == FDR_POLICY_RING)
		p += fdr_ring_stack_record(p, (size_t)(cap_end - FDR_SLOW_RESERVE - p), t->tid, tsc);
	else	/* a fork child's first buffer: the calls open at the fork */
		p += fdr_fork_stack_record(t, p, (size_t)(cap_end - FDR_SLOW_RESERVE - p), tsc);
	/* a buffer that opens with no report is counted without being read */
	b->meta = (uint32_t)(p - b->data);
	b->counted = p == pre && fdr_cfg.policy == FDR_POLICY_STREAM;
	t->rewind_floor = p;
	t->buf = b;
	atomic_store_explicit(&t->pos, p, memory_order_release);
	/* an ignored thread's hooks all take the slow path, which returns at once */
	atomic_store_explicit(&t->end,
			      t->ignored || fdr_all_slow ? NULL : cap_end - FDR_SLOW_RESERVE,
			      memory_order_relaxed);
	return 0;
}

/*
 * Hand the thread's buffer to the flush thread. Under the slot lock, so
 * that a finisher's snapshot and this handover never both write it.
 */
notrace int fdr_thread_handover(struct fdr_thread *t)
{
	struct fdr_buffer *b = t->buf;
	int phase;

	if (!b)
		return 0;
	if (fdr_cfg.policy == FDR_POLICY_RING)
		/* the open calls at the end of this buffer, for the next one's stack record */
		fdr_ring_stack_advance(b, atomic_load_explicit(&t->pos, memory_order_relaxed));
	wr_slot_lock(t->slot, t);
	phase = atomic_load_explicit(&fdr_phase, memory_order_acquire);
	t->buf = NULL;
	/*
	 * Once recording ends, the final dump snapshots each thread's buffer
	 * in turn, under this lock, and only then writes the queue (exit) or
	 * takes what was queued since (fatal signal). A buffer handed over
	 * before its thread's snapshot is queued as usual: its thread got
	 * past the gate before it closed (preempted in the hook, say) and
	 * nothing else would write it. After the snapshot, the snapshot
	 * holds what it had: it is abandoned.
	 */
	if (phase == FDR_PHASE_RECORDING || !t->snapped) {
		b->len = (uint64_t)(atomic_load_explicit(&t->pos, memory_order_relaxed) - b->data);
		if (fdr_cfg.policy == FDR_POLICY_RING) {
			fdr_ring_put(b);
		} else {
			atomic_fetch_add_explicit(&fdr_enqueued, 1, memory_order_relaxed);
			fdr_queue_push(b);
		}
	}
	/* else: the final dump took this buffer's records; the buffer is abandoned */
	atomic_store_explicit(&t->pos, NULL, memory_order_release);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
	wr_slot_unlock(t->slot, t);
	if (phase == FDR_PHASE_RECORDING && fdr_cfg.policy != FDR_POLICY_RING)
		fdr_drain_queued();
	return 0;
}

/* Registered, with a buffer that has room for the slow path's worst case. */
notrace int fdr_thread_ensure(struct fdr_thread *t)
{
	if (t->state != FDR_T_ACTIVE && wr_register(t) < 0)
		return -EAGAIN;
	if (t->buf && atomic_exchange_explicit(&t->flush_req, 0, memory_order_relaxed)) {
		/* asked for (flush_interval_ms, dump_signal): written now, not with the next batch */
		fdr_thread_handover(t);
		fdr_drain_wake();
	}
	if (t->buf && atomic_load_explicit(&t->pos, memory_order_relaxed) <
			      wr_cap_end(t->buf) - FDR_SLOW_RESERVE) {
		/* restore @end in case another thread kicked it */
		atomic_store_explicit(&t->end,
				      t->ignored || fdr_all_slow ? NULL
								 : wr_cap_end(t->buf) - FDR_SLOW_RESERVE,
				      memory_order_relaxed);
		return 0;
	}
	if (t->buf)
		fdr_thread_handover(t);
	return 0;
}

/*
 * func_duration_threshold_us: when the record just before @pos is this
 * function's entry (so the call made no recorded calls, or all of them were
 * erased) and the call was shorter than the threshold, take the entry back
 * instead of writing the exit. Both count as FILTERED drops.
 * Return: true when the call was erased.
 */
static notrace bool wr_erase_short(struct fdr_thread *t, uint8_t *pos, uint32_t id, uint64_t tsc,
				   unsigned cpu)
{
	uint64_t prev;
	uint32_t word;

	if (!t->buf || cpu != t->cpu || pos - FDRTRACE_FUNC_RECORD_SIZE < t->rewind_floor)
		return false;
	memcpy(&prev, pos - FDRTRACE_FUNC_RECORD_SIZE, sizeof(prev));
	word = (uint32_t)prev;
	if ((word & 1) || fdrtrace_func_word_action(word) != FDRTRACE_FN_ENTRY ||
	    fdrtrace_func_word_id(word) != id || tsc - t->last_tsc >= fdr_min_ticks)
		return false;
	t->last_tsc -= prev >> 32;	/* back to the reference before the entry */
	atomic_store_explicit(&t->pos, pos - FDRTRACE_FUNC_RECORD_SIZE, memory_order_release);
	atomic_fetch_add_explicit(&t->drop_rec[FDRTRACE_DROP_FILTERED], 2, memory_order_relaxed);
	return true;
}

/*
 * A handler interrupted a hook of this thread: write the calls it kept
 * (those before @tsc, this hook's clock) and then the gap of those it
 * could only count, where the thread's records resume, in this buffer
 * when they fit, else at the start of a fresh one. Return: 0, or -ENOBUFS
 * when no buffer could be had.
 */
static notrace int wr_resume(struct fdr_thread *t, uint64_t tsc, unsigned cpu)
{
	/*
	 * Taken down first: a handler from here on raises it again, and so
	 * does what stays kept below (the calls after @tsc, or no room).
	 */
	atomic_store_explicit(&t->re_pending, false, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	for (bool fresh = false;; fresh = true) {
		uint8_t *pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
		uint8_t *lim = wr_cap_end(t->buf) - FDR_SLOW_RESERVE;
		bool short_of_room = false;
		uint8_t *np = wr_put_held(t, pos, lim, tsc, &short_of_room);

		if (!short_of_room)
			np = wr_put_drops(t, np, lim, &short_of_room);
		/*
		 * What was written is kept, whatever follows: a handler that ran
		 * after its report left @re_pending set again, and that is no
		 * sign of a full buffer (handing the buffer over at the old
		 * position lost the report just written: a whole handler's
		 * calls, uncounted). Such a handler's calls are written by the
		 * next hook (fdr_record_slow() clears @end on its way out).
		 */
		if (np != pos)
			t->buf->counted = false;	/* a report: the flush thread reads it */
		t->rewind_floor = np;
		atomic_store_explicit(&t->pos, np, memory_order_release);
		if (wr_held(t))
			atomic_store_explicit(&t->re_pending, true, memory_order_relaxed);
		/*
		 * Short of room: on to a fresh buffer, as many as it takes
		 * (a wait's held calls can fill several); the calls before
		 * @tsc must all be out before this hook's record. A fresh
		 * buffer that took nothing never will: what is left stays kept.
		 */
		if (!short_of_room || (fresh && np == pos))
			return 0;
		/* the fresh buffer's preamble carries the drops (wr_claim()), then the calls */
		fdr_thread_handover(t);
		if (wr_claim(t, tsc, cpu) < 0)
			return -ENOBUFS;
	}
}

/*
 * max_depth: count this hook's call in @t->depth and say whether it is
 * deeper than max_depth (its record is left out). An exit need not be
 * the innermost open call's: a longjmp, or a C++ exception unwinding
 * frames built by clang (which calls no exit hook while unwinding),
 * skips the exits of the calls in between. So the outermost
 * FDR_DEPTH_FNS open calls keep their function (@depth_fn), and an exit
 * closes the innermost open call of its function with every call inside
 * it; an exit matching none (a call opened before recording (re)started)
 * leaves the depth as it is. Deeper than FDR_DEPTH_FNS, where entries are
 * not kept, the nesting is trusted (as the gap's is, wr_gap_note()): a
 * longjmp from there is followed only once it returns to a kept level's
 * exit. Owner only, guard held.
 */
static notrace bool wr_depth_deep(struct fdr_thread *t, uintptr_t addr, unsigned action)
{
	/* relaxed: after the caller's acquire load of the gate (runtime.h) */
	uint32_t epoch = atomic_load_explicit(&fdr_depth_epoch, memory_order_relaxed);

	if (unlikely(t->depth_epoch != epoch)) {
		/*
		 * Recording restarted: the calls open at the stop may have
		 * returned unseen. Count from here; the exit of a call opened
		 * before matches nothing counted.
		 */
		t->depth_epoch = epoch;
		t->depth = 0;
	}
	if (action == FDRTRACE_FN_ENTRY) {
		if (t->depth < FDR_DEPTH_FNS)
			t->depth_fn[t->depth] = addr;
		return ++t->depth > fdr_cfg.max_depth;
	}
	if (t->depth > FDR_DEPTH_FNS)
		return t->depth-- > fdr_cfg.max_depth;	/* its entry was not kept: trusted */
	for (uint64_t d = t->depth; d > 0; d--) {
		if (t->depth_fn[d - 1] == addr) {
			/* its entry was at depth d; the calls above it ended unseen */
			t->depth = d - 1;
			return d > fdr_cfg.max_depth;
		}
	}
	return t->depth > fdr_cfg.max_depth;
}

notrace void fdr_record_slow(struct fdr_thread *t, uintptr_t addr, unsigned action, uint64_t tsc,
			     unsigned cpu)
{
	int saved_errno = errno;
	struct fdr_fcache_ent *ce = &t->cache[(addr >> 4) & (FDR_FCACHE_SIZE - 1)];
	bool candidate = false;	/* a latency trigger's function, or not decided yet */
	bool missed = false;	/* not in the id cache (a trigger may have its entry) */
	bool fresh;		/* this hook registers the thread */
	uint32_t id;
	uint8_t *pos;

	/* acquire: pairs with the release store of FDR_GATE_ON after initialisation */
	if (!fdr_gate_recording(atomic_load_explicit(&fdr_gate, memory_order_acquire)) ||
	    t->ignored)
		goto out;
	if (fdr_all_slow && wr_depth_deep(t, addr, action))
		goto filtered;	/* max_depth: deeper calls' entries and exits are not recorded */
	if (ce->addr == ~addr)
		goto filtered;	/* filter/exclude said no, once for all */
	fresh = t->state != FDR_T_ACTIVE;
	if (fdr_thread_ensure(t) < 0)
		goto out;
	id = ce->id;
	if (ce->addr != addr) {
		uint32_t before = fdr_funcid_limit();

		id = fdr_funcid_get(addr);

		/*
		 * A new id: with latency triggers the flush thread decides now
		 * whether it is one of theirs (a slow first call must fire); in
		 * any policy it maps what the next new functions need when the
		 * map runs short (funcid_map.c). Not for names alone: in ring
		 * policy the flush thread looks them up on its own (every 50 ms,
		 * and before any dump), and a wake here made the woken thread
		 * preempt this one on a busy machine, in the middle of the new
		 * function's first call, adding a scheduler tick (4 ms) to it.
		 */
		if (fdr_funcid_limit() != before && (fdr_triggering || fdr_funcid_needs_prepare()))
			fdr_drain_wake();

		if (!id) {
			wr_count(t, FDRTRACE_DROP_FILTERED, 0);
			goto out;
		}
		if (fdr_filtering && fdr_filter_skip(id)) {
			/* ~addr never equals a function's address: the fast path misses */
			ce->addr = ~addr;
			ce->id = id;
			goto filtered;
		}
		/* a trigger's calls (and undecided ones) all come here: never cached */
		missed = fdr_triggering;
		candidate = missed && fdr_trigger_uncached(id);
		if (!candidate) {
			ce->addr = addr;
			ce->id = id;
		}
	}
	if (!t->buf && wr_claim(t, tsc, cpu) < 0)
		goto no_buffer;
	/*
	 * A thread's first entry is stamped after its registration here (its
	 * state, its first buffer, the signal mask, a name): read as the hook
	 * began, the first call of main carried 20-200 us of it in its self
	 * time on this VM (a helper's C++ traces), and a thread's first
	 * function as much. Only then: the smaller work of later slow paths
	 * (an id's look-up, a buffer claimed, a gap reported) stays in the
	 * call it is done for, since stamping after it would move it into the
	 * caller's self time instead, and more so in a trace that lost records
	 * (the real suite's loss invariant on zstd saw it). The clock only
	 * moves forward on one CPU; on another the CPU record below says so.
	 * Before the calls a handler kept are written: those before this
	 * clock go ahead of the record (wr_resume()).
	 */
	if (fresh && (action == FDRTRACE_FN_ENTRY || action == FDRTRACE_FN_ENTRY_ARGS))
		tsc = fdr_clock_read(&cpu);
	if (unlikely(atomic_load_explicit(&t->re_pending, memory_order_relaxed)) &&
	    wr_resume(t, tsc, cpu) < 0)
		goto no_buffer;
	pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	if (action == FDRTRACE_FN_EXIT && fdr_min_ticks && wr_erase_short(t, pos, id, tsc, cpu)) {
		if (missed)
			fdr_trigger_call(id, action, tsc, false, candidate);
		goto out;
	}
	if (cpu != t->cpu) {
		struct fdrtrace_md_new_cpu_id m = { .type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_NEW_CPU_ID),
						    .cpu = (uint16_t)cpu, .tsc = tsc };

		memcpy(pos, &m, sizeof(m));
		pos += sizeof(m);
		t->buf->meta += sizeof(m);
		t->rewind_floor = pos;
		t->cpu = cpu;
		t->last_tsc = tsc;
	}
	atomic_store_explicit(&t->pos, wr_put_func(t, pos, action, id, tsc), memory_order_release);
	if (missed)
		fdr_trigger_call(id, action, tsc, true, candidate);	/* after the record */
	goto out;
no_buffer:
	/* the pool is empty: the calls kept before this one, then this one, go into the gap */
	wr_held_to_gap(t, tsc);
	wr_count(t, FDRTRACE_DROP_POOL_EMPTY, 0);
	wr_gap_note(&t->gap, action, id, tsc);
	if (missed)
		fdr_trigger_call(id, action, tsc, false, candidate);
	goto out;
filtered:
	wr_count(t, FDRTRACE_DROP_FILTERED, 0);
out:
	/* a handler ran meanwhile and kept or dropped calls: the next hook writes or says them */
	if (unlikely(atomic_load_explicit(&t->re_pending, memory_order_relaxed)))
		atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
	errno = saved_errno;
}

/*
 * Write one extension payload into the calling thread's buffer (thread
 * names, drop notices). The caller holds the guard.
 */
/*
 * Room in @t's buffer for one metadata record and @len payload bytes: a
 * buffer that lacks it is handed over and a fresh one claimed. Return:
 * where the record goes, or NULL with *@err -EAGAIN (no thread state),
 * -ENOBUFS (the pool is empty) or -EMSGSIZE (no buffer can hold it).
 */
static notrace uint8_t *wr_reserve_event(struct fdr_thread *t, size_t len, int *err)
{
	size_t need = FDRTRACE_METADATA_RECORD_SIZE + len;
	uint64_t tsc;
	unsigned cpu;
	uint8_t *pos;

	if (fdr_thread_ensure(t) < 0) {
		*err = -EAGAIN;
		return NULL;
	}
	tsc = fdr_clock_read(&cpu);
	if (t->buf && atomic_load_explicit(&t->pos, memory_order_relaxed) + need > wr_cap_end(t->buf))
		fdr_thread_handover(t);
	if (!t->buf && wr_claim(t, tsc, cpu) < 0) {
		*err = -ENOBUFS;
		return NULL;
	}
	pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	if (pos + need > wr_cap_end(t->buf)) {
		*err = -EMSGSIZE;
		return NULL;
	}
	return pos;
}

notrace int fdr_thread_emit_ext(struct fdr_thread *t, const uint8_t *payload, size_t len)
{
	uint8_t *pos;
	int err;

	pos = wr_reserve_event(t, len, &err);
	if (!pos)
		return err;
	pos = wr_put_custom(t, pos, payload, len);
	t->buf->counted = false;
	t->rewind_floor = pos;
	atomic_store_explicit(&t->pos, pos, memory_order_release);
	return 0;
}

notrace size_t fdr_event_max(void)
{
	/*
	 * Half a buffer: a fresh buffer always has room for it after its
	 * preamble, drop notices and stack record (at most a quarter).
	 */
	return fdr_cfg.buffer_size / 2 - FDRTRACE_METADATA_RECORD_SIZE;
}

/*
 * A custom event (@typed 0) or typed event (@typed 1, v5 only) with the
 * application's bytes. The caller holds the guard and checked @len.
 */
notrace int fdr_thread_emit_event(struct fdr_thread *t, int typed, uint16_t type,
				  const void *data, size_t len)
{
	uint8_t *pos;
	int err;

	if (len > fdr_event_max())
		return -EMSGSIZE;
	/* -EMSGSIZE is not returned here: a fresh buffer has room for fdr_event_max() */
	pos = wr_reserve_event(t, len, &err);
	if (!pos)
		return err;
	if (typed) {
		struct fdrtrace_md_typed_event m;

		memset(&m, 0, sizeof(m));
		m.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_TYPED_EVENT);
		m.size = (int32_t)len;
		m.delta = 0;	/* the event shares the previous record's time */
		m.event_type = type;
		memcpy(pos, &m, sizeof(m));
		pos += sizeof(m);
	} else {
		pos += fdr_custom_event_md(pos, (uint32_t)len, t->last_tsc);
	}
	memcpy(pos, data, len);
	pos += len;
	t->buf->counted = false;
	t->rewind_floor = pos;
	atomic_store_explicit(&t->pos, pos, memory_order_release);
	return 0;
}

/*
 * fdrtrace_log_arg(): the last record must be the calling function's
 * entry (made an Entry_Args record here) or the last CallArgument written
 * after one (@arg_end). Then one CallArgument record is appended.
 */
notrace int fdr_thread_log_arg(struct fdr_thread *t, uint64_t value)
{
	struct fdrtrace_md_call_argument m;
	uint8_t *pos;
	uint32_t word;

	if (t->state != FDR_T_ACTIVE || !t->buf || t->ignored)
		return -ENOENT;
	pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	if (pos + sizeof(m) > wr_cap_end(t->buf))
		return -ENOBUFS;	/* the entry is in a full buffer: nowhere to put it */
	if (pos != t->arg_end) {
		/* the first argument: the last record must be a plain entry, not metadata */
		if (pos - FDRTRACE_FUNC_RECORD_SIZE < t->rewind_floor)
			return -ENOENT;
		memcpy(&word, pos - FDRTRACE_FUNC_RECORD_SIZE, sizeof(word));
		if ((word & 1) || fdrtrace_func_word_action(word) != FDRTRACE_FN_ENTRY)
			return -ENOENT;
		word = fdrtrace_func_word(FDRTRACE_FN_ENTRY_ARGS, fdrtrace_func_word_id(word));
		memcpy(pos - FDRTRACE_FUNC_RECORD_SIZE, &word, sizeof(word));
	}
	memset(&m, 0, sizeof(m));
	m.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_CALL_ARGUMENT);
	m.arg = value;
	memcpy(pos, &m, sizeof(m));
	pos += sizeof(m);
	t->buf->meta += sizeof(m);
	t->rewind_floor = pos;	/* arguments are never erased */
	t->arg_end = pos;
	atomic_store_explicit(&t->pos, pos, memory_order_release);
	return 0;
}

/* fdrtrace_thread_ignore(): hand the buffer over; the hooks stop at the slow path. */
notrace void fdr_thread_set_ignored(struct fdr_thread *t)
{
	t->ignored = true;
	if (t->state == FDR_T_ACTIVE && t->buf)
		fdr_thread_handover(t);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
}

static notrace bool wr_has_drops(struct fdr_thread *t)
{
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++)
		if (atomic_load_explicit(&t->drop_rec[r], memory_order_relaxed) ||
		    atomic_load_explicit(&t->drop_buf[r], memory_order_relaxed))
			return true;
	return false;
}

/* pthread key destructor: the thread is exiting. */
static notrace void wr_thread_exit(void *arg)
{
	struct fdr_thread *t = &fdr_self;
	int saved_errno = errno;

	(void)arg;
	if (t->state != FDR_T_ACTIVE)
		return;
	t->guard = FDR_GUARD_BUSY;
	atomic_signal_fence(memory_order_seq_cst);
	if (fdr_gate_recording(atomic_load_explicit(&fdr_gate, memory_order_acquire)) &&
	    (wr_has_drops(t) || wr_held(t))) {
		/* calls kept and drops not yet in the trace, before the thread is gone */
		unsigned cpu;
		uint64_t tsc = fdr_clock_read(&cpu);

		if (!t->buf)
			wr_claim(t, tsc, cpu);
		if (t->buf) {
			uint8_t *pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
			bool short_of_room = false;

			pos = wr_put_held(t, pos, wr_cap_end(t->buf), UINT64_MAX, &short_of_room);
			pos = wr_put_drops(t, pos, wr_cap_end(t->buf), NULL);
			t->buf->counted = false;
			atomic_store_explicit(&t->pos, pos, memory_order_release);
		}
	}
	/* kept calls no buffer took: counted, and reported with the thread's drops below */
	while (wr_held(t)) {
		atomic_fetch_add_explicit(&t->held_head, 1, memory_order_relaxed);
		wr_count(t, FDRTRACE_DROP_REENTRY, 0);
	}
	fdr_thread_handover(t);
	/* leave the registry: wait until no finisher/flusher holds our slot */
	{
		uintptr_t expect = (uintptr_t)t;

		while (!atomic_compare_exchange_weak_explicit(&wr_slots[t->slot], &expect, 0,
							      memory_order_acq_rel,
							      memory_order_relaxed)) {
			expect = (uintptr_t)t;
			sched_yield();
		}
	}
	/*
	 * From here a handler's re-entries count process-wide
	 * (fdr_record_reentry()); those counted on the thread before, and
	 * drops no buffer took, go there now. The order matters: a handler
	 * between the exchange below and a later @leaving would count into
	 * the thread's counters, which nothing reports once it is gone.
	 */
	t->leaving = true;
	atomic_signal_fence(memory_order_seq_cst);
	{
		/* no handler holds calls from here (@leaving, and the guard is ours); none are held */
		struct fdr_held_call *more = atomic_load_explicit(&t->held_more,
								  memory_order_relaxed);

		if (more) {
			atomic_store_explicit(&t->held_more, NULL, memory_order_relaxed);
			atomic_signal_fence(memory_order_seq_cst);
			munmap(more, FDR_WAIT_HELD_CALLS * sizeof(*more));
		}
	}
	fdr_ax_thread_exit(t);	/* auto_exclude's counts: no emitter reads the thread now */
	if (wr_has_drops(t)) {
		/* no buffer to say them in: the finish reports them (tid 0) */
		for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
			atomic_fetch_add_explicit(&fdr_orphan_rec[r],
						  atomic_exchange_explicit(&t->drop_rec[r], 0,
									   memory_order_relaxed),
						  memory_order_relaxed);
			atomic_fetch_add_explicit(&fdr_orphan_buf[r],
						  atomic_exchange_explicit(&t->drop_buf[r], 0,
									   memory_order_relaxed),
						  memory_order_relaxed);
		}
	}
	t->state = FDR_T_NEW;
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
	errno = saved_errno;
}

/*
 * Snapshot a thread's buffer into @node (caller holds the slot lock), for
 * the final dump: the buffer stays with its owner, the node says how much
 * of it is whole, and a handover after this abandons the buffer
 * (fdr_thread_handover()).
 */
notrace void fdr_snapshot_thread(struct fdr_thread *t, struct fdr_buffer *node)
{
	/*
	 * @pos first, with acquire: it pairs with the owner's release store
	 * of @pos in wr_claim(), which follows its store of @buf. A handover
	 * clears @pos under the slot lock we hold, so a non-NULL @pos is
	 * either the current buffer's (its @buf store happens before our read)
	 * or an older position in the same buffer; @buf is read only then.
	 * With @pos NULL the owner may be inside wr_claim() writing @buf, and
	 * we do not touch it (ThreadSanitizer caught that read, tests/tsan).
	 */
	uint8_t *pos = atomic_load_explicit(&t->pos, memory_order_acquire);
	struct fdr_buffer *b = pos ? t->buf : NULL;
	int32_t held;

	t->snapped = true;
	node->tid = t->tid;
	node->borrowed = true;
	node->counted = false;	/* read to be counted */
	node->index = UINT32_MAX;
	node->data = NULL;
	node->len = 0;
	if (b && pos && pos > b->data && pos <= b->data + fdr_cfg.buffer_size) {
		node->data = b->data;
		node->len = (uint64_t)(pos - b->data);
	}
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		node->drops[r] = atomic_exchange_explicit(&t->drop_rec[r], 0, memory_order_relaxed);
		node->drop_bufs[r] = atomic_exchange_explicit(&t->drop_buf[r], 0,
							      memory_order_relaxed);
	}
	/*
	 * Calls a handler kept that the owner has not written: not in the
	 * snapshot. Read from here while the owner may move: a claim being
	 * taken back can show one more than the slots hold, never more.
	 */
	held = (int32_t)(atomic_load_explicit(&t->held_tail, memory_order_relaxed) -
			 atomic_load_explicit(&t->held_head, memory_order_relaxed));
	if (held > 0)
		node->drops[FDRTRACE_DROP_REENTRY] +=
			(uint64_t)(held < (int32_t)wr_held_cap(t) ? held : (int32_t)wr_held_cap(t));
}

/* Fork child: this thread is alone; forget every other thread and buffer. */
notrace void fdr_writer_after_fork_child(void)
{
	struct fdr_thread *t = &fdr_self;

	for (uint32_t i = 0; i < FDR_MAX_THREADS; i++) {
		struct fdr_thread *o = (struct fdr_thread *)(atomic_load_explicit(
			&wr_slots[i], memory_order_relaxed) & ~FDR_SLOT_LOCKED);
		struct fdr_held_call *more;

		/* the parent's other threads are not here: their held-call rings are unused copies */
		if (o && o != t &&
		    (more = atomic_load_explicit(&o->held_more, memory_order_relaxed)))
			munmap(more, FDR_WAIT_HELD_CALLS * sizeof(*more));
		atomic_store_explicit(&wr_slots[i], 0, memory_order_relaxed);
	}
	atomic_store_explicit(&wr_slots_used, 0, memory_order_relaxed);
	atomic_store_explicit(&wr_threads_seen, 0, memory_order_relaxed);
	t->buf = NULL;
	atomic_store_explicit(&t->pos, NULL, memory_order_relaxed);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
	atomic_store_explicit(&t->flush_req, 0, memory_order_relaxed);
	for (unsigned r = 0; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		atomic_store_explicit(&t->drop_rec[r], 0, memory_order_relaxed);
		atomic_store_explicit(&t->drop_buf[r], 0, memory_order_relaxed);
		/* the parent's overwritten buffers and ended threads: its own to report */
		atomic_store_explicit(&fdr_orphan_rec[r], 0, memory_order_relaxed);
		atomic_store_explicit(&fdr_orphan_buf[r], 0, memory_order_relaxed);
	}
	memset(&t->gap, 0, sizeof(t->gap));
	atomic_store_explicit(&t->re_pending, false, memory_order_relaxed);
	atomic_store_explicit(&t->re_first_tsc, 0, memory_order_relaxed);
	atomic_store_explicit(&t->re_net, 0, memory_order_relaxed);
	atomic_store_explicit(&t->re_low, 0, memory_order_relaxed);
	atomic_store_explicit(&t->held_tail, 0, memory_order_relaxed);
	atomic_store_explicit(&t->held_head, 0, memory_order_relaxed);
	t->wait_first_tsc = t->wait_last_tsc = 0;
	atomic_store_explicit(&fdr_wait_ticks, 0, memory_order_relaxed);
	fdr_ax_after_fork_child();
	if (t->state == FDR_T_ACTIVE) {
		t->state = FDR_T_NEW;
		wr_register(t);
	}
}

/**
 * fdr_orphan_drops - add the process-wide drop counts to @rec and @bufs
 * @rec:	records dropped, by reason
 * @bufs:	buffers dropped, by reason
 * @take:	true for the final trace (the counts are taken: zero after);
 *		false for a snapshot (left for the final trace)
 *
 * The drops no thread's buffer reports: records of overwritten buffers and
 * the drops they had reported, drops of threads that ended without a
 * buffer, drops before init.
 *
 * Context: any thread; async-signal-safe.
 */
notrace void fdr_orphan_drops(uint64_t *rec, uint64_t *bufs, bool take)
{
#define ORPHAN_READ(c) (take ? atomic_exchange_explicit(&(c), 0, memory_order_relaxed) \
			     : atomic_load_explicit(&(c), memory_order_relaxed))
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		rec[r] += ORPHAN_READ(fdr_orphan_rec[r]);
		bufs[r] += ORPHAN_READ(fdr_orphan_buf[r]);
	}
	rec[FDRTRACE_DROP_BEFORE_INIT] += ORPHAN_READ(fdr_before_init_drops);
#undef ORPHAN_READ
}

/* The fast path for clocks that are not read inline (fastpath_inline.h); the guard is held. */
notrace void fdr_record_generic(void *fn, unsigned action)
{
	unsigned cpu;
	uint64_t tsc = fdr_clock_read(&cpu);

	fdr_record_at(&fdr_self, fn, action, tsc, cpu);
}
