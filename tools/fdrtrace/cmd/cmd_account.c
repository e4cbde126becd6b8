/* SPDX-License-Identifier: MIT */
/*
 * cmd_account.c - "fdrtrace account FILE": per-function call statistics.
 *
 * One streaming pass through the analysis core; per function it keeps the
 * count, exact min/max/sum/total/self and a log-linear histogram for the
 * median and the 90th and 99th percentiles (at most 0.79% off, see
 * histogram.h). sum adds every call, the recursive ones at each level (as
 * llvm-xray does); total adds only the outermost calls of the function on
 * their thread (an_frame.nested), the time the function really took. The
 * text table gives durations in human units (ns, us, ms, s; --seconds:
 * nine-decimal seconds); the CSV has llvm-xray account's columns, in its
 * order and in seconds, then total. With replay's selectors (-F, -N, -D,
 * -t, --tid, -r/--time-range; -r asc or dsc is llvm-xray's sort order), the
 * same numbers over the shown calls only, kept per function by the command
 * (a call's self time then leaves out its shown callees, the hidden ones'
 * time being its own, as replay has it).
 *
 * Contract: single-threaded.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "input.h"
#include "select.h"
#include "util.h"

enum acc_col { COL_FUNCID, COL_COUNT, COL_MIN, COL_MED, COL_P90, COL_P99, COL_MAX, COL_SUM,
	       COL_SELF, COL_TOTAL, COL_AVG, COL_FUNC, COL_N };

/* Sort keys: ours and llvm-xray's, then uftrace's (call, avg, total). */
static const struct {
	const char *name;
	enum acc_col col;
} acc_keys[] = {
	{ "funcid", COL_FUNCID }, { "count", COL_COUNT }, { "call", COL_COUNT },
	{ "calls", COL_COUNT }, { "min", COL_MIN }, { "med", COL_MED }, { "median", COL_MED },
	{ "90p", COL_P90 }, { "99p", COL_P99 }, { "max", COL_MAX }, { "sum", COL_SUM },
	{ "self", COL_SELF }, { "total", COL_TOTAL }, { "avg", COL_AVG }, { "func", COL_FUNC },
	{ "name", COL_FUNC },
};

#define ACC_MAX_KEYS 8

struct acc_row {
	struct an_func *fn;
	const char *name;
	uint64_t v[COL_FUNC];	/* funcid, count, then ticks */
	uint64_t spanning, unwound, self_unknown;
	uint64_t timed;		/* of count, the calls timed (the others: @counted) */
	uint64_t counted;	/* of count, calls counted, not recorded (auto_exclude) */
};

/* With selectors: each function's shown calls, in @v at the index its fn->uptr holds. */
struct acc_sel {
	struct sel sel;
	struct an_tally *v;
	uint32_t n, cap;
	bool oom;
};

/* The numbers of @fn's shown calls; NULL when out of memory. */
static struct an_tally *acc_tally_of(struct acc_sel *s, struct an_func *fn)
{
	uint32_t *i = fn->uptr;

	if (!i) {
		if (s->n == s->cap) {
			uint32_t cap = s->cap ? s->cap * 2 : 256;
			struct an_tally *v = realloc(s->v, cap * sizeof(*v));

			if (!v)
				goto oom;
			s->v = v;
			s->cap = cap;
		}
		i = malloc(sizeof(*i));
		if (!i)
			goto oom;
		*i = s->n++;
		memset(&s->v[*i], 0, sizeof(s->v[*i]));
		fn->uptr = i;	/* freed by an_fini() */
	}
	return &s->v[*i];
oom:
	s->oom = true;
	return NULL;
}

static void acc_enter(struct analysis *a, struct an_thread *t, const struct an_frame *f)
{
	struct acc_sel *s = a->ctx;

	(void)f;
	sel_enter(&s->sel, a, t);
}

static void acc_exit(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		     uint64_t end, uint64_t dur, enum an_end how)
{
	struct acc_sel *s = a->ctx;
	struct sel_frame *fr = sel_frame(&s->sel, t, t->depth);
	bool shown = sel_exit(&s->sel, a, t, dur);
	struct an_tally *d;

	(void)end;
	if (!shown || !fr || (f->partial && !f->lost) || !(d = acc_tally_of(s, f->fn)))
		return;
	if (f->lost) {
		d->spanning++;	/* no duration: not in the numbers */
		return;
	}
	d->unwound += how == AN_END_UNWOUND;
	d->self_unknown += f->holed;	/* records lost inside it: self not known */
	if (!f->nested)
		d->total += dur;
	if (an_tally_add(d, dur,
			 f->holed ? 0 : dur > fr->shown_children ? dur - fr->shown_children : 0,
			 true))
		s->oom = true;
}

static const struct an_ops acc_ops = {
	.enter = acc_enter,
	.exit = acc_exit,
};

/* The sort: keys in order (qsort() has no context argument). */
static enum acc_col acc_sort_cols[ACC_MAX_KEYS];
static unsigned acc_n_sort;
static bool acc_ascending;

static int acc_cmp(const void *x, const void *y)
{
	const struct acc_row *p = x, *q = y;
	int c = 0;

	for (unsigned k = 0; k < acc_n_sort && c == 0; k++) {
		enum acc_col col = acc_sort_cols[k];

		if (col == COL_FUNC)
			c = strcmp(p->name, q->name);
		else if (p->v[col] != q->v[col])
			c = p->v[col] < q->v[col] ? -1 : 1;
	}
	if (!acc_ascending)
		c = -c;
	if (c == 0)	/* ties: by id, always ascending, for stable output */
		c = p->v[COL_FUNCID] < q->v[COL_FUNCID] ? -1 : p->v[COL_FUNCID] > q->v[COL_FUNCID];
	return c;
}

/* -s KEY[,KEY...] */
static int acc_sort_keys(const char *arg)
{
	const char *p = arg;

	acc_n_sort = 0;
	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < sizeof(acc_keys) / sizeof(acc_keys[0]); i++)
			if (strlen(acc_keys[i].name) == len && !strncmp(p, acc_keys[i].name, len))
				break;
		if (i == sizeof(acc_keys) / sizeof(acc_keys[0]))
			return tool_usage_err("account", "unknown sort key '%.*s' in '%s' (funcid, "
					      "count or call, min, med, 90p, 99p, max, sum, total, "
					      "self, avg, func)", (int)len, p, arg);
		if (acc_n_sort == ACC_MAX_KEYS)
			return tool_usage_err("account", "at most %d sort keys", ACC_MAX_KEYS);
		acc_sort_cols[acc_n_sort++] = acc_keys[i].col;
		p += len;
		if (*p == ',' && !*++p)
			return tool_usage_err("account", "sort keys end with ',' in '%s'", arg);
	}
	if (!acc_n_sort)
		return tool_usage_err("account", "no sort key given");
	return 0;
}

static void acc_csv_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

struct acc_opts {
	const char *order;
	bool csv;
	bool seconds;
	bool per_process;
	long top;
};

enum { ACC_OPT_SECONDS = CLI_OPT_CMD, ACC_OPT_SORTORDER, ACC_OPT_PER_PROCESS };

static int acc_option(struct cli *cl, int c, const char *arg)
{
	struct acc_opts *o = cl->ctx;

	switch (c) {
	case 's':
		return acc_sort_keys(arg);
	case 'r':
		/* llvm-xray's -r asc|dsc, else the time range -r means elsewhere */
		if (strcmp(arg, "asc") && strcmp(arg, "dsc"))
			return cli_range(cl, arg);
		o->order = arg;
		break;
	case ACC_OPT_SORTORDER:
		if (strcmp(arg, "asc") && strcmp(arg, "dsc"))
			return tool_usage_err("account", "sort order is asc or dsc, not '%s'", arg);
		o->order = arg;
		break;
	case ACC_OPT_SECONDS:
		o->seconds = true;
		break;
	case ACC_OPT_PER_PROCESS:
		o->per_process = true;
		break;
	case 'p':
		return cli_top(cl, arg, &o->top);
	case 'f':
		return cli_table_format(cl, arg, &o->csv);
	}
	return 0;
}

static const struct option acc_longopts[] = {
	{ "sort", required_argument, NULL, 's' },
	{ "sortorder", required_argument, NULL, ACC_OPT_SORTORDER },
	{ "seconds", no_argument, NULL, ACC_OPT_SECONDS },
	{ "top", required_argument, NULL, 'p' },
	{ "format", required_argument, NULL, 'f' },
	{ "per-process", no_argument, NULL, ACC_OPT_PER_PROCESS },
	{ NULL, 0, NULL, 0 },
};

static const struct cli_cmd account_cli = {
	.name = "account",
	.usage =
	"Usage: fdrtrace account [options] FILE|DIR...\n"
	"\n"
	"Per function of the trace FILE ('-': standard input): calls, min, median,\n"
	"90th and 99th percentile, max, total and self time, in ns, us, ms or s\n"
	"(ticks / cycle_frequency). total is the time of the function's outermost\n"
	"calls: a recursive call inside another of the same function on its thread\n"
	"is in it once; sum (CSV, as llvm-xray account) adds every level. Percentiles\n"
	"come from a histogram with at most 0.79% relative error; min, max, sum,\n"
	"total and self are exact. The application's custom and typed events are\n"
	"not in the table: a line on stderr counts them (see replay, convert).\n"
	"A function marked '+' had calls counted, not recorded (auto_exclude): they\n"
	"are in count, its times are those of its timed calls ('-': none), and the\n"
	"counted calls' time is inside their callers' self time.\n"
	"replay's selectors keep the calls replay would show; a call's self time\n"
	"then leaves out only its shown callees. -r is the time range, as in the\n"
	"other commands, unless its value is asc or dsc: llvm-xray's sort order.\n"
	"\n"
	"A run (a directory of traces, one per process, or several FILEs): the\n"
	"functions of every process merged by name (ids differ between processes;\n"
	"funcid is the first process's), times at one frequency; --pid selects\n"
	"processes, --per-process shows each process's table before the run's.\n",
	.options =
	"  -s, --sort KEY[,KEY]  sort by total (default), self, call (or count), avg,\n"
	"                        min, max (uftrace's keys), med, 90p, 99p, sum, funcid,\n"
	"                        func; later keys break ties\n"
	"      --sortorder ORD   asc or dsc (default: dsc; asc for funcid and func);\n"
	"                        also -r asc, -r dsc (llvm-xray account's)\n"
	"  -p, --top N           only the first N rows\n"
	"  -f, --format FMT      text (default) or csv (llvm-xray account -f csv columns:\n"
	"                        funcid,count,min,median,90%ile,99%ile,max,sum,debug,\n"
	"                        function, in seconds, then total)\n"
	"      --seconds         text: every time in seconds with nine decimals\n"
	"      --per-process     of a run, each process's table too (in CSV: a first\n"
	"                        column pid, '*' for the run's rows)\n",
	.epilog = "Exit status: 0, 1 when the trace cannot be read, 2 on usage errors.\n",
	.optstring = "s:r:p:f:",
	.longopts = acc_longopts,
	.groups = CLI_QUIET | CLI_SELECT | CLI_RUN,
	.min_files = 1,
	.max_files = CLI_MAX_FILES,
	.option = acc_option,
};

/* A row of the table from a function's numbers. */
static void acc_fill_tally(struct acc_row *r, const char *name, uint32_t id,
			   const struct an_tally *d, uint64_t counted)
{
	r->name = name;
	r->v[COL_FUNCID] = id;
	r->v[COL_COUNT] = d->calls + counted;
	r->timed = d->calls;
	r->counted = counted;
	r->v[COL_MIN] = d->min;
	r->v[COL_MED] = hist_rank(&d->hist, 1, 2);
	r->v[COL_P90] = hist_rank(&d->hist, 9, 10);
	r->v[COL_P99] = hist_rank(&d->hist, 99, 100);
	r->v[COL_MAX] = d->max;
	r->v[COL_SUM] = d->sum;
	r->v[COL_SELF] = d->self;
	r->v[COL_TOTAL] = d->total;
	r->v[COL_AVG] = d->calls ? d->sum / d->calls : 0;
	r->spanning = d->spanning;
	r->unwound = d->unwound;
	r->self_unknown = d->self_unknown;
}

/* A row of the table from a function's numbers (@d: its shown calls, NULL: all its calls). */
static void acc_fill(struct acc_row *r, struct analysis *a, struct an_func *f,
		     const struct an_tally *d)
{
	/* selectors pick recorded calls: the counted ones are not among them */
	acc_fill_tally(r, an_func_name(a, f), f->id, d ? d : &f->tally, d ? 0 : f->counted);
	r->fn = f;
}

/*
 * The CSV: llvm-xray account's columns, in seconds, then total; the header
 * when @header; with @pid (a run's --per-process) a first column pid.
 */
static void acc_print_csv(const struct analysis *a, const struct acc_row *rows, uint32_t n,
			  const char *pid, bool header)
{
	if (header)
		printf("%sfuncid,count,min,median,90%%ile,99%%ile,max,sum,debug,function,total\n",
		       pid ? "pid," : "");
	for (uint32_t i = 0; i < n; i++) {
		const struct acc_row *r = &rows[i];
		int k;

		if (pid)
			printf("%s,", pid);
		printf("%" PRIu64 ",%" PRIu64, r->v[COL_FUNCID], r->v[COL_COUNT]);
		for (k = COL_MIN; k <= COL_SUM; k++)
			printf(",%.9e", an_seconds(a, r->v[k]));
		fputs(",\"\",", stdout);
		acc_csv_str(r->name);
		printf(",%.9e\n", an_seconds(a, r->v[COL_TOTAL]));
	}
}

/*
 * One time of the text table: "123.456 us" (10 columns: the unit the
 * first whose value, rounded to thousandths, is below 1000), or seconds
 * with nine decimals (12).
 */
static const char *acc_time(const struct analysis *a, uint64_t ticks, bool seconds, char *buf)
{
	if (seconds) {
		snprintf(buf, 32, "%12.9f", an_seconds(a, ticks));
		return buf;
	}
	return tool_time10(buf, an_seconds(a, ticks));
}

/*
 * The text table. Calls open across a loss have no duration: counted in
 * their own column, never in count, min ... self. A function with no timed
 * call shows '-' where a time would be. Calls ended by an outer exit are
 * timed to it (an upper bound) and counted again in a column of their own,
 * so that a number built on them is marked.
 */
static void acc_print_text(const struct analysis *a, const struct acc_row *rows, uint32_t n,
			   uint32_t total, bool span, bool unw, uint64_t self_unk, uint64_t counted,
			   bool seconds)
{
	static const enum acc_col cols[] = { COL_MIN, COL_MED, COL_P90, COL_P99, COL_MAX,
					     COL_TOTAL, COL_SELF };
	int w = seconds ? 12 : 10;
	char b[32];

	printf("Functions with latencies: %" PRIu32 "\n", total);
	printf("%9s %10s", "funcid", "count");
	if (span)
		printf(" %8s", "spanning");
	if (unw)
		printf(" %8s", "unwound");
	printf(" [%*s, %*s, %*s, %*s, %*s] %*s %*s  %s\n", w, "min", w, "med", w, "90p", w, "99p",
	       w, "max", w, "total", w, "self", "function");
	for (uint32_t i = 0; i < n; i++) {
		const struct acc_row *r = &rows[i];

		printf("%9" PRIu64 " %10" PRIu64, r->v[COL_FUNCID], r->v[COL_COUNT]);
		if (span)
			printf(" %8" PRIu64, r->spanning);
		if (unw)
			printf(" %8" PRIu64, r->unwound);
		for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
			const char *sep = k == 0 ? " [" : k < 5 ? ", " : k == 5 ? "] " : " ";

			/* self: '-' when no call's is known; times: '-' when none was timed */
			if (r->timed && (cols[k] != COL_SELF || r->self_unknown < r->timed))
				printf("%s%s", sep, acc_time(a, r->v[cols[k]], seconds, b));
			else
				printf("%s%*s", sep, w, "-");
		}
		/*
		 * '+': calls counted, not timed (auto_exclude); '*': the self of
		 * some calls is not known, that of the others shown
		 */
		printf("%s %s\n", r->counted ? "+" : r->self_unknown ? "*" : " ", r->name);
	}
	if (span)
		printf("(spanning: calls open where their thread lost records; not timed, "
		       "not in count, total or self)\n");
	if (unw)
		printf("(unwound: of count, calls whose own exit is not in the trace, ended "
		       "by their caller's: a C++ exception through code built by clang, which "
		       "records no exit when unwinding, or a longjmp; each is timed to that "
		       "exit, an upper bound that may be far off, and so are the total and self "
		       "times they are in)\n");
	if (counted)
		printf("(+: of count, %" PRIu64 " call%s counted only (auto_exclude: after its "
		       "first calls were timed and found short, a function's later calls, and "
		       "the calls made inside them, were counted, not recorded); the times are "
		       "those of the timed calls, '-' when none was; the counted calls' time is "
		       "inside their callers' self time)\n",
		       counted, counted == 1 ? "" : "s");
	if (self_unk)
		printf("(*: of count, %" PRIu64 " call%s timed across a loss (entry and exit "
		       "recorded, records lost inside): exact durations, unknown self times; "
		       "self is that of the other calls, '-' when there are none)\n",
		       self_unk, self_unk == 1 ? "" : "s");
}

/* Sort @rows and print the first of them (-p), as text or CSV (acc_print_csv()). */
static void acc_print(const struct acc_opts *o, const struct analysis *a, struct acc_row *rows,
		      uint32_t n, const char *pid, bool header)
{
	bool span = false, unw = false;
	uint64_t self_unk = 0, counted = 0;
	uint32_t i, total;

	for (i = 0; i < n; i++) {
		span |= rows[i].spanning != 0;
		unw |= rows[i].unwound != 0;
		self_unk += rows[i].self_unknown;
		counted += rows[i].counted;
	}
	if (n > 1)
		qsort(rows, n, sizeof(*rows), acc_cmp);
	total = n;
	if (o->top >= 0 && (uint64_t)o->top < n)
		n = (uint32_t)o->top;
	if (o->csv)
		acc_print_csv(a, rows, n, pid, header);
	else
		acc_print_text(a, rows, n, total, span, unw, self_unk, counted, o->seconds);
}

/* A function of a run: its calls in every process, merged by name. */
struct acc_merged {
	struct an_tally tally;
	uint64_t counted;
	uint32_t id;	/* its id in the first process that called it */
};

/*
 * Read one trace: the table of its functions in @rows (*@n of them; names
 * point into @a, which acc_done() frees). Return: 0 or -1.
 */
static int acc_read(const struct cli *cl, const struct acc_opts *o, const char *path,
		    struct analysis *a, struct acc_sel *s, struct acc_row **rows, uint32_t *n)
{
	uint32_t i;

	memset(a, 0, sizeof(*a));
	memset(s, 0, sizeof(*s));
	*rows = NULL;
	*n = 0;
	cli_apply(cl, a);
	sel_init(&s->sel, &cl->sel);
	if (s->sel.plain) {
		a->want_hist = true;	/* the core keeps every call's numbers */
	} else {
		a->ops = &acc_ops;
		a->ctx = s;
	}
	if (an_run(a, path))
		return -1;
	if (s->oom || s->sel.oom)
		tool_err("%s: out of memory: some calls are missing from the table", path);
	*rows = calloc(a->n_fns ? a->n_fns : 1, sizeof(**rows));
	if (!*rows) {
		tool_err("out of memory");
		return -1;
	}
	for (i = 0; i < a->n_fns; i++) {
		struct an_func *f = a->fns[i];
		const struct an_tally *d = NULL;
		struct acc_row *r = &(*rows)[*n];

		if (!s->sel.plain) {
			if (!f->uptr)
				continue;	/* no shown call */
			d = &s->v[*(const uint32_t *)f->uptr];
		}
		acc_fill(r, a, f, d);
		if ((o->csv ? !r->timed : !r->v[COL_COUNT]) && (!r->spanning || o->csv))
			continue;	/* CSV keeps llvm-xray's rows: timed calls only */
		(*n)++;
	}
	return 0;
}

static void acc_done(struct analysis *a, struct acc_sel *s, struct acc_row *rows)
{
	uint32_t i;

	free(rows);
	for (i = 0; i < s->n; i++)
		hist_free(&s->v[i].hist);
	free(s->v);
	sel_fini(&s->sel);
	an_fini(a);
}

/* The tally a row was made from (its function's, or its shown calls'). */
static const struct an_tally *acc_tally(const struct acc_sel *s, const struct acc_row *r)
{
	if (s->sel.plain)
		return &r->fn->tally;
	return &s->v[*(const uint32_t *)r->fn->uptr];
}

/* account of a run: every process's functions merged by name. */
static int acc_run(const struct cli *cl, const struct acc_opts *o, struct run_input *ri)
{
	static struct analysis a;	/* large: not on the stack */
	static struct analysis run;	/* the run's frequency, for an_seconds() */
	struct ri_names names = { 0 };
	struct acc_merged *m = NULL;
	uint32_t m_cap = 0, i, k, n, read = 0;
	struct acc_row *rows;
	struct acc_sel s;
	int status = EXIT_OK;
	bool first = true;

	for (k = 0; k < ri->n; k++) {
		const struct ri_trace *t = &ri->t[k];
		char pid[16];

		if (!t->selected)
			continue;
		if (acc_read(cl, o, t->path, &a, &s, &rows, &n)) {
			status = EXIT_FAIL;
			acc_done(&a, &s, rows);
			continue;
		}
		read++;
		for (i = 0; i < n; i++) {
			const struct acc_row *r = &rows[i];
			uint32_t j = ri_names_get(&names, r->name, strlen(r->name));
			struct an_tally d = *acc_tally(&s, r);

			if (j == UINT32_MAX)
				goto oom;
			if (tool_grow(&m, &m_cap, j, sizeof(*m), 256))
				goto oom;
			if (!m[j].tally.calls && !m[j].tally.spanning && !m[j].counted)
				m[j].id = r->fn->id;
			m[j].counted += r->counted;
			d.min = ri_ticks(ri, a.freq, d.min);
			d.max = ri_ticks(ri, a.freq, d.max);
			d.sum = ri_ticks(ri, a.freq, d.sum);
			d.self = ri_ticks(ri, a.freq, d.self);
			d.total = ri_ticks(ri, a.freq, d.total);
			if (ri_tally_merge(&m[j].tally, &d))
				goto oom;
			m[j].tally.self_unknown += d.self_unknown;
		}
		if (o->per_process) {
			snprintf(pid, sizeof(pid), "%d", (int)t->pid);
			if (!o->csv)
				printf("%s== process %d%s: %s\n", first ? "" : "\n", (int)t->pid,
				       t->origin == RI_EXEC ? " (after exec)" : "", ri_name(t));
			acc_print(o, &a, rows, n, o->csv ? pid : NULL, first);
			first = false;
		}
		an_summary(&a, "account");
		an_events_note(&a, "account");
		acc_done(&a, &s, rows);
	}
	rows = calloc(names.n ? names.n : 1, sizeof(*rows));
	if (!rows)
		goto oom_end;
	for (i = n = 0; i < names.n; i++) {
		acc_fill_tally(&rows[n], ri_names_str(&names, i), m[i].id, &m[i].tally,
			       m[i].counted);
		if ((o->csv ? !rows[n].timed : !rows[n].v[COL_COUNT]) &&
		    (!rows[n].spanning || o->csv))
			continue;
		n++;
	}
	if (o->per_process && !o->csv)
		printf("\n== the run: %u processes\n", read);
	memset(&run, 0, sizeof(run));
	run.freq = ri->freq;
	acc_print(o, &run, rows, n, o->per_process && o->csv ? "*" : NULL, first);
	free(rows);
	goto end;
oom:
	acc_done(&a, &s, rows);
oom_end:
	tool_err("out of memory");
	status = EXIT_FAIL;
end:
	ri_say_read(ri, cl->quiet, read);
	for (i = 0; i < names.n && m; i++)
		hist_free(&m[i].tally.hist);
	free(m);
	ri_names_free(&names);
	return status;
}

int cmd_account(int argc, char **argv)
{
	struct acc_opts o = { .top = -1 };
	static struct analysis a;	/* large: not on the stack */
	struct acc_row *rows = NULL;
	struct run_input ri;
	struct acc_sel s;
	struct cli cl;
	uint32_t n;
	int status = EXIT_OK;

	acc_sort_cols[0] = COL_TOTAL;
	acc_n_sort = 1;
	if (!cli_parse(&account_cli, &o, &cl, argc, argv, &status))
		return status;
	acc_ascending = o.order ? strcmp(o.order, "asc") == 0 :
			acc_sort_cols[0] == COL_FUNCID || acc_sort_cols[0] == COL_FUNC;
	if (ri_open(&ri, &cl, 0, cl.n_files))
		return EXIT_FAIL;
	if (ri.run) {
		status = acc_run(&cl, &o, &ri);
		ri_close(&ri);
		if (tool_finish_stdout())
			status = EXIT_FAIL;
		return status;
	}
	if (acc_read(&cl, &o, ri.t[0].path, &a, &s, &rows, &n)) {
		acc_done(&a, &s, rows);
		ri_close(&ri);
		return EXIT_FAIL;
	}
	if (s.oom || s.sel.oom)
		status = EXIT_FAIL;
	acc_print(&o, &a, rows, n, NULL, true);
	an_summary(&a, "account");
	an_events_note(&a, "account");
	acc_done(&a, &s, rows);
	ri_close(&ri);
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
