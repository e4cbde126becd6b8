/* SPDX-License-Identifier: MIT */
/*
 * runtime/record/slowpath.h - the hooks' slow path and what goes with it:
 * the per-thread buffers (put.c, buffer.c), a handler's calls kept
 * (held.c), the control API's records (events.c), the thread registry
 * (registry.c, thread_exit.c), as the layers above use them.
 */
#ifndef FDR_SLOWPATH_H
#define FDR_SLOWPATH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fdrtrace/format.h>

#include "compiler.h"
#include "thread.h"

struct fdr_buffer;

/* ---- the hooks' slow path (slowpath.c) ---- */

/**
 * fdr_record_slow() - a hook whose fast path could not write its record
 * @t:		the calling thread's state (fdr_self), its guard held
 * @addr:	the function's address
 * @action:	FDRTRACE_FN_ENTRY or FDRTRACE_FN_EXIT
 * @tsc, @cpu:	the clock and CPU the hook read
 *
 * Registers the thread, claims or hands over a buffer, assigns the id,
 * writes NewCPUId/TSCWrap as needed, applies max_depth and
 * func_duration_threshold_us, counts drops; gives the guard back.
 * Context: the hook's thread, maybe in a signal handler: no locks, no
 * allocation (drain.h says what it may wait for). Saves errno.
 */
void fdr_record_slow(struct fdr_thread *t, uintptr_t addr, unsigned action, uint64_t tsc,
		     unsigned cpu) fdr_hidden fdr_noinline fdr_cold;

/* ---- a hook that found the gate neither ON nor OFF (autoexclude.c, inactive.c) ---- */

/**
 * fdr_record_inactive() - a hook that found the gate neither ON nor OFF
 *
 * COUNTED: auto_exclude's path, this function itself (autoexclude.c);
 * any other gate: fdr_record_not_counted().
 * Context: the hook's thread, no guard held.
 */
void fdr_record_inactive(void *fn, unsigned action) fdr_hidden fdr_noinline;

/**
 * fdr_record_not_counted() - a hook that found the gate @g, neither ON,
 * OFF nor COUNTED (inactive.c)
 *
 * LAZY: start recording (through the drain) and record the call;
 * BEFORE_INIT, AFTER_FINI: counted as drops.
 * Context: the hook's thread, no guard held.
 * Return: true when recording started with auto_exclude and the call is
 * still to be recorded: the caller passes it to fdr_record_inactive().
 */
bool fdr_record_not_counted(void *fn, unsigned action, int g) fdr_hidden fdr_cold;

/* ---- a thread's buffer (buffer.c; the counters: put.c) ---- */

/*
 * fdr_mark_recorded() - the process has something for its trace (a record,
 * a drop, an auto_exclude count): the flush thread links the file at its
 * next round, woken by the first caller. Any thread, async-signal-safe.
 */
void fdr_mark_recorded(void) fdr_hidden;

/**
 * fdr_thread_handover() - hand @t's buffer over (queued in stream policy,
 * marked FULL in ring policy), under its slot lock
 *
 * Context: the owner, its guard held. Return: 0.
 */
int fdr_thread_handover(struct fdr_thread *t) fdr_hidden;
/**
 * fdr_thread_ensure() - @t registered, and its buffer handed over if it
 * lacks room for the slow path's worst case (or a flush was asked for)
 *
 * Context: the owner, its guard held. Return: 0, -EAGAIN (no registry slot).
 */
int fdr_thread_ensure(struct fdr_thread *t) fdr_hidden;
/* buffers handed over to the queue (stream policy); the flush thread counts them written */
extern _Atomic uint64_t fdr_enqueued fdr_hidden;
/* on_full=wait: clock ticks all threads spent waiting for a free buffer */
extern _Atomic uint64_t fdr_wait_ticks fdr_hidden;

/* ---- a signal handler's calls while a hook runs (held.c) ---- */

/*
 * A hook while the thread's guard is held (a handler, or the runtime's own
 * call): kept for the owner to write, or counted. Async-signal-safe.
 */
void fdr_record_reentry(struct fdr_thread *t, uintptr_t addr, unsigned action) fdr_hidden
	fdr_noinline fdr_cold;

/* ---- what the control API writes (events.c) ---- */

/**
 * fdr_thread_emit_ext() - one FDRx extension payload into @t's buffer
 * (thread names, drop notices)
 *
 * Context: the owner, its guard held (FDR_GUARD_BUSY).
 * Return: 0, -EAGAIN (no thread state), -ENOBUFS (the pool is empty),
 * -EMSGSIZE (no buffer can hold it).
 */
int fdr_thread_emit_ext(struct fdr_thread *t, const uint8_t *payload, size_t len) fdr_hidden;
/**
 * fdr_thread_emit_event() - a custom (@typed 0) or typed event of @len
 * bytes into @t's buffer (fdrtrace_custom_event(), fdrtrace_typed_event())
 *
 * Context and Return: as fdr_thread_emit_ext(); -EMSGSIZE past fdr_event_max().
 */
int fdr_thread_emit_event(struct fdr_thread *t, int typed, uint16_t type, const void *data,
			  size_t len) fdr_hidden;
/**
 * fdr_thread_log_arg() - fdrtrace_log_arg(): @value as a CallArgument of
 * the call whose entry is @t's last record (made an Entry_Args record)
 *
 * Context: the owner, its guard held.
 * Return: 0, -ENOENT (the last record is no entry, or the thread records
 * nothing), -ENOBUFS (the entry is in a full buffer).
 */
int fdr_thread_log_arg(struct fdr_thread *t, uint64_t value) fdr_hidden;
/* fdrtrace_thread_ignore(): @t's hooks record nothing from now on; its buffer handed over */
void fdr_thread_set_ignored(struct fdr_thread *t) fdr_hidden;
/* the largest payload of one custom or typed event */
size_t fdr_event_max(void) fdr_hidden;

/* ---- a thread leaving the registry (thread_exit.c) ---- */

/* the thread-exit destructor's key (start of recording). Return: 0 or -EAGAIN */
int fdr_registry_init(void) fdr_hidden;
/* fork child (one thread): the parent's other threads leave the registry, counts start again */
void fdr_registry_after_fork_child(void) fdr_hidden;

/* ---- the thread registry (registry.c) ---- */

/**
 * fdr_threads_foreach() - @fn(t, @arg) for every registered thread, its
 * slot locked meanwhile
 * @spin_limit:	give up on a slot held that long (0: wait)
 *
 * Context: any thread; the fatal-signal handler too (async-signal-safe).
 */
void fdr_threads_foreach(void (*fn)(struct fdr_thread *t, void *arg), void *arg,
			 unsigned spin_limit) fdr_hidden;
/* threads that ever registered (the close record's count) */
uint32_t fdr_threads_seen(void) fdr_hidden;
/* the registry's high-water mark, in slots */
uint32_t fdr_threads_slots_used(void) fdr_hidden;
/**
 * fdr_snapshot_thread() - @t's buffer, up to its published position, into
 * @node (a borrowed copy for the final dump); the owner's next handover
 * abandons the buffer
 *
 * Context: the caller holds @t's slot lock (fdr_threads_foreach()).
 */
void fdr_snapshot_thread(struct fdr_thread *t, struct fdr_buffer *node) fdr_hidden;
/**
 * fdr_orphan_drops() - add the drops no thread's buffer reports (overwritten
 * buffers, threads gone, drops before init) to @rec and @bufs, per reason
 * @take:	and reset them (the trace reports them now)
 *
 * Context: any thread; async-signal-safe.
 */
void fdr_orphan_drops(uint64_t *rec, uint64_t *bufs, bool take) fdr_hidden;

#endif /* FDR_SLOWPATH_H */
