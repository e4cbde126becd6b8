// SPDX-License-Identifier: MIT
/*
 * runtime/fork_stack.c - the calls open at a fork, for the child's trace.
 *
 * A fork child's trace starts at the fork, inside the calls its thread had
 * open there (main, the function that called fork(), those between).
 * Their exits come in the child's records; without their entries a reader
 * counts them as exits without entry, and the child's calls have no
 * callers. The ring policy knows these calls (ring.c keeps each thread's
 * stack at its buffers' ends); the stream policy's hooks keep no stack, as
 * they would pay for it on every call. So in stream policy the fork's
 * prepare handler takes them from the machine stack: the system's unwinder
 * (libgcc's, the one C++ exceptions use) walks the forking thread's
 * frames; each frame's function start (the initial location of its
 * unwind information, _Unwind_GetRegionStart()) is looked up among the function
 * ids already given (fdr_funcid_find(): never a new id); the frames of
 * instrumented functions, outermost first, are the calls open. The child
 * writes them as a stack record (FDRTRACE_EXT_STACK without a buffer
 * position) after the preamble of its thread's first buffer, where the
 * ring policy writes its own, and readers push them as calls entered
 * before the trace.
 *
 * What the machine stack does not show is left out, and its exit in the
 * child is counted as before (an exit without entry): an instrumented
 * function inlined into another (gcc instruments inlined bodies; they have
 * no frame of their own), a frame in a function's split-off cold part (its
 * start is the part's), frames beyond FDR_FORK_FRAMES (the outermost), a
 * function the filters exclude. No stack is taken with max_depth or
 * triggers (their slow path decides call by call what is recorded), while
 * recording is off, when the program holds a descriptor at libunwind's
 * pipe numbers (native_stack.c), when the fork comes from a signal handler
 * that interrupted a hook or an API call on this thread, or when another
 * thread's fork is between its handlers.
 *
 * Why libgcc's unwinder and not libunwind, which takes the crash stacks
 * (native_stack.c): libunwind 1.6 blocks and unblocks every signal around
 * each look-up in its global cache, about 8 system calls a frame: 110 us
 * for a fork 13 frames deep, 240 us at 71 frames, 770 us at 256, in the
 * parent, at every fork (measured here). libgcc's finds unwind information
 * through glibc's _dl_find_object(), lock-free and without a system call,
 * and it needs no validation pipe: no descriptor of the program's to
 * guard. Its functions are taken from libgcc_s's own handle: libunwind
 * defines _Unwind_Backtrace() too, and whichever library comes first in
 * the search order would otherwise get the call. The shared libfdrtrace
 * needs libgcc_s.so.1, so it is loaded; with libfdrtrace.a, only when the
 * program loads it (C++, or gcc linked it in): else, and in a fully static
 * program, there is no fork stack. Never in a fatal-signal handler, where
 * libunwind's signal-safety is what counts; a fork's prepare handler is an
 * ordinary context unless a signal handler forks.
 *
 * Contract: fdr_fork_stack_take() runs in the prepare handler, in the
 * forking thread; the parent or child handler of the same fork ends its
 * use of fs_stk. fs_busy keeps a second thread's fork, should one run its
 * handlers meanwhile, from using fs_stk (it goes without a stack). In the
 * child, fs_for names the forking thread (the child's only thread when
 * the handler runs) until that thread's first buffer claim writes the
 * record or finds no buffer; other threads compare and go on.
 *
 * Cost: one unwind per fork, in the parent, before the fork
 * (docs/performance.md, "A fork's open calls").
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unwind.h>

#include <fdrtrace/format.h>

#include "ext_writer.h"
#include "fork_stack.h"
#include "funcid_map.h"
#include "runtime.h"

/* Frames walked per fork (the innermost); a deeper stack loses its outermost calls. */
#define FDR_FORK_FRAMES 256u

static _Atomic bool fs_busy;
static struct {
	struct fdr_thread *owner;	/* the forking thread, between its handlers */
	uint32_t depth;
	uint32_t ids[FDR_FORK_FRAMES];	/* outermost first */
} fs_stk;
static struct fdr_thread *fs_for;	/* child: the thread whose first buffer names them */

struct fs_walk {
	uintptr_t starts[FDR_FORK_FRAMES];	/* innermost first; 0: no unwind information */
	uint32_t n;
};

/* libgcc_s's, looked up at initialisation (fdr_fork_stack_init()); NULL: no fork stacks */
static _Unwind_Reason_Code (*fs_backtrace)(_Unwind_Trace_Fn, void *);
static _Unwind_Ptr (*fs_region_start)(struct _Unwind_Context *);

notrace void fdr_fork_stack_init(void)
{
	void *h = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *bt = h ? dlsym(h, "_Unwind_Backtrace") : NULL;
	void *rs = h ? dlsym(h, "_Unwind_GetRegionStart") : NULL;

	/* kept open: a libgcc_s that a plugin loaded stays while we may call it */
	if (bt && rs) {
		/* POSIX lets dlsym's data pointer become a function pointer */
		memcpy(&fs_backtrace, &bt, sizeof(fs_backtrace));
		memcpy(&fs_region_start, &rs, sizeof(fs_region_start));
	}
}

static notrace _Unwind_Reason_Code fs_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct fs_walk *w = arg;

	if (w->n == FDR_FORK_FRAMES)
		return _URC_END_OF_STACK;
	w->starts[w->n++] = (uintptr_t)fs_region_start(ctx);
	return _URC_NO_REASON;
}

notrace void fdr_fork_stack_take(void)
{
	struct fdr_thread *t = &fdr_self;
	struct fs_walk w;
	uint32_t depth = 0;

	if (fdr_cfg.policy != FDR_POLICY_STREAM || fdr_cfg.max_depth || fdr_triggering ||
	    atomic_load_explicit(&fdr_gate, memory_order_acquire) != FDR_GATE_ON || t->guard ||
	    t->ignored || !fs_backtrace ||
	    atomic_exchange_explicit(&fs_busy, true, memory_order_acquire))
		return;
	w.n = 0;
	fs_backtrace(fs_frame, &w);
	while (w.n--) {
		uint32_t id = w.starts[w.n] ? fdr_funcid_find(w.starts[w.n]) : 0;

		if (id && !(fdr_filtering && fdr_filter_skip(id)))
			fs_stk.ids[depth++] = id;
	}
	fs_stk.depth = depth;
	fs_stk.owner = t;
}

notrace void fdr_fork_stack_parent(void)
{
	if (fs_stk.owner != &fdr_self)
		return;
	fs_stk.owner = NULL;
	atomic_store_explicit(&fs_busy, false, memory_order_release);
}

notrace void fdr_fork_stack_child(void)
{
	/* the child's only thread: a fork of another thread's between its handlers is not ours */
	fs_for = fs_stk.owner == &fdr_self && fs_stk.depth ? &fdr_self : NULL;
	fs_stk.owner = NULL;
	atomic_store_explicit(&fs_busy, false, memory_order_relaxed);
}

notrace size_t fdr_fork_stack_record(struct fdr_thread *t, uint8_t *p, size_t room, uint64_t tsc)
{
	const size_t fixed = FDRTRACE_METADATA_RECORD_SIZE + sizeof(struct fdrtrace_ext_header) + 8;
	uint32_t depth = fs_stk.depth, skip = 0;
	size_t n;

	if (t != fs_for)
		return 0;
	fs_for = NULL;
	if (!p)
		return 0;
	/* at most a quarter of a buffer, as the ring policy's: the innermost calls */
	room = room < fdr_cfg.buffer_size / 4 ? room : fdr_cfg.buffer_size / 4;
	if (room < fixed + 4)
		return 0;
	if (depth > (room - fixed) / 4) {
		skip = depth - (uint32_t)((room - fixed) / 4);
		depth -= skip;
	}
	n = fdr_ext_stack(p + FDRTRACE_METADATA_RECORD_SIZE, room - FDRTRACE_METADATA_RECORD_SIZE,
			  (uint32_t)t->tid, depth, fs_stk.ids + skip, NULL);
	if (!n)
		return 0;
	return fdr_custom_event_md(p, (uint32_t)n, tsc) + n;
}
