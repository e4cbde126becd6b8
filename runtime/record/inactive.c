// SPDX-License-Identifier: MIT
/*
 * runtime/record/inactive.c - a hook that found the gate neither ON, OFF
 * nor COUNTED (fdr_record_inactive(), autoexclude.c, sends it here): the
 * first hook starts the runtime, hooks before the start or after the
 * finish are counted.
 *
 * Contract: it calls slowpath.c and held.c; autoexclude.c calls it, and it
 * calls nothing of autoexclude.c's (a call that must go there after the
 * start is said in the return value). It does not use the inline fast
 * path. Any thread, maybe in a signal handler; the lazy start may block
 * while another thread starts the runtime (fdr_drain_start()).
 */
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
 * Return: true when the gate is now one fdr_record_inactive() takes
 * (COUNTED: recording started with auto_exclude), which then does.
 */
static notrace bool slow_first_call(void *fn, unsigned action)
{
	struct fdr_thread *t = &fdr_self;
	int g = atomic_load_explicit(&fdr_gate, memory_order_relaxed);

	if (g != FDR_GATE_ON)
		return g != FDR_GATE_OFF && g != FDR_GATE_LAZY;
	if (t->guard) {
		fdr_record_reentry(t, (uintptr_t)fn, action);
		return false;
	}
	t->guard = FDR_GUARD_HOOK;
	/* the guard before the clock, as in fdr_record() */
	atomic_signal_fence(memory_order_seq_cst);
	fdr_record_generic(fn, action);
	return false;
}

notrace bool fdr_record_not_counted(void *fn, unsigned action, int g)
{
	if (g == FDR_GATE_LAZY) {
		if (fdr_drain_start())
			return slow_first_call(fn, action);
	} else if (g == FDR_GATE_BEFORE_INIT) {
		atomic_fetch_add_explicit(&fdr_before_init_drops, 1, memory_order_relaxed);
	} else if (g == FDR_GATE_AFTER_FINI) {
		atomic_fetch_add_explicit(&fdr_after_fini_drops, 1, memory_order_relaxed);
	}
	return false;
}
