// SPDX-License-Identifier: MIT
/*
 * runtime/record/fork_stack.c - the calls open at a fork, for the child's
 * trace.
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
 * unwind information, _Unwind_GetRegionStart()) is looked up among the
 * function ids already given (fdr_funcid_find(): never a new id); the frames of
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
 * recording is off, without libgcc_s (sysunwind.c), when the fork comes
 * from a signal handler that interrupted a hook or an API call on this
 * thread, or when another thread's fork is between its handlers.
 *
 * The walk is libgcc's unwinder's (sysunwind.c says why not libunwind's).
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
#include <stdatomic.h>
#include <stdbool.h>

#include <fdrtrace/format.h>

#include "config.h"
#include "ext_encode.h"
#include "filter.h"
#include "fork_stack.h"
#include "funcid_map.h"
#include "records.h"
#include "state.h"
#include "sysunwind.h"
#include "thread.h"
#include "trigger.h"

/* Frames walked per fork (the innermost); a deeper stack loses its outermost calls. */
#define FDR_FORK_FRAMES 256u

static _Atomic bool fs_busy;
static struct {
	struct fdr_thread *owner;	/* the forking thread, between its handlers */
	uint32_t depth;
	uint32_t ids[FDR_FORK_FRAMES];	/* outermost first */
} fs_stk;
static struct fdr_thread *fs_for;	/* child: the thread whose first buffer names them */

notrace void fdr_fork_stack_take(void)
{
	struct fdr_thread *t = &fdr_self;
	uintptr_t starts[FDR_FORK_FRAMES];
	uint32_t n, depth = 0;

	if (fdr_cfg.policy != FDR_POLICY_STREAM || fdr_cfg.max_depth || fdr_triggering ||
	    !fdr_gate_recording(atomic_load_explicit(&fdr_gate, memory_order_acquire)) || t->guard ||
	    t->ignored || atomic_exchange_explicit(&fs_busy, true, memory_order_acquire))
		return;
	n = fdr_sysunwind_starts(starts, FDR_FORK_FRAMES);
	while (n--) {
		uint32_t id = starts[n] ? fdr_funcid_find(starts[n]) : 0;

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
