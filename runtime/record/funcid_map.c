// SPDX-License-Identifier: MIT
/*
 * runtime/record/funcid_map.c - function address -> function id, lock-free.
 *
 * Contract: fdr_funcid_get() runs in the hooks' slow path (any thread,
 * signal handlers included): no locks, no allocation, and no syscall
 * unless the flush thread fell behind (below) or another thread's insert
 * of the same function was preempted (sched_yield while waiting for it). fdr_funcid_prepare(),
 * fdr_funcid_limit() and fdr_funcid_addr() run in the flush thread;
 * fdr_funcid_init() at initialisation.
 *
 * Why not liburcu's cds_lfht: its lookups must run inside an RCU read-side
 * critical section, and with the urcu-bp flavour the first read lock of a
 * thread registers it (mmap and a mutex) - which may then happen inside a
 * signal handler's first hook, or deadlock against a fork. Our map never
 * deletes an entry, so it needs no reclamation at all: open-addressing
 * tables (linear probing) whose slots go from empty to taken once are
 * lock-free for both lookup and insert and safe anywhere.
 *
 * The cost of a first call. A new function's insert must not page-fault
 * (a first-touch fault costs microseconds on a virtual machine, inside
 * the user's function). So every byte an insert writes is mapped and
 * populated before a hook can need it, by someone other than the hook:
 *
 *   - The table is a chain of levels. Level k has 2^(14+k) slots of 16
 *     bytes (level 0: 256 KiB, populated by the flush thread's first round;
 *     the last,
 *     level 7: 32 MiB). A level takes keys until 3/4 of its slots are
 *     used; then it is closed and inserts go on in the next level. When a
 *     level is half used, the flush thread maps and populates the next one
 *     (fdr_funcid_prepare(), woken by the slow path), so it is ready long
 *     before it is needed. Should a hook still find it missing (the flush
 *     thread stuck, or a burst of new functions faster than it wakes), the
 *     hook maps it itself: one mmap, never a wrong id.
 *   - The id -> address array is one reservation populated ahead of the id
 *     counter (FID_AHEAD ids) by the flush thread, with an atomic RMW of 0
 *     per page (a store could overwrite a hook's concurrent store).
 *   - Initialisation, on the thread of the process's first hook, maps
 *     level 0 and the array and populates neither (2026-12-02: the 80
 *     pages were 0.16 ms of a short traced process's 1.3 ms start on this
 *     project's VM, for the two or three it touched). The flush thread
 *     populates them as soon as it runs (flush_thread.c, fl_pages_ahead():
 *     beside the program's first fraction of a millisecond), level 0 a
 *     64 KiB step at a time; a function the program enters before may
 *     fault a page in.
 *
 * Memory: 384 KiB once the flush thread has run (level 0 and the first
 * 2 x FID_AHEAD ids),
 * nothing per function up to 12,288 functions; past that, levels double
 * and per-function memory stays below ~60 bytes (16-byte slots at most 3/4
 * full, the next level mapped at half of the current, 8 bytes of id ->
 * address). Capacity: 3/4 of all levels, 3,133,440 functions; then new
 * functions get id 0 (the caller drops their records as FILTERED).
 *
 * Levels and the MOVED marker. A key lives in exactly one level. Its probe
 * sequence in level k ends at the key, at an empty slot, or at a slot
 * marked FID_MOVED ("keys whose probe reaches here continue in level
 * k+1"). An inserter that finds an empty slot in an open level claims it
 * for its key; in a closed level it claims it as MOVED. Either is one CAS
 * from 0, and a slot never changes again, so two threads looking for the
 * same key walk the same slots, see the same first terminal slot, and
 * agree on the level the key lives in: no key gets two ids.
 *
 * Insert protocol for a slot (key @addr, value @id):
 *   A: CAS addr 0 -> a          (the slot is ours; others with the same a wait)
 *   B: id = fetch_add(counter)  (ids are sequential)
 *   C: id_addr[id] = a          (relaxed; published by D or by the record's
 *                                buffer handover)
 *   D: store slot id, release   (pairs with the acquire load in lookups)
 * A reader that finds addr == a but id == 0 is between A and D on another
 * thread: it spins, then yields, a bounded number of times, then gives up
 * (id 0).
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <fdrtrace/format.h>

#include "funcid_map.h"

#define FID_L0_BITS 14u
#define FID_LEVELS 8u
#define FID_SLOTS(k) (1u << (FID_L0_BITS + (k)))
#define FID_FULL(k) (FID_SLOTS(k) / 4 * 3)	/* the level closes here */
#define FID_HALF(k) (FID_SLOTS(k) / 2)		/* the next level is prepared here */
/* every level's share, 3/4 of (2^14 + ... + 2^21) slots */
#define FID_MAX_IDS ((FID_SLOTS(FID_LEVELS) - FID_SLOTS(0)) / 4 * 3)
/* ids whose id -> address entries are populated ahead of the counter */
#define FID_AHEAD 8192u
#define FID_SPIN 2000
/* fid_wait()'s bound: far past any run-queue wait, short of a visible stall */
#define FID_WAIT_NS 200000000ull
#define FID_MOVED ((uintptr_t)1)	/* no function lives at address 1 */

struct fid_slot {
	_Atomic uintptr_t addr;	/* 0 empty, FID_MOVED, or a function's address */
	_Atomic uint32_t id;
};

static _Atomic(struct fid_slot *) fid_level[FID_LEVELS];
static _Atomic uint32_t fid_used[FID_LEVELS];	/* keys inserted into each level */
static _Atomic uintptr_t *fid_addr;		/* id -> address */
static _Atomic uint32_t fid_addr_ready;	/* entries below this are populated */
static _Atomic uint32_t fid_next = 1;

static notrace size_t fid_level_bytes(unsigned k)
{
	return sizeof(struct fid_slot) * FID_SLOTS(k);
}

/*
 * Level @k, mapped and populated. Whoever gets here first publishes it
 * (release: its zeroed slots before the pointer); a loser unmaps its copy.
 * Async-signal-safe (mmap, munmap). Return: the level, or NULL.
 */
static notrace struct fid_slot *fid_level_make(unsigned k)
{
	struct fid_slot *expect = NULL;
	/* level 0 at init: populated by the first fdr_funcid_prepare() (fid_level0_populate()) */
	void *m = mmap(NULL, fid_level_bytes(k), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (k ? MAP_POPULATE : 0), -1, 0);

	if (m == MAP_FAILED)
		return atomic_load_explicit(&fid_level[k], memory_order_acquire);
	if (!atomic_compare_exchange_strong_explicit(&fid_level[k], &expect, m,
						     memory_order_acq_rel, memory_order_acquire)) {
		munmap(m, fid_level_bytes(k));
		return expect;
	}
	return m;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
/*
 * Level 0's slots populated so far (flush thread; relaxed: a hint for
 * fdr_funcid_needs_prepare()), a step of FID_L0_STEP slots (64 KiB) per
 * fdr_funcid_prepare(): the finish, which waits for the flush thread's
 * round, never waits for more than a step.
 */
#define FID_L0_STEP 4096u
_Static_assert(FID_SLOTS(0) % FID_L0_STEP == 0, "level 0 is whole steps");
static _Atomic uint32_t fid_level0_ready;

/*
 * Level 0's next step of pages (flush thread). MADV_POPULATE_WRITE leaves
 * a page a hook has written as it is; without it (Linux before 5.14), an
 * atomic RMW of 0 per page, as for the id -> address array.
 */
static notrace void fid_level0_populate(void)
{
	struct fid_slot *l0 = atomic_load_explicit(&fid_level[0], memory_order_acquire);
	uint32_t from = atomic_load_explicit(&fid_level0_ready, memory_order_relaxed);
	size_t per_page = (size_t)sysconf(_SC_PAGESIZE) / sizeof(*l0);

	if (from >= FID_SLOTS(0) || !l0)
		return;
	if (madvise(l0 + from, FID_L0_STEP * sizeof(*l0), MADV_POPULATE_WRITE))
		for (size_t i = from; i < from + FID_L0_STEP; i += per_page)
			atomic_fetch_or_explicit(&l0[i].addr, 0, memory_order_relaxed);
	atomic_store_explicit(&fid_level0_ready, from + FID_L0_STEP, memory_order_relaxed);
}

/* Populate the id -> address entries below @upto (flush thread). */
static notrace void fid_addr_populate(uint32_t upto)
{
	uint32_t per_page = (uint32_t)((size_t)sysconf(_SC_PAGESIZE) / sizeof(*fid_addr));
	uint32_t from = atomic_load_explicit(&fid_addr_ready, memory_order_relaxed);

	if (upto > FID_MAX_IDS + 2)
		upto = FID_MAX_IDS + 2;
	for (uint32_t i = from - from % per_page; i < upto; i += per_page)
		atomic_fetch_or_explicit(&fid_addr[i], 0, memory_order_relaxed);
	if (upto > from)
		atomic_store_explicit(&fid_addr_ready, upto, memory_order_relaxed);
}

notrace int fdr_funcid_init(void)
{
	void *m;

	if (fid_addr)
		return 0;
	if (!fid_level_make(0))
		return -ENOMEM;
	m = mmap(NULL, sizeof(*fid_addr) * (FID_MAX_IDS + 2), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	fid_addr = m;
	return 0;
}

notrace void fdr_funcid_release(void)
{
	struct fid_slot *l0 = atomic_exchange_explicit(&fid_level[0], NULL, memory_order_acq_rel);

	if (l0)
		munmap(l0, fid_level_bytes(0));
	if (fid_addr)
		munmap((void *)fid_addr, sizeof(*fid_addr) * (FID_MAX_IDS + 2));
	fid_addr = NULL;
	atomic_store_explicit(&fid_level0_ready, 0, memory_order_relaxed);
	atomic_store_explicit(&fid_addr_ready, 0, memory_order_relaxed);
}

notrace bool fdr_funcid_needs_prepare(void)
{
	uint32_t next = atomic_load_explicit(&fid_next, memory_order_relaxed);
	uint32_t ready = atomic_load_explicit(&fid_addr_ready, memory_order_relaxed);

	/*
	 * Not before the flush thread's first preparing (ready 0), which
	 * comes on its own as the thread starts (flush_thread.c,
	 * fl_pages_ahead()) and goes on until level 0 is populated: a wake-up
	 * per new function until then would cost the functions of a short
	 * process a system call each.
	 */
	if (ready && next + FID_AHEAD / 2 > ready)
		return true;
	for (unsigned k = 0; k + 1 < FID_LEVELS; k++) {
		if (!atomic_load_explicit(&fid_level[k + 1], memory_order_relaxed))
			return atomic_load_explicit(&fid_used[k], memory_order_relaxed) >=
			       FID_HALF(k);
	}
	return false;
}

notrace bool fdr_funcid_prepare(void)
{
	if (!fid_addr)
		return false;
	fid_level0_populate();
	fid_addr_populate(atomic_load_explicit(&fid_next, memory_order_relaxed) + 2 * FID_AHEAD);
	for (unsigned k = 0; k + 1 < FID_LEVELS; k++) {
		if (atomic_load_explicit(&fid_level[k + 1], memory_order_acquire))
			continue;
		if (atomic_load_explicit(&fid_used[k], memory_order_relaxed) >= FID_HALF(k))
			fid_level_make(k + 1);
		break;
	}
	return atomic_load_explicit(&fid_level0_ready, memory_order_relaxed) < FID_SLOTS(0);
}

/* Fibonacci hashing: the top bits of the product are the well-mixed ones. */
static notrace uint64_t fid_hash(uintptr_t a)
{
	return (uint64_t)a * 0x9e3779b97f4a7c15ull;
}

/*
 * The id of a slot another thread is inserting (between A and D). That
 * thread may have been preempted (more threads than CPUs): after a short
 * spin, yield to let it run, for at most FID_WAIT_NS. Bounded by time, not
 * by a count of yields: a yield returns at once when nothing else waits on
 * this CPU while the inserter waits behind a busy one (a count of 20,000
 * gave up after ~10 ms on a loaded machine, dropping the records of a
 * function that did get its id). Bounded, so that a stopped inserter costs
 * a counted drop, never a hang. The inserter is never this thread: a hook
 * interrupting its own thread's insert is refused by the re-entry guard.
 * The clock is read every 64 yields (vDSO clock_gettime, no system call).
 */
static notrace uint32_t fid_wait(struct fid_slot *s)
{
	struct timespec t0 = { 0, 0 }, now;

	for (unsigned i = 0;; i++) {
		uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);

		if (id)
			return id;
		if (i < FID_SPIN) {
			__asm__ __volatile__("pause");
			continue;
		}
		if (i == FID_SPIN) {
			clock_gettime(CLOCK_MONOTONIC, &t0);
		} else if (!(i % 64)) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((uint64_t)(now.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)now.tv_nsec -
				    (uint64_t)t0.tv_nsec >= FID_WAIT_NS)
				return 0;
		}
		sched_yield();
	}
}

/* Give @s, just claimed for @addr in level @k, the next id. */
static notrace uint32_t fid_assign(struct fid_slot *s, unsigned k, uintptr_t addr)
{
	uint32_t id;

	atomic_fetch_add_explicit(&fid_used[k], 1, memory_order_relaxed);
	/*B*/
	id = atomic_fetch_add_explicit(&fid_next, 1, memory_order_relaxed);
	if (id > FDRTRACE_FUNC_ID_MAX || id >= FID_MAX_IDS)
		return 0;	/* slot stays id 0: lookups give up, records dropped */
	/*C*/
	atomic_store_explicit(&fid_addr[id], addr, memory_order_relaxed);
	/*D*/
	atomic_store_explicit(&s->id, id, memory_order_release);
	return id;
}

/*
 * The id of @addr: with @insert, given one if it has none (the slow path);
 * without, only looked up (0 when it has none). Inlined into both with
 * @insert constant.
 */
static fdr_always_inline notrace uint32_t fid_walk(uintptr_t addr, bool insert)
{
	uint64_t h = fid_hash(addr);

	if (!fid_addr || addr <= FID_MOVED)
		return 0;
	for (unsigned k = 0; k < FID_LEVELS; k++) {
		struct fid_slot *tab = atomic_load_explicit(&fid_level[k], memory_order_acquire);
		uint32_t mask = FID_SLOTS(k) - 1;
		uint32_t i = (uint32_t)(h >> (64 - FID_L0_BITS - k)), n = 0;

		if (!tab && insert)
			tab = fid_level_make(k);	/* the flush thread fell behind */
		if (!tab)
			return 0;
		while (n <= mask) {
			struct fid_slot *s = &tab[i];
			uintptr_t cur = atomic_load_explicit(&s->addr, memory_order_acquire);
			uintptr_t want;

			if (cur == addr)
				return insert ? fid_wait(s) :
						atomic_load_explicit(&s->id, memory_order_acquire);
			if (cur == FID_MOVED)
				break;	/* the key lives further on */
			if (cur) {
				i = (i + 1) & mask;
				n++;
				continue;
			}
			if (!insert)
				return 0;	/* the end of its probe: it has no id */
			want = atomic_load_explicit(&fid_used[k], memory_order_relaxed) >=
					       FID_FULL(k) ?
				       FID_MOVED :
				       addr;
			/*A*/
			if (!atomic_compare_exchange_strong_explicit(&s->addr, &cur, want,
								     memory_order_acq_rel,
								     memory_order_acquire))
				continue;	/* taken meanwhile: look at it again */
			if (want == FID_MOVED)
				break;
			return fid_assign(s, k, addr);
		}
	}
	return 0;
}

notrace uint32_t fdr_funcid_get(uintptr_t addr)
{
	return fid_walk(addr, true);
}

notrace uint32_t fdr_funcid_find(uintptr_t addr)
{
	return fid_walk(addr, false);
}

notrace uint32_t fdr_funcid_capacity(void)
{
	return FID_MAX_IDS;
}

notrace uint32_t fdr_funcid_limit(void)
{
	uint32_t n = atomic_load_explicit(&fid_next, memory_order_acquire);

	return n > FID_MAX_IDS ? FID_MAX_IDS : n;
}

notrace uintptr_t fdr_funcid_addr(uint32_t id)
{
	if (!id || id >= FID_MAX_IDS)
		return 0;
	return atomic_load_explicit(&fid_addr[id], memory_order_acquire);
}
