/* SPDX-License-Identifier: MIT */
/*
 * cmd_diff.c - "fdrtrace diff OLD NEW": per function, calls, total, self
 * and median time in two traces, and how they changed.
 *
 * Each trace is read once by the analysis core, with the selectors
 * (select.h) deciding which calls count: a function's total is the sum of
 * its shown calls' durations (recursive calls count each level, as in
 * account), its self the sum of their durations minus their shown callees',
 * its median from a histogram of their durations (histogram.h: at most
 * 0.79% off). A call timed across a loss (records lost inside it: entry
 * and exit recorded) counts, with its duration, but its self time is not
 * known: self is that of the other calls, marked '*' as account marks it
 * ('-' when no call's is known), and so is its change. Functions are matched by their printed name (so two builds
 * of one program match, whatever their function ids and addresses); ids
 * with the same name in one trace are one row. A function in only one
 * trace is listed too, with nothing computed for the other side. Rows are
 * sorted by the absolute change of the sort column (total by default).
 *
 * Memory: per distinct function name, its counts and histogram, for both
 * traces; never per record.
 *
 * Contract: single-threaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "input.h"
#include "histogram.h"
#include "util.h"

enum df_col { DF_COUNT, DF_TOTAL, DF_SELF, DF_MEDIAN, DF_NCOL };
static const char *const df_col_names[DF_NCOL] = { "count", "total", "self", "median" };

/* One function name in one trace. */
struct df_fn {
	char *name;
	struct an_tally tally;		/* its shown timed calls (ticks; no @spanning, @unwound) */
	uint64_t open;			/* calls that never ended, or whose end was lost */
	uint64_t self_unknown;		/* of tally.calls, timed across a loss: self not in tally.self */
	double v[DF_NCOL];		/* count, then seconds */
};

/* One trace's functions, by name. */
struct df_run {
	struct df_fn *fns;
	uint32_t n, cap;
	uint32_t *hash;		/* 1 + index into fns, 0: empty */
	uint32_t hash_cap;
	struct sel sel;
	bool oom;
};

struct df_opts {
	enum df_col sort;
	bool csv;
	long top;
};

static uint32_t df_hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static int df_grow(struct df_run *r)
{
	uint32_t cap = r->hash_cap ? r->hash_cap * 2 : 1024, i, j;
	uint32_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (i = 0; i < r->n; i++) {
		j = df_hash_str(r->fns[i].name) & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = i + 1;
	}
	free(r->hash);
	r->hash = h;
	r->hash_cap = cap;
	return 0;
}

/* The row of @name, created on first use; -1 when out of memory. */
static int64_t df_find(struct df_run *r, const char *name)
{
	uint32_t j;

	if ((r->n + 1) * 2 > r->hash_cap && df_grow(r))
		return -1;
	j = df_hash_str(name) & (r->hash_cap - 1);
	while (r->hash[j]) {
		if (strcmp(r->fns[r->hash[j] - 1].name, name) == 0)
			return r->hash[j] - 1;
		j = (j + 1) & (r->hash_cap - 1);
	}
	if (r->n == r->cap) {
		uint32_t cap = r->cap ? r->cap * 2 : 256;
		struct df_fn *n = realloc(r->fns, cap * sizeof(*n));

		if (!n)
			return -1;
		r->fns = n;
		r->cap = cap;
	}
	memset(&r->fns[r->n], 0, sizeof(r->fns[r->n]));
	r->fns[r->n].name = strdup(name);
	if (!r->fns[r->n].name)
		return -1;
	r->hash[j] = r->n + 1;
	return r->n++;
}

static void df_enter(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct df_run *r = a->ctx;

	(void)f;
	sel_enter(&r->sel, a, t);
}

/* The row of a function, found by name on its first use; NULL when out of memory. */
static struct df_fn *df_row_of(struct df_run *r, struct analysis *a, struct an_func *fn)
{
	uint32_t *row = fn->uptr;

	if (!row) {
		int64_t i = df_find(r, an_func_name(a, fn));

		row = i >= 0 ? malloc(sizeof(*row)) : NULL;
		if (!row) {
			r->oom = true;
			return NULL;
		}
		*row = (uint32_t)i;
		fn->uptr = row;	/* freed by an_fini() */
	}
	return &r->fns[*row];
}

static void df_exit(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		    uint64_t end, uint64_t dur, enum an_end how)
{
	struct df_run *r = a->ctx;
	struct sel_frame *fr = sel_frame(&r->sel, t, t->depth);
	struct df_fn *d;

	(void)end;
	(void)how;
	if (!sel_exit(&r->sel, a, t, dur) || f->partial || !fr)
		return;
	d = df_row_of(r, a, f->fn);
	if (!d)
		return;
	/* a call with records lost inside it: its self time is not known */
	d->self_unknown += f->holed;
	if (an_tally_add(&d->tally, dur,
			 f->holed ? 0 : dur > fr->shown_children ? dur - fr->shown_children : 0,
			 true))
		r->oom = true;
}

/* A shown call without a known end: the function is in the trace, not timed. */
static void df_open(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct df_run *r = a->ctx;
	struct sel_frame *fr = sel_frame(&r->sel, t, t->depth);
	struct df_fn *d;

	if (!fr || !fr->shown || f->partial)
		return;
	d = df_row_of(r, a, f->fn);
	if (d)
		d->open++;
}

static const struct an_ops df_ops = {
	.enter = df_enter,
	.exit = df_exit,
	.unfinished = df_open,
	.dropped = df_open,
};

/* Add one trace's calls to @r (ticks); its frequency in *@freq. Return: 0 or -1. */
static int df_read_one(struct df_run *r, const struct cli *cl, const char *path, uint64_t *freq)
{
	static struct analysis a;	/* large: not on the stack */
	int rc;

	memset(&a, 0, sizeof(a));
	cli_apply(cl, &a);
	a.ops = &df_ops;
	a.ctx = r;
	sel_init(&r->sel, &cl->sel);
	rc = an_run(&a, path);
	if (!rc) {
		*freq = a.freq;
		if (r->oom)
			tool_err("%s: out of memory: some calls are not counted", path);
		an_summary(&a, "diff");
	}
	sel_fini(&r->sel);
	an_fini(&a);
	return rc ? -1 : 0;
}

/*
 * Read side @side of the command line (a trace, or a run: every trace of
 * it, functions merged by name) into @r; its times become seconds (of a
 * run, at the run's frequency). Return: 0 or -1.
 */
static int df_read(struct df_run *r, const struct cli *cl, int side)
{
	struct run_input ri;
	uint64_t freq = 0;
	uint32_t i, k, read = 0;
	int rc = 0;

	if (ri_open(&ri, cl, side, 1))
		return -1;
	for (k = 0; k < ri.n && !rc; k++)
		if (df_read_one(r, cl, ri.t[k].path, &freq))
			rc = -1;
		else
			read++;
	if (ri.run)
		freq = ri.freq;
	ri_say_read(&ri, cl->quiet, read);
	ri_close(&ri);
	if (rc)
		return -1;
	for (i = 0; i < r->n; i++) {
		struct df_fn *d = &r->fns[i];
		double f = freq ? (double)freq : 1;

		d->v[DF_COUNT] = (double)d->tally.calls;
		d->v[DF_TOTAL] = (double)d->tally.sum / f;
		d->v[DF_SELF] = (double)d->tally.self / f;
		d->v[DF_MEDIAN] = (double)hist_rank(&d->tally.hist, 1, 2) / f;
		hist_free(&d->tally.hist);
	}
	return 0;
}

static void df_free(struct df_run *r)
{
	uint32_t i;

	for (i = 0; i < r->n; i++) {
		free(r->fns[i].name);
		hist_free(&r->fns[i].tally.hist);
	}
	free(r->fns);
	free(r->hash);
}

/* One output row: a function in OLD, NEW or both (NULL: absent there). */
struct df_row {
	const char *name;
	const struct df_fn *old, *new;
	double key;
};

static int df_cmp(const void *x, const void *y)
{
	const struct df_row *p = x, *q = y;

	if (p->key != q->key)
		return p->key > q->key ? -1 : 1;
	return strcmp(p->name, q->name);
}

static double df_val(const struct df_fn *f, enum df_col c)
{
	return f ? f->v[c] : 0;
}

static void df_csv_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

/*
 * A value, or nothing (CSV) / "-" (text) when the function is absent, for
 * a median without completed calls, and for a self time when no call's is
 * known (every call timed across a loss).
 */
static bool df_known(const struct df_fn *f, enum df_col c)
{
	if (c == DF_SELF)
		return f && (!f->self_unknown || f->self_unknown < f->tally.calls);
	return f && (c != DF_MEDIAN || f->tally.calls);
}

/* Text: self's '*' (some calls' self times unknown) after a value of column @c. */
static void df_mark(enum df_col c, bool marked, bool csv)
{
	if (c == DF_SELF && !csv)
		putchar(marked ? '*' : ' ');
}

static void df_print_val(const struct df_fn *f, enum df_col c, bool csv)
{
	if (!df_known(f, c))
		fputs(csv ? "," : "           -", stdout);
	else if (c == DF_COUNT)
		printf(csv ? ",%.0f" : " %11.0f", f->v[c]);
	else
		printf(csv ? ",%.9e" : " %11.9f", f->v[c]);
	df_mark(c, f && f->self_unknown, csv);
}

/* NEW - OLD (an absent side counts 0), and its ratio to OLD when OLD has one. */
static void df_print_change(const struct df_row *r, enum df_col c, bool csv)
{
	double o = df_val(r->old, c), n = df_val(r->new, c), d = n - o;

	bool marked = (r->old && r->old->self_unknown) || (r->new && r->new->self_unknown);

	if ((r->old && !df_known(r->old, c)) || (r->new && !df_known(r->new, c))) {
		/* a median is missing, or no self time is known */
		fputs(csv ? "," : "            -", stdout);
		df_mark(c, marked, csv);
		fputs(csv ? "," : "        -", stdout);
	} else {
		if (c == DF_COUNT)
			printf(csv ? ",%.0f" : " %+11.0f", d);
		else
			printf(csv ? ",%.9e" : " %+12.9f", d);
		df_mark(c, marked, csv);
		if (!r->old)
			fputs(csv ? "," : "      new", stdout);
		else if (!r->new)
			fputs(csv ? "," : "     gone", stdout);
		else if (o == 0)
			fputs(csv ? "," : "        -", stdout);	/* no base: no ratio */
		else
			printf(csv ? ",%.2f" : " %+7.1f%%", 100.0 * d / o);
	}
}

static int df_option(struct cli *cl, int c, const char *arg)
{
	struct df_opts *o = cl->ctx;
	int i;

	switch (c) {
	case 's':
		for (i = 0; i < DF_NCOL; i++)
			if (strcmp(arg, df_col_names[i]) == 0)
				break;
		if (i == DF_NCOL)
			return tool_usage_err("diff", "unknown sort column '%s' "
					      "(count, total, self or median)", arg);
		o->sort = (enum df_col)i;
		break;
	case 'f':
		return cli_table_format(cl, arg, &o->csv);
	case 'p':
		return cli_top(cl, arg, &o->top);
	}
	return 0;
}

static const struct option df_longopts[] = {
	{ "sort", required_argument, NULL, 's' },
	{ "format", required_argument, NULL, 'f' },
	{ "top", required_argument, NULL, 'p' },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_cmd diff_cli = {
	.name = "diff",
	.usage =
	"Usage: fdrtrace diff [options] OLD NEW\n"
	"\n"
	"Compare two traces (of one program, perhaps two builds of it) function by\n"
	"function: calls, total (inclusive) time, self time and median duration in\n"
	"OLD and NEW, and the change, absolute and relative, sorted by the largest\n"
	"absolute change of the sort column. Functions are matched by name; those in\n"
	"only one trace are listed too ('new', 'gone'), nothing computed for the\n"
	"other. Times are seconds of each trace's clock; the median is within 0.79%.\n"
	"The selectors decide which calls count, in both traces (with -N or -t, a\n"
	"hidden callee's time stays in its caller's self time).\n"
	"\n"
	"OLD and NEW may each be a run (a directory of traces, one per process): its\n"
	"processes' calls are merged by name and the two runs compared as wholes,\n"
	"times at each run's frequency (no --pid: two runs have other pids).\n",
	.options =
	"  -s, --sort COL        count, total (default), self or median\n"
	"  -f, --format FMT      text (default) or csv\n"
	"  -p, --top N           only the first N rows\n",
	.epilog =
	"CSV columns: function,status (both, old, new), then for count, total, self\n"
	"and median: old,new,change,percent (empty where the function is absent, or\n"
	"the old value is 0, or a median has no completed call, or no call's self\n"
	"time is known), then open_old,open_new: calls that never ended or lost\n"
	"their end (counted, not timed), then self_unknown_old,self_unknown_new:\n"
	"calls timed across a loss (records lost inside; in count and total), whose\n"
	"self times are unknown: self is that of the other calls ('*' in the text).\n",
	.optstring = "s:f:p:",
	.longopts = df_longopts,
	.groups = CLI_QUIET | CLI_SELECT,
	.min_files = 2,
	.max_files = 2,
	.option = df_option,
};

static int df_name_cmp(const void *x, const void *y)
{
	const struct df_fn *p = x, *q = y;

	return strcmp(p->name, q->name);
}

int cmd_diff(int argc, char **argv)
{
	struct df_opts o = { .sort = DF_TOTAL, .top = -1 };
	struct df_run old = { 0 }, new = { 0 };
	struct df_row *rows = NULL;
	uint32_t i = 0, j = 0, n = 0, k;
	uint64_t unk_old = 0, unk_new = 0;
	struct cli cl;
	int status = EXIT_OK, c;

	if (!cli_parse(&diff_cli, &o, &cl, argc, argv, &status))
		return status;
	if (df_read(&old, &cl, 0) || df_read(&new, &cl, 1)) {
		status = EXIT_FAIL;
		goto out;
	}
	rows = calloc((size_t)old.n + new.n + 1, sizeof(*rows));
	if (!rows) {
		tool_err("out of memory");
		status = EXIT_FAIL;
		goto out;
	}
	/* Match by name: both sorted, then merged (fns is NULL when there is none). */
	if (old.n > 1)
		qsort(old.fns, old.n, sizeof(*old.fns), df_name_cmp);
	if (new.n > 1)
		qsort(new.fns, new.n, sizeof(*new.fns), df_name_cmp);
	while (i < old.n || j < new.n) {
		int cmp = i == old.n ? 1 : j == new.n ? -1 :
			  strcmp(old.fns[i].name, new.fns[j].name);
		struct df_row *r = &rows[n++];

		r->old = cmp <= 0 ? &old.fns[i++] : NULL;
		r->new = cmp >= 0 ? &new.fns[j++] : NULL;
		r->name = r->old ? r->old->name : r->new->name;
		r->key = fabs(df_val(r->new, o.sort) - df_val(r->old, o.sort));
	}
	qsort(rows, n, sizeof(*rows), df_cmp);
	for (k = 0; k < old.n; k++)
		unk_old += old.fns[k].self_unknown;
	for (k = 0; k < new.n; k++)
		unk_new += new.fns[k].self_unknown;
	if (o.csv) {
		fputs("function,status", stdout);
		for (c = 0; c < DF_NCOL; c++)
			printf(",%s_old,%s_new,%s_change,%s_percent", df_col_names[c],
			       df_col_names[c], df_col_names[c], df_col_names[c]);
		puts(",open_old,open_new,self_unknown_old,self_unknown_new");
	} else {
		uint32_t both = 0, only_old = 0, only_new = 0;

		for (k = 0; k < n; k++) {
			if (rows[k].old && rows[k].new)
				both++;
			else if (rows[k].old)
				only_old++;
			else
				only_new++;
		}
		printf("Functions: %" PRIu32 " in both, %" PRIu32 " only in OLD (gone), %" PRIu32
		       " only in NEW (new); sorted by the change of %s\n", both, only_old,
		       only_new, df_col_names[o.sort]);
		printf("# OLD %s\n# NEW %s\n", cl.files[0], cl.files[1]);
		printf("%11s %11s %11s %8s", "count", "(new)", "(change)", "(%)");
		for (c = DF_TOTAL; c < DF_NCOL; c++)
			printf(c == DF_SELF ? " %11s  %11s  %12s  %8s" : " %11s %11s %12s %8s",
			       df_col_names[c], "(new)", "(change)", "(%)");
		puts("  function");
	}
	if (o.top >= 0 && (uint64_t)o.top < n)
		n = (uint32_t)o.top;
	for (k = 0; k < n && !tool_stdout_failed(); k++) {
		const struct df_row *r = &rows[k];

		if (o.csv) {
			df_csv_str(r->name);
			fputs(r->old && r->new ? ",both" : r->old ? ",old" : ",new", stdout);
		}
		for (c = 0; c < DF_NCOL; c++) {
			df_print_val(r->old, (enum df_col)c, o.csv);
			df_print_val(r->new, (enum df_col)c, o.csv);
			df_print_change(r, (enum df_col)c, o.csv);
		}
		if (o.csv) {
			printf(",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
			       r->old ? r->old->open : 0, r->new ? r->new->open : 0,
			       r->old ? r->old->self_unknown : 0, r->new ? r->new->self_unknown : 0);
			continue;
		}
		printf("  %s", r->name);
		if ((r->old && r->old->open) || (r->new && r->new->open))
			printf(" (calls that never ended or lost their end, not timed: OLD %" PRIu64
			       ", NEW %" PRIu64 ")", r->old ? r->old->open : 0,
			       r->new ? r->new->open : 0);
		putchar('\n');
	}
	if (!o.csv && (unk_old || unk_new))
		printf("(*: of count, %" PRIu64 " call%s in OLD and %" PRIu64 " in NEW timed across "
		       "a loss (entry and exit recorded, records lost inside): exact durations, "
		       "unknown self times; self is that of the other calls, '-' when there are "
		       "none, and its change is between those)\n",
		       unk_old, unk_old == 1 ? "" : "s", unk_new);
out:
	free(rows);
	df_free(&old);
	df_free(&new);
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
