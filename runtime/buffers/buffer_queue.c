// SPDX-License-Identifier: MIT
/*
 * runtime/buffers/buffer_queue.c - the buffer pool and the full-buffer queue.
 *
 * Contract: fdr_pool_init() once at initialisation (before any hook
 * records); fdr_pool_get/put and fdr_queue_push from any thread, including
 * hooks in signal handlers (lock-free, no syscalls, no allocation).
 * fdr_queue_pop from one consumer at a time (whoever holds the file lock:
 * the flush thread, or the fatal-signal handler). fdr_pool_reset only in
 * a fork child, where the calling thread is the only one.
 *
 * on_full=wait: fdr_pool_get_wait() sleeps on a futex (bq_put_seq) for a
 * bounded time; fdr_pool_put() wakes the sleepers, with one futex call
 * per buffer returned and only while someone waits (bq_waiters).
 *
 * Growth (stream policy): fdr_pool_grow() adds buffers, from the flush
 * thread only, up to the most fixed at fdr_pool_init(). The buffer
 * descriptors (bq_bufs, bq_next) are reserved for that most at start
 * (address space only: a descriptor's page is touched when its buffer is
 * added), so a buffer's descriptor never moves and every reader of the
 * pool goes on without a lock. A new buffer's memory is a mapping of its
 * own, pre-faulted before the buffer is pushed on the free stack, so a
 * hook never takes a first-touch page fault in it. bq_count grows with a
 * release store after the new descriptors are written; the pool never
 * shrinks.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "buffer_queue.h"

static uint8_t *bq_mem;
static size_t bq_mem_len;
static uint64_t bq_size;	/* bytes per buffer */
static struct fdr_buffer *bq_bufs;
static _Atomic uint32_t bq_count;	/* buffers in the pool (grows; release: descriptors first) */
static uint32_t bq_limit;	/* the most it may grow to */
static _Atomic uint32_t *bq_next;	/* free-stack links: index+1, 0 ends */
static _Atomic uint64_t bq_head;	/* generation << 32 | (index + 1) */
static _Atomic uint32_t bq_free;	/* buffers on the free stack (a hint: see fdr_pool_free()) */

static _Atomic uint32_t bq_put_seq;	/* futex word: bumped by a put while someone waits */
static _Atomic uint32_t bq_waiters;	/* threads in fdr_pool_get_wait() */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
/*
 * The start pool's pages: BQ_INIT bytes faulted in at init (the start of
 * the buffer handed out first: the free stack gives never-used buffers in
 * index order), then by the flush thread BQ_STEP bytes at a time, as far as
 * bq_lead() past the last buffer handed out (bq_reached), and the rest once
 * the process has run a while (@whole): a short-lived process, a shell's
 * command, never pays for pages it does not touch (5-30 us a page on this
 * project's VM; all 8 MiB took the flush thread 16 ms of CPU at every
 * start, beside the program's threads), and a long-lived one still has
 * the whole pool faulted before a burst needs it.
 */
#define BQ_EAGER (512u << 10)	/* kept ahead of the buffers in use, at most */
#define BQ_START (128u << 10)	/* the least lead */
/*
 * Pre-faulted at init, on the thread of the first hook: a page of records
 * (256) and a few more. The rest of the lead is the flush thread's (its
 * first round, a millisecond later): 2026-12-02, the 128 KiB faulted here
 * were 0.1 ms of a short traced process's 1.3 ms start on this VM, for
 * one page it used.
 */
#define BQ_INIT (16u << 10)
#define BQ_STEP (256u << 10)	/* by the flush thread, a step at a time */

/*
 * How far past the last buffer handed out the flush thread keeps pages
 * faulted: as much as the process has used so far, from BQ_START to
 * BQ_EAGER. A process that used one buffer (most of a shell's commands)
 * has one more faulted; one that fills buffers gets the whole lead after
 * eight (2026-12-01: the 512 KiB faulted at every start, 128 pages at
 * 5-30 us, were a third of a short traced process's CPU time).
 */
static notrace uint64_t bq_lead(uint64_t used)
{
	return used < BQ_START ? BQ_START : used > BQ_EAGER ? BQ_EAGER : used;
}

static size_t bq_faulted;	/* bytes of bq_mem from its start pre-faulted (flush thread after init) */
/*
 * 1 + the highest index of the start mapping ever handed out (a CAS
 * maximum; relaxed: a hint for the pre-faulting, which only reads it).
 * Invariant: buffers at or past it were never handed out, so a first-touch
 * fault there can only be a hook's to come.
 */
static _Atomic uint32_t bq_reached;

static struct cds_wfcq_head bq_full_head;
static struct cds_wfcq_tail bq_full_tail;

notrace int fdr_pool_init(uint64_t buffer_size, uint64_t buffer_max, uint64_t limit)
{
	size_t meta;
	void *m;

	if (limit < buffer_max)
		limit = buffer_max;
	meta = sizeof(*bq_bufs) * limit + sizeof(*bq_next) * limit;
	bq_mem_len = buffer_size * buffer_max;
	m = mmap(NULL, bq_mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	bq_mem = m;
	bq_faulted = BQ_INIT;
	if (bq_faulted > bq_mem_len)
		bq_faulted = bq_mem_len;
	if (madvise(bq_mem, bq_faulted, MADV_POPULATE_WRITE)) {
		/* no MADV_POPULATE_WRITE: all of it now, by writing zeros */
		memset(bq_mem, 0, bq_mem_len);
		bq_faulted = bq_mem_len;
	}
	/* descriptors for the most the pool may grow to: touched as buffers are added */
	m = mmap(NULL, meta, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | (limit > buffer_max ? MAP_NORESERVE : 0), -1, 0);
	if (m == MAP_FAILED) {
		int err = -errno;

		munmap(bq_mem, bq_mem_len);
		bq_mem = NULL;
		return err;
	}
	bq_bufs = m;
	bq_next = (_Atomic uint32_t *)(bq_bufs + limit);
	bq_size = buffer_size;
	bq_limit = (uint32_t)limit;
	for (uint32_t i = 0; i < buffer_max; i++) {
		bq_bufs[i].data = bq_mem + (size_t)i * buffer_size;
		bq_bufs[i].index = i;
	}
	atomic_store_explicit(&bq_count, (uint32_t)buffer_max, memory_order_release);
	fdr_pool_reset();
	return 0;
}

notrace void fdr_pool_release(void)
{
	if (!bq_mem)
		return;
	atomic_store_explicit(&bq_count, 0, memory_order_release);
	munmap(bq_bufs, (sizeof(*bq_bufs) + sizeof(*bq_next)) * bq_limit);
	munmap(bq_mem, bq_mem_len);
	bq_bufs = NULL;
	bq_next = NULL;
	bq_mem = NULL;
	bq_mem_len = 0;
	bq_faulted = 0;
}

notrace bool fdr_pool_prefault_step(bool all, bool whole)
{
	uint64_t used = (uint64_t)atomic_load_explicit(&bq_reached, memory_order_relaxed) * bq_size;
	uint64_t want = used + bq_lead(used);
	size_t n;

	if (all)
		bq_faulted = 0;
	if (whole || want > bq_mem_len)
		want = bq_mem_len;
	if (!bq_mem || bq_faulted >= want)
		return false;
	n = want - bq_faulted < BQ_STEP ? want - bq_faulted : BQ_STEP;	/* want <= bq_mem_len */
	(void)madvise(bq_mem + bq_faulted, n, MADV_POPULATE_WRITE);
	bq_faulted += n;
	return bq_faulted < want;
}

/* A buffer of index @index was handed out: the pre-faulting keeps ahead of it. */
static notrace void bq_reach(uint32_t index)
{
	uint32_t r = atomic_load_explicit(&bq_reached, memory_order_relaxed);

	while (index >= r && index < bq_mem_len / bq_size &&
	       !atomic_compare_exchange_weak_explicit(&bq_reached, &r, index + 1,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

notrace uint32_t fdr_pool_count(void)
{
	/* acquire: pairs with fdr_pool_grow()'s release (the new descriptors) */
	return atomic_load_explicit(&bq_count, memory_order_acquire);
}

notrace uint32_t fdr_pool_limit(void)
{
	return bq_limit;
}

notrace struct fdr_buffer *fdr_pool_buffer(uint32_t index)
{
	return &bq_bufs[index];
}

notrace int fdr_pool_grow(uint32_t add)
{
	uint32_t count = atomic_load_explicit(&bq_count, memory_order_relaxed);
	uint8_t *mem;

	if (add > bq_limit - count)
		add = bq_limit - count;
	if (!add)
		return -ENOSPC;
	/* pre-faulted here, on the flush thread, not in a hook's first store */
	mem = mmap(NULL, (size_t)add * bq_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	for (uint32_t i = 0; i < add; i++) {
		struct fdr_buffer *b = &bq_bufs[count + i];

		memset(b, 0, sizeof(*b));
		b->data = mem + (size_t)i * bq_size;
		b->index = count + i;
		cds_wfcq_node_init(&b->node);
	}
	/* release: the descriptors above before any reader sees the new count */
	atomic_store_explicit(&bq_count, count + add, memory_order_release);
	for (uint32_t i = 0; i < add; i++)
		fdr_pool_put(&bq_bufs[count + i]);
	return (int)add;
}

notrace void fdr_pool_reset(void)
{
	uint32_t count = atomic_load_explicit(&bq_count, memory_order_relaxed);

	for (uint32_t i = 0; i < count; i++) {
		cds_wfcq_node_init(&bq_bufs[i].node);
		atomic_store_explicit(&bq_bufs[i].ring_state, FDR_RING_NONE, memory_order_relaxed);
		atomic_store_explicit(&bq_next[i], i + 1 < count ? i + 2 : 0, memory_order_relaxed);
	}
	atomic_store_explicit(&bq_free, count, memory_order_relaxed);
	atomic_store_explicit(&bq_head, count ? 1 : 0, memory_order_release);
	cds_wfcq_init(&bq_full_head, &bq_full_tail);
}

notrace struct fdr_buffer *fdr_pool_get(void)
{
	uint64_t head = atomic_load_explicit(&bq_head, memory_order_acquire);
	uint64_t next;
	uint32_t top;

	do {
		top = (uint32_t)head;
		if (!top)
			return NULL;
		/*
		 * The link may be stale if another thread popped @top
		 * meanwhile; the generation in the head makes our CAS fail
		 * then, so a stale link is never installed.
		 */
		next = ((head >> 32) + 1) << 32 |
		       atomic_load_explicit(&bq_next[top - 1], memory_order_relaxed);
	} while (!atomic_compare_exchange_weak_explicit(&bq_head, &head, next,
							memory_order_acquire,
							memory_order_acquire));
	atomic_fetch_sub_explicit(&bq_free, 1, memory_order_relaxed);
	bq_reach(top - 1);
	return &bq_bufs[top - 1];
}

notrace uint32_t fdr_pool_free(void)
{
	int32_t n = (int32_t)atomic_load_explicit(&bq_free, memory_order_relaxed);

	/* a put's increment may trail the get that took its buffer: never below 0 */
	return n < 0 ? 0 : (uint32_t)n;
}

notrace void fdr_pool_put(struct fdr_buffer *b)
{
	uint64_t head = atomic_load_explicit(&bq_head, memory_order_relaxed);
	uint64_t next;

	do {
		atomic_store_explicit(&bq_next[b->index], (uint32_t)head, memory_order_relaxed);
		next = ((head >> 32) + 1) << 32 | (b->index + 1);
		/* release: the link above, and the flush thread's use of the data, before reuse */
	} while (!atomic_compare_exchange_weak_explicit(&bq_head, &head, next,
							memory_order_release,
							memory_order_relaxed));
	atomic_fetch_add_explicit(&bq_free, 1, memory_order_relaxed);
	/*
	 * seq_cst: the push above before the load of bq_waiters. Pairs with
	 * the waiter's increment of bq_waiters before its fdr_pool_get():
	 * either it finds this buffer, or we see it waiting and wake it.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&bq_waiters, memory_order_relaxed)) {
		/* release: the push before the new value (the waiter acquires it) */
		atomic_fetch_add_explicit(&bq_put_seq, 1, memory_order_release);
		syscall(SYS_futex, &bq_put_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	}
}

notrace struct fdr_buffer *fdr_pool_get_wait(unsigned timeout_ms)
{
	struct timespec to = { (time_t)(timeout_ms / 1000), (long)(timeout_ms % 1000) * 1000000 };
	struct fdr_buffer *b;
	uint32_t seq;

	atomic_fetch_add_explicit(&bq_waiters, 1, memory_order_seq_cst);
	seq = atomic_load_explicit(&bq_put_seq, memory_order_acquire);
	b = fdr_pool_get();
	if (!b) {
		syscall(SYS_futex, &bq_put_seq, FUTEX_WAIT_PRIVATE, seq, &to, NULL, 0);
		b = fdr_pool_get();
	}
	atomic_fetch_sub_explicit(&bq_waiters, 1, memory_order_relaxed);
	return b;
}

/*
 * ThreadSanitizer does not model liburcu's barriers (volatile accesses and
 * asm fences), so it cannot see that the queue orders a buffer's contents
 * before its dequeue. Tell it, on the node: release on enqueue, acquire on
 * dequeue (tests/tsan/ runs the runtime under TSan).
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define bq_tsan_release(p) __tsan_release(p)
#define bq_tsan_acquire(p) __tsan_acquire(p)
#else
#define bq_tsan_release(p) ((void)(p))
#define bq_tsan_acquire(p) ((void)(p))
#endif

notrace void fdr_queue_push(struct fdr_buffer *b)
{
	bq_tsan_release(b);
	cds_wfcq_node_init(&b->node);
	/* cds_wfcq_enqueue is a full barrier: the buffer's bytes before the link. */
	cds_wfcq_enqueue(&bq_full_head, &bq_full_tail, &b->node);
}

notrace struct fdr_buffer *fdr_queue_pop(bool blocking)
{
	struct cds_wfcq_node *n;

	if (blocking) {
		n = __cds_wfcq_dequeue_blocking(&bq_full_head, &bq_full_tail);
	} else {
		n = __cds_wfcq_dequeue_nonblocking(&bq_full_head, &bq_full_tail);
		if (n == CDS_WFCQ_WOULDBLOCK)
			n = NULL;
	}
	if (!n)
		return NULL;
	bq_tsan_acquire(caa_container_of(n, struct fdr_buffer, node));
	return caa_container_of(n, struct fdr_buffer, node);
}

notrace bool fdr_queue_empty(void)
{
	return cds_wfcq_empty(&bq_full_head, &bq_full_tail);
}
