// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_writer_slow.c - the hooks' slow path
 * (runtime/record/slowpath.c, fdr_record_slow()) driven directly, as a hook does
 * when its fast path cannot write: an id cache miss, a CPU change, a
 * clock delta too large for a record, a full buffer swapped for a free
 * one, and an empty pool (drops counted, then reported as a gap).
 *
 * Linked with the runtime's objects (libfdrtrace's, not instrumented); the
 * test sets up what recording needs (configuration, clock, pool, id map,
 * registry) without a flush thread: nothing writes the buffers handed
 * over, the test takes them from the queue and reads them.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "buffer_queue.h"
#include "clock.h"
#include "config.h"
#include "funcid_map.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"

#define SIZE 4096u
#define COUNT 4u

static void setup(void)
{
	cr_assert_eq(fdr_config_parse(&fdr_cfg, "fdr", "buffer_size=4096 buffer_max=4", -1), 0);
	fdr_clock.source = FDRTRACE_CLOCK_MONOTONIC;
	fdr_clock.freq = 1000000000u;
	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	cr_assert_eq(fdr_funcid_init(), 0);
	cr_assert_eq(fdr_registry_init(), 0);
	atomic_store(&fdr_phase, FDR_PHASE_RECORDING);
	atomic_store(&fdr_gate, FDR_GATE_ON);
}

TestSuite(writer_slow, .init = setup);

/* One hook's slow path on this thread: the guard taken as the hook takes it. */
static void hook(uintptr_t addr, unsigned action, uint64_t tsc, unsigned cpu)
{
	fdr_self.guard = FDR_GUARD_HOOK;
	fdr_record_slow(&fdr_self, addr, action, tsc, cpu);
	cr_assert_eq(fdr_self.guard, 0, "the slow path gives the guard back");
}

/* A record of a buffer, as read back. */
struct rec {
	bool md;
	unsigned type;		/* metadata: its type; function: its action */
	uint32_t id;		/* function */
	uint32_t delta;		/* function */
	uint64_t tsc;		/* NewCPUId, TSCWrap */
	uint16_t cpu;		/* NewCPUId */
};

/* The records of @data..@end (custom events' payloads skipped). */
static unsigned walk(const uint8_t *p, const uint8_t *end, struct rec *out, unsigned cap)
{
	unsigned n = 0;

	while (p < end && n < cap) {
		struct rec *r = &out[n++];

		memset(r, 0, sizeof(*r));
		if (!(p[0] & 1)) {
			uint32_t word;

			memcpy(&word, p, 4);
			memcpy(&r->delta, p + 4, 4);
			r->type = fdrtrace_func_word_action(word);
			r->id = fdrtrace_func_word_id(word);
			p += FDRTRACE_FUNC_RECORD_SIZE;
			continue;
		}
		r->md = true;
		r->type = p[0] >> 1;
		if (r->type == FDRTRACE_MD_NEW_CPU_ID) {
			struct fdrtrace_md_new_cpu_id m;

			memcpy(&m, p, sizeof(m));
			r->cpu = m.cpu;
			r->tsc = m.tsc;
		} else if (r->type == FDRTRACE_MD_TSC_WRAP) {
			struct fdrtrace_md_tsc_wrap m;

			memcpy(&m, p, sizeof(m));
			r->tsc = m.tsc;
		}
		p += FDRTRACE_METADATA_RECORD_SIZE;
		if (r->type == FDRTRACE_MD_CUSTOM_EVENT) {
			int32_t size;

			memcpy(&size, p - FDRTRACE_METADATA_RECORD_SIZE + 1, sizeof(size));
			cr_assert_geq(size, 0);
			p += size;
		}
	}
	cr_assert_leq(p, end, "a record runs past the end");
	return n;
}

/* The thread's current buffer's records. */
static unsigned walk_own(struct rec *out, unsigned cap)
{
	cr_assert_not_null(fdr_self.buf);
	return walk(fdr_self.buf->data, atomic_load(&fdr_self.pos), out, cap);
}

/* The function records among @r[0..n), in order, into @f. */
static unsigned funcs(const struct rec *r, unsigned n, struct rec *f)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++)
		if (!r[i].md)
			f[k++] = r[i];
	return k;
}

#define FN_A ((uintptr_t)0x401000)
#define FN_B ((uintptr_t)0x402230)

Test(writer_slow, an_id_cache_miss_gives_the_function_an_id_caches_it_and_records_the_call)
{
	struct rec r[64], f[64];
	struct fdr_fcache_ent *ce = &fdr_self.cache[(FN_A >> 4) & (FDR_FCACHE_SIZE - 1)];
	uint32_t a, b;
	unsigned n;

	cr_assert_eq(fdr_funcid_find(FN_A), 0, "no id before its first call");
	hook(FN_A, FDRTRACE_FN_ENTRY, 1000, 0);
	a = fdr_funcid_find(FN_A);
	cr_assert_neq(a, 0, "its first call gave it an id");
	cr_assert_eq(ce->addr, FN_A, "and put it in the thread's id cache");
	cr_assert_eq(ce->id, a);
	cr_assert_eq(fdr_self.state, FDR_T_ACTIVE, "the first hook registers the thread");
	cr_assert_not_null(fdr_self.buf, "and claims a buffer");
	cr_assert_lt(fdr_pool_free(), COUNT);

	hook(FN_B, FDRTRACE_FN_ENTRY, 1010, 0);
	b = fdr_funcid_find(FN_B);
	cr_assert(b && b != a, "another function, another id");
	hook(FN_B, FDRTRACE_FN_EXIT, 1030, 0);
	hook(FN_A, FDRTRACE_FN_EXIT, 1100, 0);
	cr_assert_eq(fdr_funcid_find(FN_A), a, "ids never change");

	n = funcs(r, walk_own(r, 64), f);
	cr_assert_eq(n, 4);
	cr_assert_eq(f[0].id, a);
	cr_assert_eq(f[0].type, FDRTRACE_FN_ENTRY);
	cr_assert_eq(f[1].id, b);
	cr_assert_eq(f[2].id, b);
	cr_assert_eq(f[2].type, FDRTRACE_FN_EXIT);
	cr_assert_eq(f[3].id, a);
	cr_assert_eq(f[3].type, FDRTRACE_FN_EXIT);
	/* deltas from one record to the next (the first: from the buffer's start) */
	cr_assert_eq(f[2].delta, 20);
	cr_assert_eq(f[3].delta, 70);
}

Test(writer_slow, a_cpu_change_writes_a_new_cpu_record_before_the_call)
{
	struct rec r[64];
	unsigned n, i;

	hook(FN_A, FDRTRACE_FN_ENTRY, 1000, 0);
	hook(FN_A, FDRTRACE_FN_EXIT, 1050, 3);
	cr_assert_eq(fdr_self.cpu, 3);
	n = walk_own(r, 64);
	cr_assert_geq(n, 3);
	/* the last two: NewCPUId(3, tsc 1050), then the exit, 0 ticks after it */
	i = n - 2;
	cr_assert(r[i].md && r[i].type == FDRTRACE_MD_NEW_CPU_ID, "record %u: type %u", i,
		  r[i].type);
	cr_assert_eq(r[i].cpu, 3);
	cr_assert_eq(r[i].tsc, 1050);
	cr_assert_not(r[i + 1].md);
	cr_assert_eq(r[i + 1].type, FDRTRACE_FN_EXIT);
	cr_assert_eq(r[i + 1].delta, 0);

	/* the same CPU again: no record */
	hook(FN_A, FDRTRACE_FN_ENTRY, 1060, 3);
	cr_assert_eq(walk_own(r, 64), n + 1);
}

Test(writer_slow, a_delta_too_large_for_a_record_writes_a_tsc_wrap_first)
{
	struct rec r[64];
	uint64_t t0, t1;
	unsigned n, cpu;

	/* a thread's first entry is stamped after its registration: the clock's time */
	hook(FN_A, FDRTRACE_FN_ENTRY, 1000, 0);
	t0 = fdr_self.last_tsc;
	t1 = t0 + UINT32_MAX + 5ull;
	/* and on the CPU the thread ran on then: no NewCPUId below */
	cpu = fdr_self.cpu;
	hook(FN_A, FDRTRACE_FN_EXIT, t0 + UINT32_MAX, cpu);	/* the largest delta that fits */
	n = walk_own(r, 64);
	cr_assert_not(r[n - 1].md);
	cr_assert_eq(r[n - 1].delta, UINT32_MAX);
	cr_assert_not(r[n - 2].md && r[n - 2].type == FDRTRACE_MD_TSC_WRAP);

	hook(FN_A, FDRTRACE_FN_ENTRY, t1 + UINT32_MAX, cpu);
	n = walk_own(r, 64);
	cr_assert(r[n - 2].md && r[n - 2].type == FDRTRACE_MD_TSC_WRAP);
	cr_assert_eq(r[n - 2].tsc, t1 + UINT32_MAX, "the wrap carries the full clock");
	cr_assert_eq(r[n - 1].delta, 0);
	cr_assert_eq(r[n - 1].type, FDRTRACE_FN_ENTRY);
}

/* Calls until the thread's buffer is handed over; the calls made. */
static unsigned fill_one(uint64_t *tsc)
{
	struct fdr_buffer *first = fdr_self.buf;
	unsigned calls = 0;

	do {
		hook(FN_A, calls & 1 ? FDRTRACE_FN_EXIT : FDRTRACE_FN_ENTRY, (*tsc)++, 0);
		calls++;
		cr_assert_lt(calls, SIZE, "the buffer was never handed over");
	} while (fdr_self.buf == first);
	return calls;
}

Test(writer_slow, a_full_buffer_is_handed_over_and_a_free_one_claimed)
{
	struct rec r[SIZE / 8], f[SIZE / 8];
	struct fdr_buffer *full, *next;
	uint64_t tsc = 1000;
	unsigned calls, in_full, in_next;

	hook(FN_A, FDRTRACE_FN_ENTRY, tsc++, 0);
	full = fdr_self.buf;
	cr_assert(fdr_queue_empty());
	calls = 1 + fill_one(&tsc);
	next = fdr_self.buf;
	cr_assert_not_null(next);
	cr_assert_neq(next, full);

	/* the full buffer went to the flush side, whole, with its length */
	cr_assert_eq(fdr_queue_pop(false), full);
	cr_assert(fdr_queue_empty());
	cr_assert_gt(full->len, SIZE - FDR_SLOW_RESERVE - FDRTRACE_FUNC_RECORD_SIZE);
	cr_assert_leq(full->len, SIZE);
	cr_assert_eq(full->tid, fdr_self.tid);
	in_full = funcs(r, walk(full->data, full->data + full->len, r, SIZE / 8), f);
	/* the new one starts with a preamble (NewBuffer first, v5: after the extents) */
	cr_assert_eq(next->data[0] >> 1, FDRTRACE_MD_BUFFER_EXTENTS);
	cr_assert_eq(next->data[FDRTRACE_METADATA_RECORD_SIZE] >> 1, FDRTRACE_MD_NEW_BUFFER);
	in_next = funcs(r, walk_own(r, SIZE / 8), f);
	cr_assert_eq(in_full + in_next, calls, "every call in one buffer or the other: %u + %u != %u",
		     in_full, in_next, calls);
	cr_assert_eq(in_next, 1, "the call that found the buffer full is the new one's first");
}

Test(writer_slow, an_empty_pool_counts_drops_then_the_next_buffer_reports_the_gap)
{
	struct rec r[SIZE / 8];
	struct fdr_buffer *b[COUNT];
	uint64_t tsc = 1000;
	uint64_t dropped = 0;
	unsigned n;
	bool gap = false;

	hook(FN_A, FDRTRACE_FN_ENTRY, tsc++, 0);
	for (unsigned i = 0; i < COUNT - 1; i++)
		fill_one(&tsc);
	/* the last free buffer is the thread's now; fill it: no buffer for the next call */
	cr_assert_eq(fdr_pool_free(), 0);
	while (fdr_self.buf) {
		hook(FN_A, FDRTRACE_FN_ENTRY, tsc++, 0);
		cr_assert_lt(tsc, 1000 + 10 * SIZE);
	}
	dropped = atomic_load(&fdr_self.drop_rec[FDRTRACE_DROP_POOL_EMPTY]);
	cr_assert_eq(dropped, 1, "the call that found no buffer is counted");
	cr_assert_eq(atomic_load(&fdr_self.drop_buf[FDRTRACE_DROP_POOL_EMPTY]), 1);
	hook(FN_A, FDRTRACE_FN_EXIT, tsc++, 0);
	hook(FN_A, FDRTRACE_FN_ENTRY, tsc++, 0);
	cr_assert_eq(atomic_load(&fdr_self.drop_rec[FDRTRACE_DROP_POOL_EMPTY]), 3);
	cr_assert_eq(atomic_load(&fdr_self.drop_buf[FDRTRACE_DROP_POOL_EMPTY]), 1,
		     "one buffer short, however many calls");

	/* the flush side writes and returns what was queued */
	for (unsigned i = 0; i < COUNT; i++) {
		b[i] = fdr_queue_pop(false);
		cr_assert_not_null(b[i]);
	}
	for (unsigned i = 0; i < COUNT; i++)
		fdr_pool_put(b[i]);
	hook(FN_A, FDRTRACE_FN_EXIT, tsc++, 0);
	cr_assert_not_null(fdr_self.buf);
	/* its first buffer after the gap reports it (an FDRx drop record), and the counts are taken */
	n = walk_own(r, SIZE / 8);
	for (unsigned i = 0; i < n; i++)
		gap |= r[i].md && r[i].type == FDRTRACE_MD_CUSTOM_EVENT;
	cr_assert(gap, "no drop record after the gap");
	cr_assert_eq(atomic_load(&fdr_self.drop_rec[FDRTRACE_DROP_POOL_EMPTY]), 0);
	cr_assert_not(r[n - 1].md);
	cr_assert_eq(r[n - 1].type, FDRTRACE_FN_EXIT);
}
