// SPDX-License-Identifier: MIT
/*
 * runtime/record/autoexclude_counts.c - auto_exclude's tables: the
 * per-thread counts (struct fdr_ax_thread, TLS), the process-wide table
 * for threads that ended or had no room, the decisions written down
 * (ax_dec[]), and putting them all in the trace (fdr_ax_emit*()), at a
 * thread's exit and in a fork child. The hook that fills them and the
 * decisions are autoexclude.c's, which uses this file (not the other way
 * round); see its header for the contract and the memory ordering.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "autoexclude.h"
#include "autoexclude_internal.h"
#include "clock.h"
#include "ext_encode.h"
#include "slowpath.h"
#include "thread.h"

bool fdr_ax_on;
bool ax_patching;
uint32_t ax_fast_id[AX_FAST];
_Atomic uint32_t ax_fast_n;
uint64_t ax_ticks;
uint32_t ax_after;
struct ax_global_slot *ax_global;
struct ax_decision ax_dec[AX_DECISIONS];
_Atomic uint32_t ax_dec_next;
fdr_tls struct fdr_ax_thread ax_self;
static _Atomic uint64_t ax_lost_pending, ax_lost_total;
static uint32_t ax_dec_written;	/* file lock: decisions in the trace */
static uint64_t ax_last_emit_ns; /* flush thread: fdr_ax_emit_periodic() */
static _Atomic bool ax_flush_asked; /* fdr_ax_flush_soon() */

/* ---- counting ---- */

/* @n calls of @id into the process-wide table; lost when it has no room. */
notrace void ax_count_global(uint32_t id, uint64_t n)
{
	uint32_t h = (id * 2654435761u) & (AX_GLOBAL - 1);

	for (uint32_t i = 0; i < AX_GPROBE; i++, h = (h + 1) & (AX_GLOBAL - 1)) {
		struct ax_global_slot *s = &ax_global[h];
		uint32_t cur = atomic_load_explicit(&s->id, memory_order_acquire);

		if (!cur) {
			/* claim it; a loser looks at what the winner put there */
			if (atomic_compare_exchange_strong_explicit(&s->id, &cur, id,
								    memory_order_acq_rel,
								    memory_order_acquire))
				cur = id;
		}
		if (cur == id) {
			atomic_fetch_add_explicit(&s->pending, n, memory_order_relaxed);
			atomic_fetch_add_explicit(&s->total, n, memory_order_relaxed);
			return;
		}
	}
	atomic_fetch_add_explicit(&ax_lost_pending, n, memory_order_relaxed);
	atomic_fetch_add_explicit(&ax_lost_total, n, memory_order_relaxed);
}

/* Write a decision down for the flush thread. Return: false when there is no room. */
notrace bool ax_note(uint32_t id, uint32_t calls, uint64_t sum, uint64_t tsc, bool undone)
{
	uint32_t i = atomic_fetch_add_explicit(&ax_dec_next, 1, memory_order_relaxed);

	if (i >= AX_DECISIONS)
		return false;
	ax_dec[i].id = id;
	ax_dec[i].calls = calls;
	ax_dec[i].sum = sum;
	ax_dec[i].tsc = tsc;
	ax_dec[i].undone = undone;
	/* release: the entry before the flag the flush thread reads */
	atomic_store_explicit(&ax_dec[i].ready, 1, memory_order_release);
	return true;
}

/* ---- into the trace ---- */

struct ax_out {
	struct fdr_rtbuf *rb;
	fdr_ax_add_fn add;
	bool take;
	uint32_t tid;
	uint32_t n;
	uint64_t lost;
	uint32_t ids[AX_CHUNK];
	uint64_t calls[AX_CHUNK];
};

static notrace void ax_out_flush(struct ax_out *o)
{
	uint8_t p[16 + AX_CHUNK * 12 + 16];
	size_t len;

	if (!o->n && !o->lost)
		return;
	len = fdr_ext_counted(p, sizeof(p), o->tid, o->lost, o->n, o->ids, o->calls);
	if (len)
		o->add(o->rb, p, len);
	o->n = 0;
	o->lost = 0;
}

static notrace void ax_out_add(struct ax_out *o, uint32_t id, uint64_t calls)
{
	if (!calls)
		return;
	o->ids[o->n] = id;
	o->calls[o->n] = calls;
	if (++o->n == AX_CHUNK)
		ax_out_flush(o);
}

static notrace void ax_decision_out(struct fdr_rtbuf *rb, fdr_ax_add_fn add, uint32_t i)
{
	uint8_t p[64];
	size_t len = fdr_ext_excluded(p, sizeof(p), ax_dec[i].id, ax_dec[i].tsc, ax_dec[i].calls,
				      ax_dec[i].sum, ax_ticks, ax_after, ax_dec[i].undone);

	if (len)
		add(rb, p, len);
}

notrace void fdr_ax_emit_decisions(struct fdr_rtbuf *rb, fdr_ax_add_fn add)
{
	if (!fdr_ax_on)
		return;
	for (; ax_dec_written < AX_DECISIONS; ax_dec_written++) {
		/* acquire: pairs with the decider's release store */
		if (!atomic_load_explicit(&ax_dec[ax_dec_written].ready, memory_order_acquire))
			break;
		ax_decision_out(rb, add, ax_dec_written);
	}
}

/*
 * One count of a thread (ax_counts_each()): @c calls of @id so far, of
 * which *@taken are in the trace (or in the process-wide table). Return:
 * false to stop the walk.
 */
typedef bool (*ax_count_fn)(void *arg, uint32_t id, uint64_t c, _Atomic uint64_t *taken);

/*
 * Every count of @x: the slots of its table with an id, then the patched
 * sites' counts per function (@fast: a second count for an id the table
 * may hold too, which readers add). The owner writes the counts
 * meanwhile, or has left the registry; the caller alone writes @taken.
 */
static notrace void ax_counts_each(struct fdr_ax_thread *x, ax_count_fn fn, void *arg)
{
	for (uint32_t s = 0; s < AX_SLOTS; s++) {
		/* acquire: pairs with the owner's release store of the id after its first count */
		uint32_t id = atomic_load_explicit(&x->slot[s].id, memory_order_acquire);

		if (id && !fn(arg, id, atomic_load_explicit(&x->slot[s].count, memory_order_relaxed),
			      &x->taken[s]))
			return;
	}
	/* acquire: pairs with ax_fast_index()'s release (the id before its count) */
	for (uint32_t k = 0, n = atomic_load_explicit(&ax_fast_n, memory_order_acquire); k < n;
	     k++)
		if (!fn(arg, ax_fast_id[k], atomic_load_explicit(&x->fast[k], memory_order_relaxed),
			&x->fast_taken[k]))
			return;
}

static notrace bool ax_emit_count(void *arg, uint32_t id, uint64_t c, _Atomic uint64_t *taken)
{
	struct ax_out *o = arg;

	ax_out_add(o, id, c - (o->take ? atomic_load_explicit(taken, memory_order_relaxed) : 0));
	if (o->take)
		atomic_store_explicit(taken, c, memory_order_relaxed);
	return true;
}

/* One thread's counts (slot lock held by fdr_threads_foreach()). */
static notrace void ax_emit_thread(struct fdr_thread *t, void *arg)
{
	struct ax_out *o = arg;
	/* acquire: pairs with the owner's release store of @ax */
	struct fdr_ax_thread *x = atomic_load_explicit(&t->ax, memory_order_acquire);

	if (!x)
		return;
	o->tid = (uint32_t)t->tid;
	ax_counts_each(x, ax_emit_count, o);
	ax_out_flush(o);
}

notrace void fdr_ax_emit(struct fdr_rtbuf *rb, fdr_ax_add_fn add, bool take)
{
	struct ax_out o = { .rb = rb, .add = add, .take = take };

	if (!fdr_ax_on)
		return;
	if (take) {
		fdr_ax_emit_decisions(rb, add);
	} else {
		for (uint32_t i = 0; i < AX_DECISIONS; i++) {
			if (!atomic_load_explicit(&ax_dec[i].ready, memory_order_acquire))
				break;
			ax_decision_out(rb, add, i);
		}
	}
	fdr_threads_foreach(ax_emit_thread, &o, 100000);
	/* the process-wide table: threads that ended, ids a thread had no room for */
	o.tid = 0;
	for (uint32_t h = 0; h < AX_GLOBAL; h++) {
		struct ax_global_slot *s = &ax_global[h];
		uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);

		if (id)
			ax_out_add(&o, id,
				   take ? atomic_exchange_explicit(&s->pending, 0, memory_order_relaxed)
					: atomic_load_explicit(&s->total, memory_order_relaxed));
	}
	o.lost = take ? atomic_exchange_explicit(&ax_lost_pending, 0, memory_order_relaxed)
		      : atomic_load_explicit(&ax_lost_total, memory_order_relaxed);
	ax_out_flush(&o);
}

/* Stops the walk at the first count not all in the trace (*@arg: set then). */
static notrace bool ax_pending_count(void *arg, uint32_t id, uint64_t c, _Atomic uint64_t *taken)
{
	bool *any = arg;

	(void)id;
	*any = c != atomic_load_explicit(taken, memory_order_relaxed);
	return !*any;
}

/* One thread's counts not in the trace yet (slot lock held by fdr_threads_foreach()). */
static notrace void ax_pending_thread(struct fdr_thread *t, void *arg)
{
	struct fdr_ax_thread *x = atomic_load_explicit(&t->ax, memory_order_acquire);

	if (x && !*(bool *)arg)
		ax_counts_each(x, ax_pending_count, arg);
}

notrace bool fdr_ax_has_counts(void)
{
	bool any = false;

	if (!fdr_ax_on)
		return false;
	fdr_threads_foreach(ax_pending_thread, &any, 100000);
	for (uint32_t h = 0; h < AX_GLOBAL && !any; h++)
		any = atomic_load_explicit(&ax_global[h].pending, memory_order_relaxed) != 0;
	return any || atomic_load_explicit(&ax_lost_pending, memory_order_relaxed);
}

notrace void fdr_ax_flush_soon(void)
{
	atomic_store_explicit(&ax_flush_asked, true, memory_order_relaxed);
}

notrace void fdr_ax_emit_periodic(struct fdr_rtbuf *rb, fdr_ax_add_fn add)
{
	uint64_t now;

	if (!fdr_ax_on)
		return;
	now = fdr_clock_raw_ns();
	/* the flag is set before the wake that brings the flush thread here */
	if (now - ax_last_emit_ns < 1000000000u &&
	    !atomic_exchange_explicit(&ax_flush_asked, false, memory_order_relaxed))
		return;
	ax_last_emit_ns = now;
	fdr_ax_emit(rb, add, true);
}

/* What the trace does not have yet, into the process-wide table. */
static notrace bool ax_exit_count(void *arg, uint32_t id, uint64_t c, _Atomic uint64_t *taken)
{
	uint64_t base = atomic_load_explicit(taken, memory_order_relaxed);

	(void)arg;
	if (c != base)
		ax_count_global(id, c - base);
	atomic_store_explicit(taken, c, memory_order_relaxed);
	return true;
}

notrace void fdr_ax_thread_exit(struct fdr_thread *t)
{
	struct fdr_ax_thread *x = atomic_load_explicit(&t->ax, memory_order_relaxed);

	if (!fdr_ax_on || !x)
		return;
	/* no emitter holds our slot any more (the caller left the registry): @taken is final */
	ax_counts_each(x, ax_exit_count, NULL);
}

notrace void fdr_ax_after_fork_child(void)
{
	struct fdr_ax_thread *x = &ax_self;
	int saved_errno;

	if (!fdr_ax_on)
		return;
	/* the calls open at the fork stay open in the child: @nest and @shadow stay */
	for (uint32_t s = 0; s < AX_SLOTS; s++) {
		atomic_store_explicit(&x->slot[s].id, 0, memory_order_relaxed);
		atomic_store_explicit(&x->slot[s].count, 0, memory_order_relaxed);
		atomic_store_explicit(&x->taken[s], 0, memory_order_relaxed);
	}
	for (uint32_t k = 0; k < AX_FAST; k++) {
		atomic_store_explicit(&x->fast[k], 0, memory_order_relaxed);
		atomic_store_explicit(&x->fast_taken[k], 0, memory_order_relaxed);
	}
	/* zero pages again, without touching them: a child of a shell forks often */
	saved_errno = errno;
	if (madvise(ax_global, AX_GLOBAL * sizeof(*ax_global), MADV_DONTNEED) < 0)
		memset(ax_global, 0, AX_GLOBAL * sizeof(*ax_global));
	errno = saved_errno;	/* fork()'s caller sees its own */
	atomic_store_explicit(&ax_lost_pending, 0, memory_order_relaxed);
	atomic_store_explicit(&ax_lost_total, 0, memory_order_relaxed);
	ax_dec_written = 0;	/* the child's trace gets every decision it inherits */
	ax_last_emit_ns = 0;
}
