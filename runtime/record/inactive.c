// SPDX-License-Identifier: MIT
/*
 * runtime/record/inactive.c - a hook that found the gate neither ON nor
 * OFF (fastpath_inline.h: fdr_record_inactive()): the first hook starts
 * the runtime, auto_exclude counts or records the call (autoexclude.c),
 * hooks before the start or after the finish are counted.
 *
 * Contract: the top of the record layer: it calls autoexclude.c,
 * slowpath.c and held.c; the inline fast path (fastpath_inline.h) calls it,
 * and it does not use that path. Any thread, maybe
 * in a signal handler; the lazy start may block while another thread
 * starts the runtime (fdr_drain_start()).
 */
#include "autoexclude.h"
#include "drain.h"
#include "slowpath_inline.h"
#include "thread.h"
#include "slowpath.h"
#include "state.h"

/*
 * The call of the hook that started the runtime, recorded as the fast path
 * would (fastpath_inline.h, fdr_record()), the clock read through
 * fdr_record_generic(): once per process, so its speed does not matter,
 * and this file then needs nothing of the inline fast path, which calls
 * it. Not recursive: a gate still LAZY (the start failed) records nothing.
 */
static notrace void slow_first_call(void *fn, unsigned action)
{
	struct fdr_thread *t = &fdr_self;
	int g = atomic_load_explicit(&fdr_gate, memory_order_relaxed);

	if (g != FDR_GATE_ON) {
		if (g != FDR_GATE_OFF && g != FDR_GATE_LAZY)
			fdr_record_inactive(fn, action);
		return;
	}
	if (t->guard) {
		fdr_record_reentry(t, (uintptr_t)fn, action);
		return;
	}
	t->guard = FDR_GUARD_HOOK;
	/* the guard before the clock, as in fdr_record() */
	atomic_signal_fence(memory_order_seq_cst);
	fdr_record_generic(fn, action);
}

/*
 * A hook that found the gate neither ON nor OFF. LAZY: recording was asked
 * for and this is the process's first hook (or one racing it): start the
 * runtime (lifecycle.c, fdr_start_lazy(), through the drain: one starts, the others
 * wait for it), then record this call as any other (slow_first_call()).
 * COUNTED: recording with auto_exclude, every hook goes to autoexclude.c.
 */
static notrace fdr_noinline void slow_inactive(void *fn, unsigned action, int g)
{
	if (g == FDR_GATE_LAZY) {
		if (fdr_drain_start())
			slow_first_call(fn, action);
	} else if (g == FDR_GATE_BEFORE_INIT)
		atomic_fetch_add_explicit(&fdr_before_init_drops, 1, memory_order_relaxed);
	else if (g == FDR_GATE_AFTER_FINI)
		atomic_fetch_add_explicit(&fdr_after_fini_drops, 1, memory_order_relaxed);
}

notrace void fdr_record_inactive(void *fn, unsigned action)
{
	int g = atomic_load_explicit(&fdr_gate, memory_order_relaxed);

	/* auto_exclude's every call: a jump, no frame (the rest in slow_inactive()) */
	if (likely(g == FDR_GATE_COUNTED))
		fdr_ax_record(fn, action);
	else
		slow_inactive(fn, action, g);
}
