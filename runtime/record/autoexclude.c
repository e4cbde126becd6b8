// SPDX-License-Identifier: MIT
/*
 * runtime/record/autoexclude.c - auto_exclude: hot short functions counted,
 * not timed.
 *
 * Contract:
 *   - fdr_ax_init() runs once at the start of recording, before the gate
 *     opens: with the option on it maps the per-function array and sets
 *     fdr_gate_rec to FDR_GATE_COUNTED, the value every start of
 *     recording stores in the gate (lifecycle.c). The hooks' inline fast
 *     path is not changed: it sees a gate that is not FDR_GATE_ON and calls
 *     fdr_record_inactive(), this file's hook, which inactive.c's
 *     fdr_record_not_counted() serves for the other gates (the lazy start).
 *   - fdr_record_inactive() with the gate COUNTED is a hook: owner
 *     thread, maybe in a signal handler; no locks, no allocation, no
 *     system call, errno untouched. It takes
 *     the thread's guard first (a handler meanwhile goes to
 *     fdr_record_reentry(), as for the inline path), looks the function up
 *     *before* reading the clock, and either counts the call (no clock, no
 *     store in the buffer) or reads the clock and writes the record with the
 *     same inline writer as the fast path (fdr_record_at(): the records are
 *     byte for byte what they would be without auto_exclude).
 *   - A call is counted when its function is decided counted-only
 *     (ax_fn[id].state == AX_COUNTED) or when a counted call is open on the
 *     thread (@nest > 0): a recorded call never appears under the wrong
 *     caller. Exits are matched by nesting, not looked up: an exit while
 *     @nest > 0 closes the innermost counted call, so an exit of a call
 *     whose entry was recorded is recorded (a function decided while one of
 *     its calls was open keeps that call whole).
 *   - A longjmp out of a counted call leaves @nest high. The addresses of
 *     the innermost AX_NEST open counted calls are kept: an exit that does
 *     not match the innermost closes the innermost kept level with its
 *     address (the levels above it were jumped over), and an exit that
 *     matches none is a recorded call's (every counted call was jumped
 *     over: @nest goes back to 0). Past AX_NEST levels exits are trusted
 *     as they come. Until the first exit after the longjmp, the calls it
 *     made are counted, not recorded: their counts stay exact.
 *   - The decision: the exits of recorded calls of undecided functions
 *     add their durations to the function's evidence (ax_fn[id], relaxed
 *     atomics: shared by all threads until decided), from a per-thread
 *     stack of open calls (AX_SHADOW deep; deeper calls give no evidence,
 *     and an exit below a longjmp's leftovers drops them: a coroutine's
 *     yields left Lua's dispatchers without evidence, recorded through
 *     the undecided path for the whole run). The exits that bring a function to N,
 *     2N, 4N ... 16N timed calls decide (ax_decide()), on the calls since
 *     the previous point: mean below DURATION -> AX_COUNTED (written down
 *     in ax_dec[], which the flush thread puts in the trace); else the next
 *     point judges again, and after 16N the function stays AX_TIMED for
 *     the life of the process. A latency trigger's function stays timed.
 *     A counted function is sampled (ax_sample()) and may be timed again.
 *   - Counts: per thread, a table of AX_SLOTS (function id, count) written
 *     by the owner only (relaxed stores), read by fdr_ax_emit() under the
 *     thread's slot lock, which alone writes @taken (what the trace has);
 *     the tables and their output are autoexclude_counts.c's. A thread
 *     whose table is full for an id, and a thread that ends, add into a
 *     process-wide table (atomic adds; written with tid 0); a call neither
 *     table has room for is counted as lost, and the records say so.
 *   - The hot call sites of counted calls stop calling the hooks at all:
 *     the flush thread points them at stubs that count
 *     (autoexclude_patch.c); the hook remembers each counted call's site
 *     for it (ax_want()).
 *   - The cost of a counted call is the hook's (issue 34): the id cache
 *     entry (thread.h) names the function's slot (@ax = AX_SLOT_TAG |
 *     slot, ax_nest_enter()), which the hook checks against the slot's id
 *     and increments; a nested counted call's entry is 52 instructions
 *     in fdr_record_inactive() (gcc 12, its look at the gate included)
 *     and its exit 28, with no register saved (docs/performance.md).
 *
 * Memory ordering: ax_fn[id].state is stored with release by the decider
 * and read relaxed by hooks (a stale value only means one more call timed
 * or counted a moment late; either is exact). A table slot's id is stored
 * with release after its first count, and read with acquire by emitters.
 * ax_dec[i].ready is stored with release after the entry, read with acquire.
 */
#include <errno.h>
#include <sys/mman.h>

#include "autoexclude.h"
#include "autoexclude_internal.h"
#include "clock.h"
#include "filter.h"
#include "funcid_map.h"
#include "say.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"
#include "trigger.h"
#include "slowpath_inline.h"

/*
 * A counted function keeps being watched: one in AX_SAMPLE_EVERY of a
 * thread's outermost counted calls is timed (two clock reads), and the
 * function is timed again for good when most of a window of AX_SAMPLE_MIN
 * such calls (over the process's threads) took longer than DURATION: it
 * was short at first, not any more (a dispatcher whose first calls were
 * trivial), and counting it would hide its time. Most, not the mean: a
 * call preempted for a time slice, or a rare long path the first N calls
 * had too, does not undo it.
 */
#define AX_SAMPLE_EVERY 64u
#define AX_SAMPLE_MIN 8u

enum ax_state {
	AX_UNDECIDED = 0,
	AX_TIMED = 1,		/* decided: every call recorded */
	AX_COUNTED = AX_STATE_COUNTED,	/* decided: counted, not recorded */
};

/* Per function id: the evidence and the decision (16 bytes). */
struct ax_fn {
	_Atomic uint32_t calls;		/* timed calls whose duration is in @sum */
	_Atomic uint32_t state;		/* enum ax_state */
	_Atomic uint64_t sum;		/* their durations, clock ticks */
	/*
	 * Undecided: @samples and @ssum are @calls and @sum at the last
	 * decision point (ax_decide()), where the window of the next begins,
	 * and @slow is the next point (0: N). Counted: the outermost calls
	 * timed, this window (ax_sample()), @slow of them longer than
	 * DURATION, and their durations.
	 */
	_Atomic uint32_t samples;
	_Atomic uint32_t slow;
	_Atomic uint64_t ssum;
};

/* Decision points: N, 2N, 4N ... AX_POINTS_MAX x N timed calls; timed for good after. */
#define AX_POINTS_MAX 16u

/* auto_exclude's own: the hook and the decisions here, ax_fn their evidence */
static struct ax_fn *ax_fn;	/* fdr_funcid_capacity() entries, mapped as touched */
/*
 * fdr_all_slow || fdr_filtering (max_depth, filter, exclude), set with
 * them at the start (lc_start(), before fdr_ax_init()): a call inside a
 * counted call is then counted out of line (ax_nested_id()).
 */
static bool ax_nest_slow;

notrace const _Atomic uint32_t *ax_state_of(uint32_t id)
{
	return &ax_fn[id].state;
}

notrace void fdr_ax_init(void)
{
	uint64_t ns;
	uint32_t after;
	bool patch;
	void *m;
	int on = fdr_ax_parse(fdr_cfg.auto_exclude, &ns, &after, &patch);

	fdr_ax_on = false;
	ax_patching = false;
	fdr_gate_rec = FDR_GATE_ON;
	ax_nest_slow = fdr_all_slow || fdr_filtering;
	if (on < 0) {
		fdr_say("fdrtrace: FDRTRACE_OPTIONS: auto_exclude='%.200s': expected DURATION[;after=N][;patch=on|off] "
			"(DURATION a whole number of ns, us or ms; N from %u to %u) or off; "
			"auto_exclude off\n",
			fdr_cfg.auto_exclude, FDR_AX_AFTER_MIN, FDR_AX_AFTER_MAX);
		return;
	}
	if (!on)
		return;
	if (!ax_fn) {
		m = mmap(NULL, (size_t)fdr_funcid_capacity() * sizeof(struct ax_fn),
			 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED) {
			fdr_say("fdrtrace: auto_exclude: no memory for its tables; auto_exclude off\n");
			return;
		}
		ax_fn = m;
		m = mmap(NULL, AX_GLOBAL * sizeof(struct ax_global_slot), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED) {
			munmap(ax_fn, (size_t)fdr_funcid_capacity() * sizeof(struct ax_fn));
			ax_fn = NULL;
			fdr_say("fdrtrace: auto_exclude: no memory for its tables; auto_exclude off\n");
			return;
		}
		ax_global = m;
	}
	{
		__extension__ unsigned __int128 t = ns;

		ax_ticks = (uint64_t)(t * fdr_clock.freq / 1000000000u);
	}
	if (!ax_ticks)
		ax_ticks = 1;
	ax_after = after;
	/* the stubs count nested calls inline: not with max_depth or a name filter */
	ax_patching = patch && !ax_nest_slow;
	fdr_ax_on = true;
	fdr_gate_rec = FDR_GATE_COUNTED;
}

/* ---- counting ---- */

_Static_assert(FDRTRACE_FUNC_ID_MAX < AX_SLOT_TAG, "an id is never a slot tag");
_Static_assert(AX_SLOTS == 1u << AX_SLOT_BITS, "ax_hash() gives AX_SLOT_BITS bits");

/* Where a thread's table looks for @id first. */
static fdr_always_inline notrace uint32_t ax_hash(uint32_t id)
{
	return (id * 2654435761u) >> (32 - AX_SLOT_BITS);	/* the top bits */
}

/* One call of @id counted on this thread (owner). Return: its slot, AX_SLOTS if none. */
static fdr_always_inline notrace uint32_t ax_count(struct fdr_ax_thread *x, uint32_t id)
{
	uint32_t h = ax_hash(id);

	for (uint32_t i = 0; i < AX_PROBE; i++, h = (h + 1) & (AX_SLOTS - 1)) {
		uint32_t cur = atomic_load_explicit(&x->slot[h].id, memory_order_relaxed);

		if (likely(cur == id)) {
			/* owner only writes it: a load and a store, no locked add */
			atomic_store_explicit(&x->slot[h].count,
					      atomic_load_explicit(&x->slot[h].count,
								   memory_order_relaxed) + 1,
					      memory_order_relaxed);
			return h;
		}
		if (!cur) {
			atomic_store_explicit(&x->slot[h].count, 1, memory_order_relaxed);
			/* release: the count before the id that makes emitters read it */
			atomic_store_explicit(&x->slot[h].id, id, memory_order_release);
			return h;
		}
	}
	ax_count_global(id, 1);
	return AX_SLOTS;
}

/*
 * The id of a function called inside a counted call, and whether its call
 * is counted: not when filter/exclude leave it out or it is deeper than
 * max_depth (those count as FILTERED drops, as the slow path counts them).
 */
static notrace uint32_t ax_nested_id(struct fdr_thread *t, struct fdr_ax_thread *x,
				     uintptr_t addr, uint32_t id)
{
	if (!id) {
		id = fdr_funcid_find(addr);
		if (!id)
			id = fdr_funcid_get(addr);
	}
	if (id && fdr_filtering && fdr_filter_skip(id))
		id = 0;
	if (id && fdr_all_slow) {
		uint64_t depth = t->depth_epoch == atomic_load_explicit(&fdr_depth_epoch,
									 memory_order_relaxed)
					 ? t->depth
					 : 0;

		if (depth + x->nest + 1 > fdr_cfg.max_depth)
			id = 0;
	}
	if (!id)
		atomic_fetch_add_explicit(&t->drop_rec[FDRTRACE_DROP_FILTERED], 1,
					  memory_order_relaxed);
	return id;
}

/*
 * A counted call (@id 0: left out) enters at @addr; @ce is its id cache
 * entry. A function the entry holds, and not as timed for good, gets its
 * slot there (@ce->ax = AX_SLOT_TAG | slot), which the hook's next call
 * uses instead of the hash, so that an id not in its first slot (a
 * collision) is counted inline too.
 */
static fdr_always_inline notrace void ax_nest_enter(struct fdr_thread *t, struct fdr_ax_thread *x,
						    struct fdr_fcache_ent *ce, uintptr_t addr,
						    uint32_t id)
{
	uint32_t s;

	/* ~addr, left out: its exit counts a filtered drop too, as the slow path's would */
	if (x->nest < AX_NEST)
		x->nest_addr[x->nest] = id ? addr : ~addr;
	x->nest++;
	if (unlikely(!atomic_load_explicit(&t->ax, memory_order_relaxed))) {
		/* release: pairs with emitters' acquire (under the slot lock) */
		atomic_store_explicit(&t->ax, x, memory_order_release);
		/* counts to write: a process that only counts (a fork child) has a trace too */
		fdr_mark_recorded();
	}
	if (!id)
		return;
	s = ax_count(x, id);
	if (s < AX_SLOTS && ce->addr == addr && ce->id == id && ce->ax != id)
		ce->ax = AX_SLOT_TAG | s;
}

/* ---- evidence and decisions ---- */


/*
 * The calls of @id open on this thread at @tsc (x->shadow[0..x->open)):
 * each has run tsc - its entry so far, a lower bound of its duration,
 * added to @calls and @sum. Evidence from closed calls alone favours the
 * short ones: a dispatcher's first call, open through the whole run (Lua's
 * luaV_execute under its main chunk), never gave any, while its short
 * calls from C (a sort comparator's) made a mean below DURATION; counted,
 * that open call and every call under it were counted for the rest of
 * the run (0.4 M records of 1.6 M in one run of workload.lua).
 */
static notrace void ax_open_evidence(const struct fdr_ax_thread *x, uint32_t id, uint64_t tsc,
				     uint32_t *calls, uint64_t *sum)
{
	for (uint32_t i = 0; i < x->open && i < AX_SHADOW; i++) {
		if (x->shadow[i].id == id && tsc > x->shadow[i].tsc) {
			(*calls)++;
			*sum += tsc - x->shadow[i].tsc;
		}
	}
}

/*
 * A decision point: @n timed calls of @id, N x 2^k. Judged on the calls
 * since the previous point (the first: all N), with the thread's calls of
 * @id still open (ax_open_evidence()): the first calls of a function are
 * timed while its callees are still recorded, and the hooks' own cost
 * inflates them; later windows, with the short callees counted, say what
 * the function costs. Only the thread whose call made @n comes here, and
 * the points come in order.
 */
static notrace fdr_noinline void ax_decide(const struct fdr_ax_thread *x, uint32_t id,
					  struct ax_fn *f, uint32_t n, uint32_t point,
					  uint64_t tsc)
{
	uint64_t total = atomic_load_explicit(&f->sum, memory_order_relaxed);
	uint32_t base_n = atomic_load_explicit(&f->samples, memory_order_relaxed);
	uint64_t sum = total - atomic_load_explicit(&f->ssum, memory_order_relaxed);
	uint32_t calls = n - base_n;
	__extension__ unsigned __int128 limit;
	uint32_t state = AX_TIMED;

	ax_open_evidence(x, id, tsc, &calls, &sum);
	limit = __extension__ (unsigned __int128)ax_ticks * calls;

	/* a counted function may be timed again later (ax_sample()): one slot kept for that */
	if (sum < limit && !(fdr_triggering && fdr_trigger_uncached(id)) &&
	    atomic_load_explicit(&ax_dec_next, memory_order_relaxed) < AX_DECISIONS / 2 &&
	    ax_note(id, calls, sum, tsc, false)) {
		state = AX_COUNTED;
		/* the fields are the samples' from now on */
		atomic_store_explicit(&f->samples, 0, memory_order_relaxed);
		atomic_store_explicit(&f->slow, 0, memory_order_relaxed);
		atomic_store_explicit(&f->ssum, 0, memory_order_relaxed);
	} else if ((uint64_t)point < (uint64_t)ax_after * AX_POINTS_MAX) {
		/* not short yet: the next point judges the calls from here */
		atomic_store_explicit(&f->samples, n, memory_order_relaxed);
		atomic_store_explicit(&f->ssum, total, memory_order_relaxed);
		return;
	}
	atomic_store_explicit(&f->state, state, memory_order_release);
}

/*
 * The end of a sampled outermost counted call of @id, @d ticks long:
 * time the function again for good if it is not short any more.
 */
static notrace fdr_noinline void ax_sample(uint32_t id, uint64_t d, uint64_t tsc)
{
	struct ax_fn *f = &ax_fn[id];
	uint64_t ssum = atomic_fetch_add_explicit(&f->ssum, d, memory_order_relaxed) + d;
	uint32_t slow = atomic_fetch_add_explicit(&f->slow, d > ax_ticks, memory_order_relaxed) +
			(d > ax_ticks);
	uint32_t n = atomic_fetch_add_explicit(&f->samples, 1, memory_order_relaxed) + 1;
	uint32_t expect = AX_COUNTED;

	if (n < AX_SAMPLE_MIN)
		return;
	if (2 * slow <= n) {
		/* a window of samples: the next says what the calls are like by then */
		atomic_store_explicit(&f->samples, 0, memory_order_relaxed);
		atomic_store_explicit(&f->slow, 0, memory_order_relaxed);
		atomic_store_explicit(&f->ssum, 0, memory_order_relaxed);
		return;
	}
	/* one thread undoes it (the CAS), and says so */
	if (atomic_compare_exchange_strong_explicit(&f->state, &expect, AX_TIMED,
						    memory_order_release, memory_order_relaxed))
		ax_note(id, n, ssum, tsc, true);
}

/*
 * An outermost counted call of @id begins at @addr (level 0, just
 * entered): time one in AX_SAMPLE_EVERY. Its level holds ~addr, so that
 * its exit goes out of line, to ax_sample_exit().
 */
static fdr_always_inline notrace void ax_sample_enter(struct fdr_ax_thread *x, uintptr_t addr,
						      uint32_t id)
{
	if (likely(--x->sample_left < AX_SAMPLE_EVERY))
		return;
	x->sample_left = AX_SAMPLE_EVERY - 1;
	x->sample_id = id;
	x->nest_addr[0] = ~addr;
	x->sample_tsc = fdr_clock_read(&(unsigned){ 0 });
}

/* An exit closed counted calls: the sampled one, if it was the outermost. */
static fdr_always_inline notrace void ax_sample_exit(struct fdr_ax_thread *x)
{
	uint64_t tsc;

	if (likely(!x->sample_id) || x->nest)
		return;
	tsc = fdr_clock_read(&(unsigned){ 0 });
	if (tsc > x->sample_tsc)
		ax_sample(x->sample_id, tsc - x->sample_tsc, tsc);
	x->sample_id = 0;
}

/* The exit of the counted call at @level (0: the outermost). */
static fdr_always_inline notrace void ax_close(struct fdr_thread *t, struct fdr_ax_thread *x,
					       uint32_t level)
{
	x->nest = level;
	/* ~addr (the top bit: no function's address has it): left out, or sampled */
	if (level < AX_NEST && unlikely((intptr_t)x->nest_addr[level] < 0) &&
	    !(level == 0 && x->sample_id))
		atomic_fetch_add_explicit(&t->drop_rec[FDRTRACE_DROP_FILTERED], 1,
					  memory_order_relaxed);
	ax_sample_exit(x);
}

/* Whether the counted call open at @level (< AX_NEST) is one of @addr (either form). */
static fdr_always_inline notrace bool ax_level_is(const struct fdr_ax_thread *x, uint32_t level,
						  uintptr_t addr)
{
	return x->nest_addr[level] == addr || x->nest_addr[level] == ~addr;
}

/* An exit while counted calls are open: true when it closes one of them. */
static notrace bool ax_nest_exit(struct fdr_thread *t, struct fdr_ax_thread *x, uintptr_t addr)
{
	uint32_t n = x->nest;

	if (n > AX_NEST || ax_level_is(x, n - 1, addr)) {
		ax_close(t, x, n - 1);
		return true;
	}
	/* a longjmp left counted calls: the innermost kept level it closes, if any */
	for (uint32_t i = n - 1; i-- > 0;) {
		if (ax_level_is(x, i, addr)) {
			ax_close(t, x, i);
			return true;
		}
	}
	x->nest = 0;	/* every counted call was jumped over: this is a recorded call's exit */
	x->sample_id = 0;
	return false;
}

static fdr_always_inline notrace void ax_shadow_enter(struct fdr_ax_thread *x, uintptr_t addr,
						      uint32_t id, uint64_t tsc)
{
	if (unlikely(x->open == AX_SHADOW))
		x->open = 0;	/* full of a longjmp's leftovers, or very deep: start again */
	x->shadow[x->open++] = (struct ax_open){ .addr = addr, .id = id, .tsc = tsc };
}

/*
 * A recorded call of undecided @id ended, @d ticks long (at most that, for
 * a call a longjmp left): its evidence, and the decision at N, 2N, 4N ...
 */
static notrace void ax_evidence(const struct fdr_ax_thread *x, uint32_t id, uint64_t d,
				uint64_t tsc)
{
	struct ax_fn *f = &ax_fn[id];
	uint32_t n, raw, point;

	if (atomic_load_explicit(&f->state, memory_order_relaxed) != AX_UNDECIDED)
		return;
	/*
	 * Loads and stores, not locked adds (the hooks' cost is what the
	 * evidence measures): threads timing the same function at once may
	 * lose one another's calls and durations, which only makes the
	 * evidence a little later. The point (N, 2N, 4N ...) is claimed with
	 * a compare-and-swap: one thread decides at each.
	 */
	n = atomic_load_explicit(&f->calls, memory_order_relaxed) + 1;
	atomic_store_explicit(&f->calls, n, memory_order_relaxed);
	atomic_store_explicit(&f->sum, atomic_load_explicit(&f->sum, memory_order_relaxed) + d,
			      memory_order_relaxed);
	raw = atomic_load_explicit(&f->slow, memory_order_relaxed);
	point = raw ? raw : ax_after;
	if (unlikely(n >= point) &&
	    atomic_compare_exchange_strong_explicit(&f->slow, &raw, 2 * point,
						    memory_order_relaxed, memory_order_relaxed))
		ax_decide(x, id, f, n, point, tsc);
}

static fdr_always_inline notrace void ax_shadow_exit(struct fdr_ax_thread *x, uintptr_t addr,
						     uint64_t tsc)
{
	const struct ax_open *o;

	if (!x->open)
		return;
	if (x->shadow[x->open - 1].addr != addr) {
		/*
		 * a longjmp's leftovers above it (a coroutine's yield): the
		 * innermost open call of @addr closes, the ones above it are
		 * gone; none: not an undecided call's exit
		 */
		uint32_t i = x->open - 1, top = x->open;

		while (i > 0 && x->shadow[i - 1].addr != addr)
			i--;
		/*
		 * Only an undecided function's exit is one of a call pushed
		 * here: a function decided since its open call was pushed has
		 * its later calls unpushed, and the exit of one of them would
		 * close the open one and everything above it, still running.
		 */
		if (!i || atomic_load_explicit(&ax_fn[x->shadow[i - 1].id].state,
					       memory_order_relaxed) != AX_UNDECIDED)
			return;
		x->open = i;
		/*
		 * The calls jumped over ended before this exit: each lasted at
		 * most until now, evidence that can only err towards timing
		 * (a function every call of which a longjmp ends, Lua's
		 * luaD_throw and lua_yieldk, got none and stayed undecided,
		 * its calls recorded the slow way for the whole run).
		 */
		for (uint32_t j = i; j < top; j++)
			if (tsc >= x->shadow[j].tsc)
				ax_evidence(x, x->shadow[j].id, tsc - x->shadow[j].tsc, tsc);
	}
	o = &x->shadow[--x->open];
	if (tsc >= o->tsc)
		ax_evidence(x, o->id, tsc - o->tsc, tsc);
}

/* recording restarted (fdrtrace_start()): the calls open at the stop may have returned unseen */
static notrace void ax_restart(struct fdr_ax_thread *x)
{
	x->epoch = atomic_load_explicit(&fdr_depth_epoch, memory_order_relaxed);
	x->nest = 0;
	x->open = 0;
	x->sample_id = 0;
}

/* ---- the hook ---- */

/* What the out-of-line part tells the hook. */
enum ax_do {
	AX_DO_RECORD,		/* record the call */
	AX_DO_TIME,		/* record it, and time it for the decision (undecided) */
	AX_DO_NOTHING,		/* counted (or left out): the guard is released */
};

/*
 * A function found by its address, not in the id cache: put it there, as
 * the writer's slow path does for a recorded call (slowpath.c), or its
 * counted calls would all look it up again, while a function whose id
 * shares its cache entry keeps it (zstd: a third of the calls). Not a
 * filtered function (the slow path caches it as ~addr when it records
 * it) nor a latency trigger's (never cached). @ce->ax is left as it is: a
 * stale id of another function means "look it up", this function's own id
 * there means timed for good, which stays true, and a slot tag (another
 * function's) names a slot that does not hold this id.
 */
static notrace void ax_cache_fill(struct fdr_fcache_ent *ce, uintptr_t addr, uint32_t id)
{
	if ((fdr_filtering && fdr_filter_skip(id)) || (fdr_triggering && fdr_trigger_uncached(id)))
		return;
	ce->addr = addr;
	ce->id = id;
}

/*
 * Everything but "a call of a function known to be timed, no counted call
 * open": decide, count. Owner, guard held; releases it for AX_DO_NOTHING.
 */
static notrace fdr_noinline enum ax_do ax_slow(struct fdr_thread *t, uintptr_t addr,
					       unsigned action, struct fdr_fcache_ent *ce)
{
	struct fdr_ax_thread *x = &ax_self;
	uint32_t id = 0, state;

	if (unlikely(x->epoch != atomic_load_explicit(&fdr_depth_epoch, memory_order_relaxed)))
		ax_restart(x);
	if (action == FDRTRACE_FN_EXIT) {
		if (x->nest && ax_nest_exit(t, x, addr))
			goto done;
		return AX_DO_RECORD;
	}
	if (unlikely(t->state != FDR_T_ACTIVE || t->ignored))
		return AX_DO_RECORD;	/* the slow path registers the thread, or drops */
	if (likely(ce->addr == addr)) {
		id = ce->id;
	} else if (ce->addr != ~addr) {
		id = fdr_funcid_find(addr);
		if (id)
			ax_cache_fill(ce, addr, id);
	}
	if (x->nest) {
		/* inside a counted call: counted too (a filtered one as the slow path would) */
		if (ce->addr == ~addr) {
			ax_nest_enter(t, x, ce, addr, 0);
			atomic_fetch_add_explicit(&t->drop_rec[FDRTRACE_DROP_FILTERED], 1,
						  memory_order_relaxed);
		} else {
			ax_nest_enter(t, x, ce, addr, ax_nested_id(t, x, addr, id));
		}
		goto done;
	}
	if (!id) {
		/*
		 * New: its id now, so that this first call is timed as evidence
		 * too; a dispatcher's first call is often its longest, open
		 * through the run (ax_open_evidence()). With a filter, the slow
		 * path gives it one (or leaves it out).
		 */
		if (ce->addr == ~addr || fdr_filtering || !(id = fdr_funcid_get(addr)))
			return AX_DO_RECORD;
		ax_cache_fill(ce, addr, id);
	}
	/* not from the cache's tag: a counted function may be timed again (ax_sample()) */
	state = atomic_load_explicit(&ax_fn[id].state, memory_order_relaxed);
	if (state == AX_COUNTED) {
		ax_nest_enter(t, x, ce, addr, id);
		ax_sample_enter(x, addr, id);
		goto done;
	}
	if (state == AX_TIMED) {
		if (ce->addr == addr)
			ce->ax = id;	/* the hook records its calls without coming here */
		return AX_DO_RECORD;
	}
	x->pending_id = id;
	return AX_DO_TIME;
done:
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
	return AX_DO_NOTHING;
}

/*
 * The hook's path for everything but a call of a function known to be
 * timed, with no counted call and no undecided timed call open on the
 * thread. Owner, guard held.
 */
static notrace fdr_noinline void ax_record_slow(struct fdr_thread *t, void *fn, unsigned action,
						struct fdr_fcache_ent *ce)
{
	struct fdr_ax_thread *x = &ax_self;
	uintptr_t addr = (uintptr_t)fn;
	int saved_errno = errno;	/* a new id may map memory, a filter may wait */
	enum ax_do what = ax_slow(t, addr, action, ce);
	uint64_t tsc;
	unsigned cpu;

	errno = saved_errno;
	if (what == AX_DO_NOTHING)
		return;
	tsc = fdr_clock_read(&cpu);
	if (action == FDRTRACE_FN_EXIT)
		ax_shadow_exit(x, addr, tsc);
	else if (what == AX_DO_TIME)
		ax_shadow_enter(x, addr, x->pending_id, tsc);
	fdr_record_at(t, fn, action, tsc, cpu);	/* releases the guard */
}

/*
 * Every call fdr_record_inactive() does not finish itself: the recorded
 * calls of functions not known to be timed, the exits that may end an undecided
 * timed call, a counted call that samples, a count whose slot the id
 * cache does not name (a stale tag, a collision of a function timed for
 * good), a clock that needs a call, a restart, filters. Owner, guard held
 * (released by the paths it takes).
 */
static notrace fdr_noinline void ax_record_other(struct fdr_thread *t, void *fn, unsigned action)
{
	struct fdr_ax_thread *x = &ax_self;
	uintptr_t addr = (uintptr_t)fn;
	struct fdr_fcache_ent *ce = &t->cache[(addr >> 4) & (FDR_FCACHE_SIZE - 1)];
	uint64_t tsc;
	unsigned cpu;

	if (unlikely(ce->addr != addr))
		goto slow;
	if (likely(!x->nest)) {
		/*
		 * A timed function's call, or its exit: recorded at once. Its
		 * exit looks at the shadow only when the innermost open call
		 * there is one of its (pushed while it was undecided).
		 */
		if (likely(ce->ax == ce->id &&
			   !(action == FDRTRACE_FN_EXIT && x->open &&
			     x->shadow[x->open - 1].addr == addr))) {
			if (unlikely(!fdr_clock_read_fast(&tsc, &cpu)))
				goto slow;
			fdr_record_at(t, fn, action, tsc, cpu);	/* releases the guard */
			return;
		}
		if (unlikely(x->epoch != atomic_load_explicit(&fdr_depth_epoch,
							      memory_order_relaxed) ||
			     t->state != FDR_T_ACTIVE || t->ignored))
			goto slow;
		if (action == FDRTRACE_FN_EXIT) {
			/* the exit of a recorded call: evidence when it is an undecided one's */
			if (unlikely(!fdr_clock_read_fast(&tsc, &cpu)))
				goto slow;
			ax_shadow_exit(x, addr, tsc);
			fdr_record_at(t, fn, action, tsc, cpu);
			return;
		}
		switch (atomic_load_explicit(&ax_fn[ce->id].state, memory_order_relaxed)) {
		case AX_COUNTED:
			/* the outermost call of a counted function */
			ax_nest_enter(t, x, ce, addr, ce->id);
			ax_sample_enter(x, addr, ce->id);
			goto done;
		case AX_UNDECIDED:
			/* recorded, and timed for the decision */
			if (unlikely(!fdr_clock_read_fast(&tsc, &cpu)))
				goto slow;
			ax_shadow_enter(x, addr, ce->id, tsc);
			fdr_record_at(t, fn, action, tsc, cpu);
			return;
		default:
			goto slow;	/* timed: the cache's tag is set there */
		}
	}
	/* inside a counted call: its calls are counted, its exits close them */
	if (unlikely(x->epoch != atomic_load_explicit(&fdr_depth_epoch, memory_order_relaxed)))
		goto slow;
	if (action == FDRTRACE_FN_EXIT) {
		if (likely(x->nest <= AX_NEST && ax_level_is(x, x->nest - 1, addr))) {
			ax_close(t, x, x->nest - 1);
			goto done;
		}
	} else if (likely(!ax_nest_slow)) {
		/* (the out-of-line path applies max_depth and the name filters) */
		ax_nest_enter(t, x, ce, addr, ce->id);
		goto done;
	}
slow:
	/* every other case, out of line (a tail call: no frame here) */
	ax_record_slow(t, fn, action, ce);
	return;
done:
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
}

/*
 * The hook's call of a function known to be timed (@ce->ax == @ce->id):
 * recorded, the clock read inline; a clock that needs a call goes to
 * ax_record_other(). Owner, guard held.
 */
static notrace fdr_noinline void ax_record_timed(struct fdr_thread *t, void *fn, unsigned action)
{
	uint64_t tsc;
	unsigned cpu;

	if (unlikely(!fdr_clock_read_fast(&tsc, &cpu))) {
		ax_record_other(t, fn, action);
		return;
	}
	fdr_record_at(t, fn, action, tsc, cpu);	/* releases the guard */
}

/*
 * The hook's counted call of @ce's function (@ce->addr == @addr) at level
 * @n: its id in the slot the cache entry names (ax_nest_enter()), or else
 * in its first slot (a function timed for good, called inside a counted
 * call), which this thread's table has. A stale tag (the entry since given
 * to another function, the table cleared in a fork child) names a slot
 * that does not hold the id. The id is not 0: an entry holds an address
 * only with its id. Return: false, and nothing done, when the slot is not
 * the function's (the caller goes out of line). No branch but that one:
 * a level past AX_NEST is written to the scratch entry.
 */
static fdr_always_inline notrace bool ax_enter_counted(struct fdr_ax_thread *x,
							 const struct fdr_fcache_ent *ce, uint32_t n,
							 uintptr_t addr)
{
	uint32_t id = ce->id, ax = ce->ax;
	uint32_t h = likely(ax & AX_SLOT_TAG) ? ax & (AX_SLOTS - 1) : ax_hash(id);

	/* (a slot holds an id only once ax_nest_enter() has set @t->ax, which nothing clears) */
	if (unlikely(atomic_load_explicit(&x->slot[h].id, memory_order_relaxed) != id))
		return false;
	x->nest_addr[n < AX_NEST ? n : AX_NEST] = addr;
	x->nest = n + 1;
	/* owner only writes it: a load and a store, no locked add */
	atomic_store_explicit(&x->slot[h].count,
			      atomic_load_explicit(&x->slot[h].count, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	return true;
}

/* A gate that is not auto_exclude's (@g): the lazy start, drops (inactive.c). */
static notrace fdr_noinline fdr_cold void ax_not_counted(void *fn, unsigned action, int g)
{
	if (fdr_record_not_counted(fn, action, g))
		fdr_record_inactive(fn, action);	/* started, with auto_exclude */
}

/*
 * The hook, for every gate neither ON nor OFF: the hooks' inline fast path
 * (fastpath_inline.h) jumps here, and with auto_exclude every call comes.
 * Any other gate (the lazy start, drops) goes to ax_not_counted(). It
 * finishes by itself the calls that come by the million: the counted
 * calls whose id is in the slot the id cache names and that are not
 * sampled; a recorded call of a function known to be timed goes to
 * ax_record_timed(), everything else to ax_record_other(), with the
 * guard held, which does it all again from the start. Every call made
 * here is a tail call (fdr_record_reentry(), ax_record_timed(),
 * ax_record_other(), ax_not_counted()): no value is live across a call, no
 * frame is set up, no register saved (gcc 12; two were before
 * ax_record_timed() took the record out, six in the one function this was
 * before that). This is the hook's own body, not a jump away from
 * inactive.c: the jump and the second look at the gate were an eighth of
 * a counted call's instructions.
 */
notrace void fdr_record_inactive(void *fn, unsigned action)
{
	struct fdr_thread *t = &fdr_self;
	struct fdr_ax_thread *x = &ax_self;
	uintptr_t addr = (uintptr_t)fn;
	struct fdr_fcache_ent *ce = &t->cache[(addr >> 4) & (FDR_FCACHE_SIZE - 1)];
	int g = atomic_load_explicit(&fdr_gate, memory_order_relaxed);
	uint32_t n;

	if (unlikely(g != FDR_GATE_COUNTED)) {
		ax_not_counted(fn, action, g);
		return;
	}
	if (unlikely(t->guard)) {
		fdr_record_reentry(t, addr, action);
		return;
	}
	t->guard = FDR_GUARD_HOOK;
	atomic_signal_fence(memory_order_seq_cst);
	n = x->nest;
	if (likely(n)) {
		/* inside a counted call: as ax_record_other()'s, for the common cases */
		if (unlikely(x->epoch != atomic_load_explicit(&fdr_depth_epoch,
							      memory_order_relaxed)))
			goto other;
		if (action == FDRTRACE_FN_EXIT) {
			/*
			 * the innermost counted call's exit (a level that is
			 * left out, or the outermost if sampled, holds ~addr)
			 */
			if (unlikely(n > AX_NEST || x->nest_addr[n - 1] != addr))
				goto other;
			x->nest = n - 1;
			goto done;
		}
		/* a counted call inside it (the out-of-line path applies max_depth and the name filters) */
		if (unlikely(ce->addr != addr || ax_nest_slow || !ax_enter_counted(x, ce, n, addr)))
			goto other;
		goto done;
	}
	if (unlikely(ce->addr != addr))
		goto other;
	if (likely(ce->ax == ce->id)) {
		/*
		 * A function known to be timed: recorded. An exit while
		 * undecided calls are open (a long-running main() is one) goes
		 * out of line only when it may be the innermost one's, or for
		 * what ax_record_other() checks first on that path. The record
		 * is a tail call: the registers it needs are not saved here.
		 */
		if (action == FDRTRACE_FN_EXIT && x->open &&
		    unlikely(x->shadow[x->open - 1].addr == addr ||
			     x->epoch != atomic_load_explicit(&fdr_depth_epoch,
							      memory_order_relaxed) ||
			     t->state != FDR_T_ACTIVE || t->ignored))
			goto other;
		ax_record_timed(t, fn, action);
		return;
	}
	/* the outermost call of a counted function, not sampled (any clock) */
	if (action == FDRTRACE_FN_EXIT ||
	    unlikely(x->epoch != atomic_load_explicit(&fdr_depth_epoch, memory_order_relaxed) ||
		     t->state != FDR_T_ACTIVE || t->ignored ||
		     x->sample_left - 1 >= AX_SAMPLE_EVERY) ||
	    atomic_load_explicit(&ax_fn[ce->id].state, memory_order_relaxed) != AX_COUNTED ||
	    unlikely(!ax_enter_counted(x, ce, 0, addr)))
		goto other;
	x->sample_left--;	/* the outermost calls count down to the next sampled one */
done:
	/* the hooks jump here: our return address is the instrumented call's */
	if (ax_patching)
		ax_want(x, __builtin_return_address(0), addr, action);
	atomic_signal_fence(memory_order_seq_cst);
	t->guard = 0;
	return;
other:
	/* a tail call: no frame here */
	ax_record_other(t, fn, action);
}
