/* SPDX-License-Identifier: MIT */
/*
 * info_run.c - "fdrtrace info DIR": the processes of a run directory
 * (run.c), as a tree, with their start, span, records, losses and how
 * each ended. Also info_time(), the time line both halves of info print.
 *
 * Contract: single-threaded tool code.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "info.h"
#include "run.h"
#include "util.h"

void info_time(const char *label, uint64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000u);
	struct tm tm;
	char buf[64];

	if (gmtime_r(&sec, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm))
		printf("%-17s%s.%06" PRIu64 " UTC (%" PRIu64 ".%09" PRIu64 ")\n", label, buf,
		       ns % 1000000000u / 1000u, ns / 1000000000u, ns % 1000000000u);
	else
		printf("%-17s%" PRIu64 " ns\n", label, ns);
}

/* A duration for people: "850us", "3.2ms", "1.25s", "2m05s"; "-" when not known. */
static void info_dur(char *buf, size_t cap, bool known, uint64_t ns)
{
	if (!known)
		snprintf(buf, cap, "-");
	else if (ns < 1000000u)
		snprintf(buf, cap, "%" PRIu64 "us", ns / 1000u);
	else if (ns < 1000000000u)
		snprintf(buf, cap, "%.1fms", (double)ns / 1e6);
	else if (ns < 120000000000u)
		snprintf(buf, cap, "%.2fs", (double)ns / 1e9);
	else
		snprintf(buf, cap, "%" PRIu64 "m%02" PRIu64 "s", ns / 60000000000u,
			 ns / 1000000000u % 60u);
}

/* One line of the tree: the trace @i at @depth, then its children. */
static void info_run_line(const struct run_dir *r, long i, unsigned depth, uint64_t t0)
{
	for (; i >= 0; i = r->procs[i].next_sibling) {
		const struct run_proc *p = &r->procs[i];
		char start[32], span[32], ended[512], cmd[1024], lost[32], records[32];

		info_dur(start, sizeof(start), p->start_ns && t0, p->start_ns - t0);
		if (strcmp(start, "-"))
			memmove(start + 1, start, strlen(start) + 1), start[0] = '+';
		info_dur(span, sizeof(span), p->start_ns && p->end_ns >= p->start_ns && p->end_ns,
			 p->end_ns - p->start_ns);
		run_ended(p, ended, sizeof(ended));
		if (strlen(ended) > 30)	/* a long exec path: the next image's line has it */
			memcpy(ended + 27, "...", 4);
		run_command(p, cmd, sizeof(cmd), false);
		/* without a close the counts are not known */
		snprintf(records, sizeof(records), p->has_close ? "%" PRIu64 : "?", p->records);
		snprintf(lost, sizeof(lost), p->has_close ? "%" PRIu64 : "?", p->lost);
		printf("%8" PRIu32 " %9s %8s %10s %6s  %-30s %*s%s%s  [%s]\n", p->pid, start, span,
		       records, lost, ended, (int)(2 * depth), "",
		       p->prev_image >= 0 ? "exec: " : "", cmd, p->file);
		if (depth < 64)
			info_run_line(r, p->first_child, depth + 1, t0);
	}
}

/* Top-level traces by ppid, then by start (their index): a group is contiguous. */
static const struct run_dir *info_sorting;

static int info_cmp_top(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	uint32_t px = info_sorting->procs[x].ppid, py = info_sorting->procs[y].ppid;

	if (px != py)
		return px < py ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Groups (their first top-level trace's place in @top) by that trace's start. */
static int info_cmp_group(const void *a, const void *b)
{
	long x = ((const long *)a)[1], y = ((const long *)b)[1];

	return x < y ? -1 : x > y;
}

/*
 * The top level of the tree: the traces whose parent was not traced. One
 * of them alone is printed as it is; else those of a ppid under a line
 * for that parent, the groups in the order their first trace began.
 */
static void info_run_top(struct run_dir *r, uint64_t t0)
{
	size_t n = 0, groups = 0;
	long *top, *group;

	for (long i = r->roots; i >= 0; i = r->procs[i].next_sibling)
		n++;
	top = malloc((n + 1) * sizeof(*top));
	group = malloc((n + 1) * 2 * sizeof(*group));	/* (place in top, first index) */
	if (!top || !group || n == 1) {
		info_run_line(r, r->roots, 0, t0);	/* alone, or out of memory: as they are */
		free(top);
		free(group);
		return;
	}
	n = 0;
	for (long i = r->roots; i >= 0; i = r->procs[i].next_sibling)
		top[n++] = i;
	info_sorting = r;
	qsort(top, n, sizeof(*top), info_cmp_top);
	for (size_t k = 0; k < n; k++)
		if (k == 0 || r->procs[top[k]].ppid != r->procs[top[k - 1]].ppid) {
			group[2 * groups] = (long)k;
			group[2 * groups + 1] = top[k];
			groups++;
		}
	qsort(group, groups, 2 * sizeof(*group), info_cmp_group);
	for (size_t g = 0; g < groups; g++) {
		size_t k = (size_t)group[2 * g];
		uint32_t ppid = r->procs[top[k]].ppid;

		if (ppid)
			printf("%8" PRIu32 " %9s %8s %10s %6s  (not traced)\n", ppid, "-", "-", "-",
			       "-");
		for (; k < n && r->procs[top[k]].ppid == ppid; k++) {
			long save = r->procs[top[k]].next_sibling;

			r->procs[top[k]].next_sibling = -1;
			info_run_line(r, top[k], ppid ? 1 : 0, t0);
			r->procs[top[k]].next_sibling = save;
		}
	}
	free(top);
	free(group);
}

int info_run(const char *dir)
{
	struct run_dir r;
	uint64_t t0 = 0, t1 = 0, records = 0, lost = 0, left_out = 0;
	size_t procs = 0, closed = 0;
	int rc = run_open(&r, dir, NULL, 0);

	if (rc) {
		tool_err("%s: %s", dir, strerror(-rc));
		run_close(&r);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < r.n; i++) {
		const struct run_proc *p = &r.procs[i];

		procs += p->prev_image < 0;
		closed += p->has_close;
		records += p->records;
		lost += p->lost;
		left_out += p->left_out;
		if (p->start_ns && (!t0 || p->start_ns < t0))
			t0 = p->start_ns;
		if (p->end_ns > t1)
			t1 = p->end_ns;
	}
	printf("%-17s%s\n", "run:", dir);
	printf("%-17s%s\n", "index:", r.has_index ? "yes (written by fdrtrace record)" :
	       "none (not written by fdrtrace record, or it was cut short)");
	printf("%-17s%zu traced (%zu trace%s, %zu closed), %" PRIu64 " records, %" PRIu64
	       " lost", "processes:", procs, r.n, r.n == 1 ? "" : "s", closed, records, lost);
	if (left_out)
		printf(", %" PRIu64 " left out on purpose", left_out);
	putchar('\n');
	if (!r.n) {
		run_close(&r);
		return tool_finish_stdout() ? EXIT_FAIL : EXIT_OK;
	}
	if (t0)
		info_time("first start:", t0);
	if (t0 && t1 >= t0) {
		char span[32];

		info_dur(span, sizeof(span), true, t1 - t0);
		printf("%-17s%s\n", "span:", span);
	}
	printf("\n%8s %9s %8s %10s %6s  %-30s %s\n", "PID", "START", "SPAN", "RECORDS", "LOST",
	       "ENDED", "COMMAND  [TRACE]");
	/* the top level; those whose parent is not traced grouped under their ppid */
	info_run_top(&r, t0);
	run_close(&r);
	return tool_finish_stdout() ? EXIT_FAIL : EXIT_OK;
}
