// SPDX-License-Identifier: MIT
/*
 * runtime/record/trigger.c - latency triggers: a slow call writes a
 * snapshot of the ring.
 *
 * Contract:
 *   - fdr_trigger_init() parses the trigger option once, at initialisation,
 *     after the clock is set up (durations become ticks). Triggers need the
 *     ring policy; anything wrong is said in one line on stderr and turns
 *     triggers off (recording goes on).
 *   - The flush thread decides, once per function id, whether the
 *     function's symbol name matches a trigger (fdr_trigger_decide(), from
 *     the names it looks up anyway in ring policy). Until it has, and for
 *     every function that matches, the hooks' slow path does not put the
 *     function in its thread's id cache (fdr_trigger_uncached()): every
 *     call of it misses and comes to fdr_record_slow(), which calls
 *     fdr_trigger_call() after writing the record (for every call whose
 *     function missed the cache: the exit of a call entered while its
 *     function was undecided must leave our stack). A function that does
 *     not match is cached as usual, so its calls keep the fast path
 *     (fastpath_inline.h is unchanged).
 *   - fdr_trigger_call() runs in the hook's slow path, guard held, maybe
 *     in a signal handler: no locks, no allocation, no system call but the
 *     futex wake of the flush thread's fdr_flush_request_trigger(),
 *     through the drain (drain.h). It keeps, per thread, the
 *     entry times of the calls of candidate functions still open
 *     (TRG_STACK of them; deeper ones are counted and never fire). At an
 *     exit after more than the trigger's duration it claims a snapshot
 *     (at most trigger_max, none within trigger_holdoff_ms of the last)
 *     and asks the flush thread for it; the thread goes on at once.
 *
 * Memory ordering: trg_state[id] is written once by the flush thread with
 * release and read by hooks with acquire (a stale 0 only means one more
 * call through the slow path). trg_claimed and trg_last_tsc are claimed
 * with compare-and-swap; the description of the last firing (trg_fire_*)
 * is written before the request that makes the flush thread read it
 * (release/acquire through fl_trig_req in flush_thread.c).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "drain.h"
#include "funcid_map.h"
#include "modules.h"
#include "say.h"
#include "state.h"
#include "trigger.h"

#define TRG_MAX 16		/* triggers in the option */
#define TRG_PATTERN_MAX 256
#define TRG_IDS (1u << 20)	/* ids decided (the flush thread's name cache holds these) */
#define TRG_STACK 32		/* open calls of candidates kept per thread */

/* trg_state[id]: 0 undecided, TRG_NO, or 1 + the index of the first matching trigger */
#define TRG_NO 0xff

struct trg {
	char pattern[TRG_PATTERN_MAX];
	char text[TRG_PATTERN_MAX + 32];	/* as given, for messages */
	uint64_t ticks;
};

struct trg_open {
	uint32_t id;
	uint64_t tsc;
};

bool fdr_triggering;
static struct trg trg_list[TRG_MAX];
static unsigned trg_count;
static _Atomic uint8_t *trg_state;
static uint64_t trg_holdoff_ticks;
static _Atomic uint64_t trg_claimed;
static _Atomic uint64_t trg_last_tsc;
/*
 * The last firing, for the flush thread's message. Atomic: with no hold-off
 * two threads may fire at once (the message may then mix them; each
 * snapshot is still written).
 */
static _Atomic uint32_t trg_fire_id;
static _Atomic uint32_t trg_fire_index;
static _Atomic uint64_t trg_fire_ticks;

static fdr_tls struct trg_open trg_stk[TRG_STACK];
static fdr_tls uint32_t trg_depth;
static fdr_tls uint32_t trg_over;	/* candidate calls open beyond TRG_STACK */

static notrace void trg_say(const char *what, const char *detail)
{
	fdr_say("fdrtrace: FDRTRACE_OPTIONS: trigger='%.200s': %s%s; triggers off\n",
		fdr_cfg.trigger, what, detail);
}

/* "5ms", "200us", "1s", "750ns" -> ticks. Return: 0 or -1. */
static notrace int trg_duration(const char *s, uint64_t *ticks)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	__extension__ unsigned __int128 t;
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	for (size_t i = 0; i < FDR_ARRAY_SIZE(units); i++) {
		if (strcmp(p, units[i].unit))
			continue;
		t = v;
		t = t * units[i].ns * fdr_clock.freq / 1000000000u;
		if (t > UINT64_MAX)
			return -1;
		*ticks = (uint64_t)t;
		return 0;
	}
	return -1;
}

notrace void fdr_trigger_init(void)
{
	char spec[sizeof(fdr_cfg.trigger)];
	char *save = NULL, *item;
	void *m;

	fdr_triggering = false;
	trg_count = 0;
	if (!fdr_cfg.trigger[0])
		return;
	if (fdr_cfg.policy != FDR_POLICY_RING) {
		trg_say("needs policy=ring", " (a trigger writes a snapshot of the ring)");
		return;
	}
	memcpy(spec, fdr_cfg.trigger, sizeof(spec));
	for (item = strtok_r(spec, ";,", &save); item; item = strtok_r(NULL, ";,", &save)) {
		char *gt = strrchr(item, '>');
		struct trg *g;

		while (*item == ' ')
			item++;
		if (!*item)
			continue;
		if (trg_count == TRG_MAX) {
			trg_say("more than 16 triggers", "");
			return;
		}
		g = &trg_list[trg_count];
		snprintf(g->text, sizeof(g->text), "%s", item);
		if (!gt || gt == item || (size_t)(gt - item) >= sizeof(g->pattern)) {
			trg_say("expected GLOB>DURATION in ", g->text);
			return;
		}
		memcpy(g->pattern, item, (size_t)(gt - item));
		g->pattern[gt - item] = '\0';
		if (trg_duration(gt + 1, &g->ticks) < 0) {
			trg_say("not a duration (a whole number and ns, us, ms or s) in ", g->text);
			return;
		}
		trg_count++;
	}
	if (!trg_count) {
		trg_say("no trigger in it", "");
		return;
	}
	m = mmap(NULL, TRG_IDS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (m == MAP_FAILED) {
		trg_say("no memory for the decisions", "");
		return;
	}
	trg_state = m;
	{
		__extension__ unsigned __int128 h = fdr_cfg.trigger_holdoff_ms;

		trg_holdoff_ticks = (uint64_t)(h * fdr_clock.freq / 1000u);
	}
	fdr_triggering = true;
}

notrace void fdr_trigger_reset_child(void)
{
	atomic_store_explicit(&trg_claimed, 0, memory_order_relaxed);
	atomic_store_explicit(&trg_last_tsc, 0, memory_order_relaxed);
	trg_depth = 0;
	trg_over = 0;
}

/* Flush thread: does function @id (named @name) match a trigger? */
notrace void fdr_trigger_decide(uint32_t id, const char *name)
{
	uint8_t v = TRG_NO;

	if (!fdr_triggering || id >= TRG_IDS)
		return;
	for (unsigned i = 0; name[0] && i < trg_count; i++) {
		if (!fnmatch(trg_list[i].pattern, name, 0)) {
			v = (uint8_t)(i + 1);
			break;
		}
	}
	/* release: pairs with the hook's acquire load in fdr_trigger_uncached() */
	atomic_store_explicit(&trg_state[id], v, memory_order_release);
}

notrace bool fdr_trigger_uncached(uint32_t id)
{
	/* ids past the table are never decided: they are not candidates */
	return id < TRG_IDS &&
	       atomic_load_explicit(&trg_state[id], memory_order_acquire) != TRG_NO;
}

/* Claim a snapshot for a call of @id, trigger @k, that took @ticks; ask for it. */
static notrace void trg_fire(uint32_t id, unsigned k, uint64_t ticks, uint64_t tsc)
{
	uint64_t last = atomic_load_explicit(&trg_last_tsc, memory_order_relaxed);
	uint64_t n = atomic_load_explicit(&trg_claimed, memory_order_relaxed);

	if (n >= fdr_cfg.trigger_max)
		return;
	if (last && tsc - last < trg_holdoff_ticks)
		return;	/* hold-off: part of the burst that fired last */
	if (!atomic_compare_exchange_strong_explicit(&trg_last_tsc, &last, tsc ? tsc : 1,
						     memory_order_relaxed, memory_order_relaxed))
		return;	/* another thread fired at the same moment */
	if (atomic_fetch_add_explicit(&trg_claimed, 1, memory_order_relaxed) >= fdr_cfg.trigger_max)
		return;
	atomic_store_explicit(&trg_fire_id, id, memory_order_relaxed);
	atomic_store_explicit(&trg_fire_index, k, memory_order_relaxed);
	atomic_store_explicit(&trg_fire_ticks, ticks, memory_order_relaxed);
	fdr_drain_trigger();	/* release: the three stores above before it */
}

notrace void fdr_trigger_call(uint32_t id, unsigned action, uint64_t tsc, bool written,
			      bool candidate)
{
	uint32_t d;
	uint8_t k;

	if (action == FDRTRACE_FN_ENTRY || action == FDRTRACE_FN_ENTRY_ARGS) {
		if (!written || !candidate)
			return;
		if (trg_depth == TRG_STACK) {
			trg_over++;
			return;
		}
		trg_stk[trg_depth].id = id;
		trg_stk[trg_depth].tsc = tsc;
		trg_depth++;
		return;
	}
	if (trg_over && candidate) {
		trg_over--;	/* the exit of a call we did not keep */
		return;
	}
	/* the innermost open call of @id (a longjmp may have skipped exits) */
	for (d = trg_depth; d > 0 && trg_stk[d - 1].id != id; d--)
		;
	if (!d)
		return;
	trg_depth = d - 1;
	k = id < TRG_IDS ? atomic_load_explicit(&trg_state[id], memory_order_acquire) : TRG_NO;
	if (!written || !candidate || k == 0 || k == TRG_NO)
		return;	/* not (yet) known to match: no snapshot for this call */
	if (tsc - trg_stk[d - 1].tsc > trg_list[k - 1].ticks)
		trg_fire(id, k - 1u, tsc - trg_stk[d - 1].tsc, tsc);
}

/* Flush thread: the line that says why a snapshot was written. */
notrace void fdr_trigger_describe(char *buf, size_t cap)
{
	uint32_t id = atomic_load_explicit(&trg_fire_id, memory_order_relaxed);
	uint32_t k = atomic_load_explicit(&trg_fire_index, memory_order_relaxed);
	uint64_t ticks = atomic_load_explicit(&trg_fire_ticks, memory_order_relaxed);
	double ms = fdr_clock.freq ? (double)ticks * 1e3 / (double)fdr_clock.freq : 0;
	uintptr_t addr = fdr_funcid_addr(id);
	char name[512];
	uint32_t module;

	if (!addr || fdr_symbol_lookup(addr, name, sizeof(name), &module) < 0 || !name[0])
		snprintf(name, sizeof(name), "function #%u", id);
	snprintf(buf, cap, "trigger %s: a call of %s took %.3f ms",
		 trg_list[k < trg_count ? k : 0].text, name, ms);
}
