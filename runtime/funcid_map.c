// SPDX-License-Identifier: MIT
/*
 * runtime/funcid_map.c - function address -> function id, lock-free.
 *
 * Contract: fdr_funcid_get() runs in the hooks' slow path (any thread,
 * signal handlers included): no locks, no allocation, no syscalls.
 * fdr_funcid_limit()/fdr_funcid_addr() run in the flush thread.
 *
 * Why not liburcu's cds_lfht: its lookups must run inside an RCU read-side
 * critical section, and with the urcu-bp flavour the first read lock of a
 * thread registers it (mmap and a mutex) - which may then happen inside a
 * signal handler's first hook, or deadlock against a fork. Our map never
 * deletes an entry, so it needs no reclamation at all: a fixed-size
 * open-addressing table (linear probing) whose slots go from empty to
 * taken once, with no resize, is lock-free for both lookup and insert and
 * safe anywhere. The table is a large MAP_NORESERVE mapping touched
 * lazily; it holds FDR_FUNCID_SLOTS * 3/4 functions, then new functions
 * get id 0 (the caller drops their records as FILTERED).
 *
 * Insert protocol for a slot (key @addr, value @id):
 *   A: CAS addr 0 -> a          (the slot is ours; others with the same a wait)
 *   B: id = fetch_add(counter)  (ids are sequential)
 *   C: id_addr[id] = a          (relaxed; published by D or by the record's
 *                                buffer handover)
 *   D: store slot id, release   (pairs with the acquire load in lookups)
 * A reader that finds addr == a but id == 0 is between A and D on another
 * thread: it spins a bounded number of times, then gives up (id 0).
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include <fdrtrace/format.h>

#include "funcid_map.h"

#define FDR_FUNCID_SLOTS (1u << 21)
#define FDR_FUNCID_MAX_USED (FDR_FUNCID_SLOTS / 4 * 3)
#define FDR_FUNCID_SPIN 100000

struct fid_slot {
	_Atomic uintptr_t addr;
	_Atomic uint32_t id;
};

static struct fid_slot *fid_table;
static _Atomic uintptr_t *fid_addr;	/* id -> address */
static _Atomic uint32_t fid_next = 1;

notrace int fdr_funcid_init(void)
{
	void *m;

	if (fid_table)
		return 0;
	m = mmap(NULL, sizeof(*fid_table) * FDR_FUNCID_SLOTS, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	fid_table = m;
	m = mmap(NULL, sizeof(*fid_addr) * (FDR_FUNCID_MAX_USED + 2), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	fid_addr = m;
	return 0;
}

static notrace uint32_t fid_hash(uintptr_t a)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 43);	/* 21 bits */
}

static notrace uint32_t fid_wait(struct fid_slot *s)
{
	for (int i = 0; i < FDR_FUNCID_SPIN; i++) {
		uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);

		if (id)
			return id;
		__asm__ __volatile__("pause");
	}
	return 0;
}

notrace uint32_t fdr_funcid_get(uintptr_t addr)
{
	uint32_t i = fid_hash(addr);

	if (!fid_table || !addr)
		return 0;
	for (uint32_t n = 0; n < FDR_FUNCID_SLOTS; n++, i = (i + 1) & (FDR_FUNCID_SLOTS - 1)) {
		struct fid_slot *s = &fid_table[i];
		uintptr_t cur = atomic_load_explicit(&s->addr, memory_order_acquire);
		uint32_t id;

		if (cur == addr)
			return fid_wait(s);
		if (cur)
			continue;
		if (atomic_load_explicit(&fid_next, memory_order_relaxed) >= FDR_FUNCID_MAX_USED)
			return 0;
		/*A*/
		if (!atomic_compare_exchange_strong_explicit(&s->addr, &cur, addr,
							     memory_order_acq_rel,
							     memory_order_acquire)) {
			if (cur == addr)
				return fid_wait(s);
			continue;
		}
		/*B*/
		id = atomic_fetch_add_explicit(&fid_next, 1, memory_order_relaxed);
		if (id > FDRTRACE_FUNC_ID_MAX || id >= FDR_FUNCID_MAX_USED)
			return 0;	/* slot stays id 0: lookups give up, records dropped */
		/*C*/
		atomic_store_explicit(&fid_addr[id], addr, memory_order_relaxed);
		/*D*/
		atomic_store_explicit(&s->id, id, memory_order_release);
		return id;
	}
	return 0;
}

notrace uint32_t fdr_funcid_limit(void)
{
	uint32_t n = atomic_load_explicit(&fid_next, memory_order_acquire);

	return n > FDR_FUNCID_MAX_USED ? FDR_FUNCID_MAX_USED : n;
}

notrace uintptr_t fdr_funcid_addr(uint32_t id)
{
	if (!id || id >= FDR_FUNCID_MAX_USED)
		return 0;
	return atomic_load_explicit(&fid_addr[id], memory_order_acquire);
}
