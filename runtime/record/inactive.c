// SPDX-License-Identifier: MIT
/*
 * runtime/record/inactive.c - a hook that found the gate neither ON nor
 * OFF (fastpath_inline.h: fdr_record_inactive()): the first hook starts
 * the runtime, auto_exclude counts or records the call (autoexclude.c),
 * hooks before the start or after the finish are counted.
 *
 * Contract: the top of the record layer: it calls autoexclude.c and,
 * through the inline fast path, slowpath.c and held.c. Any thread, maybe
 * in a signal handler; the lazy start may block while another thread
 * starts the runtime (fdr_drain_start()).
 */
#include "autoexclude.h"
#include "drain.h"
#include "fastpath_inline.h"
#include "slowpath.h"
#include "state.h"

/*
 * A hook that found the gate neither ON nor OFF. LAZY: recording was asked
 * for and this is the process's first hook (or one racing it): start the
 * runtime (lifecycle.c, fdr_start_lazy(), through the drain: one starts, the others
 * wait for it), then record this call as any other. Not recursive: the
 * call is recorded only once the gate is ON. COUNTED: recording with
 * auto_exclude, every hook goes to autoexclude.c.
 */
static notrace fdr_noinline void slow_inactive(void *fn, unsigned action, int g)
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

	/* auto_exclude's every call: a jump, no frame (the rest in slow_inactive()) */
	if (likely(g == FDR_GATE_COUNTED))
		fdr_ax_record(fn, action);
	else
		slow_inactive(fn, action, g);
}
