// SPDX-License-Identifier: MIT
/*
 * runtime/flush/flush_thread.c - the thread that writes the trace.
 *
 * Contract: one flush thread per process (a fork child starts its own),
 * created with every signal blocked (so SIGXFSZ/SIGPIPE make a write fail
 * with EFBIG/EPIPE instead of killing the program, and no program signal
 * handler runs on it). It takes full buffers from the queue, names every
 * function id before the first buffer that may use it (FDRTRACE_EXT_FUNC,
 * names from fdr_symbol_lookup(), off the hot path), writes them and puts
 * them back in the pool. It sleeps on a futex; the hooks' slow path wakes
 * it after handing a buffer over (one syscall per buffer, only when it is
 * asleep); it also wakes every 50 ms, and every flush_interval_ms to ask
 * threads for their partial buffers.
 *
 * Its start: the thread that starts it writes the start records in its
 * name (fl_spawn()); it starts on the starter's CPU (fl_pin_here()) and
 * waits 5 ms or for a wake-up before its first round (fl_first_wait()),
 * then sets itself up (fl_set_up()), may run on any CPU the starter
 * could, and faults in the pages ahead. The
 * finish writes the final round on the exiting thread when it can
 * (fl_finish_here()), else wakes the thread to write it; either way the
 * thread is joined before the process ends (fdr_flush_finish()).
 *
 * Locks: fl_mutex is held around each round of work; the fork prepare
 * handler takes it so that a child never inherits a half-done write or a
 * held loader lock from fdr_symbol_lookup(). The file lock (file_state.c)
 * is taken inside it; the fatal-signal handler takes only the file lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "autoexclude.h"
#include "buffer_queue.h"
#include "clock.h"
#include "config.h"
#include "ext_encode.h"
#include "fd_high.h"
#include "filter.h"
#include "flush.h"
#include "flush_internal.h"
#include "funcid_map.h"
#include "modules.h"
#include "native_stack.h"
#include "ring.h"
#include "rtbuf.h"
#include "say.h"
#include "slowpath.h"
#include "state.h"
#include "sysunwind.h"
#include "thread.h"
#include "trace_file.h"
#include "trigger.h"

static pthread_mutex_t fl_mutex = PTHREAD_MUTEX_INITIALIZER;
/*
 * Threads in fdr_flush_fork_prepare() waiting for fl_mutex; a futex word.
 * The mutex is not fair: a flush thread with a backlog unlocks and locks
 * it again before a woken waiter runs, so a fork waited for the queue to
 * run dry, which a busy program never lets happen (40 forks took 9
 * minutes beside two recording threads under load, their trace 77 GB).
 * While it is not 0 the flush thread, between rounds, waits for it to
 * drop (fl_let_fork_in()).
 */
static _Atomic uint32_t fl_fork_waiting;
static pthread_t fl_thread;
static _Atomic int fl_stop;
/*
 * The final round was written by the finisher's thread (fdr_flush_finish()),
 * under fl_mutex: the flush thread, whenever it takes the mutex again,
 * writes nothing more and ends.
 */
static _Atomic bool fl_finished;
static uint8_t fl_how = FDRTRACE_CLOSE_EXIT;
static _Atomic int fl_started;	/* the start records are written (or kept for the file) */
static _Atomic int fl_alive;	/* the thread runs, past its set-up (fdr_flush_alive_wait()) */
static _Atomic int fl_setup_req;	/* a fork waits for that set-up: no first wait then */
static const char *fl_exec_path;	/* the finish is for an exec of this file */
static uint32_t fl_exec_tid;		/* ... called by this thread */
static uint64_t fl_exec_tsc;		/* ... at this trace clock */

/* The first wait (fl_first_wait()) is over: from now on a first record wakes the thread. */
static atomic_int fl_first_over;

notrace void fdr_flush_wake_recorded(void)
{
	/*
	 * The file is linked by the round after the first record. During
	 * the first wait that round comes at its end anyway (FL_FIRST_NS): a
	 * wake-up now would make every short process's flush thread run its
	 * first round and fault in its pages ahead beside the program (about
	 * 125 page faults of CPU time) for nothing. Relaxed: a late view
	 * costs one wake-up, or a file linked at the next round.
	 */
	if (atomic_load_explicit(&fl_first_over, memory_order_relaxed))
		fdr_flush_wake();
}

/*
 * The most one round of the loop takes from the queue, in bytes (at least
 * FDR_WRITE_BATCH buffers): fl_mutex is held for a round, and a fork
 * waits for it (fl_let_fork_in()). A round that took the whole queue of a
 * busy program, on a slow disk, held it for seconds.
 */
#define FL_ROUND_BYTES (8u << 20)

/*
 * One round: take the queued buffers (at most @max), name new ids, write
 * the buffers. Caller holds fl_mutex. Return: buffers written.
 */
static notrace unsigned fl_drain(struct fdr_rtbuf *rb, unsigned max)
{
	struct fdr_buffer *first = NULL, **tail = &first, *b;
	unsigned n = 0, taken = 0;

	if (fdr_queue_empty())
		return 0;
	fdr_file_lock(0);
	fdr_file_create();	/* records to write: the file is needed now */
	/* collect first: the ids they use were all handed out before they were queued */
	while (taken++ < max && (b = fdr_queue_pop(true))) {
		*tail = b;
		tail = (struct fdr_buffer **)&b->node.next;
		b->node.next = NULL;
	}
	fdr_flush_emit_funcs(rb, true);
	/* auto_exclude: after the names of the ids they decide */
	fdr_ax_emit_decisions(rb, fdr_rtbuf_add);
	fdr_ax_emit_periodic(rb, fdr_rtbuf_add);	/* and the counts so far, about once a second */
	fdr_rtbuf_flush(rb);
	while (first) {
		struct fdr_buffer *batch[FDR_WRITE_BATCH];
		unsigned k = 0;

		/* up to FDR_WRITE_BATCH buffers in one write, then back to the pool */
		for (; first && k < FDR_WRITE_BATCH; k++) {
			batch[k] = first;
			first = (struct fdr_buffer *)first->node.next;
		}
		fdr_file_write_buffers(batch, k);
		fl_grow(rb);	/* one step, if the pool is growing: between writes */
		for (unsigned i = 0; i < k; i++) {
			b = batch[i];
			if (b->borrowed) {
				/* a snapshot node: the finisher owns (and frees) its memory */
				fdr_rtbuf_add_drops(rb, b->tid, b->drops, b->drop_bufs);
			} else {
				fdr_pool_put(b);
			}
		}
		/* release: pairs with the acquire loads of waiters (fdr_flush_wait_written()) */
		atomic_fetch_add_explicit(&fdr_written, k, memory_order_release);
		n += k;
	}
	fdr_rtbuf_flush(rb);
	fdr_file_unlock();
	return n;
}

static notrace void fl_final(struct fdr_rtbuf *rb)
{
	uint64_t rec[FDRTRACE_DROP_REASON_COUNT] = { 0 }, bufs[FDRTRACE_DROP_REASON_COUNT] = { 0 };
	uint64_t freq;
	size_t n;

	if (!fdr_file_created() && !fdr_has_records() && fdr_queue_empty() &&
	    !fdr_ax_has_counts())
		goto names;	/* no instrumented function ran: no file at all */
	fdr_file_lock(0);
	fdr_file_create();
	fdr_file_unlock();
	if (fdr_cfg.policy == FDR_POLICY_RING) {
		/* the ring, oldest first, then the partial buffers the finisher queued */
		fdr_file_lock(0);
		fdr_flush_emit_funcs(rb, true);
		fdr_rtbuf_flush(rb);
		fdr_ring_write(false, UINT64_MAX, fdr_file_write_buffer);
		fdr_file_unlock();
	}
	fl_drain(rb, UINT_MAX);
	fdr_file_lock(0);
	fdr_flush_emit_funcs(rb, true);
	/* auto_exclude: decisions and the calls counted, not recorded */
	fdr_ax_emit(rb, fdr_rtbuf_add, true);
	fdr_orphan_drops(rec, bufs, true);
	fdr_rtbuf_add_drops(rb, 0, rec, bufs);
	fdr_rtbuf_flush(rb);	/* counts the drops above into the totals */
	if (fl_exec_path) {
		/* the image is replaced: say by what, just before the close marker */
		n = fdr_ext_exec(fl_scratch, sizeof(fl_scratch), (uint32_t)fdr_pid, fl_exec_path,
				 fl_exec_tid, fl_exec_tsc);
		if (n)
			fdr_rtbuf_add(rb, fl_scratch, n);
		fl_exec_path = NULL;
	}
	freq = fdr_clock_refine();
	n = fdr_close_record(fl_scratch, sizeof(fl_scratch), fl_how, freq, 0);
	if (n)
		fdr_rtbuf_add(rb, fl_scratch, n);
	fdr_rtbuf_flush(rb);
	fdr_file_patch_freq(freq);
	fdr_file_unlock();
names:
	/* no dump can follow the final one (the phase is no longer RECORDING) */
	for (uint32_t id = 1; fl_cache && id < atomic_load_explicit(&fl_cache_upto,
								    memory_order_relaxed); id++)
		free(atomic_exchange_explicit(&fl_cache[id].name, NULL, memory_order_relaxed));
}

/*
 * A calibrated frequency is measured again over the run (fdr_clock_refine())
 * and written into the file's header at 100 ms of run, then each time the
 * run has grown fourfold: a trace that is never closed (SIGKILL) has the
 * frequency of most of its run, not only the 2.5 ms calibration's. The
 * close writes the final value.
 */
static uint64_t fl_refine_at = 100000000ull;	/* ns of run */

/* The start pool wants pages faulted in now (fdr_pool_prefault_step()); from the first page. */
static bool fl_prefault, fl_prefault_all;
static bool fl_prepare_ids;	/* the id map has pages to populate: another round at once */
/* A process this old (ns of run) gets the whole start pool faulted in, used or not. */
#define FL_PREFAULT_WHOLE_NS 100000000ull

static notrace void fl_refine_header(void)
{
	uint64_t ran;

	if (!fdr_clock_refinable() || !fdr_file_created())
		return;
	ran = fdr_clock_run_ns();
	if (ran < fl_refine_at)
		return;
	fl_refine_at = ran * 4;
	fdr_file_lock(0);
	fdr_file_patch_freq(fdr_clock_refine());
	fdr_file_unlock();
}

/*
 * A direct write leaves the trace's last partial block in the stage
 * (fdr_file_settle()): it goes into the file once the flush thread has
 * written nothing for FDR_SETTLE_MS, so that a program killed while it
 * idles leaves every byte written, and a busy one pays for it no more
 * than once per pause. Until then, @to ends the sleep by that time.
 */
static uint64_t fl_wrote_ns;	/* when fl_drain() last wrote a buffer (CLOCK_MONOTONIC) */

static notrace void fl_settle_idle(struct timespec *to)
{
	const uint64_t settle_ns = FDR_SETTLE_MS * 1000000ull;
	uint64_t idle;

	if (!fdr_file_unsettled())
		return;
	idle = fdr_clock_ns(CLOCK_MONOTONIC) - fl_wrote_ns;
	if (idle >= settle_ns) {
		fdr_file_lock(0);
		/* outside fl_mutex: the finisher may have written the final round since */
		if (!atomic_load_explicit(&fl_finished, memory_order_seq_cst))
			fdr_file_settle();
		fdr_file_unlock();
	} else if (!to->tv_sec && (uint64_t)to->tv_nsec > settle_ns - idle) {
		to->tv_nsec = (long)(settle_ns - idle);
	}
}

/*
 * Between two rounds (fl_mutex just unlocked): a thread about to fork
 * waits for the mutex; let it take it first. Bounded: the waiter locks as
 * soon as it runs, and the wait times out every millisecond to look again.
 */
static notrace void fl_let_fork_in(void)
{
	uint32_t w;

	for (int i = 0; i < 1000 && (w = atomic_load_explicit(&fl_fork_waiting,
							       memory_order_seq_cst)); i++) {
		struct timespec to = { 0, 1000000 };

		syscall(SYS_futex, &fl_fork_waiting, FUTEX_WAIT_PRIVATE, w, &to, NULL, 0);
	}
}

/* Buffers in one round of the loop (FL_ROUND_BYTES). */
static notrace unsigned fl_round_max(void)
{
	uint64_t n = FL_ROUND_BYTES / (fdr_cfg.buffer_size ? fdr_cfg.buffer_size : 1);

	return n > FDR_WRITE_BATCH ? (unsigned)n : FDR_WRITE_BATCH;
}

/*
 * The start records (process, configuration, modules), in buffers of the
 * flush thread's id @tid, named so; fl_started then says they are in the
 * file (or kept for it). Under fl_mutex, by the starter or the flush thread.
 */
static notrace void fl_start_records(int32_t tid, bool forked)
{
	fdr_rtbuf_init(&fl_rb, tid);
	fdr_file_set_tid(tid);	/* the tid of the file layer's own last unit too */
	fdr_file_lock(0);
	fdr_write_start_records(&fl_rb, forked, (uint32_t)fdr_fork_parent);
	fdr_file_unlock();
	/* release: the records above before a dump writes (fdr_flush_started_wait()) */
	atomic_store_explicit(&fl_started, 1, memory_order_release);
	syscall(SYS_futex, &fl_started, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/*
 * The pages the program's first calls will touch, faulted in at once,
 * before the first round and outside fl_mutex: the id map's level 0 and
 * first id -> address entries, the pool's least lead (the start faulted
 * its first 16 KiB only). None once a full buffer waits: the loop goes
 * on with them after its drains. They come after the first wait
 * (fl_first_wait(): FL_FIRST_NS, or sooner when woken: a flush, a batch
 * of full buffers, a new level of the id map wanted): about 125 page
 * faults, which a process that ends sooner (a build's compiler driver, a
 * shell's command) never needs and never pays; its first calls fault in
 * only the pages they touch. A new function's first call takes no page
 * fault once they are in, and the finish of a process never waits for
 * them (it needs only fl_mutex; the steps stop when it is asked for).
 * Only this thread calls fdr_funcid_prepare() and
 * fdr_pool_prefault_step(): they need no lock.
 */
static notrace void fl_pages_ahead(void)
{
	/* full buffers first, as in the loop: a program that records at once must not run dry */
	while (!atomic_load_explicit(&fl_stop, memory_order_acquire) && fdr_queue_empty() &&
	       (fl_prepare_ids = fdr_funcid_prepare()))
		;
	while (!atomic_load_explicit(&fl_stop, memory_order_acquire) && fl_prefault &&
	       fdr_queue_empty()) {
		fl_prefault = fdr_pool_prefault_step(fl_prefault_all, false);
		fl_prefault_all = false;
	}
}

/*
 * The first round waits FL_FIRST_NS (or a flush interval shorter than
 * that), or until someone wakes this thread: a batch of full buffers, a
 * starving pool, a trigger's new function, a snapshot, the finish.
 * 2026-12-02: a process whose whole run is shorter (a build's compiler
 * driver, a shell's command) never has this thread take fl_mutex or the
 * file lock, so its exit writes the final round without waiting for it
 * to get a CPU (milliseconds on a busy machine). What a longer run's
 * first FL_FIRST_NS pay for it: the trace file appears (is linked) at
 * most that much later (a SIGKILL before leaves no file).
 */
#define FL_FIRST_NS 5000000ull
/* auto_exclude: the wait between rounds while call sites are being patched */
#define FL_PATCH_NS 2000000
/*
 * ... and the longest wait while patching is on at all: a phase of the
 * program that starts calling counted functions from new sites has them
 * on the hooks until the next round. With the 50 ms wait, Lua's sort
 * phase made 0.25 M hooked calls of lua_pushvalue alone (each site
 * patched by then) and 4.5 M calls inside counted calls took the hooks in
 * one run of workload.lua 2. A round with nothing asked for reads each
 * thread's 64 requests and stops.
 */
#define FL_AX_IDLE_NS 5000000

static notrace void fl_first_wait(uint64_t interval_ns)
{
	uint64_t wait = interval_ns && interval_ns < FL_FIRST_NS ? interval_ns : FL_FIRST_NS;
	uint32_t seq = atomic_load_explicit(&fl_seq, memory_order_seq_cst);
	struct timespec to = { 0, (long)wait };

	/* seq_cst: pairs with fdr_flush_wake() (as the loop's sleep below) */
	atomic_store_explicit(&fl_sleeping, 1, memory_order_seq_cst);
	if (fdr_queue_empty() && !atomic_load_explicit(&fl_stop, memory_order_acquire) &&
	    !atomic_load_explicit(&fl_snap_req, memory_order_relaxed) &&
	    !atomic_load_explicit(&fl_trig_req, memory_order_relaxed) &&
	    !atomic_load_explicit(&fl_setup_req, memory_order_seq_cst) &&
	    atomic_load_explicit(&fl_seq, memory_order_seq_cst) == seq)
		syscall(SYS_futex, &fl_seq, FUTEX_WAIT_PRIVATE, seq, &to, NULL, 0);
	atomic_store_explicit(&fl_sleeping, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_first_over, 1, memory_order_relaxed);
}

/*
 * The thread's own set-up: its time slice, its descriptor table, libgcc's
 * unwinder for the fork stacks; then fl_alive lets a fork in. After its
 * first wait (2026-12-02): it shares the starter's CPU until then
 * (fl_pin_here()), and there it cost a process that ended within that
 * wait 65 us of its CPU's time, for a thread that never worked. A fork
 * meanwhile wakes it and waits for this (fdr_flush_alive_wait()). Until
 * it unshares its table the thread opens nothing; a trace descriptor the
 * program closed meanwhile is not in the copy, and the file is made
 * again unnamed or reopened as when the program closes it later (open.c,
 * fw_same()).
 */
static notrace void fl_set_up(void)
{
	fl_place_set_up();	/* its time slice, its own descriptor table */
	fdr_sysunwind_init();	/* the fork stacks' unwinder, before a fork comes in */
	/* release: the set-up before a fork (fdr_flush_alive_wait()'s acquire) */
	atomic_store_explicit(&fl_alive, 1, memory_order_release);
	syscall(SYS_futex, &fl_alive, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

static notrace void *fl_main(void *arg)
{
	uint64_t interval_ns = fdr_cfg.flush_interval_ms * 1000000ull;
	uint64_t next = interval_ns ? fdr_clock_ns(CLOCK_MONOTONIC) + interval_ns : 0;

	fdr_self.no_wait = true;	/* instrumented code it calls must never wait for itself */
	/* a system call only (no allocation): beside the starter's start records */
	pthread_setname_np(pthread_self(), FL_THREAD_NAME);
	pthread_mutex_lock(&fl_mutex);
	if (atomic_load_explicit(&fl_finished, memory_order_relaxed)) {
		/* the process finished before this thread first ran: nothing left to do */
		pthread_mutex_unlock(&fl_mutex);
		return NULL;
	}
	/* the starter could not learn this thread's id (fl_tid_of()): the start records are ours */
	if (!atomic_load_explicit(&fl_started, memory_order_relaxed))
		fl_start_records((int32_t)syscall(SYS_gettid), (bool)(uintptr_t)arg);
	pthread_mutex_unlock(&fl_mutex);
	fl_prefault = true;
	fl_prefault_all = (bool)(uintptr_t)arg;
	fl_first_wait(interval_ns);
	/*
	 * Woken by the finish, which wrote the final round itself: nothing to
	 * set up for (a short process's flush thread ends here, joined). Seen
	 * late, the loop below finds it under fl_mutex.
	 */
	if (atomic_load_explicit(&fl_finished, memory_order_acquire))
		return NULL;
	fl_leave_pin();	/* off the program's CPU before any work */
	fl_set_up();
	fl_pages_ahead();
	for (;;) {
		uint32_t seq = atomic_load_explicit(&fl_seq, memory_order_seq_cst);
		struct timespec to = { 0, 50000000 };
		bool patching;

		/* the finish is waiting: nothing for later (the pages ahead), only the drain */
		bool stopping = atomic_load_explicit(&fl_stop, memory_order_acquire);

		pthread_mutex_lock(&fl_mutex);
		if (atomic_load_explicit(&fl_finished, memory_order_relaxed)) {
			pthread_mutex_unlock(&fl_mutex);
			return NULL;
		}
		/* before anything slow: the id map for the next new functions */
		if (!stopping)
			fl_prepare_ids = fdr_funcid_prepare();
		if (!fdr_file_created() && fdr_has_records()) {
			/* a thread recorded: the file exists from now on (one SIGKILL away) */
			fdr_file_lock(0);
			fdr_file_create();
			fdr_file_unlock();
		}
		if (fdr_filtering)
			fdr_filter_decide();
		if (fdr_cfg.policy != FDR_POLICY_RING) {
			if (fl_drain(&fl_rb, fl_round_max())) {
				fl_wrote_ns = fdr_clock_ns(CLOCK_MONOTONIC);
				fl_spread();
			}
			fl_grow(&fl_rb);	/* after the drain: full buffers first */
		} else {
			fl_cache_names();
		}
		fl_refine_header();
		/*
		 * The start pool's pages, a step at a time, ahead of the buffers
		 * handed out (all of them once the run is FL_PREFAULT_WHOLE_NS
		 * old), and only when no full buffer waits: faulting it all
		 * before the first drain let a program that records at once run
		 * the pool dry (a CI run lost half of a test's 2.3 M records).
		 */
		if (!stopping && fdr_queue_empty()) {
			fl_prefault = fdr_pool_prefault_step(fl_prefault_all,
							     fdr_clock_run_ns() >= FL_PREFAULT_WHOLE_NS);
			fl_prefault_all = false;
		}
		fl_requested_snapshots();
		/*
		 * auto_exclude: the counted calls' sites. Under fl_mutex, as the
		 * module scan: a fork waits for it (fl_let_fork_in()), or its child
		 * would inherit the loader's lock held by dl_iterate_phdr() and a
		 * site half patched.
		 */
		patching = !stopping && fdr_ax_patch_round();
		pthread_mutex_unlock(&fl_mutex);
		fl_let_fork_in();
		if (atomic_load_explicit(&fl_stop, memory_order_acquire))
			break;
		if (interval_ns && fdr_cfg.policy != FDR_POLICY_RING) {
			uint64_t now = fdr_clock_ns(CLOCK_MONOTONIC);

			if (now >= next) {
				fdr_threads_foreach(fl_request, NULL, 0);
				next = now + interval_ns;
			}
			if (next - now < 50000000ull)
				to.tv_nsec = (long)(next - now);
		}
		/* while sites are being patched, the next round soon: the rest of them are as hot */
		if (patching && to.tv_nsec > FL_PATCH_NS)
			to.tv_nsec = FL_PATCH_NS;
		else if (to.tv_nsec > FL_AX_IDLE_NS && !stopping && fdr_ax_patch_on())
			to.tv_nsec = FL_AX_IDLE_NS;
		if (fl_prefault || fl_prepare_ids)
			continue;	/* the next step, after a look at the queue */
		fl_settle_idle(&to);
		atomic_store_explicit(&fl_sleeping, 1, memory_order_seq_cst);
		if ((fdr_cfg.policy == FDR_POLICY_RING || fdr_queue_empty()) && !fl_growing() &&
		    !(fl_can_grow() && atomic_load_explicit(&fl_pressure, memory_order_relaxed)) &&
		    !atomic_load_explicit(&fl_snap_req, memory_order_relaxed) &&
		    !atomic_load_explicit(&fl_trig_req, memory_order_relaxed) &&
		    atomic_load_explicit(&fl_seq, memory_order_seq_cst) == seq &&
		    !atomic_load_explicit(&fl_stop, memory_order_acquire))
			syscall(SYS_futex, &fl_seq, FUTEX_WAIT_PRIVATE, seq, &to, NULL, 0);
		atomic_store_explicit(&fl_sleeping, 0, memory_order_relaxed);
	}
	pthread_mutex_lock(&fl_mutex);
	/* the finisher, waiting for the mutex, finds it done (fdr_flush_finish()) */
	if (!atomic_exchange_explicit(&fl_finished, true, memory_order_seq_cst)) {
		fl_requested_snapshots();
		fl_final(&fl_rb);
	}
	pthread_mutex_unlock(&fl_mutex);
	return NULL;
}

/*
 * The kernel's id of thread @th, which has not run yet: glibc makes a
 * thread's CPU-time clock id of it (pthread_getcpuclockid()) in the
 * kernel's encoding (MAKE_THREAD_CPUCLOCK: ~tid << 3 | CPUCLOCK_SCHED |
 * CPUCLOCK_PERTHREAD_MASK, the low bits 6). The decoding is checked on the
 * calling thread first. Return: the id, or 0 when the check fails (a C
 * library that encodes it otherwise).
 */
static notrace int32_t fl_tid_of(pthread_t th)
{
	clockid_t self, cid;

	if (pthread_getcpuclockid(pthread_self(), &self) || (self & 7) != 6 ||
	    (pid_t)~(self >> 3) != (pid_t)syscall(SYS_gettid))
		return 0;
	if (pthread_getcpuclockid(th, &cid) || (cid & 7) != 6)
		return 0;
	return (int32_t)~(cid >> 3);
}

/*
 * Start the flush thread, and write the start records on the caller's
 * thread, under its id (2026-12-02): they are in the file (or kept for
 * it) when the start returns, so that nothing that ends the process (an
 * exit, an _exit or fatal signal's dump, an exec) waits for the new
 * thread to run first. Waiting for it cost a short traced process a
 * hand-over to a new thread at its exit: 0.3 ms on an idle machine,
 * milliseconds on a busy one. The thread sets itself up (its name, its
 * descriptor table) meanwhile, then takes fl_mutex, which the caller
 * holds until the records are written. Where the thread's id cannot be
 * known before it runs (fl_tid_of()), the thread writes them, and those
 * writers wait for it (fdr_flush_started_wait()).
 */
static notrace int fl_spawn(bool forked)
{
	int saved = errno;	/* a fork child's caller sees fork()'s errno */
	sigset_t all, old;
	int32_t tid;
	int err;

	atomic_store_explicit(&fl_started, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_alive, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_setup_req, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_finished, false, memory_order_relaxed);
	pthread_mutex_lock(&fl_mutex);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	fl_pin_here();
	err = pthread_create(&fl_thread, NULL, fl_main, (void *)(uintptr_t)forked);
	fl_unpin();	/* the starter's mask as it was; the new thread keeps the one CPU */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_mutex_unlock(&fl_mutex);
		return -err;
	}
	fl_running = true;
	tid = fl_tid_of(fl_thread);
	if (tid > 0)
		fl_start_records(tid, forked);
	pthread_mutex_unlock(&fl_mutex);
	errno = saved;
	return 0;
}

/* Wait until @word is no longer 0, @ms at most (futex: woken by its setter). */
static notrace void fl_word_wait(_Atomic int *word, unsigned ms)
{
	uint64_t now, end;

	if (!fl_running)
		return;
	end = fdr_clock_ns(CLOCK_MONOTONIC) + (uint64_t)ms * 1000000u;
	/* acquire: pairs with the setter's release store (fl_start_records(), fl_main()) */
	while (!atomic_load_explicit(word, memory_order_acquire) &&
	       (now = fdr_clock_ns(CLOCK_MONOTONIC)) < end) {
		struct timespec left = { (time_t)((end - now) / 1000000000u),
					 (long)((end - now) % 1000000000u) };

		/* returns at once when the word is no longer 0 */
		syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, &left, NULL, 0);
	}
}

notrace void fdr_flush_started_wait(unsigned ms)
{
	fl_word_wait(&fl_started, ms);
}

notrace void fdr_flush_alive_wait(unsigned ms)
{
	/* acquire: pairs with fl_set_up()'s release store */
	if (fl_running && !atomic_load_explicit(&fl_alive, memory_order_acquire)) {
		/* seq_cst: before the wake's; pairs with fl_first_wait()'s look at it */
		atomic_store_explicit(&fl_setup_req, 1, memory_order_seq_cst);
		fdr_flush_wake();	/* out of its first wait, to set itself up now */
	}
	fl_word_wait(&fl_alive, ms);
}

notrace int fdr_flush_start(void)
{
	int err = fl_emitted_init();

	if (err)
		return err;
	atomic_store_explicit(&fl_stop, 0, memory_order_relaxed);
	return fl_spawn(false);
}

notrace void fdr_flush_note_exec(const char *path, uint32_t tid, uint64_t tsc)
{
	fl_exec_path = path;
	fl_exec_tid = tid;
	fl_exec_tsc = tsc;
}

/*
 * The final round on the caller's thread (the exit handler's, or exec's),
 * once the flush thread has written the start records: it takes fl_mutex
 * (the flush thread's round in progress ends first; fl_stop, set before,
 * keeps that round from starting work for later) and writes what is
 * queued and the close; the caller then wakes the thread only to end it
 * (fdr_flush_finish()). Before (2026-12-02), the exit woke the flush
 * thread to write them and waited for it: a hand-over to another thread
 * and back, each a wait for a CPU, in every traced process. Writing from
 * another thread than the flush thread is what the _exit and
 * fatal-signal dumps do. Only when the trace is in this thread's
 * descriptor table as it is (fdr_file_here()); else (the thread did not
 * start in 2 s, on a stopped machine; the trace is only in its table, or
 * under a file size limit) the flush thread writes it when the caller
 * wakes it, or did already, having seen fl_stop first.
 */
static notrace void fl_finish_here(void)
{
	bool here;

	fdr_flush_started_wait(2000);	/* the start records first in the file */
	if (!atomic_load_explicit(&fl_started, memory_order_acquire))
		return;
	pthread_mutex_lock(&fl_mutex);
	if (!atomic_load_explicit(&fl_finished, memory_order_relaxed)) {
		fdr_file_lock(0);
		here = fdr_file_here();
		fdr_file_unlock();
		if (here) {
			fl_requested_snapshots();	/* a trigger just before the exit: its snapshot */
			/* seq_cst: before fl_final() takes the file lock (fl_settle_idle() looks under it) */
			atomic_store_explicit(&fl_finished, true, memory_order_seq_cst);
			fl_final(&fl_rb);
		}
	}
	pthread_mutex_unlock(&fl_mutex);
}

/*
 * The exit's first step (lc_finish(), before it takes the threads' partial
 * buffers): the snapshots asked for and not yet written, written now on
 * the exiting thread, while every partial buffer is still its thread's
 * and goes into them. A trigger that fired just before exit() would
 * otherwise wait for a flush thread that may not get a CPU before the
 * process ends (a CI run under load lost one so).
 */
notrace void fdr_flush_pending_snapshots(void)
{
	if (!fl_running || !atomic_load_explicit(&fl_started, memory_order_acquire))
		return;
	if (!atomic_load_explicit(&fl_snap_req, memory_order_acquire) &&
	    !atomic_load_explicit(&fl_trig_req, memory_order_acquire))
		return;
	pthread_mutex_lock(&fl_mutex);
	if (!atomic_load_explicit(&fl_finished, memory_order_relaxed))
		fl_requested_snapshots();
	pthread_mutex_unlock(&fl_mutex);
}

/*
 * _exit()'s first step (lc_exit_now()): a latency trigger's snapshot asked
 * for and not yet written is waited for, @timeout_ms at most, the flush
 * thread woken meanwhile. Only waits (nanosleep, a futex wake): _exit may
 * be called from a signal handler, where the snapshot (malloc) may not be
 * written. A fork child that ends with _exit right after its slow call
 * lost its snapshot when the flush thread got no CPU first (CI under load).
 */
notrace void fdr_flush_triggers_wait(unsigned timeout_ms)
{
	if (!fl_running || !atomic_load_explicit(&fl_started, memory_order_acquire))
		return;
	for (unsigned i = 0; i < timeout_ms * 10; i++) {
		struct timespec ts = { 0, 100000 };

		/* acquire: fl_trig_req goes down once its snapshot is written */
		if (!atomic_load_explicit(&fl_trig_req, memory_order_acquire))
			return;
		fdr_flush_wake();
		nanosleep(&ts, NULL);
	}
}

notrace void fdr_flush_finish(uint8_t how)
{
	fl_how = how;
	if (!fl_running)
		return;
	atomic_store_explicit(&fl_stop, 1, memory_order_release);
	/*
	 * Written here or not, the thread is woken and joined: it ends before
	 * the process does, finding fl_finished (or fl_stop) under fl_mutex.
	 * Left asleep for the exit to kill, it was the process's last thread
	 * to end, and the parent paid for it: the kernel sends SIGCHLD from
	 * that thread's release, then flushes its /proc entries while the
	 * parent's wait4() flushes the process's, and the parent spins on
	 * the entries the other holds until it runs again. bash's SIGCHLD
	 * handler spent 1-5 ms in waitpid(WNOHANG) per child so (2026-12-02,
	 * workload.bash, policy=ring buffer_max=4: 6-23 such calls a run,
	 * none joined; the workload's wall time the same or less joined).
	 */
	fl_finish_here();
	fdr_flush_wake();
	pthread_join(fl_thread, NULL);
	fl_running = false;
}

notrace int fdr_flush_wait_written(uint64_t target, unsigned timeout_ms)
{
	for (unsigned i = 0; i < timeout_ms; i++) {
		struct timespec ts = { 0, 1000000 };

		if (atomic_load_explicit(&fdr_written, memory_order_acquire) >= target)
			return 0;
		fdr_flush_wake();
		nanosleep(&ts, NULL);
	}
	return -ETIMEDOUT;
}

static bool fl_fork_saved_no_wait;

notrace void fdr_flush_fork_prepare(void)
{
	/* the flush thread cannot run until the fork is done: this thread must not wait for it */
	fl_fork_saved_no_wait = fdr_self.no_wait;
	fdr_self.no_wait = true;
	if (!fl_running)
		return;
	/* seq_cst: seen by the flush thread's load after its unlock (fl_let_fork_in()) */
	atomic_fetch_add_explicit(&fl_fork_waiting, 1, memory_order_seq_cst);
	pthread_mutex_lock(&fl_mutex);
	if (atomic_fetch_sub_explicit(&fl_fork_waiting, 1, memory_order_seq_cst) == 1)
		syscall(SYS_futex, &fl_fork_waiting, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

notrace void fdr_flush_fork_parent(void)
{
	if (fl_running)
		pthread_mutex_unlock(&fl_mutex);
	fdr_self.no_wait = fl_fork_saved_no_wait;
}

/* Fork child: the parent's flush thread does not exist here; start ours. */
notrace void fdr_flush_reset_child(void)
{
	pthread_mutex_init(&fl_mutex, NULL);
	atomic_store_explicit(&fl_fork_waiting, 0, memory_order_relaxed);
	fl_running = false;
	atomic_store_explicit(&fl_alive, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_setup_req, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_finished, false, memory_order_relaxed);
	atomic_store_explicit(&fl_stop, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_seq, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_sleeping, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_pressure, 0, memory_order_relaxed);
	fl_grow_target = 0;
	fl_rate_t0 = 0;
	fl_place_reset_child();
	atomic_store_explicit(&fdr_enqueued, 0, memory_order_relaxed);
	atomic_store_explicit(&fdr_written, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_stalled_at, 0, memory_order_relaxed);	/* the parent's progress */
	fl_rb.len = 0;
	fl_how = FDRTRACE_CLOSE_EXIT;
	/*
	 * the child's snapshots are of its own trace: numbered from 1 (were
	 * the parent's next), and none for a request the parent made (a
	 * trigger of the parent's that fired just before the fork: the
	 * child wrote a snapshot of it, as its snap1)
	 */
	atomic_store_explicit(&fl_snaps, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_snap_req, 0, memory_order_relaxed);
	atomic_store_explicit(&fl_trig_req, 0, memory_order_relaxed);
	fl_emitted_init();
}

notrace int fdr_flush_start_child(void)
{
	fdr_self.no_wait = fl_fork_saved_no_wait;
	return fl_spawn(true);
}
