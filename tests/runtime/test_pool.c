// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_pool.c - the buffer pool and the full-buffer queue
 * (runtime/buffers/buffer_queue.c) through their internal API: get and put,
 * exhaustion with and without growth, the order in which full buffers
 * reach the flush side, and on_full=wait's fdr_pool_get_wait().
 *
 * Each test initialises the pool afresh (Criterion runs each test in a
 * process of its own). Nothing here is timed: the waiting test orders
 * its two threads by what the waiter is doing (asleep in futex(2), as
 * /proc says), and its only timeout is a bound far above any delay a
 * loaded machine causes.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buffer_queue.h"

#define SIZE 4096u
#define COUNT 8u

/* Take every free buffer; each distinct, each a buffer of the pool. */
static unsigned drain(struct fdr_buffer **out, unsigned cap)
{
	unsigned n = 0;
	struct fdr_buffer *b;

	while (n < cap && (b = fdr_pool_get())) {
		cr_assert_lt(b->index, fdr_pool_count());
		cr_assert_eq(b, fdr_pool_buffer(b->index));
		for (unsigned i = 0; i < n; i++)
			cr_assert_neq(out[i], b, "buffer %u handed out twice", b->index);
		out[n++] = b;
	}
	return n;
}

Test(pool, get_and_put_keep_the_free_count)
{
	struct fdr_buffer *a, *b;

	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	cr_assert_eq(fdr_pool_count(), COUNT);
	cr_assert_eq(fdr_pool_limit(), COUNT);
	cr_assert_eq(fdr_pool_free(), COUNT);

	a = fdr_pool_get();
	cr_assert_not_null(a);
	cr_assert_eq(fdr_pool_free(), COUNT - 1);
	b = fdr_pool_get();
	cr_assert_not_null(b);
	cr_assert_neq(a, b);
	cr_assert_eq(fdr_pool_free(), COUNT - 2);

	/* the buffer's memory is buffer_size bytes, its own */
	cr_assert_eq((size_t)(b->data - a->data), (size_t)SIZE * (b->index - a->index));
	memset(a->data, 0xa5, SIZE);
	memset(b->data, 0x5a, SIZE);
	cr_assert_eq(a->data[SIZE - 1], 0xa5);

	fdr_pool_put(b);
	cr_assert_eq(fdr_pool_free(), COUNT - 1);
	/* a stack: the buffer put back last comes out first (its pages are warm) */
	cr_assert_eq(fdr_pool_get(), b);
	fdr_pool_put(a);
	fdr_pool_put(b);
	cr_assert_eq(fdr_pool_free(), COUNT);
}

Test(pool, hands_out_every_buffer_then_reports_exhaustion)
{
	struct fdr_buffer *b[COUNT + 1];

	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	cr_assert_eq(drain(b, COUNT + 1), COUNT, "every buffer once, no more");
	cr_assert_eq(fdr_pool_free(), 0);
	cr_assert_null(fdr_pool_get(), "an empty pool gives NULL");
	cr_assert_null(fdr_pool_get(), "and again: it does not block or wrap");
	cr_assert_eq(fdr_pool_free(), 0, "a failed get changes no count");

	/* one back, one out: exactly that one */
	fdr_pool_put(b[3]);
	cr_assert_eq(fdr_pool_free(), 1);
	cr_assert_eq(fdr_pool_get(), b[3]);
	cr_assert_null(fdr_pool_get());

	for (unsigned i = 0; i < COUNT; i++)
		fdr_pool_put(b[i]);
	cr_assert_eq(fdr_pool_free(), COUNT);
	cr_assert_eq(drain(b, COUNT + 1), COUNT, "every buffer came back");
}

Test(pool, without_room_to_grow_growth_is_refused)
{
	struct fdr_buffer *b[COUNT];

	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	drain(b, COUNT);
	cr_assert_eq(fdr_pool_grow(4), -ENOSPC);
	cr_assert_eq(fdr_pool_count(), COUNT);
	cr_assert_null(fdr_pool_get());
}

Test(pool, grows_up_to_its_limit_then_reports_exhaustion)
{
	struct fdr_buffer *b[3 * COUNT];
	unsigned n;

	cr_assert_eq(fdr_pool_init(SIZE, COUNT, 2 * COUNT + 3), 0);
	cr_assert_eq(fdr_pool_limit(), 2 * COUNT + 3);
	n = drain(b, 3 * COUNT);
	cr_assert_eq(n, COUNT, "only buffer_max at start");
	cr_assert_null(fdr_pool_get());

	cr_assert_eq(fdr_pool_grow(COUNT), (int)COUNT);
	cr_assert_eq(fdr_pool_count(), 2 * COUNT);
	cr_assert_eq(fdr_pool_free(), COUNT);
	n += drain(b + n, 3 * COUNT - n);
	cr_assert_eq(n, 2 * COUNT);
	for (unsigned i = COUNT; i < n; i++) {
		cr_assert_geq(b[i]->index, COUNT, "a new buffer has a new index");
		memset(b[i]->data, 1, SIZE);	/* its memory is there */
	}

	/* asked for more than is left: what is left */
	cr_assert_eq(fdr_pool_grow(COUNT), 3);
	cr_assert_eq(fdr_pool_count(), 2 * COUNT + 3);
	n += drain(b + n, 3 * COUNT - n);
	cr_assert_eq(n, 2 * COUNT + 3);
	cr_assert_null(fdr_pool_get(), "grown to the limit and all handed out");
	cr_assert_eq(fdr_pool_grow(1), -ENOSPC, "never past the limit");
	cr_assert_eq(fdr_pool_count(), 2 * COUNT + 3);

	for (unsigned i = 0; i < n; i++)
		fdr_pool_put(b[i]);
	cr_assert_eq(fdr_pool_free(), 2 * COUNT + 3);
}

Test(pool, full_buffers_reach_the_flush_side_in_the_order_handed_over)
{
	struct fdr_buffer *b[COUNT];
	static const unsigned order[COUNT] = { 5, 0, 7, 2, 1, 6, 3, 4 };

	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	cr_assert(fdr_queue_empty());
	cr_assert_null(fdr_queue_pop(false), "nothing queued: NULL, not a block");
	drain(b, COUNT);
	for (unsigned i = 0; i < COUNT; i++) {
		b[order[i]]->len = 100 + i;
		fdr_queue_push(b[order[i]]);
	}
	cr_assert_not(fdr_queue_empty());
	for (unsigned i = 0; i < COUNT; i++) {
		struct fdr_buffer *got = fdr_queue_pop(i & 1);

		cr_assert_eq(got, b[order[i]], "pop %u: buffer %u, expected %u", i,
			     got ? got->index : 999u, b[order[i]]->index);
		cr_assert_eq(got->len, 100 + i);
		fdr_pool_put(got);
		cr_assert_eq(fdr_pool_free(), i + 1);
	}
	cr_assert(fdr_queue_empty());
	cr_assert_null(fdr_queue_pop(false));
}

Test(pool, reset_returns_every_buffer_and_empties_the_queue)
{
	struct fdr_buffer *b[COUNT];

	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	drain(b, COUNT);
	fdr_queue_push(b[0]);
	fdr_queue_push(b[1]);
	fdr_pool_reset();
	cr_assert(fdr_queue_empty());
	cr_assert_eq(fdr_pool_free(), COUNT);
	cr_assert_eq(drain(b, COUNT), COUNT);
}

/* ---- on_full=wait ---- */

/*
 * Far above any delay, and above the test's timeout: a getter that is not
 * woken by the put sleeps until Criterion ends the test as failed.
 */
#define WAIT_BOUND_MS 600000u

static struct fdr_buffer *waited;
static _Atomic pid_t waiter_tid;

static void *waiter(void *arg)
{
	(void)arg;
	atomic_store(&waiter_tid, (pid_t)syscall(SYS_gettid));
	waited = fdr_pool_get_wait(WAIT_BOUND_MS);
	return NULL;
}

/*
 * Is thread @tid asleep in futex(2)? /proc/self/task/TID/syscall names the
 * system call a blocked thread is in. -1: the file cannot be read here.
 */
static int in_futex(pid_t tid)
{
	char path[64], line[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	return atoi(line) == SYS_futex;
}

Test(pool, a_waiting_getter_is_woken_by_the_put_of_another_thread, .timeout = 60)
{
	struct fdr_buffer *b[COUNT];
	pthread_t th;
	pid_t tid;
	int asleep;

	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	drain(b, COUNT);
	cr_assert_eq(pthread_create(&th, NULL, waiter, NULL), 0);
	while (!(tid = atomic_load(&waiter_tid)))
		sched_yield();
	/*
	 * Wait until the getter sleeps in the futex, so that the put below
	 * must wake it (no free buffer was there when it looked). Without
	 * /proc the put may come first: then its get finds the buffer.
	 */
	while (!(asleep = in_futex(tid)))
		sched_yield();
	if (asleep < 0)
		cr_log_warn("no /proc/self/task/TID/syscall: the wake-up may not be exercised");
	cr_assert_null(waited);
	fdr_pool_put(b[6]);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(waited, b[6], "the waiter got %p, not the buffer put back",
		     (void *)waited);
	cr_assert_eq(fdr_pool_free(), 0);
	cr_assert_null(fdr_pool_get());
}

Test(pool, a_waiting_getter_with_a_free_buffer_does_not_wait)
{
	struct fdr_buffer *b[COUNT];

	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	drain(b, COUNT);
	fdr_pool_put(b[2]);
	/* a sleep here would take the bound, past the test's timeout */
	cr_assert_eq(fdr_pool_get_wait(WAIT_BOUND_MS), b[2]);
	cr_assert_eq(fdr_pool_free(), 0);
}

Test(pool, a_waiting_getter_gives_up_with_null_when_nothing_comes_back)
{
	struct fdr_buffer *b[COUNT];

	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	drain(b, COUNT);
	/* the shortest bound: only that it returns, and with nothing */
	cr_assert_null(fdr_pool_get_wait(1));
	cr_assert_eq(fdr_pool_free(), 0);
	/* and a later put is not lost to a waiter that left */
	fdr_pool_put(b[0]);
	cr_assert_eq(fdr_pool_get(), b[0]);
}
