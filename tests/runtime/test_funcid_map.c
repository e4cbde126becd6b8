// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_funcid_map.c - the function id map, on its own.
 *
 * Ids are dense and stable, one per address even when threads race to
 * insert the same addresses; the map grows past its first level (with and
 * without the flush thread's preparing); a first insert does not page-fault
 * once the flush thread has prepared the map (its first round) and while
 * it keeps it prepared.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "funcid_map.h"

/* Addresses spread like functions: 16-byte aligned, in a few MiB. */
static uintptr_t fn_addr(uint32_t i)
{
	return 0x555500000000ull + (uintptr_t)i * 48u;
}

static long thread_minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}

/*
 * Page faults are counted only in an unsanitized build: ASan and TSan
 * fault in shadow memory for every new page the map touches.
 */
#ifndef FAULTS_MEAN_SOMETHING
#define FAULTS_MEAN_SOMETHING 1
#endif

/* The map is process-wide: the tests run in one process, one after another. */
TestSuite(funcid_map, .disabled = false);

#define N_FIRST 10000u	/* fits level 0 (12,288) */
#define N_GROW 200000u	/* levels 0..4 */
#define N_THREADS 4

Test(funcid_map, ids_are_dense_stable_and_first_inserts_do_not_fault)
{
	long before, faults;

	cr_assert_eq(fdr_funcid_init(), 0);
	cr_assert_eq(fdr_funcid_limit(), 1, "ids start at 1");
	cr_assert_eq(fdr_funcid_get(0), 0);
	/* init populates nothing: the flush thread's first round does */
	/* the flush thread's first round comes on its own: a new map does not wake it */
	cr_assert_not(fdr_funcid_needs_prepare(), "a new map asks for nothing");
	/* level 0 a step (64 KiB) per call, so the finish never waits long for one */
	for (int i = 0; i < 3; i++)
		cr_assert(fdr_funcid_prepare(), "step %d: more to populate", i);
	cr_assert_not(fdr_funcid_prepare(), "level 0 is 4 steps");
	cr_assert_not(fdr_funcid_needs_prepare());
	before = thread_minflt();
	for (uint32_t i = 0; i < N_FIRST; i++)
		cr_assert_eq(fdr_funcid_get(fn_addr(i)), i + 1);
	/* level 0 and the id -> address entries were populated by that round */
	if (FAULTS_MEAN_SOMETHING)
		cr_expect_leq(thread_minflt() - before, 2, "%ld page faults for %u first inserts",
			      thread_minflt() - before, N_FIRST);
	for (uint32_t i = 0; i < N_FIRST; i++) {
		cr_assert_eq(fdr_funcid_get(fn_addr(i)), i + 1);
		cr_assert_eq(fdr_funcid_addr(i + 1), fn_addr(i));
	}
	cr_assert_eq(fdr_funcid_limit(), N_FIRST + 1);

	/*
	 * Past level 0, with the flush thread's part done as it would be: the
	 * inserts themselves touch only pages populated ahead. Without that
	 * they fault on every new page of each level (hundreds over these
	 * 190,000 inserts); a few are allowed for what the kernel does to
	 * populated pages on a busy machine (compaction migrates a page, and
	 * its next touch faults: seen once beside the integration suite).
	 */
	faults = 0;
	for (uint32_t i = N_FIRST; i < N_GROW; i++) {
		if (fdr_funcid_needs_prepare())
			fdr_funcid_prepare();
		before = thread_minflt();
		cr_assert_eq(fdr_funcid_get(fn_addr(i)), i + 1);
		faults += thread_minflt() - before;
	}
	if (FAULTS_MEAN_SOMETHING)
		cr_expect_leq(faults, 8, "%ld page faults in %u inserts past level 0", faults,
			      N_GROW - N_FIRST);
	for (uint32_t i = 0; i < N_GROW; i++)
		cr_assert_eq(fdr_funcid_get(fn_addr(i)), i + 1, "address %u", i);
}

struct racer {
	uint32_t from, n;
	uint32_t *ids;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	/* every thread inserts the same addresses, half in reverse order */
	for (uint32_t j = 0; j < r->n; j++) {
		uint32_t i = (r->from & 1) ? r->n - 1 - j : j;

		r->ids[i] = fdr_funcid_get(fn_addr(N_GROW + i));
	}
	return NULL;
}

Test(funcid_map, racing_threads_get_one_id_per_address_without_a_flush_thread)
{
	enum { N = 150000 };	/* crosses a level no one prepared: hooks map it */
	struct racer r[N_THREADS];
	pthread_t th[N_THREADS];
	uint32_t first, *seen;

	cr_assert_eq(fdr_funcid_init(), 0);
	first = fdr_funcid_limit();
	for (int t = 0; t < N_THREADS; t++) {
		r[t] = (struct racer){ .from = (uint32_t)t, .n = N, .ids = calloc(N, 4) };
		cr_assert_not_null(r[t].ids);
		cr_assert_eq(pthread_create(&th[t], NULL, race, &r[t]), 0);
	}
	for (int t = 0; t < N_THREADS; t++)
		pthread_join(th[t], NULL);
	cr_assert_eq(fdr_funcid_limit(), first + N, "one id per address: %u ids for %u",
		     fdr_funcid_limit() - first, (unsigned)N);
	seen = calloc(N, 4);
	cr_assert_not_null(seen);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t id = r[0].ids[i];

		cr_assert(id >= first && id < first + N, "address %u: id %u", i, id);
		for (int t = 1; t < N_THREADS; t++)
			cr_assert_eq(r[t].ids[i], id, "address %u: thread %d disagrees (id %u, thread 0: %u)",
				     i, t, r[t].ids[i], id);
		cr_assert_eq(seen[id - first], 0, "id %u given twice", id);
		seen[id - first] = 1;
		cr_assert_eq(fdr_funcid_addr(id), fn_addr(N_GROW + i));
	}
	free(seen);
	for (int t = 0; t < N_THREADS; t++)
		free(r[t].ids);
}
