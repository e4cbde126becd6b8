// SPDX-License-Identifier: MIT
/*
 * runtime/process/control.c - the control API (fdrtrace_*,
 * include/fdrtrace/fdrtrace.h): flush, start, stop, events, arguments,
 * thread names and ignores.
 *
 * Contract: any thread of the program. Each call checks the phase first
 * (lc_api_check(): it may start recording) and returns a negative errno
 * when recording is not on; start/stop only ever move the gate between ON
 * and OFF (never out of AFTER_FINI). The calling thread's guard is held
 * (FDR_GUARD_BUSY) while a call records, so that a signal handler's hooks
 * meanwhile are counted, not interleaved.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <fdrtrace/fdrtrace.h>

#include "autoexclude.h"
#include "config.h"
#include "ext_encode.h"
#include "flush.h"
#include "lifecycle_internal.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"
#include "trace_file.h"

/* ---- control API ---- */

static notrace int lc_api_check(void)
{
	/* acquire: pairs with the phase's release stores (state.h) */
	int phase = atomic_load_explicit(&fdr_phase, memory_order_acquire);

	if (phase == FDR_PHASE_ARMED) {
		/* the program steers recording before any hook: start it now */
		fdr_start_lazy();
		/* acquire: pairs with the phase's release stores (state.h) */
		phase = atomic_load_explicit(&fdr_phase, memory_order_acquire);
	}
	if (phase == FDR_PHASE_INIT || phase == FDR_PHASE_ARMED)
		return -EAGAIN;
	if (phase != FDR_PHASE_RECORDING)
		return fdr_file_failed() ? -EIO : -ENODEV;
	if (fdr_self.guard)
		return -EBUSY;
	return 0;
}

static notrace void lc_request(struct fdr_thread *t, void *arg)
{
	(void)arg;
	if (t == &fdr_self)
		return;
	atomic_store_explicit(&t->flush_req, 1, memory_order_relaxed);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
}

fdr_export notrace int fdrtrace_flush(void)
{
	struct fdr_thread *t = &fdr_self;
	uint64_t target;
	int err;

	/* not started: nothing recorded, nothing to write (and no reason to start) */
	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) == FDR_PHASE_ARMED &&
	    atomic_load_explicit(&lc_start_state, memory_order_acquire) == LC_START_IDLE)
		return 0;
	err = lc_api_check();
	if (err)
		return err;
	if (fdr_cfg.policy == FDR_POLICY_RING)
		return fdr_flush_snapshot_wait(5000);
	t->guard = FDR_GUARD_BUSY;
	/* compiler fence: the order above holds for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
	if (t->state == FDR_T_ACTIVE && t->buf)
		fdr_thread_handover(t);
	/* compiler fence: the order above holds for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
	fdr_threads_foreach(lc_request, NULL, 0);
	target = atomic_load_explicit(&fdr_enqueued, memory_order_relaxed);
	fdr_ax_flush_soon();	/* auto_exclude's counts so far, with the buffers */
	fdr_flush_wake();
	err = fdr_flush_wait_written(target, 5000);
	if (fdr_file_failed())
		return -EIO;
	return err;
}

fdr_export notrace int fdrtrace_thread_name(const char *name)
{
	struct fdr_thread *t = &fdr_self;
	char cut[256];
	uint8_t payload[320];
	size_t n;
	int err;

	if (!name)
		return -EINVAL;
	err = lc_api_check();
	if (err)
		return err;
	snprintf(cut, sizeof(cut), "%s", name);
	t->guard = FDR_GUARD_BUSY;
	/* compiler fence: the order above holds for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
	err = fdr_thread_ensure(t);
	if (!err) {
		n = fdr_ext_thread_name(payload, sizeof(payload), (uint32_t)t->tid, cut);
		err = n ? fdr_thread_emit_ext(t, payload, n) : -EINVAL;
	}
	/* compiler fence: the order above holds for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
	return err;
}

/* The calling thread's guard around an API call's work (no hook records meanwhile). */
static notrace void lc_guard(struct fdr_thread *t)
{
	t->guard = FDR_GUARD_BUSY;
	/* compiler fence: the order above holds for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
}

static notrace int lc_unguard(struct fdr_thread *t, int ret)
{
	/* compiler fence: the order above holds for a handler on this thread */
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
	return ret;
}

/*
 * Where recording (re)started: the native stack of fdrtrace_start()'s caller,
 * from @ret (its return address) outwards, into the calling thread's buffer.
 * Skipped when the thread's guard is taken (a hook or API call below us).
 */
static notrace void lc_start_stack(uintptr_t ret)
{
	struct fdr_thread *t = &fdr_self;
	uint64_t addrs[FDR_NATIVE_MAX];
	uint32_t mods[FDR_NATIVE_MAX];
	uint8_t payload[64 + FDR_NATIVE_MAX * FDRTRACE_NATIVE_FRAME_SIZE];
	uint32_t depth;
	size_t n;

	if (t->guard || t->ignored)
		return;
	depth = fdr_native_here(ret, addrs, mods, FDR_NATIVE_MAX);
	if (!depth)
		return;
	lc_guard(t);
	/* registered first: the tid is known from then on */
	if (!fdr_thread_ensure(t)) {
		n = fdr_ext_native_stack(payload, sizeof(payload), (uint32_t)t->tid,
					 FDRTRACE_NATIVE_START, 0, 0, depth, addrs, mods);
		if (n)
			fdr_thread_emit_ext(t, payload, n);
	}
	lc_unguard(t, 0);
}

fdr_export notrace fdr_noinline int fdrtrace_start(void)
{
	int err = lc_api_check();
	int expect = FDR_GATE_OFF;
	bool started;

	if (err == -EBUSY)
		err = 0;	/* the gate is not the hook's business */
	if (err)
		return err;
	/* max_depth: the depth counts again from here (slowpath.c); before the gate opens */
	if (atomic_load_explicit(&fdr_gate, memory_order_relaxed) == FDR_GATE_OFF)
		atomic_fetch_add_explicit(&fdr_depth_epoch, 1, memory_order_relaxed);
	/* OFF -> ON only: a finish (AFTER_FINI) or an error stop is never undone */
	/* the gate's CAS: release pairs with its acquire loads (state.h) */
	started = atomic_compare_exchange_strong_explicit(&fdr_gate, &expect, fdr_gate_rec,
							  memory_order_release,
							  memory_order_relaxed);
	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) != FDR_PHASE_RECORDING) {
		expect = fdr_gate_rec;
		/* the gate's CAS: release pairs with its acquire loads (state.h) */
		atomic_compare_exchange_strong_explicit(&fdr_gate, &expect, FDR_GATE_OFF,
							memory_order_release, memory_order_relaxed);
		return -ENODEV;
	}
	if (started)
		lc_start_stack((uintptr_t)__builtin_return_address(0));
	return 0;
}

fdr_export notrace int fdrtrace_stop(void)
{
	int err = lc_api_check();
	int expect = fdr_gate_rec;

	if (err == -EBUSY)
		err = 0;
	if (err)
		return err;
	/* the gate's CAS: release pairs with its acquire loads (state.h) */
	atomic_compare_exchange_strong_explicit(&fdr_gate, &expect, FDR_GATE_OFF,
						memory_order_release, memory_order_relaxed);
	return 0;
}

static notrace int lc_event(int typed, uint16_t type, const void *data, size_t len)
{
	struct fdr_thread *t = &fdr_self;
	int err;

	if (!data && len)
		return -EINVAL;
	if (len >= FDRTRACE_EXT_MAGIC_LEN && !memcmp(data, FDRTRACE_EXT_MAGIC,
						     FDRTRACE_EXT_MAGIC_LEN))
		return -EINVAL;	/* would be read as one of our extension records */
	if (typed && fdr_cfg.format_version < 5)
		return -EOPNOTSUPP;
	err = lc_api_check();
	if (err)
		return err;
	if (len > fdr_event_max())
		return -EMSGSIZE;
	if (t->ignored)
		return -EPERM;
	lc_guard(t);
	return lc_unguard(t, fdr_thread_emit_event(t, typed, type, data, len));
}

fdr_export notrace int fdrtrace_custom_event(const void *data, size_t len)
{
	return lc_event(0, 0, data, len);
}

fdr_export notrace int fdrtrace_typed_event(uint16_t type, const void *data, size_t len)
{
	return lc_event(1, type, data, len);
}

fdr_export notrace int fdrtrace_log_arg(uint64_t value)
{
	struct fdr_thread *t = &fdr_self;
	int err = lc_api_check();

	if (err)
		return err;
	/* acquire: pairs with the gate's release stores (state.h) */
	if (!fdr_gate_recording(atomic_load_explicit(&fdr_gate, memory_order_acquire)))
		return -ENODEV;
	lc_guard(t);
	return lc_unguard(t, fdr_thread_log_arg(t, value));
}

fdr_export notrace int fdrtrace_thread_ignore(void)
{
	struct fdr_thread *t = &fdr_self;
	int err = lc_api_check();

	if (err)
		return err;
	lc_guard(t);
	fdr_thread_set_ignored(t);
	return lc_unguard(t, 0);
}
