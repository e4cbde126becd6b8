// SPDX-License-Identifier: MIT
/*
 * runtime/process/fork.c - fork and spawn: the fork point stamped in the prepare
 * handler, the child back to the LAZY gate with its own trace to come, and
 * the spawn records.
 *
 * Contract: the prepare handler runs on the forking thread and holds the
 * flush thread's mutex (fdr_flush_fork_prepare()), so the child never
 * inherits a half-written buffer or a loader lock taken by a symbol
 * lookup; the child handler runs in the child's only thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buffer_queue.h"
#include "clock.h"
#include "ext_encode.h"
#include "flush.h"
#include "fork_stack.h"
#include "lifecycle_internal.h"
#include "modules.h"
#include "ring.h"
#include "sigview.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"
#include "trace_file.h"
#include "trigger.h"

/* this process's forks so far (fdr_fork_point.serial); a child counts its own from 0 */
static _Atomic uint32_t lc_fork_serial;


/* ---- fork ---- */

/*
 * The fork point: the forking thread, the clock and this process's fork
 * serial, kept in fdr_fork_point (the child inherits it for its fork
 * record) and written as a spawn record into the forking thread's own
 * records, so that a reader pairs the two by serial (child_pid 0: the
 * prepare handler cannot know it). Not written when the thread's guard is
 * taken (a fork from a handler that interrupted a hook or an API call),
 * the thread is ignored, recording is stopped or the process recorded
 * nothing yet (it has no trace file); the serial counts anyway.
 */
static notrace void lc_spawn_record(uint32_t tid, uint64_t tsc, uint32_t serial,
				    uint32_t child_pid)
{
	struct fdr_thread *t = &fdr_self;
	uint8_t p[64];
	size_t n;

	/* and not in a process that recorded nothing yet: the record alone would make its file */
	/* acquire: pairs with the gate's release stores (state.h) */
	if (t->guard || t->ignored || !fdr_has_records() ||
	    !fdr_gate_recording(atomic_load_explicit(&fdr_gate, memory_order_acquire)))
		return;
	t->guard = FDR_GUARD_BUSY;
	/* compiler fence: the order above holds for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
	if (!fdr_thread_ensure(t)) {
		n = fdr_ext_spawn(p, sizeof(p), tid, tsc, serial, child_pid);
		if (n)
			fdr_thread_emit_ext(t, p, n);
	}
	/* compiler fence: the order above holds for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
}

static notrace void lc_fork_point(void)
{
	fdr_fork_point.tid = (uint32_t)syscall(SYS_gettid);
	fdr_fork_point.serial = atomic_fetch_add_explicit(&lc_fork_serial, 1,
							  memory_order_relaxed) + 1;
	fdr_fork_point.tsc = fdr_clock_read(&(unsigned){ 0 });
	lc_spawn_record(fdr_fork_point.tid, fdr_fork_point.tsc, fdr_fork_point.serial, 0);
}

/*
 * A child started without a fork (posix_spawn, spawn.c): its spawn record,
 * with its pid, which the reader pairs with the child's trace (the child
 * has no fork record: it ran only libc before its exec). The serial counts
 * it among the process's forks, so that serials stay one per child.
 * Written as lc_fork_point() writes (same conditions), on the calling
 * thread, after the call: @tsc was read before it.
 */
notrace void fdr_spawn_note(uint32_t tid, uint64_t tsc, uint32_t child_pid)
{
	uint32_t serial = atomic_fetch_add_explicit(&lc_fork_serial, 1, memory_order_relaxed) + 1;

	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) == FDR_PHASE_RECORDING)
		lc_spawn_record(tid, tsc, serial, child_pid);
}

notrace void lc_prefork(void)
{
	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) == FDR_PHASE_RECORDING) {
		/*
		 * A start does not wait for the new flush thread; a fork must not
		 * come while that thread is still being set up (its allocations:
		 * an allocator without fork handlers, as ASan's in gcc 12, left
		 * its lock taken in the child, which hung at its first malloc).
		 * Once it runs past its set-up it only allocates under the mutex
		 * fdr_flush_fork_prepare() takes.
		 */
		fdr_flush_alive_wait(2000);
		lc_fork_point();
		fdr_fork_stack_take();	/* the calls open, while the flush thread still runs */
		fdr_flush_fork_prepare();
	}
}

notrace void lc_postfork_parent(void)
{
	fdr_fork_stack_parent();
	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) == FDR_PHASE_RECORDING)
		fdr_flush_fork_parent();
}

notrace void lc_postfork_child(void)
{
	/* acquire: pairs with the phase's release stores (state.h) */
	int phase = atomic_load_explicit(&fdr_phase, memory_order_acquire);

	fdr_fork_stack_child();
	fdr_sig_after_fork();	/* a disposition another thread was changing, as it is */
	lc_quiet = true;
	lc_armed_pid = getpid();
	if (phase == FDR_PHASE_ARMED) {
		/* the parent never started: the child starts as a process of its own would */
		atomic_store_explicit(&lc_start_state, LC_START_IDLE, memory_order_relaxed);
		return;
	}
	if (phase != FDR_PHASE_RECORDING) {
		if (phase != FDR_PHASE_INIT && phase != FDR_PHASE_OFF) {
			/* the parent's trace, finished or failing: not ours to touch */
			/* release: pairs with the gate's acquire loads (state.h) */
			atomic_store_explicit(&fdr_gate, FDR_GATE_OFF, memory_order_release);
			/* release: pairs with the phase's acquire loads (state.h) */
			atomic_store_explicit(&fdr_phase, FDR_PHASE_OFF, memory_order_release);
			fdr_file_forget();
		}
		return;
	}
	/*
	 * Only memory here (no file, no thread): the child's trace starts at
	 * its first hook (lc_start_child()), so a child that execs or exits
	 * without running an instrumented function leaves nothing and says
	 * nothing. Until then its hooks find the gate LAZY.
	 */
	/* release: pairs with the gate's acquire loads (state.h) */
	atomic_store_explicit(&fdr_gate, FDR_GATE_LAZY, memory_order_release);
	/* release: pairs with the phase's acquire loads (state.h) */
	atomic_store_explicit(&fdr_phase, FDR_PHASE_ARMED, memory_order_release);
	fdr_fork_parent = fdr_pid;
	fdr_pid = lc_armed_pid;
	atomic_store_explicit(&lc_fork_serial, 0, memory_order_relaxed);
	fdr_file_forget();	/* the parent's file stays the parent's */
	fdr_ring_fork_child(&fdr_self);
	fdr_pool_reset();
	fdr_registry_after_fork_child();
	atomic_store_explicit(&fdr_recorded, false, memory_order_relaxed);
	fdr_flush_reset_child();
	fdr_modules_reset();
	fdr_native_reset();
	fdr_trigger_reset_child();
	atomic_store_explicit(&fdr_before_init_drops, 0, memory_order_relaxed);
	lc_child_pending = true;
	atomic_store_explicit(&lc_start_state, LC_START_IDLE, memory_order_relaxed);
}
