// SPDX-License-Identifier: MIT
/*
 * runtime/flush/placement.c - where the flush thread runs: its scheduler
 * slice, the CPU it starts on, its moves round the CPUs, and its own
 * descriptor table.
 *
 * Contract: the flush thread calls these (fl_leave_pin(), then
 * fl_place_set_up(), once, as its first wait ends; fl_spread() after a
 * drain), but for fl_pin_here() and fl_unpin() around the starter's
 * pthread_create() (fl_spawn(), under fl_mutex). A fork child resets what
 * was the parent thread's (fl_place_reset_child()). Nothing here calls
 * another file of the flush layer.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "flush_internal.h"
#include "say.h"
#include "trace_file.h"

static bool fl_pinned;		/* fl_pin_here() narrowed the starter's mask to one CPU */
static cpu_set_t fl_start_mask;	/* the starter's mask before */

/*
 * A short scheduler slice for the flush thread (Linux 6.12 and later,
 * EEVDF: sched_attr.sched_runtime of a SCHED_OTHER thread, allowed
 * unprivileged). Its CPU share stays what its weight gives it; what
 * changes is that when it wakes with full buffers to write, its earlier
 * deadline lets it preempt a thread of the program now, instead of
 * after that thread's slice (several ms, longer on a busy machine, while
 * the pool fills). Older kernels refuse or ignore it: nothing changes.
 * The thread's nice value is kept (sched_setattr sets it too).
 */
#define FL_SLICE_NS 300000ull

static notrace void fl_short_slice(void)
{
	struct {
		uint32_t size, policy;
		uint64_t flags;
		int32_t nice;
		uint32_t priority;
		uint64_t runtime, deadline, period;
	} attr = { .size = sizeof(attr), .policy = 0 /* SCHED_OTHER */ };
	int nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
	if (nice == -1 && errno)
		return;
	if (sched_getscheduler(0) != SCHED_OTHER)
		return;	/* the program chose a policy for its threads: keep it */
	attr.nice = nice;
	attr.runtime = FL_SLICE_NS;
	syscall(SYS_sched_setattr, 0, &attr, 0);
}

/*
 * Moving round the CPUs. On a machine whose every CPU runs a thread of
 * the program (2 threads on 2 cores), the scheduler keeps the flush
 * thread where it last ran: woken there, it preempts the same program
 * thread each time and never migrates, the imbalance (a sixth of a
 * core) being below what the load balancer moves a thread for. That
 * thread then pays the whole cost of writing the trace: measured with
 * bench/overhead.py (2 threads), one ran at 1.01x the reference per
 * call and the other at 1.38x, and a program waits for its slowest
 * thread. So after each FL_SPREAD_NS of its own CPU time, if it spent at
 * least an eighth of that time waiting for a CPU (runnable, not running:
 * /proc/thread-self/schedstat; half of it with 2 threads on 2 cores, 1%
 * with 1 thread), the flush thread moves to the next CPU it may run on:
 * its affinity set to that CPU alone, then back to the whole set, read
 * just before, so the program's or the user's choice of CPUs is kept and
 * the scheduler places it freely on its next wake-up. The cost is then
 * shared by every thread of the program (1.22x each). A flush thread
 * with a CPU to itself never moves; neither does one whose set is a
 * single CPU, or where schedstat cannot be read (no /proc, or no
 * descriptor table of its own). About 30 us (four system calls and a
 * migration) once per ms of writing.
 */
#define FL_SPREAD_NS 1000000ull

/*
 * @cpu_ns repeats schedstat's run time, read from the thread's CPU clock:
 * the check after every drain costs one clock_gettime, and schedstat is
 * read (a proc file generated each time) once per FL_SPREAD_NS only.
 */
static struct {
	uint64_t cpu_ns;	/* this thread's CPU time at the last look */
	uint64_t run_ns, wait_ns;	/* schedstat then */
} fl_spread_last;
/*
 * This thread's /proc/thread-self/schedstat, opened as it starts (before
 * the program runs: the runtime opens no file while it does) and only in
 * a descriptor table of its own (fl_own_files()), so that no close-all of
 * the program's can close it or give its number to another file. -1: no
 * moves.
 */
static int fl_sched_fd = -1;

/* This thread's time running and waiting to run (ns), from schedstat. Return: 0 or -1. */
static notrace int fl_schedstat(uint64_t *run_ns, uint64_t *wait_ns)
{
	char text[96], *end, *next;
	ssize_t n;

	if (fl_sched_fd < 0)
		return -1;
	n = pread(fl_sched_fd, text, sizeof(text) - 1, 0);
	if (n <= 0)
		return -1;
	text[n] = 0;
	*run_ns = strtoull(text, &end, 10);
	if (end == text || *end != ' ')
		return -1;
	*wait_ns = strtoull(end + 1, &next, 10);
	return next == end + 1 ? -1 : 0;
}

notrace void fl_spread(void)
{
	uint64_t now = fdr_clock_ns(CLOCK_THREAD_CPUTIME_ID), run, wait, dr, dw;
	cpu_set_t all, one;
	int cur, next;

	if (now - fl_spread_last.cpu_ns < FL_SPREAD_NS)
		return;
	fl_spread_last.cpu_ns = now;
	if (fl_schedstat(&run, &wait))
		return;
	dr = run - fl_spread_last.run_ns;
	dw = wait - fl_spread_last.wait_ns;
	fl_spread_last.run_ns = run;
	fl_spread_last.wait_ns = wait;
	if (dw < dr / 8)
		return;	/* a CPU of its own, near enough */
	cur = sched_getcpu();
	if (cur < 0 || cur >= CPU_SETSIZE || sched_getaffinity(0, sizeof(all), &all) ||
	    CPU_COUNT(&all) < 2)
		return;
	next = cur;
	do
		next = (next + 1) % CPU_SETSIZE;
	while (!CPU_ISSET(next, &all));
	CPU_ZERO(&one);
	CPU_SET(next, &one);
	if (!sched_setaffinity(0, sizeof(one), &one))
		sched_setaffinity(0, sizeof(all), &all);
}

/* Close descriptors @lo to @hi of this thread's table. */
static notrace void fl_close_range(unsigned lo, unsigned hi)
{
	long max;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, lo, hi, 0) == 0)
		return;
#endif
	max = sysconf(_SC_OPEN_MAX);	/* a kernel before 5.9: one by one */
	if (max < 0 || max > 65536)
		max = 65536;
	for (long fd = lo; fd <= (long)hi && fd < max; fd++)
		close((int)fd);
}

/*
 * The flush thread's own descriptor table: a copy (unshare(CLONE_FILES))
 * that keeps only the trace's descriptors. What it opens from here on
 * (module files for names, snapshots, a trace created by name) takes no
 * number the program counts on, and a program that closes or reuses
 * descriptors it did not open (a daemon's close-all, closefrom(3)) does
 * not touch the copies this thread writes through. It holds nothing else
 * but descriptor 2 when that is a regular file (say.c): no pipe or socket
 * of the program's is held open by it. Where unshare is refused (a
 * seccomp filter), the table stays shared, as before. Other threads
 * (the fatal-signal handler, the finisher once this thread has ended)
 * write through the process's table, checking the descriptor is still
 * the trace's (own.c, fw_ours()).
 */
static notrace bool fl_own_files(void)
{
	int keep[3], n = fdr_file_fds(keep), say = fdr_say_keep();
	unsigned from = 0;

	if (unshare(CLONE_FILES))
		return false;
	fdr_say_private(say >= 0);
	if (say >= 0)
		keep[n++] = say;
	for (int i = 1; i < n; i++)	/* ascending */
		for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		if ((unsigned)keep[i] > from)
			fl_close_range(from, (unsigned)keep[i] - 1);
		from = (unsigned)keep[i] + 1;
	}
	fl_close_range(from, ~0u);
	return true;
}

/*
 * The flush thread starts on its starter's CPU (2026-12-02): the starter
 * narrows its own mask to the CPU it runs on for the pthread_create()
 * (the new thread inherits it) and puts its mask back right after; the
 * thread leaves that CPU and takes the same mask back when its first
 * wait ends (fl_first_wait(): 5 ms, or sooner when there is work;
 * fl_leave_pin()). Until then it
 * shares the starter's CPU, where it is woken without an inter-processor
 * interrupt: a process that ends within its first 5 ms (a build's
 * compiler driver, a shell's command) paid for a thread waiting on an
 * idle CPU twice, at its creation and when its exit woke it to end it
 * (50-70 us each in a VM, where such a wake-up exits to the hypervisor):
 * 150 us of a tiny traced process's 0.8 ms. Nothing when the starter may
 * run on one CPU only. A mask another thread of the program set on the
 * starter meanwhile (within a system call) is overwritten by the old one.
 * Caller: the starter, with its signals blocked; then the thread.
 */
notrace void fl_pin_here(void)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	fl_pinned = false;
	if (cpu < 0 || cpu >= CPU_SETSIZE ||
	    sched_getaffinity(0, sizeof(fl_start_mask), &fl_start_mask) ||
	    CPU_COUNT(&fl_start_mask) < 2 || !CPU_ISSET(cpu, &fl_start_mask))
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	fl_pinned = !sched_setaffinity(0, sizeof(one), &one);
}

notrace void fl_unpin(void)
{
	if (fl_pinned)
		sched_setaffinity(0, sizeof(fl_start_mask), &fl_start_mask);
}

/*
 * The thread, as its first wait ends: off the starter's CPU at once where
 * the starter's mask has another (that mask without this CPU, which
 * moves it now, then the whole mask back), so that its set-up and its
 * first drains do not run where the program runs. Put back on the whole
 * mask only, it stayed there: a program starved of buffers
 * (buffer_max=2) woke it on its own CPU again and again, and bash's
 * read_token_word, 1 ms of self time lossless, took 4.9 ms in one run.
 */
notrace void fl_leave_pin(void)
{
	cpu_set_t rest = fl_start_mask;
	int cpu = sched_getcpu();

	if (!fl_pinned)
		return;
	if (cpu >= 0 && cpu < CPU_SETSIZE)
		CPU_CLR(cpu, &rest);
	if (CPU_COUNT(&rest) > 0)
		sched_setaffinity(0, sizeof(rest), &rest);
	sched_setaffinity(0, sizeof(fl_start_mask), &fl_start_mask);
}

notrace void fl_place_set_up(void)
{
	fl_short_slice();
	if (fl_own_files())
		fl_sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

notrace void fl_place_reset_child(void)
{
	fl_sched_fd = -1;	/* the parent's flush thread's table: not here (fl_place_set_up()) */
	memset(&fl_spread_last, 0, sizeof(fl_spread_last));	/* a new thread's times start at 0 */
}
