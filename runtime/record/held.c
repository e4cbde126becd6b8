// SPDX-License-Identifier: MIT
/*
 * runtime/record/held.c - the calls of a signal handler that interrupted a hook:
 * kept (slow_hold()) for the hook's thread to write once the hook is done, or
 * counted when they cannot be kept.
 *
 * Contract: handlers claim slots at @held_tail, the owner writes them from
 * @held_head on (thread.h: struct fdr_thread); handlers on one thread nest,
 * so a slot is whole when the owner runs again. Async-signal-safe; no
 * locks. on_full=wait maps a larger ring for a thread that waits
 * (slow_held_grow(), signals blocked meanwhile).
 */
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "filter.h"
#include "funcid_map.h"
#include "record_internal.h"
#include "slowpath.h"
#include "state.h"
#include "sysunwind.h"
#include "thread.h"
#include "trigger.h"

/*
 * How many calls the thread's held ring holds: 64, or more once it has
 * waited (slow_held_grow()).
 */
notrace uint32_t slow_held_cap(struct fdr_thread *t)
{
	return atomic_load_explicit(&t->held_more, memory_order_relaxed) ? FDR_WAIT_HELD_CALLS
									 : FDR_HELD_CALLS;
}

/* Held call @i's slot. Owner or its handlers. */
static notrace struct fdr_held_call *slow_held_slot(struct fdr_thread *t, uint32_t i)
{
	struct fdr_held_call *more = atomic_load_explicit(&t->held_more, memory_order_relaxed);

	return more ? &more[i % FDR_WAIT_HELD_CALLS] : &t->held[i % FDR_HELD_CALLS];
}

/*
 * A signal handler's call while this thread's hook holds the guard: keep
 * it for the owner, whose slow path writes it (slow_put_held(), from the
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
static notrace bool slow_hold(struct fdr_thread *t, uintptr_t addr, unsigned action, uint64_t tsc)
{
	uint32_t i;

	if (t->guard != FDR_GUARD_HOOK || t->ignored || fdr_all_slow || fdr_min_ticks ||
	    fdr_triggering || atomic_load_explicit(&t->re_first_tsc, memory_order_relaxed))
		return false;
	i = atomic_fetch_add_explicit(&t->held_tail, 1, memory_order_relaxed);
	if (i - atomic_load_explicit(&t->held_head, memory_order_relaxed) >= slow_held_cap(t)) {
		atomic_fetch_sub_explicit(&t->held_tail, 1, memory_order_relaxed);
		return false;
	}
	*slow_held_slot(t, i) = (struct fdr_held_call){
		.tsc = tsc, .fn_action = addr | (uint64_t)action << FDR_HELD_ACTION_SHIFT
	};
	/* compiler fence: the order above holds for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
	/* the thread's next hook takes the slow path, which writes it (slow_resume()) */
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
	if (!t->leaving && slow_hold(t, addr, action, tsc))
		return;
	if (t->leaving) {
		/* the thread's counts are reported already (slow_thread_exit()) */
		atomic_fetch_add_explicit(&fdr_orphan_rec[FDRTRACE_DROP_REENTRY], 1,
					  memory_order_relaxed);
		return;
	}
	/* also while the thread registers: the counters survive registration */
	slow_count(t, FDRTRACE_DROP_REENTRY, 0);
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
	 * there (slow_put_drops()). The slow path this handler may have
	 * interrupted checks @re_pending again before it ends.
	 */
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
}

/*
 * The oldest call a handler kept (slow_hold()), copied to @h, when it came
 * at or before @upto: later ones interrupted the hook that is writing them,
 * and follow its record. Owner only, guard held.
 */
notrace bool slow_held_next(struct fdr_thread *t, uint64_t upto, struct fdr_held_call *h,
			    uintptr_t *addr, unsigned *action)
{
	uint32_t head = atomic_load_explicit(&t->held_head, memory_order_relaxed);

	if (head == atomic_load_explicit(&t->held_tail, memory_order_relaxed))
		return false;
	/* the slot is read after the claim that covers it (the handler has returned) */
	atomic_signal_fence(memory_order_seq_cst);
	*h = *slow_held_slot(t, head);
	if (h->tsc > upto)
		return false;
	*addr = (uintptr_t)(h->fn_action & ((UINT64_C(1) << FDR_HELD_ACTION_SHIFT) - 1));
	*action = (unsigned)(h->fn_action >> FDR_HELD_ACTION_SHIFT);
	return true;
}

/* That call's function id, or 0 when filter/exclude leaves it out (counted so). */
notrace uint32_t slow_held_id(struct fdr_thread *t, uintptr_t addr)
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
		slow_count(t, FDRTRACE_DROP_FILTERED, 0);
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
notrace uint8_t *slow_put_held(struct fdr_thread *t, uint8_t *p, const uint8_t *lim,
			       uint64_t upto, bool *short_of_room)
{
	struct fdr_held_call h;
	uintptr_t addr;
	unsigned action;
	uint32_t id;

	while (slow_held_next(t, upto, &h, &addr, &action)) {
		if (p + sizeof(struct fdrtrace_md_tsc_wrap) + FDRTRACE_FUNC_RECORD_SIZE > lim) {
			*short_of_room = true;
			break;
		}
		id = slow_held_id(t, addr);
		if (id)
			p = slow_put_func(t, p, action, id, h.tsc);
		atomic_fetch_add_explicit(&t->held_head, 1, memory_order_relaxed);
	}
	return p;
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
notrace bool slow_in_handler(struct fdr_thread *t)
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
 * its calls (slow_hold()); 64 slots were full 1.6 ms into a wait with a
 * 10 kHz timer, and waits of 12 and 33 ms beside a disk-heavy process
 * counted 124 and 592 of its records as re-entry drops. So the thread
 * maps FDR_WAIT_HELD_CALLS slots (256 KiB, touched only as used) for the
 * rest of its life (slow_thread_exit() unmaps them), and moves the calls
 * kept so far there with its signals blocked: a handler never sees the
 * ring half moved. No mapping: the 64 slots stay. Owner, guard held, not
 * in a handler.
 */
notrace void slow_held_grow(struct fdr_thread *t)
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
