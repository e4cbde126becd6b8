/* SPDX-License-Identifier: MIT */
/*
 * runtime/runtime.h - state shared by the recording runtime's modules.
 *
 * Who touches what:
 *   - struct fdr_thread lives in initial-exec TLS; its owner thread writes
 *     it (the hooks, the slow path, the thread-exit destructor). Other
 *     threads (the finisher at exit, fdrtrace_flush(), the fatal-signal
 *     handler) read @pos/@buf and kick @end/@flush_req, but only while they
 *     hold the thread's registry slot (fdr_slot_lock()), which the owner
 *     also takes to hand a buffer over or to leave the registry.
 *   - The pool (buffer_queue.c), the id map (funcid_map.c) and the file
 *     (file_writer.c) are process-wide; see each file's contract.
 *   - fdr_gate is what the hooks test first: FDR_GATE_ON means "record";
 *     FDR_GATE_COUNTED (auto_exclude) records through autoexclude.c.
 *
 * Phases (fdr_phase): INIT -> ARMED (the constructor: recording asked
 * for) -> RECORDING (the first hook or API call: fdr_start_lazy()) ->
 * FINISHING -> DONE, or INIT -> OFF (mode off, setuid) and ARMED -> OFF
 * (the start failed); ARMED -> DONE at an exit that never started;
 * RECORDING -> DYING in the fatal-signal handler; RECORDING -> STOPPED on
 * a write error. A fork child of a recording process goes back to ARMED
 * (its own trace starts at its own first hook).
 */
#ifndef FDR_RUNTIME_H
#define FDR_RUNTIME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define _LGPL_SOURCE
#include <urcu/wfcqueue.h>

#include <fdrtrace/format.h>

#include "compiler.h"
#include "config.h"
#include "drain.h"
#include "filter.h"
#include "fd_high.h"
#include "libc_next.h"
#include "records.h"
#include "state.h"

struct fdr_ax_thread;

/* Bytes a hook's slow path may need at once: NewCPUId + TSCWrap + record. */
#define FDR_SLOW_RESERVE 40u

/*
 * max_depth: open calls whose function a thread keeps, to match exits
 * with entries; deeper ones are counted, their nesting trusted.
 */
#define FDR_DEPTH_FNS 64u

/* The per-thread function id cache: direct-mapped, power of two. */
#define FDR_FCACHE_SIZE 256u

struct fdr_fcache_ent {
	uintptr_t addr;
	uint32_t id;
	/*
	 * auto_exclude (autoexclude.c): @id when the function is known to
	 * be timed for good; anything else (a stale value of another id: ids
	 * are unique) means "look it up". The fast path never reads it.
	 */
	uint32_t ax;
};

/**
 * struct fdr_buffer - a buffer of the pool, or a snapshot of one
 * @node: link in the full-buffer queue (to the flush thread)
 * @data: buffer_size bytes
 * @len: bytes of @data to write (set by whoever hands it over)
 * @tid: the thread that filled it
 * @index: position in the pool; UINT32_MAX for a snapshot node
 * @borrowed: a snapshot of a buffer still owned by a thread: write it, do
 *	not return it to the pool (the node belongs to the finisher)
 * @ring_state: ring policy only: FULL once handed over (it may then be
 *	written by a dump or taken back by a thread that found the pool
 *	empty), BUSY while one of those holds it, NONE otherwise
 * @ring_seq: ring policy only: the order of handovers (oldest smallest)
 * @drops: a snapshot's pending drop counts (records; buffers in @drop_bufs);
 *	ring policy: the drop counts the FDRx drop records in a handed-over
 *	buffer report (counted process-wide if it is overwritten)
 * @meta: stream policy, owner: the bytes from @data on that are not
 *	function records (the preamble, CPU and TSC records, call arguments)
 * @counted: stream policy: @meta is exact and the buffer holds no
 *	extension record, so it has (@len - @meta) / 8 function records and
 *	reports no drops: the flush thread counts it without reading it.
 *	Set by the owner when it claims the buffer, cleared when it writes an
 *	extension record; published with @len by the handover. False for
 *	snapshot nodes and every other buffer, which are read to be counted.
 */
struct fdr_buffer {
	struct cds_wfcq_node node;
	uint8_t *data;
	uint64_t len;
	int32_t tid;
	uint32_t index;
	bool borrowed;
	_Atomic uint32_t ring_state;	/* ring policy: enum fdr_ring_state */
	_Atomic uint64_t ring_seq;	/* ring policy: handover order, set before FULL */
	uint64_t ring_records;		/* ring policy: function records, set before FULL */
	uint64_t drops[FDRTRACE_DROP_REASON_COUNT];
	uint64_t drop_bufs[FDRTRACE_DROP_REASON_COUNT];
	uint32_t meta;
	bool counted;
};

/* Calls entered during a gap whose ids are kept (deeper ones: counted). */
#define FDR_GAP_IDS 32u

/**
 * struct fdr_gap - a thread's records lost because the pool was empty,
 * followed by the hooks that dropped them (owner only, guard held), so
 * that its next buffer can say where the gap was and which calls it
 * opened and closed (FDRTRACE_EXT_DROP with a gap, format.h)
 * @first_tsc, @last_tsc: of the first and last record lost (0: no gap)
 * @exited: calls open before the gap that returned in it
 * @depth: calls entered in the gap and still open (@ids: the outermost
 *	FDR_GAP_IDS of them)
 * @unknown: an exit matched nothing the gap could follow
 */
struct fdr_gap {
	uint64_t first_tsc, last_tsc;
	uint32_t exited;
	uint32_t depth;
	bool unknown;
	uint32_t ids[FDR_GAP_IDS];
};

enum fdr_thread_state {
	FDR_T_NEW = 0,		/* never registered (zeroed TLS) or left the registry */
	FDR_T_ACTIVE = 1,
};

/*
 * One call of a signal handler's that interrupted a hook, kept for the
 * hook's thread to write (wr_hold()): its clock, and the function's address
 * with the action in the top byte (user addresses are below 2^57).
 */
struct fdr_held_call {
	uint64_t tsc;
	uint64_t fn_action;
};

#define FDR_HELD_CALLS 64u
#define FDR_HELD_ACTION_SHIFT 60
/*
 * on_full=wait: the held calls a thread keeps once it has waited for a
 * buffer (a 256 KiB ring it maps then, writer.c, wr_held_grow()): a
 * handler runs all through a wait, and a 10 kHz timer's 4 calls a run
 * filled the 64 slots in 1.6 ms of a 12-33 ms wait (the reliability suite
 * beside a disk-heavy test). 0.4 s of that handler. A power of two.
 */
#define FDR_WAIT_HELD_CALLS 16384u

/**
 * struct fdr_thread - one thread's recording state (initial-exec TLS)
 *
 * The first cache line holds everything the fast path touches besides
 * the id cache entry. Trivially destructible: all zero means "new".
 *
 * @pos: where the next record goes. The owner stores it with release
 *	after writing the record's bytes; a reader in another thread loads it
 *	with acquire and sees only whole records before it.
 * @end: the fast path takes the slow path when @pos >= @end. Other
 *	threads store NULL here to make the owner look at @flush_req.
 * @last_tsc: the TSC reference the next delta is taken from
 * @cpu: the CPU of the last NewCPUId
 * @guard: nonzero while a hook (FDR_GUARD_HOOK) or the control API or
 *	the thread's exit (FDR_GUARD_BUSY) runs on this thread; a signal
 *	handler's calls meanwhile are kept (a hook's) or counted (re-entry).
 *	FDR_GUARD_VFORK in a vfork child, which runs on this thread's memory
 *	(vfork.c): its hooks record and count nothing
 */
struct fdr_thread {
	_Atomic(uint8_t *) pos;
	_Atomic(uint8_t *) end;
	uint64_t last_tsc;
	uint32_t cpu;
	uint32_t guard;
	int32_t tid;
	uint32_t state;
	struct fdr_buffer *buf;
	uint32_t slot;
	_Atomic uint32_t flush_req;
	bool starved;		/* in a pool-empty episode */
	bool ignored;		/* fdrtrace_thread_ignore(): hooks record nothing */
	bool snapped;		/* the final dump took this thread's buffer (slot lock) */
	/*
	 * Set by the pthread key destructor once it has reported this
	 * thread's drops, cleared when the thread registers again: a handler
	 * re-entering meanwhile counts process-wide (no buffer will say it).
	 */
	bool leaving;
	uint32_t depth_epoch;	/* max_depth: fdr_depth_epoch when @depth was last valid */
	uint8_t *rewind_floor;	/* func_duration_threshold_us: never erase below this */
	uint8_t *arg_end;	/* just after the last CallArgument (fdrtrace_log_arg) */
	uint64_t depth;		/* max_depth: calls open on this thread, counted (@depth_fn) */
	/* drops not yet reported in the trace, per reason */
	_Atomic uint64_t drop_rec[FDRTRACE_DROP_REASON_COUNT];
	_Atomic uint64_t drop_buf[FDRTRACE_DROP_REASON_COUNT];
	struct fdr_gap gap;		/* pool empty: the gap since the last buffer */
	/*
	 * Re-entry drops (a signal handler's calls while a hook of this thread
	 * ran): written by the handler, taken by the owner's slow path, which
	 * the handler sends there by clearing @end. @re_net is entries minus
	 * exits dropped, @re_low the lowest it went (below 0: an exit of a
	 * call the handler did not enter).
	 */
	_Atomic uint64_t re_first_tsc, re_last_tsc;
	_Atomic int32_t re_net, re_low;
	_Atomic bool re_pending;
	/*
	 * A handler's calls while a hook of this thread held the guard, kept
	 * (writer.c, wr_hold()) for the owner to write once the hook is done:
	 * handlers claim slots at @held_tail, the owner writes them from
	 * @held_head on. Slot i is held[i % FDR_HELD_CALLS], or
	 * held_more[i % FDR_WAIT_HELD_CALLS] once the thread has waited
	 * (@held_more, at the end). Handlers on one thread nest, so a slot is
	 * whole when the owner runs again.
	 */
	_Atomic uint32_t held_tail, held_head;
	bool no_wait;		/* on_full=wait never waits on this thread (the flush thread) */
	uint64_t sigmask;	/* signals blocked when the thread registered (on_full=wait) */
	/* on_full=wait: the last wait, reported in the next buffer */
	uint64_t wait_first_tsc, wait_last_tsc;
	uint32_t vfork_guard;	/* @guard when vfork() was called, given back to the parent */
	struct fdr_held_call held[FDR_HELD_CALLS];
	struct fdr_fcache_ent cache[FDR_FCACHE_SIZE] __attribute__((aligned(FDR_CACHELINE)));
	/*
	 * max_depth: the functions of the outermost FDR_DEPTH_FNS calls open
	 * (@depth_fn[0] the outermost), so that an exit finds its entry
	 * (writer.c, wr_depth_deep()). After the id cache, which the fast path
	 * reaches at a fixed offset: nothing the hooks touch moves.
	 */
	uintptr_t depth_fn[FDR_DEPTH_FNS];
	/*
	 * on_full=wait: FDR_WAIT_HELD_CALLS slots for the held calls, mapped
	 * by the owner before its first wait and unmapped at its exit; NULL:
	 * @held. Set and cleared only while no handler can use it (signals
	 * blocked, or the guard not a hook's); read relaxed by a snapshot.
	 */
	_Atomic(struct fdr_held_call *) held_more;
	/*
	 * auto_exclude: the thread's counts (autoexclude.c), set by the owner
	 * at its first use. Last, so that nothing the fast path reads moves.
	 */
	_Atomic(struct fdr_ax_thread *) ax;
} __attribute__((aligned(FDR_CACHELINE)));

/* struct fdr_thread's @guard: a hook; the control API or the thread's exit; a vfork child (vfork.c) */
#define FDR_GUARD_HOOK 1u
#define FDR_GUARD_BUSY 2u
#define FDR_GUARD_VFORK 0x76666b31u

extern fdr_tls struct fdr_thread fdr_self fdr_hidden;

/* creds.c, before set*id, setgroups, initgroups, chroot: name the trace while we may (lifecycle.c) */
void fdr_before_identity_change(void) fdr_hidden;

/* ---- sigview.c: the signals the runtime handles, as the program sees them ---- */

struct sigaction;
/* libc's sigaction, past the program's view (async-signal-safe) */
int fdr_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old) fdr_hidden;
/*
 * Handle @sig with @ours from now on; the disposition it had, @prev (the
 * caller has just read it: fdr_real_sigaction()), stays the program's
 * view, which sigaction() and signal() report, and setting the default
 * puts @ours back. Initialisation only. Return: 0 or -errno.
 */
int fdr_sig_take(int sig, const struct sigaction *ours, const struct sigaction *prev) fdr_hidden;
/*
 * The same for @sig ignored or handled at start: that stays installed;
 * @ours stands for the default once the program sets it. Initialisation
 * only. Return: 0 or -EINVAL.
 */
int fdr_sig_watch(int sig, const struct sigaction *ours) fdr_hidden;
/* What the runtime's handler for @sig does after its dump (fdr_sig_course()) */
enum fdr_sig_course {
	FDR_SIG_DEFAULT,	/* the program's disposition is the default: it ends the process */
	FDR_SIG_PROGRAM,	/* a handler of the program's (one before fdr_sig_take()) runs next */
	FDR_SIG_AGAIN,		/* back here after installing the default: die now */
};
/*
 * In the runtime's handler for @sig, first thing: what the program's
 * disposition asks for. The runtime's handler is installed only where the
 * program's disposition is the default, so that is the answer whatever
 * the program's view says at that moment, save for the disposition found
 * at fdr_sig_take(). Async-signal-safe. Return: an enum fdr_sig_course.
 */
int fdr_sig_course(int sig) fdr_hidden;
/*
 * In @sig's handler, for FDR_SIG_PROGRAM: install the disposition found at
 * fdr_sig_take() (once). Async-signal-safe. Return: whether a handler of
 * the program's is installed now; false when the program set the default
 * meanwhile (then: fdr_sig_die()).
 */
bool fdr_sig_give_back(int sig) fdr_hidden;
/* In @sig's handler: install the real default (a fault then comes again and kills). */
void fdr_sig_default(int sig) fdr_hidden;
/* In @sig's handler: end the process by @sig, with the default action. */
void fdr_sig_die(int sig) fdr_hidden __attribute__((noreturn));
/* In a fork child: the dispositions a thread of the parent was changing, as they are. */
void fdr_sig_after_fork(void) fdr_hidden;

/* ---- say.c: messages, on the standard error the runtime started with ---- */

/* note the file behind descriptor 2 (the constructor, first thing) */
void fdr_say_init(void) fdr_hidden;
/* a message there, or nothing when descriptor 2 is another file or closed */
void fdr_say(const char *fmt, ...) fdr_hidden __attribute__((format(printf, 1, 2)));
/* the same for a message already formatted; async-signal-safe */
void fdr_say_raw(const char *msg, size_t len) fdr_hidden;
/* 2 when the flush thread's own descriptor table is to keep descriptor 2, else -1 */
int fdr_say_keep(void) fdr_hidden;
/* this thread has its own descriptor table (the flush thread), with a copy of 2 or not */
void fdr_say_private(bool kept) fdr_hidden;

/* ---- writer.c: slow path, registry, per-thread buffers ---- */

void fdr_record_slow(struct fdr_thread *t, uintptr_t addr, unsigned action, uint64_t tsc,
		     unsigned cpu) fdr_hidden fdr_noinline fdr_cold;
void fdr_record_inactive(void *fn, unsigned action) fdr_hidden fdr_noinline fdr_cold;
/*
 * lifecycle.c: start recording, from the first hook (gate LAZY) or API
 * call. Return: true when recording (the gate is ON), false when the start
 * failed, is not this caller's to make (a vfork child, this thread's own
 * start, a guard held) or did not finish in time on another thread.
 */
bool fdr_start_lazy(void) fdr_hidden fdr_cold;
/* A hook while the thread's guard is held (a handler, or the runtime's own call): keep or count */
void fdr_record_reentry(struct fdr_thread *t, uintptr_t addr, unsigned action) fdr_hidden
	fdr_noinline fdr_cold;
int fdr_thread_emit_ext(struct fdr_thread *t, const uint8_t *payload, size_t len) fdr_hidden;
int fdr_thread_emit_event(struct fdr_thread *t, int typed, uint16_t type, const void *data,
			  size_t len) fdr_hidden;
int fdr_thread_log_arg(struct fdr_thread *t, uint64_t value) fdr_hidden;
void fdr_thread_set_ignored(struct fdr_thread *t) fdr_hidden;
/* the largest payload of one custom or typed event */
size_t fdr_event_max(void) fdr_hidden;
int fdr_thread_handover(struct fdr_thread *t) fdr_hidden;
int fdr_thread_ensure(struct fdr_thread *t) fdr_hidden;
int fdr_writer_init(void) fdr_hidden;
void fdr_writer_after_fork_child(void) fdr_hidden;
/* visit every registered thread, slot locked: @fn(t, arg) */
void fdr_threads_foreach(void (*fn)(struct fdr_thread *t, void *arg), void *arg,
			 unsigned spin_limit) fdr_hidden;
uint32_t fdr_threads_seen(void) fdr_hidden;
uint32_t fdr_threads_slots_used(void) fdr_hidden;
void fdr_snapshot_thread(struct fdr_thread *t, struct fdr_buffer *node) fdr_hidden;
void fdr_orphan_drops(uint64_t *rec, uint64_t *bufs, bool take) fdr_hidden;
/* buffers handed over to the queue (stream policy) */
extern _Atomic uint64_t fdr_enqueued fdr_hidden;
/* on_full=wait: clock ticks all threads spent waiting for a free buffer */
extern _Atomic uint64_t fdr_wait_ticks fdr_hidden;

/* ---- file_writer.c: the trace file ---- */

/*
 * the path is fdr_path, the file opened unnamed (no other thread of the
 * program runs); writes are kept until fdr_file_create() names it
 */
int fdr_file_prepare(void) fdr_hidden;
/* create the file and write what was kept (caller holds the file lock); reports a failure */
int fdr_file_create(void) fdr_hidden;
bool fdr_file_created(void) fdr_hidden;
/*
 * The trace (the unnamed file before it is created) is at its descriptor
 * in the calling thread's table, written buffered, nothing failed: a
 * thread other than the flush thread can write it without opening it
 * again. Not where the program took the number, or the flush thread
 * opened it in its own table (by name, or for direct writes), nor under
 * a file size limit (SIGXFSZ). Caller holds the file lock.
 */
bool fdr_file_here(void) fdr_hidden;
/* a snapshot's file: written unnamed in the trace's directory, named when whole */
int fdr_file_open_unnamed(void) fdr_hidden;
int fdr_file_link(int fd, const char *path) fdr_hidden;
/* give back the disk blocks reserved past the end of fdr_fd (async-signal-safe) */
void fdr_file_trim(void) fdr_hidden;
/* direct writes: the partial last block into the file (file lock held), and whether one waits */
void fdr_file_settle(void) fdr_hidden;
bool fdr_file_unsettled(void) fdr_hidden;
long long fdr_file_direct_from(void) fdr_hidden;
/* the flush thread settles the file once it has written nothing for this long */
#define FDR_SETTLE_MS 10
void fdr_file_close(void) fdr_hidden;
/* the thread id of the runtime's own buffers (the flush thread's), for the file's last unit */
void fdr_file_set_tid(int32_t tid) fdr_hidden;
/* a fork child: close the parent's descriptors, write nothing */
void fdr_file_forget(void) fdr_hidden;
/* the descriptors of the trace (at most 2, into @fds): the flush thread's table keeps them */
int fdr_file_fds(int fds[2]) fdr_hidden;
/* write to @fd from now on: the trace's own (@trace) or a snapshot's */
void fdr_file_use(int fd, bool trace) fdr_hidden;
int fdr_file_write_header(void) fdr_hidden;
int fdr_file_write_buffer(const uint8_t *data, uint64_t len) fdr_hidden;
/* the most buffers fdr_file_write_buffers() writes at once */
#define FDR_WRITE_BATCH 16u
int fdr_file_write_buffers(struct fdr_buffer *const *bufs, unsigned count) fdr_hidden;
void fdr_file_patch_freq(uint64_t freq) fdr_hidden;
/*
 * The close marker, how @how, from the totals written so far, the clock
 * frequency @freq and, for FDRTRACE_CLOSE_STOPPED, the errno @error of
 * the write that failed, into @buf. Return: its length, 0 if it does not
 * fit. Async-signal-safe.
 */
size_t fdr_close_record(uint8_t *buf, size_t cap, uint8_t how, uint64_t freq, int error) fdr_hidden;
bool fdr_file_lock(unsigned spin_limit) fdr_hidden;
/* the calling thread holds the file lock (it is inside a write) */
bool fdr_file_locked_here(void) fdr_hidden;
void fdr_file_unlock(void) fdr_hidden;
bool fdr_file_failed(void) fdr_hidden;
/* recording stopped because the trace reached max_size (not a write error) */
bool fdr_file_max_size_hit(void) fdr_hidden;
extern char fdr_path[4200] fdr_hidden;
extern int fdr_fd fdr_hidden;

/**
 * struct fdr_rtbuf - a runtime buffer: metadata the runtime writes itself
 * (process, config, modules, function names, drops, the close marker),
 * as custom events in a buffer of its own thread id.
 */
struct fdr_rtbuf {
	uint8_t *data;
	size_t cap;	/* usable bytes (buffer_size, minus EndOfBuffer in v1) */
	size_t len;	/* 0: not started */
	int32_t tid;
};

int fdr_rtbuf_init(struct fdr_rtbuf *rb, int32_t tid) fdr_hidden;
int fdr_rtbuf_add(struct fdr_rtbuf *rb, const uint8_t *payload, size_t len) fdr_hidden;
int fdr_rtbuf_flush(struct fdr_rtbuf *rb) fdr_hidden;
void fdr_rtbuf_add_drops(struct fdr_rtbuf *rb, int32_t tid, const uint64_t *rec,
			 const uint64_t *bufs) fdr_hidden;

/* Totals of what went into the file (flush thread / finisher only). */
struct fdr_totals {
	uint64_t records;
	uint64_t records_dropped;
	uint64_t buffers;
	uint64_t buffers_dropped;
	uint64_t dropped_by[FDRTRACE_DROP_REASON_COUNT];	/* records, per reason */
};
extern struct fdr_totals fdr_totals fdr_hidden;

/* ---- flush_thread.c ---- */

int fdr_flush_start(void) fdr_hidden;
/* the flush thread runs (started, not finished) */
bool fdr_flush_running(void) fdr_hidden;
void fdr_flush_wake(void) fdr_hidden;
/* the flush thread's id: the thread id the runtime buffers carry (0 before it starts) */
int32_t fdr_flush_tid(void) fdr_hidden;
/* a buffer was queued: wake the flush thread when a batch is ready or the pool runs low */
void fdr_flush_queued(void) fdr_hidden;
/* a thread found the pool empty: the flush thread grows it (stream policy, when allowed) */
void fdr_flush_starved(void) fdr_hidden;
/* lc_finish()'s first step: requested snapshots, written on the exiting thread */
void fdr_flush_pending_snapshots(void) fdr_hidden;
/* _exit()'s first step: wait (bounded) for a latency trigger's snapshot; async-signal-safe */
void fdr_flush_triggers_wait(unsigned timeout_ms) fdr_hidden;
void fdr_flush_finish(uint8_t how) fdr_hidden;
/* the coming finish is for an exec of @path: an FDRTRACE_EXT_EXEC record before the close */
void fdr_flush_note_exec(const char *path, uint32_t tid, uint64_t tsc) fdr_hidden;
int fdr_flush_wait_written(uint64_t target, unsigned timeout_ms) fdr_hidden;
void fdr_flush_emit_funcs(struct fdr_rtbuf *rb, bool names) fdr_hidden;
void fdr_flush_reset_child(void) fdr_hidden;
void fdr_flush_request_snapshot(void) fdr_hidden;
/* a latency trigger fired: one snapshot more (async-signal-safe, lock-free) */
void fdr_flush_request_trigger(void) fdr_hidden;
void fdr_flush_names_wait(unsigned ms) fdr_hidden;
/*
 * Wait (@ms at most) until the start records are written (by the starter,
 * or where it could not, by the flush thread): a dump that writes buffers
 * itself must not put them before those. Async-signal-safe (futex);
 * returns at once without a flush thread.
 */
void fdr_flush_started_wait(unsigned ms) fdr_hidden;
/*
 * Wait (@ms at most) until the flush thread runs, past its own set-up (the
 * C library's and a sanitizer's thread start, which may allocate): from
 * then on it allocates only under the mutex fdr_flush_fork_prepare()
 * takes. For a fork. Returns at once without a flush thread.
 */
void fdr_flush_alive_wait(unsigned ms) fdr_hidden;
struct fdr_buffer *fdr_flush_wait_buffer(void) fdr_hidden;
/*
 * on_full=wait: a wait gave up for a stall and no buffer came back since
 * (fdr_flush_wait_buffer() would return NULL at once). Cheap: for before
 * the costlier checks of whether the thread may wait at all.
 */
bool fdr_flush_wait_stalled(void) fdr_hidden;
int fdr_flush_snapshot_wait(unsigned timeout_ms) fdr_hidden;
int fdr_flush_start_child(void) fdr_hidden;
void fdr_flush_fork_prepare(void) fdr_hidden;
void fdr_flush_fork_parent(void) fdr_hidden;
int fdr_write_start_records(struct fdr_rtbuf *rb, bool forked, uint32_t parent) fdr_hidden;
void fdr_count_buffer(const uint8_t *data, uint64_t len) fdr_hidden;
extern _Atomic uint64_t fdr_written fdr_hidden;

/* ---- ring.c: the ring policy ---- */

enum fdr_ring_state {
	FDR_RING_NONE = 0,	/* in the free pool, or owned by a thread */
	FDR_RING_FULL = 1,	/* handed over, waiting to be written or overwritten */
	FDR_RING_BUSY = 2,	/* being written by a dump, or taken back by a thread */
};

void fdr_ring_put(struct fdr_buffer *b) fdr_hidden;
struct fdr_buffer *fdr_ring_take_oldest(void) fdr_hidden;
uint64_t fdr_ring_newest(void) fdr_hidden;
void fdr_ring_write(bool keep, uint64_t upto, int (*write)(const uint8_t *data, uint64_t len)) fdr_hidden;
/* the calling thread's open calls at the start of its next buffer: @b's records up to @end walked */
void fdr_ring_stack_advance(struct fdr_buffer *b, const uint8_t *end) fdr_hidden;
size_t fdr_ring_stack_record(uint8_t *p, size_t room, int32_t tid, uint64_t tsc) fdr_hidden;
/* a pool-empty gap @g closed g->exited of the open calls and opened g->depth (g->ids), when known */
void fdr_ring_stack_gap(const struct fdr_gap *g) fdr_hidden;
/* fork child, before fdr_pool_reset(): the stack brought to the fork, buffers numbered anew */
void fdr_ring_fork_child(struct fdr_thread *t) fdr_hidden;

/* ---- trigger.c: latency triggers (ring policy) ---- */

/* trigger set and valid: the slow path asks fdr_trigger_uncached() before caching an id */
extern bool fdr_triggering fdr_hidden;
void fdr_trigger_init(void) fdr_hidden;
void fdr_trigger_reset_child(void) fdr_hidden;
/* flush thread: decide whether function @id, named @name, matches a trigger */
void fdr_trigger_decide(uint32_t id, const char *name) fdr_hidden;
/* slow path: keep @id out of the thread's id cache (undecided, or a trigger's)? */
bool fdr_trigger_uncached(uint32_t id) fdr_hidden;
/*
 * slow path, after the record of a call whose function was not in the id
 * cache (@written: the record reached the buffer; @candidate: the function
 * is a trigger's, or not decided yet)
 */
void fdr_trigger_call(uint32_t id, unsigned action, uint64_t tsc, bool written,
		      bool candidate) fdr_hidden;
/* flush thread: "trigger slow>10ms: a call of slow took 30.1 ms" */
void fdr_trigger_describe(char *buf, size_t cap) fdr_hidden;

/* ---- lifecycle.c ---- */

/*
 * exec.c, before an exec of @path: finish the trace as exit does, with an
 * FDRTRACE_EXT_EXEC record naming @path. Return: true when a trace was closed.
 */
bool fdr_before_exec(const char *path) fdr_hidden;

/*
 * A child started without a fork by thread @tid (spawn.c: posix_spawn) at
 * @tsc, its pid @child_pid: a spawn record in the thread's records
 * (lifecycle.c; nothing when not recording).
 */
void fdr_spawn_note(uint32_t tid, uint64_t tsc, uint32_t child_pid) fdr_hidden;
/* How the process ends (enum fdrtrace_end and its value), for the close record. */
void fdr_set_end(uint8_t end, uint32_t value) fdr_hidden;
/* verbosity=0: fdr_say() and fdr_say_raw() print nothing (say.c) */
extern bool fdr_say_silent fdr_hidden;
#endif /* FDR_RUNTIME_H */
