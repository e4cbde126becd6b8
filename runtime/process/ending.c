// SPDX-License-Identifier: MIT
/*
 * runtime/process/ending.c - the process layer's shared state and the end
 * of a trace: the start state, who closes the trace (lc_claim()), the wait
 * for it, the end of a process that never started, the exit line.
 *
 * Contract:
 *   - The bottom of the process layer: fatal.c, fork.c and lifecycle.c
 *     call it; it calls no other file of the layer.
 *   - lc_exit_line(), lc_claim() and lc_wait_closing() run in _exit's dump
 *     and in the fatal-signal handler too: async-signal-safe, no stdio, no
 *     allocation. lc_end_unstarted() runs at an exit only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <fdrtrace/fdrtrace.h>

#include "clock.h"
#include "config.h"
#include "lifecycle_internal.h"
#include "modules.h"
#include "say.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"
#include "trace_file.h"

_Atomic int lc_start_state;
bool lc_child_pending;
/* the process that may start (a vfork child shares our memory, not our pid) */
pid_t lc_armed_pid;
/* a fork child: never says that nothing ran (its parent does, or has a trace) */
bool lc_quiet;

/* The program's name into fdr_program: for the trace's path and the nothing-ran line. */
notrace void lc_program_name(void)
{
	char exe[PATH_MAX];
	size_t n = fdr_modules_exe(exe, sizeof(exe));	/* read once: the module scan's too */
	const char *name = program_invocation_short_name;

	if (n > 0) {
		char *slash;

		slash = strrchr(exe, '/');
		name = slash ? slash + 1 : exe;
	}
	if (!name || !*name)
		name = "unknown";
	{
		size_t len = strnlen(name, sizeof(fdr_program) - 1);

		memcpy(fdr_program, name, len);
		fdr_program[len] = '\0';
	}
}


/* Why records of each reason are missing, and what keeps them (the exit line). */
static const char *const lc_lost_why[FDRTRACE_DROP_REASON_COUNT] = {
	[FDRTRACE_DROP_POOL_EMPTY] = "pool full; on_full=wait or a larger buffer_max keeps them",
	[FDRTRACE_DROP_REENTRY] = "in signal handlers that interrupted a hook",
	[FDRTRACE_DROP_BEFORE_INIT] = "before the runtime started",
	[FDRTRACE_DROP_AFTER_FINI] = "after the trace was closed",
	[FDRTRACE_DROP_OVERWRITTEN] = "overwritten by policy=ring; a larger buffer_max keeps more",
	[FDRTRACE_DROP_IO_ERROR] = "the file refused them",
};

__extension__ typedef unsigned __int128 lc_u128;

/* A line built without stdio: lc_exit_line() runs in _exit's dump too, maybe in a handler. */
struct lc_line {
	size_t n;
	char buf[1024];
};

static notrace void lc_line_str(struct lc_line *l, const char *s)
{
	while (*s && l->n < sizeof(l->buf) - 1)
		l->buf[l->n++] = *s++;
}

static notrace void lc_line_u64(struct lc_line *l, uint64_t v)
{
	char d[20];
	int i = 0;

	do
		d[i++] = (char)('0' + v % 10);
	while (v /= 10);
	while (i && l->n < sizeof(l->buf) - 1)
		l->buf[l->n++] = d[--i];
}

/*
 * "fdrtrace: FILE: N records, M lost (why; remedy)": records left out on
 * purpose (filter, exclude, max_depth, func_duration_threshold_us) are
 * named as such, never as lost; on_full=wait adds the time spent waiting.
 * Async-signal-safe (fdr_say_raw()).
 */
notrace void lc_exit_line(void)
{
	const uint64_t *by = fdr_totals.dropped_by;
	uint64_t lost = 0, wait = atomic_load_explicit(&fdr_wait_ticks, memory_order_relaxed);
	unsigned reasons = 0;
	struct lc_line l = { 0 };

	lc_line_str(&l, "fdrtrace: ");
	lc_line_str(&l, fdr_path);
	if (fdr_totals.records == 0 && fdr_totals.records_dropped == 0) {
		lc_line_str(&l, ": empty run: 0 records\n");
		fdr_say_raw(l.buf, l.n);
		return;
	}
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		if (r == FDRTRACE_DROP_FILTERED || !by[r])
			continue;
		lost += by[r];
		reasons++;
	}
	lc_line_str(&l, ": ");
	lc_line_u64(&l, fdr_totals.records);
	lc_line_str(&l, " records, ");
	lc_line_u64(&l, lost);
	lc_line_str(&l, " lost");
	for (unsigned r = 1, i = 0; r < FDRTRACE_DROP_REASON_COUNT; r++) {
		if (r == FDRTRACE_DROP_FILTERED || !by[r] || !lc_lost_why[r])
			continue;
		lc_line_str(&l, i ? "; " : " (");
		if (reasons > 1) {
			lc_line_u64(&l, by[r]);
			lc_line_str(&l, " ");
		}
		if (r == FDRTRACE_DROP_POOL_EMPTY && fdr_cfg.policy == FDR_POLICY_RING)
			/*
			 * ring takes the oldest full buffer, and ignores on_full: what
			 * was missing is a buffer no thread was filling
			 */
			lc_line_str(&l, "pool full: every buffer was being filled by a thread; a larger "
				   "buffer_max keeps them");
		else if (r == FDRTRACE_DROP_POOL_EMPTY && fdr_cfg.on_full == FDR_ON_FULL_WAIT)
			/* where on_full=wait may not wait: not a remedy to give again */
			lc_line_str(&l, "pool full in a signal handler, or no buffer came back for 1 s; "
				   "a larger buffer_max keeps them");
		else if (r == FDRTRACE_DROP_IO_ERROR && fdr_file_max_size_hit()) {
			lc_line_str(&l, "past max_size=");
			lc_line_u64(&l, fdr_cfg.max_size);
			lc_line_str(&l, "; a larger max_size keeps them");
		} else
			lc_line_str(&l, lc_lost_why[r]);
		if (++i == reasons)
			lc_line_str(&l, ")");
	}
	if (by[FDRTRACE_DROP_FILTERED]) {
		bool named = fdr_cfg.filter[0] || fdr_cfg.exclude[0] || fdr_cfg.max_depth ||
			     fdr_cfg.func_duration_threshold_us;

		lc_line_str(&l, ", ");
		lc_line_u64(&l, by[FDRTRACE_DROP_FILTERED]);
		lc_line_str(&l, " left out on purpose by");
		if (fdr_cfg.filter[0] || fdr_cfg.exclude[0])
			lc_line_str(&l, " filter/exclude");
		if (fdr_cfg.max_depth)
			lc_line_str(&l, " max_depth");
		if (fdr_cfg.func_duration_threshold_us)
			lc_line_str(&l, " func_duration_threshold_us");
		if (!named)
			lc_line_str(&l, " the runtime");
	}
	if (wait && fdr_clock.freq) {
		/* milliseconds, rounded: "%.3f s" without floating point */
		uint64_t ms = (uint64_t)(((lc_u128)wait * 1000 + fdr_clock.freq / 2) /
					 fdr_clock.freq);

		lc_line_str(&l, "; threads waited ");
		lc_line_u64(&l, ms / 1000);
		lc_line_str(&l, ms % 1000 < 100 ? (ms % 1000 < 10 ? ".00" : ".0") : ".");
		lc_line_u64(&l, ms % 1000);
		lc_line_str(&l, " s for free buffers (on_full=wait)");
	}
	lc_line_str(&l, "\n");
	if (l.buf[l.n - 1] != '\n')
		l.buf[l.n - 1] = '\n';	/* cut: still one line */
	fdr_say_raw(l.buf, l.n);
}

/*
 * Has the parent process libfdrtrace loaded (its /proc/PID/maps names it)?
 * Then it is tracing, and this process, preloaded because it inherited
 * LD_PRELOAD, is one of its children: not the one the user asked about.
 * Read in pieces into a static buffer (no allocation); the exit only.
 */
static notrace bool lc_parent_traced(void)
{
	static const char lib[] = "libfdrtrace";
	static char buf[4096 + sizeof(lib)];
	char path[64];
	size_t keep = 0;
	bool found = false;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)getppid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	for (;;) {
		ssize_t n = read(fd, buf + keep, sizeof(buf) - 1 - keep);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		n += (ssize_t)keep;
		if (memmem(buf, (size_t)n, lib, sizeof(lib) - 1)) {
			found = true;
			break;
		}
		/* a name cut at the end of this piece: carry its start over */
		keep = sizeof(lib) - 2;
		memmove(buf, buf + n - (ssize_t)keep, keep);
	}
	close(fd);
	return found;
}

/*
 * Recording was asked for and no instrumented function ran: one line,
 * naming the likely cause. Said only by a process the user asked about:
 * one that links libfdrtrace, or the one the preload was asked for, not
 * a child that inherited LD_PRELOAD from a traced parent, nor a fork
 * child (lc_quiet); never at verbosity=0 (fdrtrace record).
 */
notrace void lc_say_nothing_ran(void)
{
	const char *pre;

	if (fdr_cfg.verbosity < 1 || lc_quiet)
		return;
	pre = getenv("LD_PRELOAD");
	if (pre && strstr(pre, "fdrtrace") && lc_parent_traced())
		return;
	if (!fdr_program[0])
		lc_program_name();
	fdr_say("fdrtrace: %s: no instrumented function ran, so no trace was written "
		"(was it compiled with -finstrument-functions?)\n", fdr_program);
}

/*
 * At an exit: a process that never started (phase ARMED) ends so, with
 * the line above; no start may begin after this. A start under way on
 * another thread is waited for (the caller then closes as usual).
 * Return: true when the process never started.
 */
notrace bool lc_end_unstarted(void)
{
	int expect = LC_START_IDLE;
	int armed = FDR_PHASE_ARMED;

	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) != FDR_PHASE_ARMED)
		return false;
	/* acquire: pairs with the start state's release (lifecycle.c, LC_START_DONE) */
	if (!atomic_compare_exchange_strong_explicit(&lc_start_state, &expect, LC_START_DONE,
						     memory_order_acq_rel, memory_order_acquire)) {
		/* acquire: pairs with the start state's release (lifecycle.c, LC_START_DONE) */
		for (int i = 0; i < 20000 && atomic_load_explicit(&lc_start_state,
				memory_order_acquire) == LC_START_RUNNING; i++)
			nanosleep(&(struct timespec){ 0, 50000 }, NULL);
		/* acquire: pairs with the phase's release stores (state.h) */
		return atomic_load_explicit(&fdr_phase, memory_order_acquire) == FDR_PHASE_ARMED;
	}
	/* the phase's CAS: acq_rel pairs with its loads and stores (state.h) */
	if (!atomic_compare_exchange_strong_explicit(&fdr_phase, &armed, FDR_PHASE_DONE,
						     memory_order_acq_rel, memory_order_relaxed))
		return false;
	/* release: pairs with the gate's acquire loads (state.h) */
	atomic_store_explicit(&fdr_gate, FDR_GATE_AFTER_FINI, memory_order_release);
	lc_say_nothing_ran();
	return true;
}

_Atomic bool lc_dumped;	/* the dump of _exit (lc_exit_now()) is written */
static _Atomic pid_t lc_closer;	/* the thread that took the phase to FINISHING or DYING */

/*
 * Take the trace from recording to @phase (FINISHING: exit(); DYING: _exit
 * or a fatal signal): the caller closes it, as lc_closer, and hooks record
 * no more. False when it is being closed (or was) already.
 */
notrace bool lc_claim(int phase)
{
	int expect = FDR_PHASE_RECORDING;

	/* the phase's CAS: acq_rel pairs with its loads and stores (state.h) */
	if (!atomic_compare_exchange_strong_explicit(&fdr_phase, &expect, phase,
						     memory_order_acq_rel, memory_order_acquire))
		return false;
	atomic_store_explicit(&lc_closer, (pid_t)syscall(SYS_gettid), memory_order_relaxed);
	/* release: pairs with the gate's acquire loads (state.h) */
	atomic_store_explicit(&fdr_gate, FDR_GATE_AFTER_FINI, memory_order_release);
	return true;
}

/*
 * Another thread is closing the trace (exit(), _exit, a fatal signal):
 * ending the process before it is done would cut its writes. Wait for it,
 * 2 s at most (it may be waiting for the caller).
 */
notrace void lc_wait_closing(void)
{
	struct timespec ts = { 0, 100000 };

	/* the closer itself (a crash or an _exit inside the close): no one to wait for */
	if (atomic_load_explicit(&lc_closer, memory_order_relaxed) == (pid_t)syscall(SYS_gettid))
		return;
	for (int i = 0; i < 20000; i++) {
		/* acquire: pairs with the phase's release stores (state.h) */
		int ph = atomic_load_explicit(&fdr_phase, memory_order_acquire);

		/* acquire: pairs with the release store of lc_dumped (fatal.c) */
		if (ph != FDR_PHASE_FINISHING &&
		    (ph != FDR_PHASE_DYING || atomic_load_explicit(&lc_dumped, memory_order_acquire)))
			return;
		nanosleep(&ts, NULL);
	}
}

/* Ask a thread to hand its partial buffer over at its next traced call. */
notrace void lc_request_all(struct fdr_thread *t, void *arg)
{
	(void)arg;
	atomic_store_explicit(&t->flush_req, 1, memory_order_relaxed);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
}
