// SPDX-License-Identifier: MIT
/*
 * runtime/process/fatal.c - fatal and terminating signals, _exit and dump_signal:
 * what is in memory written with async-signal-safe calls only, the trace
 * closed, the program's disposition given back.
 *
 * Contract: lc_fatal() is a signal handler: everything it reaches is
 * async-signal-safe (tests/reliability/check_signal_safety.py walks it). It
 * is installed only where the program's disposition is the default
 * (signals/sigview.c keeps the program's view); SA_ONSTACK, no alternate
 * stack of ours. In ring policy the dump writes the ring's buffers, oldest
 * first, with the names the flush thread looked up while the program ran.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "autoexclude.h"
#include "buffer_queue.h"
#include "clock.h"
#include "config.h"
#include "ext_encode.h"
#include "flush.h"
#include "lifecycle_internal.h"
#include "ring.h"
#include "rtbuf.h"
#include "sigview.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"
#include "trace_file.h"

static const int lc_fatal_sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
/*
 * Signals whose default action ends the process, which a program often
 * leaves at the default: Ctrl-C, kill, a closed pipe, a hang-up, a limit.
 * Handled only while their disposition is the default (lc_install_signals()).
 */
static const int lc_term_sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM,
				    SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ };
struct fdr_rtbuf lc_sig_rb;
/* the faulting thread's native stack, taken first thing in the handler */
static uint64_t lc_crash_addrs[FDR_NATIVE_MAX];
static uint32_t lc_crash_mods[FDR_NATIVE_MAX];
static uint8_t lc_crash_payload[64 + FDR_NATIVE_MAX * FDRTRACE_NATIVE_FRAME_SIZE];

/* ---- fatal signals ---- */

static notrace void lc_sig_snap(struct fdr_thread *t, void *arg)
{
	struct fdr_buffer node, *b;

	memset(&node, 0, sizeof(node));
	fdr_snapshot_thread(t, &node);
	/* ids used before the snapshot's position are all handed out now: name them first */
	fdr_flush_emit_funcs(arg, false);
	fdr_rtbuf_flush(arg);
	/*
	 * Buffers handed over since lc_dump() took the queue: this thread's
	 * came before its snapshot (the slot lock orders them), so they go
	 * first (fdr_thread_handover()).
	 */
	while ((b = fdr_queue_pop(false)))
		if (b->len && b->data)
			fdr_file_write_buffer(b->data, b->len);
	if (node.len && node.data)
		fdr_file_write_buffer(node.data, node.len);
	fdr_rtbuf_add_drops(arg, node.tid, node.drops, node.drop_bufs);
}

/*
 * Why the dying thread's stack is written: a fault's signal that another
 * process sent (kill -SEGV: SI_USER, SI_QUEUE, or a tkill from another
 * pid) is no crash of the program, and readers say "killed" for it.
 * abort() and raise() send theirs from this process: crashes, as before.
 */
static notrace uint8_t lc_native_why(int sig, const siginfo_t *info)
{
	bool fault_sig = false;

	for (size_t i = 0; i < FDR_ARRAY_SIZE(lc_fatal_sigs); i++)
		fault_sig |= sig == lc_fatal_sigs[i];
	if (fault_sig && info && info->si_code <= 0 && info->si_pid != fdr_pid &&
	    info->si_pid != 0)
		return FDRTRACE_NATIVE_SENT;
	return FDRTRACE_NATIVE_SIGNAL;
}

/*
 * Write what is in memory and close the trace, with async-signal-safe
 * calls only: for a fatal signal @sig (the crash's native stack first, then
 * closed as how=SIGNAL), or for _exit() (@sig 0: closed as how=EXIT).
 */
static notrace void lc_dump(int sig, siginfo_t *info, void *uc)
{
	struct fdr_rtbuf *rb = &lc_sig_rb;
	struct fdr_buffer *b, *first = NULL, **tail = &first;
	uint8_t p[128];
	size_t n, crash_len = 0;
	uint32_t depth;
	uint64_t fault = 0, freq;
	int32_t self;

	if (sig) {
		fdr_set_end(FDRTRACE_END_SIGNALED, (uint32_t)sig);
		/* where it died, innermost frame first, before anything else runs */
		depth = fdr_native_from_signal(uc, lc_crash_addrs, lc_crash_mods, FDR_NATIVE_MAX);
		if (info && info->si_code > 0 && sig != SIGABRT)
			fault = (uint64_t)(uintptr_t)info->si_addr;
		crash_len = fdr_ext_native_stack(lc_crash_payload, sizeof(lc_crash_payload),
						 (uint32_t)syscall(SYS_gettid), lc_native_why(sig, info),
						 (uint8_t)sig, fault, depth, lc_crash_addrs,
						 lc_crash_mods);
	}
	fdr_flush_started_wait(200);	/* the start records first in the file */
	fdr_flush_names_wait(200);	/* ring policy: names were looked up while it ran */
	if (!rb->data || !fdr_file_lock(2000))
		return;
	if (!fdr_file_created() && !fdr_has_records() && !fdr_ax_has_counts()) {
		fdr_file_unlock();	/* nothing instrumented ran: no file */
		return;
	}
	fdr_file_create();
	/*
	 * The runtime's records go in buffers of the flush thread's id, as
	 * ever: under this thread's id, the names written before its queued
	 * buffers made its buffers run back in time, which llvm-xray refuses
	 * (a fork child ending with _exit: Redis's BGSAVE). Only the crash
	 * stack is this thread's, after its last record.
	 */
	self = (int32_t)syscall(SYS_gettid);
	rb->tid = fdr_flush_tid() ? fdr_flush_tid() : self;
	rb->len = 0;
	/* take the queued buffers first, then name every id they may use, then write them */
	while ((b = fdr_queue_pop(false))) {
		b->node.next = NULL;
		*tail = b;
		tail = (struct fdr_buffer **)&b->node.next;
	}
	fdr_flush_emit_funcs(rb, false);
	fdr_rtbuf_flush(rb);
	for (b = first; b; b = (struct fdr_buffer *)b->node.next)
		if (b->len && b->data)
			fdr_file_write_buffer(b->data, b->len);
	if (fdr_cfg.policy == FDR_POLICY_RING)
		fdr_ring_write(false, UINT64_MAX, fdr_file_write_buffer);	/* the recent past, oldest first */
	fdr_threads_foreach(lc_sig_snap, rb, 100000);
	if (crash_len) {
		/* in a buffer of its own, so that its time is now: after the thread's last record */
		int32_t tid = rb->tid;

		fdr_rtbuf_flush(rb);
		rb->tid = self;
		fdr_rtbuf_add(rb, lc_crash_payload, crash_len);
		fdr_rtbuf_flush(rb);
		rb->tid = tid;
	}
	{
		uint64_t rec[FDRTRACE_DROP_REASON_COUNT] = { 0 };
		uint64_t bufs[FDRTRACE_DROP_REASON_COUNT] = { 0 };

		fdr_orphan_drops(rec, bufs, true);
		fdr_rtbuf_add_drops(rb, 0, rec, bufs);
	}
	fdr_ax_emit(rb, fdr_rtbuf_add, true);	/* auto_exclude: the calls counted, not recorded */
	fdr_rtbuf_flush(rb);
	freq = fdr_clock_refine();	/* over the run, as a normal close */
	n = fdr_close_record(p, sizeof(p), sig ? FDRTRACE_CLOSE_SIGNAL : FDRTRACE_CLOSE_EXIT, freq, 0);
	if (n)
		fdr_rtbuf_add(rb, p, n);
	fdr_rtbuf_flush(rb);
	fdr_file_patch_freq(freq);
	fdr_file_trim();	/* the process dies: no more writes to reserve blocks for */
	fdr_file_unlock();
}

/*
 * What both signal handlers do first: dump and close the trace, unless
 * this is a vfork child (its memory is ours: not its trace to write) or
 * another thread closes it already (dying now would cut its writes: wait
 * for it). lc_dumped stays false: an exit() waiting in another thread is
 * ended by this signal. Return: whether this thread dumped.
 */
static notrace bool lc_signal_dump(int sig, siginfo_t *info, void *uc)
{
	if ((pid_t)syscall(SYS_getpid) != fdr_pid)
		return false;
	if (!lc_claim(FDR_PHASE_DYING)) {
		lc_wait_closing();
		return false;
	}
	lc_dump(sig, info, uc);
	return true;
}

/*
 * A signal whose default action ends the process (lc_term_sigs), arrived
 * while that is the program's disposition (the runtime's handler stands
 * for nothing else: sigview.c): the trace is written and closed as at a
 * fatal signal (how = signal, and the native stack of the thread that
 * took it, whose record names the signal), then the default runs: with
 * the real default installed, the signal sent again and unblocked ends
 * the process there, as it would have without us (status, core dump),
 * whatever the program was changing when it came (fdr_sig_die()). A
 * program that installs its own handler replaces this one; setting the
 * default again puts it back (sigview.c), so a handler that cleans up,
 * resets the default and raises the signal (make's) ends here too.
 */
static notrace void lc_terminate(int sig, siginfo_t *info, void *uc)
{
	if (lc_signal_dump(sig, info, uc) && fdr_cfg.verbosity >= 1 && fdr_file_created() &&
	    !fdr_file_failed())
		lc_exit_line();
	fdr_sig_die(sig);
}

static notrace void lc_fatal(int sig, siginfo_t *info, void *uc)
{
	int saved_errno = errno;
	int course = fdr_sig_course(sig);
	bool sent = !info || info->si_code <= 0 || sig == SIGABRT;

	/*
	 * Where the program's disposition is the default, the signal ends the
	 * process: the exit line, as for a kill (lc_terminate()). A handler
	 * the program had before ours (a constructor's) may go on instead.
	 */
	if (lc_signal_dump(sig, info, uc) && course == FDR_SIG_DEFAULT && fdr_cfg.verbosity >= 1 &&
	    fdr_file_created() && !fdr_file_failed())
		lc_exit_line();
	/*
	 * Take the signal's normal course. A handler the program had before
	 * ours, put back, runs when this one returns, through the re-executed
	 * faulting instruction or, for a signal that was sent (abort, kill,
	 * raise), by raising it again (it stays pending until we return,
	 * since it is blocked during its handler). The default: a sent signal
	 * ends the process here (fdr_sig_die()); a fault gets the real
	 * default and faults again on return, so that a core shows the
	 * faulting instruction. Back here after that (FDR_SIG_AGAIN: the
	 * default was set again meanwhile), or where the program changed the
	 * disposition since: die here.
	 */
	if (course == FDR_SIG_PROGRAM && fdr_sig_give_back(sig)) {
		if (sent)
			raise(sig);
	} else if (course == FDR_SIG_DEFAULT && !sent) {
		fdr_sig_default(sig);
	} else {
		fdr_sig_die(sig);
	}
	errno = saved_errno;
}

/*
 * _exit() and _Exit() end the process without atexit handlers, so without
 * our finish: a forked child of a shell or a server that ends with _exit
 * left its trace without its last buffers and without a close marker
 * (dash: 18 of 25 traces of a script). Defined here (exported: they
 * interpose on libc's, linked or preloaded), they write what is in memory
 * as the fatal-signal path does (lc_dump(): async-signal-safe, since
 * _exit is the exit a signal handler may call) and close the trace as an
 * exit, then end the process with the exit_group system call. Left alone:
 * a vfork or posix_spawn child (our memory, another pid), a process not
 * recording, libc's own calls (exit() reaches its _exit inside libc,
 * after our finish ran), and a thread that holds the file lock: it is
 * inside one of our writes (a write() interposed by a preloaded library
 * that calls _exit), and the dump would wait for that lock in vain while
 * the program's other threads, no longer recorded, ran on to an exit of
 * their own (CI saw such a process end with status 0 instead of 77).
 */
notrace __attribute__((noreturn)) void lc_exit_now(int status)
{
	int saved_errno = errno;

	if ((pid_t)syscall(SYS_getpid) != lc_armed_pid || fdr_file_locked_here()) {
		/* not ours to write, or inside our own write: end now */
	} else if (lc_end_unstarted()) {
		/* nothing ran: no trace */
	} else {
		/* a latency trigger's snapshot first: its flush thread may not have run yet */
		fdr_flush_triggers_wait(2000);
		if (lc_claim(FDR_PHASE_DYING)) {
			fdr_set_end(FDRTRACE_END_EXITED, (uint32_t)status & 0xffu);
			lc_dump(0, NULL, NULL);
			/* as exit() does (lc_dump() made the totals), before a waiting exit() goes on */
			if (fdr_cfg.verbosity >= 1 && fdr_file_created() && !fdr_file_failed())
				lc_exit_line();
			/* release: the dump before the flag; pairs with lc_wait_closing()'s acquire load */
			atomic_store_explicit(&lc_dumped, true, memory_order_release);
		} else {
			lc_wait_closing();
		}
	}
	errno = saved_errno;
	for (;;)
		syscall(SYS_exit_group, status);
}

fdr_export notrace __attribute__((noreturn)) void _exit(int status)
{
	lc_exit_now(status);
}

fdr_export notrace __attribute__((noreturn)) void _Exit(int status)
{
	lc_exit_now(status);
}

/* dump_signal: a snapshot, written by the flush thread; the program goes on. */
static notrace void lc_dump_signal(int sig)
{
	int saved_errno = errno;

	(void)sig;
	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) == FDR_PHASE_RECORDING) {
		if (fdr_cfg.policy == FDR_POLICY_RING) {
			fdr_flush_request_snapshot();
		} else {
			/* stream: every thread hands its partial buffer over at its next call */
			fdr_threads_foreach(lc_request_all, NULL, 1000);
			fdr_ax_flush_soon();	/* and auto_exclude's counts go with them */
			fdr_flush_wake();
		}
	}
	errno = saved_errno;
}

notrace void lc_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = lc_fatal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	/*
	 * Every other signal waits while the trace is dumped (a second one
	 * would end the process halfway through); a fault in the dump still
	 * ends it (the kernel forces the default for a blocked fault).
	 */
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < FDR_ARRAY_SIZE(lc_fatal_sigs); i++) {
		int sig = lc_fatal_sigs[i];
		struct sigaction old;

		if (fdr_real_sigaction(sig, NULL, &old) < 0)
			continue;
		if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
			fdr_sig_watch(sig, &sa);	/* ignored: so until the default is set */
		else
			fdr_sig_take(sig, &sa, &old);
	}
	/* the ones that end the process by default: where that is (or becomes) the disposition */
	sa.sa_sigaction = lc_terminate;
	for (size_t i = 0; i < FDR_ARRAY_SIZE(lc_term_sigs); i++) {
		int sig = lc_term_sigs[i];
		struct sigaction old;

		if (sig == fdr_cfg.dump_signal || fdr_real_sigaction(sig, NULL, &old) < 0)
			continue;
		if (old.sa_handler != SIG_DFL)
			fdr_sig_watch(sig, &sa);	/* ignored (a background job's), handled */
		else
			fdr_sig_take(sig, &sa, &old);
	}
	if (fdr_cfg.dump_signal > 0 && fdr_cfg.dump_signal < NSIG) {
		struct sigaction ds;

		memset(&ds, 0, sizeof(ds));
		ds.sa_handler = lc_dump_signal;
		ds.sa_flags = SA_RESTART | SA_ONSTACK;
		sigemptyset(&ds.sa_mask);
		fdr_real_sigaction(fdr_cfg.dump_signal, &ds, NULL);
	}
}
