// SPDX-License-Identifier: MIT
/*
 * runtime/unwind/native_stack.c - native stacks through libunwind's local
 * unwinder.
 *
 * Contract:
 *   - fdr_native_init() (at initialisation) only allows stacks from then
 *     on. libunwind's own one-time set-up (tdep_init: the local address
 *     space, memory validation and its pipe; the register-state cache's
 *     memory) happens at the first stack taken, whichever it is: nothing
 *     is unwound at the start (2026-12-02: that walk cost every traced
 *     process 65-100 us and 12 page faults of its start, for a crash
 *     stack most never take). The set-up is as safe in the handler as the
 *     unwind itself (below): tdep_init takes its lock with every signal
 *     blocked, maps its pools with mmap, opens its pipe with pipe2 and
 *     probes with mincore; no malloc, no stdio.
 *   - fdr_native_from_signal() runs in the fatal-signal handler, on the
 *     faulting thread. It calls only unw_init_local2(), unw_get_reg() and
 *     unw_step(), which libunwind(3) documents as safe in a signal handler
 *     for local unwinding. Why that holds in libunwind 1.6 (Debian 12),
 *     and what it leaves (tests/reliability/check_signal_safety.py lists
 *     the three calls with these reasons):
 *       - no malloc: libunwind's pools take memory with mmap;
 *       - its locks (the global cache, the pools) are taken with every
 *         signal blocked, so our handler never runs on a thread that holds
 *         one, and a thread that faults inside one dies of the blocked
 *         signal without a handler; another thread holding one lets go;
 *       - unw_step() finds unwind tables with dl_iterate_phdr(), whose
 *         loader lock is recursive: a thread that faulted inside the
 *         loader takes it again, others wait for it to be released;
 *       - we keep the default caching policy (global): changing it would
 *         change the program's own use of libunwind.
 *     A module without .eh_frame_hdr would make libunwind read its
 *     .debug_frame from the file (with malloc): none of Debian's do.
 *   - fdr_native_here() is for ordinary threads (fdrtrace_start()).
 *   - A stack taken before the flush thread has reported any module (the
 *     first moments of the run) waits for it a little (100 ms in the
 *     handler, 200 ms in fdrtrace_start(); nanosleep), so that its frames
 *     get module ids.
 *   - libunwind's validation pipe: libunwind 1.6 opens a pipe at its first
 *     unwind (the two lowest free descriptors then; in the fatal-signal
 *     handler, where the process dies, it is left there)
 *     and, when it must check an address (a frame without unwind
 *     information, the outermost frames), reads a byte from the pipe's
 *     read end and writes one byte at the address to its write end. A
 *     program may have put its own files at those numbers since (a
 *     shell's `exec 3>file 4>file`): libunwind then read from one and
 *     wrote a byte of memory into the other (seen: bytes appended to a
 *     user's file at a crash). So the pipe is noted after set-up
 *     (native_pipe_note(), by the first fdr_native_here()) and its ends
 *     moved high (native_pipe_move(),
 *     fdr_fd_high()), which gives the program its usual numbers back.
 *     Before each unwind (native_pipe_guard()) the ends are lent back at
 *     libunwind's numbers, where these are free; in the fatal-signal
 *     handler, where the process is about to die, over the program's
 *     descriptors there too. In fdrtrace_start() (the program goes on),
 *     no stack is taken when the program has a descriptor there. When our
 *     ends are gone (a close-all), the dying handler closes the program's
 *     descriptors at libunwind's numbers, and libunwind, whose read then
 *     fails, opens a new pipe (noted and moved again). A pipe that was
 *     not where expected is not guarded.
 *   - Module ids: the flush thread tells us each module it reports in a
 *     module_map record (fdr_native_module_mapped()); we keep their spans in
 *     a fixed table (no allocation) that the handler reads lock-free. A
 *     frame in a module not reported yet gets FDR_MODULE_UNKNOWN.
 *
 * Memory ordering: a table entry is written, then published by a release
 * store of native_count; readers load native_count with acquire. An unmapping
 * clears the entry's size (relaxed: a stale read names a module that was
 * just unmapped, which is what the address was in anyway).
 */
#define UNW_LOCAL_ONLY
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compiler.h"
#include "fd_high.h"
#include "modules.h"
#include "native_stack.h"

#define NS_MODS 1024u

struct native_mod {
	uint64_t start;
	_Atomic uint64_t size;
	uint32_t id;
};

static struct native_mod native_mods[NS_MODS];
static _Atomic uint32_t native_count;
static bool native_ready;	/* stacks allowed (fdr_native_init()) */
/*
 * The first stack of an ordinary thread (fdr_native_here()) was claimed:
 * the one that set it (exchange) notes libunwind's pipe after its unwind.
 * A stack taken meanwhile, or in the fatal-signal handler first, just
 * unwinds (libunwind's own lock serialises its set-up); its pipe is then
 * not noted (not guarded), as any pipe not where expected.
 */
static _Atomic bool native_first_taken;

notrace void fdr_native_module_mapped(uint32_t id, uint64_t start, uint64_t size)
{
	uint32_t n = atomic_load_explicit(&native_count, memory_order_relaxed);

	if (n == NS_MODS)
		return;	/* frames in it are written with an unknown module */
	native_mods[n].start = start;
	native_mods[n].id = id;
	atomic_store_explicit(&native_mods[n].size, size, memory_order_relaxed);
	/* release: the entry before the count that covers it */
	atomic_store_explicit(&native_count, n + 1, memory_order_release);
}

notrace void fdr_native_module_unmapped(uint32_t id)
{
	uint32_t n = atomic_load_explicit(&native_count, memory_order_acquire);

	for (uint32_t i = 0; i < n; i++)
		if (native_mods[i].id == id)
			atomic_store_explicit(&native_mods[i].size, 0, memory_order_relaxed);
}

notrace void fdr_native_reset(void)
{
	atomic_store_explicit(&native_count, 0, memory_order_release);
}

static notrace uint32_t native_module_of(uint64_t addr)
{
	uint32_t n = atomic_load_explicit(&native_count, memory_order_acquire);

	for (uint32_t i = 0; i < n; i++) {
		uint64_t size = atomic_load_explicit(&native_mods[i].size, memory_order_relaxed);

		if (addr >= native_mods[i].start && addr - native_mods[i].start < size)
			return native_mods[i].id;
	}
	return FDR_MODULE_UNKNOWN;
}

notrace uint32_t fdr_native_module_of(uint64_t addr)
{
	return native_module_of(addr);
}

/* ---- libunwind's validation pipe (see the contract above) ---- */

#define NS_FD_SCAN 4096

static int native_pipe[2] = { -1, -1 };	/* libunwind's numbers for its pipe */
static int native_keep[2] = { -1, -1 };	/* where its ends are kept (high) */
static dev_t native_pipe_dev;
static ino_t native_pipe_ino;

/* The two lowest descriptors not open, where pipe2() puts a new pipe ({-1, -1}: none). */
static notrace void native_lowest_free(int fds[2])
{
	int n = 0;

	fds[0] = fds[1] = -1;
	for (int fd = 0; n < 2 && fd < NS_FD_SCAN; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			fds[n++] = fd;
	if (n < 2)
		fds[0] = -1;
}

/* Note @fds as libunwind's pipe when they are both ends of one, else leave the note. */
static notrace bool native_pipe_note(const int fds[2])
{
	struct stat r, w;

	if (fds[0] < 0 || fstat(fds[0], &r) || fstat(fds[1], &w) || !S_ISFIFO(r.st_mode) ||
	    r.st_dev != w.st_dev || r.st_ino != w.st_ino)
		return false;
	native_pipe_dev = r.st_dev;
	native_pipe_ino = r.st_ino;
	native_pipe[0] = native_keep[0] = fds[0];
	native_pipe[1] = native_keep[1] = fds[1];
	return true;
}

/* The noted pipe's ends moved high: libunwind's numbers are the program's again. */
static notrace void native_pipe_move(void)
{
	for (int i = 0; i < 2; i++)
		native_keep[i] = fdr_fd_high(native_pipe[i]);
}

static notrace bool native_is_pipe(int fd)
{
	struct stat st;

	return fd >= 0 && !fstat(fd, &st) && S_ISFIFO(st.st_mode) && st.st_dev == native_pipe_dev &&
	       st.st_ino == native_pipe_ino;
}

/*
 * Before an unwind: make libunwind's numbers its pipe, or closed, never a
 * file of the program's. @dying: the process dies after this (the
 * fatal-signal handler), so the program's descriptors there may be
 * replaced or closed. @lent gets the numbers our ends were lent at (to
 * close after the unwind, native_pipe_after()); @next where a new pipe would
 * go when libunwind must open one. Async-signal-safe (fstat, fcntl, dup2,
 * close). Return: whether to unwind.
 */
static notrace bool native_pipe_guard(bool dying, bool lent[2], int next[2])
{
	bool kept = native_is_pipe(native_keep[0]) && native_is_pipe(native_keep[1]);

	lent[0] = lent[1] = false;
	next[0] = next[1] = -1;
	if (native_pipe[0] < 0)
		return true;
	for (int i = 0; i < 2; i++) {
		if (native_is_pipe(native_pipe[i]))
			continue;
		if (!dying && fcntl(native_pipe[i], F_GETFD) >= 0)
			return false;	/* the program's file: never read or written by us */
	}
	for (int i = 0; i < 2; i++) {
		if (native_is_pipe(native_pipe[i]))
			continue;
		if (kept && dup2(native_keep[i], native_pipe[i]) == native_pipe[i]) {
			/* no exec may inherit it (another thread's, meanwhile) */
			fcntl(native_pipe[i], F_SETFD, FD_CLOEXEC);
			lent[i] = !dying;
			continue;
		}
		close(native_pipe[i]);	/* dying: libunwind's read fails, and it opens a new pipe */
		kept = false;
	}
	if (!kept)
		native_lowest_free(next);
	return true;
}

/* After an unwind: the lent numbers given back, a new pipe noted and moved high. */
static notrace void native_pipe_after(const bool lent[2], const int next[2])
{
	for (int i = 0; i < 2; i++)
		if (lent[i])
			close(native_pipe[i]);
	if (next[0] >= 0 && !native_is_pipe(native_pipe[0]) && native_pipe_note(next))
		native_pipe_move();
}

/* Walk @cur outwards; frames before the one at @from are skipped (0: none). */
static notrace uint32_t native_walk(unw_cursor_t *cur, uintptr_t from, uint64_t *addrs,
				    uint32_t *mods, uint32_t max)
{
	uint32_t n = 0, skipped = 0;
	bool found = !from;

	do {
		unw_word_t ip;

		if (unw_get_reg(cur, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		if (!found) {
			if ((uintptr_t)ip != from) {
				if (++skipped > 16)
					break;	/* not on this stack: nothing rather than our frames */
				continue;
			}
			found = true;
		}
		addrs[n] = ip;
		mods[n] = native_module_of(ip);
		n++;
	} while (n < max && unw_step(cur) > 0);
	return found ? n : 0;
}

/*
 * The flush thread reports the modules when it starts: a stack taken before
 * that (a crash, an fdrtrace_start() in the first moments) waits for it, at
 * most @ms milliseconds. Async-signal-safe (nanosleep).
 */
static notrace void native_wait_modules(unsigned ms)
{
	for (unsigned i = 0; i < ms * 10 && !atomic_load_explicit(&native_count, memory_order_acquire);
	     i++) {
		struct timespec ts = { 0, 100000 };

		nanosleep(&ts, NULL);
	}
}

notrace uint32_t fdr_native_from_signal(void *uc, uint64_t *addrs, uint32_t *mods, uint32_t max)
{
	unw_cursor_t cur;
	uint32_t n = 0;
	bool lent[2];
	int next[2], saved;

	if (!native_ready || !uc || !max)
		return 0;
	saved = errno;	/* the probes' EBADF, libunwind's EAGAIN: not the program's errno */
	native_wait_modules(100);
	native_pipe_guard(true, lent, next);
	/* on x86-64 libunwind's unw_context_t is the kernel's ucontext_t */
	if (unw_init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) >= 0)
		n = native_walk(&cur, 0, addrs, mods, max);
	native_pipe_after(lent, next);
	errno = saved;
	return n;
}

notrace uint32_t fdr_native_here(uintptr_t from, uint64_t *addrs, uint32_t *mods, uint32_t max)
{
	unw_context_t ctx;
	unw_cursor_t cur;
	uint32_t n = 0;
	bool lent[2], first;
	int next[2], fds[2], saved;

	if (!native_ready || !max)
		return 0;
	native_wait_modules(200);
	saved = errno;
	/* relaxed: one claims the note; the pipe itself is checked by fstat (native_pipe_note()) */
	first = !atomic_exchange_explicit(&native_first_taken, true, memory_order_relaxed);
	if (first)
		native_lowest_free(fds);	/* where libunwind's set-up will put its pipe */
	if (native_pipe_guard(false, lent, next)) {
		if (unw_getcontext(&ctx) >= 0 && unw_init_local(&cur, &ctx) >= 0)
			n = native_walk(&cur, from, addrs, mods, max);
		native_pipe_after(lent, next);
	}
	if (first && native_pipe_note(fds))
		native_pipe_move();	/* the program's numbers given back */
	errno = saved;
	return n;
}

notrace void fdr_native_init(void)
{
	native_ready = true;
}
