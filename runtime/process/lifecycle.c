// SPDX-License-Identifier: MIT
/*
 * runtime/process/lifecycle.c - the constructor, the lazy start, the
 * finish, exec. The contract below is the process layer's: fatal.c (fatal
 * signals, _exit), fork.c, control.c (the API) and ending.c (the close's
 * claim, the exit line) hold the parts it names.
 *
 * Contract:
 *   - The constructor (priority 101, the thread that loads the library,
 *     before main) only reads the options, takes the clock's start pair,
 *     registers the exit and fork handlers and sets the gate LAZY. Hooks
 *     that run earlier (other constructors) are counted as BEFORE_INIT
 *     drops. The first hook after it starts the runtime
 *     (fdr_start_lazy(): any thread, once, the others waiting), then
 *     records its call; so do an API call and an identity change.
 *   - The finish runs from an atexit handler registered by that
 *     constructor (bound to this library: see lc_atexit()); the exit
 *     status for the close record comes from an on_exit handler
 *     registered when recording starts (lc_exit_status()). A shared library's constructor runs before
 *     __libc_start_main registers the loader's destructor pass, so our
 *     handler runs after every destructor and C++ static destructor:
 *     almost nothing of the program's is missed. Hooks after it are
 *     counted as AFTER_FINI and do nothing else. _exit() and quick_exit()
 *     skip it (the buffers then are lost; documented). An exec finishes
 *     the trace first (exec.c, fdr_before_exec()).
 *   - Other threads may still run during the finish: their partial
 *     buffers are snapshot up to their published position (whole records
 *     only) and never written again. A thread whose hook got past the
 *     gate before it closed may hand a full buffer over before its
 *     snapshot: that buffer is written, before the snapshot (buffer.c,
 *     fdr_thread_handover()); one handed over after it is not (the
 *     snapshot has its records).
 *   - fork: the prepare handler stamps the fork point (thread, clock,
 *     serial; a spawn record in the forking thread's records) and holds
 *     the flush thread's mutex, so the child never inherits a half-written
 *     buffer or a loader lock taken by a symbol lookup; the child gets an
 *     empty pool and goes back to the LAZY gate: its own file, flush
 *     thread and FDRTRACE_EXT_FORK record come at its first hook.
 *   - Fatal signals (SEGV, BUS, ILL, FPE, ABRT): the handler writes what is
 *     in memory with async-signal-safe calls only, closes the trace with
 *     how=SIGNAL, restores the previous disposition and re-raises. It is
 *     installed with SA_ONSTACK but we install no alternate stack: one per
 *     thread would cost a mapping per thread; a program that sets up its
 *     own sigaltstack gets stack overflows handled, others do not.
 *     In ring policy the dump writes the ring's buffers, oldest first,
 *     with the names the flush thread looked up while the program ran.
 *   - dump_signal: its handler only sets a flag and wakes the flush
 *     thread (ring: a snapshot file) or asks every thread for its partial
 *     buffer (stream); the program goes on.
 *   - The control API (fdrtrace_*) checks the phase first and returns a
 *     negative errno when recording is not on; start/stop only ever move
 *     the gate between ON and OFF (never out of AFTER_FINI).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <fdrtrace/fdrtrace.h>

#include "autoexclude.h"
#include "buffer_queue.h"
#include "clock.h"
#include "config.h"
#include "drain.h"
#include "ext_encode.h"
#include "fd_high.h"
#include "filter.h"
#include "flush.h"
#include "fork_stack.h"
#include "funcid_map.h"
#include "lifecycle.h"
#include "lifecycle_internal.h"
#include "modules.h"
#include "native_stack.h"
#include "ring.h"
#include "rtbuf.h"
#include "say.h"
#include "sigview.h"
#include "slowpath.h"
#include "state.h"
#include "sysunwind.h"
#include "thread.h"
#include "trace_file.h"
#include "trigger.h"

static bool lc_handlers_registered;

/* this thread is starting the runtime: its own hooks meanwhile are not recorded */
static fdr_tls bool lc_starting_here;

/*
 * The working directory the process started in, with a trailing '/', or
 * "" when getcwd() failed there. Taken once, at the first initialisation:
 * a fork child inherits it, so a program that changes directory and then
 * forks (rsync's receiver, in the destination) has its child's trace where
 * the program started, not in the directory the child was forked in (a
 * file in the program's output, which its next --delete run removed). An
 * exec starts a new image, which takes its own.
 */
static char lc_start_dir[PATH_MAX + 1];
static bool lc_start_dir_taken;

/*
 * The trace's path, absolute: a relative logfile_base is taken from the
 * working directory at start (lc_start_dir), so that messages name the
 * whole path and a program that changes directory later, or forks after
 * it did, still writes where it started.
 */
static notrace void lc_take_start_dir(void)
{
	size_t n;

	if (lc_start_dir_taken)
		return;
	lc_start_dir_taken = true;
	if (getcwd(lc_start_dir, sizeof(lc_start_dir) - 1)) {
		n = strlen(lc_start_dir);
		if (n && lc_start_dir[n - 1] != '/')
			memcpy(lc_start_dir + n, "/", 2);
	} else {
		lc_start_dir[0] = '\0';
	}
}

static notrace int lc_path(void)
{
	lc_take_start_dir();
	if ((size_t)snprintf(fdr_path, sizeof(fdr_path), "%s%s%s.%d.fdr",
			     fdr_cfg.logfile_base[0] == '/' ? "" : lc_start_dir,
			     fdr_cfg.logfile_base, fdr_program, (int)fdr_pid) >= sizeof(fdr_path))
		return -ENAMETOOLONG;
	return 0;
}

/*
 * Choose the trace's path and get the file ready to be created; it is
 * created only when the process has something to record (trace_file.c).
 * A directory we cannot create files in is reported now, not at the
 * first record.
 */
static notrace int lc_open(void)
{
	char dir[sizeof(fdr_path)];
	char *slash;
	int err;

	if (lc_path() < 0) {
		fdr_say("fdrtrace: trace path too long (logfile_base '%s'); recording off\n",
			fdr_cfg.logfile_base);
		return -ENAMETOOLONG;
	}
	memcpy(dir, fdr_path, sizeof(dir));
	slash = strrchr(dir, '/');
	if (slash) {
		slash[slash == dir] = '\0';	/* "/x.fdr": the root */
		if (access(dir, W_OK | X_OK) < 0) {
			fdr_say("fdrtrace: cannot create trace file %s: %s; recording off\n",
				fdr_path, strerror(errno));
			return -errno;
		}
	}
	err = fdr_file_prepare();
	if (!err)
		err = fdr_file_write_header();	/* kept in memory until the file exists */
	if (err) {
		fdr_say("fdrtrace: cannot set up the trace file %s: %s; recording off\n",
			fdr_path, strerror(-err));
		return err;
	}
	return 0;
}

/* ---- finish ---- */

struct lc_nodes {
	struct fdr_buffer *node;
	uint32_t used, cap;
};

static notrace void lc_snap(struct fdr_thread *t, void *arg)
{
	struct lc_nodes *nodes = arg;
	struct fdr_buffer *node;

	/* let a hook that is storing a record on that thread finish it (bounded) */
	for (int i = 0; i < 100000 && t != &fdr_self && t->guard; i++)
		__asm__ __volatile__("pause");
	if (nodes->used == nodes->cap)
		return;
	node = &nodes->node[nodes->used++];
	fdr_snapshot_thread(t, node);
	atomic_fetch_add_explicit(&fdr_enqueued, 1, memory_order_relaxed);
	fdr_queue_push(node);
}

static notrace void lc_finish(uint8_t how)
{
	struct lc_nodes nodes;

	if (!lc_claim(FDR_PHASE_FINISHING)) {
		lc_wait_closing();
		return;
	}
	/*
	 * Snapshot nodes are allocated before any slot is locked: an owner
	 * may spin on its slot while holding a lock of the program's (an
	 * instrumented allocator's, say), and we must not need it then.
	 * The flush thread is done with them once it has been joined.
	 */
	nodes.cap = fdr_threads_slots_used() + 16;
	nodes.used = 0;
	nodes.node = calloc(nodes.cap, sizeof(*nodes.node));
	if (!nodes.node)
		nodes.cap = 0;
	fdr_flush_pending_snapshots();	/* with every partial buffer still its thread's */
	fdr_threads_foreach(lc_snap, &nodes, 0);
	fdr_flush_finish(how);
	if (!fdr_file_created()) {
		/* no instrumented function ran here (only API calls, say): no file */
		if (!fdr_has_records() && how != FDRTRACE_CLOSE_SIGNAL)
			lc_say_nothing_ran();
	} else if (fdr_cfg.verbosity >= 1 && !fdr_file_failed()) {
		lc_exit_line();
	}
	if (fdr_cfg.verbosity >= 2) {
		long long direct = fdr_file_direct_from();

		fdr_say("fdrtrace: %s: %llu buffers written, %u threads, %llu buffers dropped, "
			"frequency %llu Hz\n", fdr_path, (unsigned long long)fdr_totals.buffers,
			fdr_threads_seen(), (unsigned long long)fdr_totals.buffers_dropped,
			(unsigned long long)fdr_clock.freq);
		if (direct >= 0)
			fdr_say("fdrtrace: %s: written direct (O_DIRECT) from byte %lld on\n",
				fdr_path, direct);
	}
	fdr_file_close();
	free(nodes.node);
	/* release: pairs with the phase's acquire loads (state.h) */
	atomic_store_explicit(&fdr_phase, FDR_PHASE_DONE, memory_order_release);
}

/*
 * exit(): the program's buffered standard output and error go out before
 * the exit line, as the C library would write them just after this
 * handler. Before, in `prog >out 2>&1` the exit line came first, ahead of
 * all the output a program buffers to its end (sqlite3's .dump: a script
 * reading the file back choked on it). Only the C library's own streams,
 * as they were at start (lc_std: static objects, valid even once fclosed;
 * a FILE the program assigned to stdout may be freed by now), and only one
 * no other thread has locked: one blocked writing to a full pipe holds
 * it, and exit() itself never waits for that (glibc flushes without
 * locking). Not at exec or _exit, which discard what is buffered.
 */
static FILE *lc_std[2];

static notrace void lc_flush_stdio(void)
{
	FILE *const now[] = { stdout, stderr };

	for (size_t i = 0; i < FDR_ARRAY_SIZE(now); i++) {
		if (!now[i] || now[i] != lc_std[i] || ftrylockfile(now[i]))
			continue;
		fflush_unlocked(now[i]);
		funlockfile(now[i]);
	}
}

/*
 * The exit status, for the close record: an on_exit() handler registered
 * when recording starts (lc_start()), so after the loader's destructor
 * pass was registered, runs before it and so before lc_atexit() (see the
 * top of this file). A start from another library's constructor registers
 * it before that pass: the status then comes too late and the close says
 * "not known" rather than a wrong one.
 */
static _Atomic bool lc_status_known;
static int lc_status;
static bool lc_status_registered;

static notrace void lc_exit_status(int status, void *arg)
{
	(void)arg;
	lc_status = status;
	/* release: lc_status before the flag; pairs with lc_atexit()'s acquire load */
	atomic_store_explicit(&lc_status_known, true, memory_order_release);
}

/*
 * atexit() of a shared library is bound to it (__cxa_atexit with its
 * __dso_handle): the finish runs when the loader finalizes libfdrtrace,
 * after the program's destructors and before those of the libraries it
 * needs (liburcu, libgcc_s, the sanitizers' leak check). An on_exit()
 * handler would run after all of them.
 */
static notrace void lc_atexit(void)
{
	if (lc_end_unstarted())
		return;
	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) == FDR_PHASE_RECORDING &&
	    atomic_load_explicit(&lc_status_known, memory_order_acquire))
		fdr_set_end(FDRTRACE_END_EXITED, (uint32_t)lc_status & 0xffu);
	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) == FDR_PHASE_RECORDING &&
	    fdr_cfg.verbosity >= 1)
		lc_flush_stdio();
	lc_finish(FDRTRACE_CLOSE_EXIT);
}

notrace bool fdr_before_exec(const char *path)
{
	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) != FDR_PHASE_RECORDING)
		return false;
	/* a vfork or posix_spawn child runs in our memory but is not us: leave it alone */
	if ((pid_t)syscall(SYS_getpid) != fdr_pid)
		return false;
	fdr_flush_note_exec(path, (uint32_t)syscall(SYS_gettid), fdr_clock_read(&(unsigned){ 0 }));
	fdr_set_end(FDRTRACE_END_EXECED, 0);
	lc_finish(FDRTRACE_CLOSE_EXIT);
	return fdr_file_created();
}

/*
 * creds.c: the program is about to change its identity (set*id,
 * setgroups, initgroups) or root (chroot). A trace not named yet is named
 * now, while the process may still link a file into the trace's
 * directory: after the change it may not (a root daemon's workers
 * becoming nobody lost their whole trace). Nothing to do in a vfork
 * child, when not recording, or for a trace already named.
 */
notrace void fdr_before_identity_change(void)
{
	/*
	 * Not started yet (no hook ran): start now, while the process may
	 * still create its trace where it was asked to (a daemon's worker
	 * drops its privileges before its first traced call).
	 */
	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) == FDR_PHASE_ARMED)
		fdr_start_lazy();
	/*
	 * The start records read the program's modules (/proc/self/exe,
	 * their files): before a chroot or a lost privilege hides them. The
	 * start writes them itself; where it could not (fl_spawn()), the
	 * flush thread does, and it does not wait for that otherwise.
	 */
	fdr_flush_started_wait(2000);
	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) != FDR_PHASE_RECORDING ||
	    (pid_t)syscall(SYS_getpid) != fdr_pid || fdr_file_locked_here())
		return;
	/*
	 * The lock even when the file looks created: the flush thread takes
	 * "created" (fw_pending cleared) before it links the file, under the
	 * lock. Looked at without it, a chroot could go ahead between the two,
	 * and the link, made inside the new root, failed: no trace at all
	 * (children::a_process_that_chroots... once, at load 5).
	 */
	if (!fdr_file_lock(20000))
		return;
	if (!fdr_file_created())
		fdr_file_create();
	fdr_file_unlock();
}

/* ---- the pool's size ---- */

/*
 * The most buffers the pool may grow to (docs/recording.md, "The pool"):
 * in stream policy pool_max bytes, by default an eighth of physical
 * memory; buffer_max alone (pool_max not given) fixes the pool, as does
 * ring policy (the ring is the pool, its size known up front).
 */
static notrace uint64_t lc_pool_limit(void)
{
	uint64_t bytes = fdr_cfg.pool_max, limit;

	if (fdr_cfg.policy != FDR_POLICY_STREAM ||
	    (fdr_config_was_set(&fdr_cfg, "buffer_max") && !fdr_config_was_set(&fdr_cfg, "pool_max")))
		return fdr_cfg.buffer_max;
	if (!bytes) {
		long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

		if (pages <= 0 || psize <= 0)
			return fdr_cfg.buffer_max;
		bytes = (uint64_t)pages * (uint64_t)psize / 8;
	}
	limit = bytes / fdr_cfg.buffer_size;
	if (limit > (1ull << 20))
		limit = 1ull << 20;	/* buffer_max's own ceiling */
	return limit > fdr_cfg.buffer_max ? limit : fdr_cfg.buffer_max;
}

/* ---- start ---- */

static notrace void lc_off(void)
{
	/* release: pairs with the gate's acquire loads (state.h) */
	atomic_store_explicit(&fdr_gate, FDR_GATE_OFF, memory_order_release);
	/* release: pairs with the phase's acquire loads (state.h) */
	atomic_store_explicit(&fdr_phase, FDR_PHASE_OFF, memory_order_release);
}

/*
 * Recording off after a failure at start: the gate never opened, so no
 * hook used the pool or the id map; unmapped, the program running untraced
 * gets that address space back (`ulimit -v`: pigz under 60 MB could map 7
 * MiB traced-but-off, 54 untraced; now 45).
 */
static notrace void lc_start_failed(void)
{
	lc_off();
	fdr_pool_release();
	fdr_funcid_release();
}

/* A fork child's part of the start: its own file and flush thread. */
static notrace void lc_start_child(void)
{
	lc_child_pending = false;
	fdr_start_ns = fdr_clock_ns(CLOCK_REALTIME);
	fdr_start_tsc = fdr_clock_read(&(unsigned){ 0 });
	/* release: pairs with the phase's acquire loads (state.h) */
	atomic_store_explicit(&fdr_phase, FDR_PHASE_RECORDING, memory_order_release);
	if (lc_open() < 0 || fdr_flush_start_child() < 0) {
		fdr_file_close();
		lc_off();
		return;
	}
	/* release: the child's set-up before any hook sees the gate open */
	atomic_store_explicit(&fdr_gate, fdr_gate_rec, memory_order_release);
}

/* The whole start, on the thread of the process's first hook or API call. */
static notrace void lc_start(void)
{
	int err;

	if (!lc_status_registered) {
		/* inherited by fork children: once per process image */
		lc_status_registered = true;
		on_exit(lc_exit_status, NULL);
	}

	fdr_clock_begin(fdr_cfg.clock);
	fdr_all_slow = fdr_cfg.max_depth != 0;
	fdr_filtering = fdr_cfg.filter[0] || fdr_cfg.exclude[0];
	if (fdr_filtering && fdr_filter_init() < 0)
		fdr_filtering = false;
	fdr_pid = lc_armed_pid;
	fdr_start_ns = fdr_clock_ns(CLOCK_REALTIME);
	lc_program_name();
	err = fdr_pool_init(fdr_cfg.buffer_size, fdr_cfg.buffer_max, lc_pool_limit());
	if (!err)
		err = fdr_funcid_init();
	if (!err)
		err = fdr_registry_init();
	if (!err)
		err = fdr_rtbuf_init(&lc_sig_rb, 0);
	if (err) {
		fdr_say("fdrtrace: cannot set up the trace buffers (%llu x %llu bytes): %s; recording off\n",
			(unsigned long long)fdr_cfg.buffer_max,
			(unsigned long long)fdr_cfg.buffer_size, strerror(-err));
		lc_start_failed();
		return;
	}
	fdr_fd_floor_init();	/* before anything we keep open: the trace, libunwind's pipe */
	fdr_clock_finish();	/* the frequency: before the header and the durations below */
	fdr_start_tsc = fdr_clock_read(&(unsigned){ 0 });
	fdr_read_cmdline();
	if (fdr_cfg.func_duration_threshold_us) {
		__extension__ unsigned __int128 ticks = fdr_cfg.func_duration_threshold_us;

		fdr_min_ticks = (uint64_t)(ticks * fdr_clock.freq / 1000000u);
	}
	fdr_trigger_init();	/* durations become ticks */
	fdr_ax_init();		/* auto_exclude: after the triggers, whose functions it keeps timed */
	if (lc_open() < 0) {
		lc_start_failed();
		return;
	}
	/*
	 * libgcc's unwinder: on_full=wait asks it whether a hook runs in a
	 * handler from the first record on, so it is found now; else the
	 * flush thread finds it as it starts, before it lets a fork in (a
	 * fork's stack is its only other use), and off this thread's start.
	 */
	if (fdr_cfg.on_full == FDR_ON_FULL_WAIT)
		fdr_sysunwind_init();
	/* release: pairs with the phase's acquire loads (state.h) */
	atomic_store_explicit(&fdr_phase, FDR_PHASE_RECORDING, memory_order_release);
	/*
	 * The process, configuration and module-map records are written
	 * here, in the flush thread's name, before it can take a buffer
	 * (fl_spawn()), so no function record can precede them, whenever the
	 * program dies; the gate opens without waiting for the thread.
	 * Started as early as it can be (it needs the file and the header's
	 * frequency), so that its own set-up (its descriptor table, the pages
	 * ahead) runs beside the rest of this one.
	 */
	err = fdr_flush_start();
	if (err) {
		fdr_say("fdrtrace: cannot start the flush thread: %s; recording off\n",
			strerror(-err));
		fdr_file_close();
		lc_start_failed();
		return;
	}
	fdr_native_init();	/* native stacks allowed: libunwind sets up at the first one */
	lc_install_signals();
	/* release: everything above before any hook sees the gate open */
	atomic_store_explicit(&fdr_gate, fdr_gate_rec, memory_order_release);
}

/*
 * Descriptors 0, 1 and 2 closed when the program starts (a daemon started
 * so, `prog >&- 2>&-`): what initialisation opens would take them for
 * good (libunwind's pipe for its memory checks took 1 and 2, so that the
 * program's standard output was that pipe's read end), and a program that
 * opens /dev/null to fill them would get other numbers. So each hole is
 * held for the time of initialisation (an O_PATH descriptor of "/": no
 * device needed, nothing read) and given back after it.
 * Return: the holes held, bit N for descriptor N.
 */
static notrace unsigned lc_hold_stdio(void)
{
	unsigned held = 0;

	for (int fd = 0; fd <= 2; fd++) {
		int got;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		got = open("/", O_PATH | O_CLOEXEC);	/* the lowest free: @fd */
		if (got != fd) {
			if (got >= 0)
				close(got);
			break;
		}
		held |= 1u << fd;
	}
	return held;
}

/*
 * fdr_start_lazy - start recording: the first hook's slow path (gate LAZY)
 * or an API call. One thread starts (CAS on lc_start_state), with every
 * signal blocked meanwhile, so that no handler of its own runs into a
 * half-made runtime; its own hooks during the start (instrumented code the
 * start calls) are counted as BEFORE_INIT drops. Another thread that comes
 * meanwhile waits for the start to end (it takes about a millisecond;
 * 1 s at most, then its call is counted as a BEFORE_INIT drop and the
 * next one tries again). Not started: by a vfork child (our memory, not
 * our pid), under a guard (a hook interrupted by a handler, an API call,
 * a vfork child's guard), after an exit that never started.
 * The start runs where the first hook runs: before main (a constructor),
 * in any thread, in a fork child (its part only). A first hook inside a
 * signal handler starts it there too: the start allocates, creates a
 * thread and maps files, which a handler that interrupted the C library
 * inside malloc or the loader could deadlock on (documented).
 */
notrace bool fdr_start_lazy(void)
{
	struct fdr_thread *t = &fdr_self;
	int saved_errno = errno;
	int expect = LC_START_IDLE;

	/* acquire: pairs with the phase's release stores (state.h) */
	if (t->guard || lc_starting_here ||
	    atomic_load_explicit(&fdr_phase, memory_order_acquire) != FDR_PHASE_ARMED) {
		if (lc_starting_here)
			atomic_fetch_add_explicit(&fdr_before_init_drops, 1, memory_order_relaxed);
		goto out;
	}
	if ((pid_t)syscall(SYS_getpid) != lc_armed_pid)
		goto out;
	/* acquire: pairs with the start state's release (lifecycle.c, LC_START_DONE) */
	if (atomic_compare_exchange_strong_explicit(&lc_start_state, &expect, LC_START_RUNNING,
						    memory_order_acq_rel, memory_order_acquire)) {
		sigset_t all, old;
		unsigned held;

		lc_starting_here = true;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (lc_child_pending) {
			lc_start_child();
		} else {
			held = lc_hold_stdio();
			lc_start();
			for (int fd = 0; fd <= 2; fd++)
				if (held & (1u << fd))
					close(fd);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		lc_starting_here = false;
		/* release: pairs with the waiters' acquire below */
		atomic_store_explicit(&lc_start_state, LC_START_DONE, memory_order_release);
	} else {
		struct timespec ts = { 0, 50000 };

		for (int i = 0; i < 20000 && atomic_load_explicit(&lc_start_state,
				memory_order_acquire) == LC_START_RUNNING; i++)
			nanosleep(&ts, NULL);
		/* acquire: pairs with the start state's release (lifecycle.c, LC_START_DONE) */
		if (atomic_load_explicit(&lc_start_state, memory_order_acquire) != LC_START_DONE)
			atomic_fetch_add_explicit(&fdr_before_init_drops, 1, memory_order_relaxed);
	}
out:
	errno = saved_errno;
	/* acquire: pairs with the gate's release stores (state.h) */
	return fdr_gate_recording(atomic_load_explicit(&fdr_gate, memory_order_acquire));
}

/*
 * What the record layer calls up to (drain.h): the start, and the flush
 * thread's side of a handover.
 */
static const struct fdr_drain lc_drain = {
	.start = fdr_start_lazy,
	.wake = fdr_flush_wake,
	.recorded = fdr_flush_wake_recorded,
	.queued = fdr_flush_queued,
	.starved = fdr_flush_starved,
	.wait_buffer = fdr_flush_wait_buffer,
	.wait_stalled = fdr_flush_wait_stalled,
	.running = fdr_flush_running,
	.trigger = fdr_flush_request_trigger,
};

/*
 * The constructor: cheap checks only. The configuration (off: nothing
 * more), the clock's start pair (no system call), the exit and fork
 * handlers, and the gate set LAZY: the first hook starts the rest
 * (fdr_start_lazy()). A process that never runs an instrumented function
 * leaves no file, starts no thread, maps no pool and calibrates nothing.
 */
static notrace void lc_init(int argc, char **argv)
{
	int saved = errno;

	/* acquire: pairs with the phase's release stores (state.h) */
	if (atomic_load_explicit(&fdr_phase, memory_order_acquire) != FDR_PHASE_INIT)
		return;
	fdr_drain_connect(&lc_drain);	/* before the gate opens: the slow path's way up */
	fdr_say_init();	/* first: a standard error closed now stays closed to messages */
	fdr_config_load(&fdr_cfg);
	fdr_say_silent = fdr_cfg.verbosity < 1;
	if (!fdr_cfg.enabled) {
		lc_off();
		errno = saved;
		return;
	}
	fdr_clock_anchor();
	fdr_note_args(argc, argv);	/* the command line, read at the start without /proc */
	lc_armed_pid = getpid();
	if (fdr_cfg.logfile_base[0] != '/')
		lc_take_start_dir();	/* where the program started, whenever it records */
	if (!lc_handlers_registered) {
		lc_handlers_registered = true;
		pthread_atfork(lc_prefork, lc_postfork_parent, lc_postfork_child);
		atexit(lc_atexit);
		lc_std[0] = stdout;
		lc_std[1] = stderr;
	}
	/* release: pairs with the phase's acquire loads (state.h) */
	atomic_store_explicit(&fdr_phase, FDR_PHASE_ARMED, memory_order_release);
	/* release: pairs with the gate's acquire loads (state.h) */
	atomic_store_explicit(&fdr_gate, FDR_GATE_LAZY, memory_order_release);
	errno = saved;
}

/*
 * A program linked with libfdrtrace.a takes interpose/exec.c's object only
 * for a symbol it needs: held here, the exec interposers (the trace closed
 * before the image is replaced) come with the constructor, as they come
 * with the shared library.
 */
__attribute__((used)) static int (*const lc_keep_exec)(const char *, char *const[],
						       char *const[]) = execve;

/* glibc calls constructors with (argc, argv, envp), as the main program's main(). */
__attribute__((constructor(101))) notrace void fdr_lifecycle_ctor(int argc, char **argv,
								  char **envp)
{
	(void)envp;
	lc_init(argc, argv);
}

