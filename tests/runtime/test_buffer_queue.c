// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_buffer_queue.c - the pool's start pages: faulted in
 * at init as far as the buffers handed out first, then by the flush
 * thread's steps only ahead of the buffers handed out.
 *
 * Residency is read with mincore(2), which reports the pages of an
 * anonymous mapping that are present: a fault that pre-faulting made or
 * skipped shows there, whatever the timing.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "buffer_queue.h"

#define SIZE (64u << 10)	/* the default buffer_size */
#define COUNT 128u		/* the default buffer_max: 8 MiB */

/* Bytes of the start mapping, from its first buffer, that are resident. */
static size_t resident(void)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (size_t)SIZE * COUNT;
	unsigned char *vec = malloc(len / page);
	size_t n = 0;

	cr_assert_not_null(vec);
	cr_assert_eq(mincore(fdr_pool_buffer(0)->data, len, vec), 0);
	for (size_t i = 0; i < len / page; i++)
		n += vec[i] & 1;
	free(vec);
	return n * page;
}

/* Steps until the pre-faulting wants no more now; the number taken. */
static unsigned steps(void)
{
	unsigned n = 0;

	while (fdr_pool_prefault_step(false, false) && n < 1000)
		n++;
	return n;
}

Test(buffer_queue, start_pages_are_faulted_only_ahead_of_the_buffers_handed_out)
{
	struct fdr_buffer *b[20];

	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	cr_assert_eq(resident(), 16u << 10, "init faults in the first 16 KiB: %zu",
		     resident());

	/* the flush thread's first step: the least lead, 128 KiB */
	cr_assert_eq(steps(), 0, "one step, no more wanted after it");
	cr_assert_eq(resident(), 128u << 10, "%zu", resident());
	/* nothing handed out: nothing more to fault, however often it is asked */
	cr_assert_eq(steps(), 0);
	cr_assert_eq(resident(), 128u << 10);

	/* never-used buffers come out in index order */
	for (unsigned i = 0; i < 20; i++) {
		b[i] = fdr_pool_get();
		cr_assert_not_null(b[i]);
		cr_assert_eq(b[i]->index, i);
		if (i == 0) {
			/* one buffer used: the lead is the least, 128 KiB past it */
			steps();
			cr_assert_eq(resident(), SIZE + (128u << 10), "%zu", resident());
		}
	}
	/* 20 buffers reached (1.25 MiB): faulted to 512 KiB (the most lead) past them */
	steps();
	cr_assert_eq(resident(), 20u * SIZE + (512u << 10), "%zu", resident());
	cr_assert_lt(resident(), (size_t)SIZE * COUNT, "not the whole pool");

	/* buffers put back and taken again reach nothing new: no more faults */
	for (unsigned i = 0; i < 20; i++)
		fdr_pool_put(b[i]);
	for (unsigned i = 0; i < 20; i++) {
		b[i] = fdr_pool_get();
		cr_assert_lt(b[i]->index, 20u, "a used buffer comes back first");
	}
	cr_assert_eq(steps(), 0);

	/* a fork child's first step starts again from the first page (copy-on-write) */
	cr_assert(fdr_pool_prefault_step(true, false));
}

Test(buffer_queue, the_whole_pool_is_faulted_once_it_is_all_reached)
{
	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	for (unsigned i = 0; i < COUNT; i++)
		cr_assert_not_null(fdr_pool_get());
	cr_assert_null(fdr_pool_get(), "the pool is empty");
	steps();
	cr_assert_eq(resident(), (size_t)SIZE * COUNT);
	cr_assert_eq(steps(), 0);
}

Test(buffer_queue, a_process_that_ran_a_while_gets_the_whole_pool_faulted)
{
	unsigned n = 0;

	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
	while (fdr_pool_prefault_step(false, true) && n < 1000)
		n++;
	cr_assert_eq(n + 1, ((size_t)SIZE * COUNT - (16u << 10) + (256u << 10) - 1) / (256u << 10),
		     "%u", n);
	cr_assert_eq(resident(), (size_t)SIZE * COUNT);
}
