/* SPDX-License-Identifier: MIT */
/*
 * tests/integration/tc_assert.h - Criterion assertions over trace_check.h,
 * shared by the integration and reliability suites.
 */
#ifndef TC_ASSERT_H
#define TC_ASSERT_H

#include <sys/wait.h>

#include <criterion/criterion.h>

#include "trace_check.h"

/* The traced program exited with status 0. */
static inline void tc_assert_exited_ok(const struct tc_run *r)
{
	cr_assert(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0,
		  "status 0x%x, stderr: %s", r->status, r->err);
}

/* The run left exactly one trace, and the reader accepts all of it: read it into @t. */
static inline void tc_assert_one_trace(const struct tc_run *r, struct tc_trace *t)
{
	char paths[4][512];
	int n = tc_find_traces(r, paths, 4);

	cr_assert_eq(n, 1, "expected one trace in %s, found %d (stderr: %s)", r->dir, n, r->err);
	tc_read(paths[0], t);
	cr_assert(t->ok, "reader: %s", t->error);
}

/* Read the trace at @path into @t: the reader accepts it, and its process closed it. */
static inline void tc_expect_whole(const char *path, struct tc_trace *t)
{
	tc_read(path, t);
	cr_expect(t->ok, "%s: %s", path, t->error);
	cr_expect(t->closed, "%s", path);
}

#endif /* TC_ASSERT_H */
