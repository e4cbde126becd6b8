/* SPDX-License-Identifier: MIT */
/*
 * cmd_tui.c - "fdrtrace tui FILE|DIR...": an interactive terminal view
 * (ncurses) of a trace or a run: the call tree per thread, the account
 * table, the callers and callees of a function, search by name.
 *
 * This file is the view and the command: the terminal, the keys, the
 * start of the thread that builds the model. The model (the call tree per
 * trace or run, the functions' numbers, built by the worker) is
 * tui_model.c; what the two share is tui.h.
 *
 * Threads: a worker thread reads the traces with the analysis core (one
 * after another, as the other commands do); the main thread owns the
 * terminal. While the worker reads, the main thread draws a "reading FILE:
 * N MB of M MB" screen, every 200 ms; the worker publishes its place from
 * an an_ops.enter callback (the core's window offset, every 4096 calls) in
 * atomics. The model is handed over once, when the worker is done (an
 * atomic flag with release/acquire order): the main thread never touches
 * it before. q or a signal while reading ends the process without
 * waiting for the worker (_exit after the terminal is restored).
 *
 * Terminal: stdout must be a terminal. Every exit path restores it
 * (endwin(): at q, at exit() through atexit(), and at SIGINT, SIGTERM or
 * SIGHUP, which set a flag the main loop polls; the signal is then raised
 * again with its default action). What the core writes on stderr while the
 * screen is up (damaged buffers, summaries) goes to a temporary file and
 * is copied to stderr after endwin().
 *
 * Contract: until tu_progress.done, the worker thread and the main thread
 * share only the atomics of struct tu_progress and what neither changes
 * (the command line, the list of traces tu.ri); the worker writes the
 * model, the main thread the terminal. Signals go to the main thread (the
 * worker blocks them).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>

#include "analysis.h"
#include "cli.h"
#include "input.h"
#include "tui.h"
#include "util.h"

static const char *const tu_key_names[TU_N_KEYS] = {
	"total", "self", "calls", "min", "max", "name"
};

static volatile sig_atomic_t tu_signal;
static bool tu_screen;		/* curses is up */
static int tu_saved_err = -1;	/* stderr while it goes to tu_err_file */
static FILE *tu_err_file;

static const struct cli_cmd tui_cli = {
	.name = "tui",
	.usage =
	"Usage: fdrtrace tui [options] FILE|DIR...\n"
	"\n"
	"An interactive terminal view of the trace FILE, or of a run (a directory\n"
	"of traces, one per process, or several FILEs): the call tree per thread\n"
	"(one line per distinct call path, with its calls, total and self time),\n"
	"the account table (per function: calls, total, self, min, max), and the\n"
	"callers and callees of a function. A run has one root per process, named\n"
	"by its pid and command line; --pid selects processes. Standard output\n"
	"must be a terminal. Press ? in the view for the keys.\n",
	.epilog =
	"\n"
	"Keys: arrows, PgUp, PgDn, Home, End move; Tab switches views (tree,\n"
	"account, callers/callees); Enter or space folds and unfolds, + and -\n"
	"too; p or Left goes to the parent; n and N go to the next and previous\n"
	"node of the same function (after a search: the next and previous match);\n"
	"/ searches by name (Enter), Esc forgets the search; c shows the callers\n"
	"and callees of the function under the cursor; s cycles the account's\n"
	"sort key; ? shows the keys; q quits.\n",
	.optstring = "",
	.groups = CLI_QUIET | CLI_RUN,
	.min_files = 1,
	.max_files = CLI_MAX_FILES,
};

/* ------------------------------------------------------------------ */
/* The terminal                                                        */
/* ------------------------------------------------------------------ */

/* Restore the terminal and stderr; then what went to stderr meanwhile. */
static void tu_end_screen(void)
{
	char buf[4096];
	size_t n;

	if (tu_screen) {
		endwin();
		tu_screen = false;
	}
	if (tu_saved_err >= 0) {
		dup2(tu_saved_err, STDERR_FILENO);
		close(tu_saved_err);
		tu_saved_err = -1;
		if (tu_err_file) {
			rewind(tu_err_file);
			while ((n = fread(buf, 1, sizeof(buf), tu_err_file)) > 0)
				if (write(STDERR_FILENO, buf, n) < 0)
					break;
			fclose(tu_err_file);
			tu_err_file = NULL;
		}
	}
}

static void tu_on_signal(int sig)
{
	tu_signal = sig;
}

/* A time in 10 columns: "123.456 us" (graph's). */
static const char *tu_time(uint64_t ticks, char *buf)
{
	static const char *const units[] = { "ns", "us", "ms", " s" };
	double v = an_seconds(&tu.fa, ticks) * 1e9;
	unsigned u = 0;

	if (!tu.fa.freq) {
		snprintf(buf, 32, "%10" PRIu64, ticks);
		return buf;
	}
	while (u < 3 && v >= 999.9995) {
		v /= 1e3;
		u++;
	}
	snprintf(buf, 32, "%7.3f %s", v, units[u]);
	return buf;
}

static const char *tu_node_name(uint32_t i)
{
	const struct tu_node *nd = &tu.v[i];

	if (!i)
		return "(root)";
	return nd->name == TU_NONE ? tu.labels[nd->label] : ri_names_str(&tu.names, nd->name);
}

/* The tree view's lines: the open nodes' children, in preorder. */
static void tu_visible(void)
{
	uint32_t i = 1, keep = tu.n_vis ? tu.vis[tu.cur[TU_TREE]] : 0;

	tu.n_vis = 0;
	while (i < tu.n) {
		uint32_t x = tu.ord[i];

		tu.vis[tu.n_vis++] = x;
		if (tu.v[x].open || !tu.v[x].child) {
			i++;
			continue;
		}
		/* skip the subtree: up to the next node not below x */
		for (i++; i < tu.n && tu.v[tu.ord[i]].depth > tu.v[x].depth; i++)
			;
	}
	tu.cur[TU_TREE] = 0;
	for (i = 0; i < tu.n_vis; i++)
		if (tu.vis[i] == keep)
			tu.cur[TU_TREE] = i;
}

/* Put the tree's cursor on node @x, opening its ancestors. */
static void tu_goto(uint32_t x)
{
	for (uint32_t p = tu.v[x].parent; p; p = tu.v[p].parent)
		tu.v[p].open = true;
	tu.vis[tu.cur[TU_TREE]] = x;	/* tu_visible() keeps the cursor's node */
	tu_visible();
}

static uint32_t tu_rows(void)
{
	switch (tu.view) {
	case TU_TREE:
		return tu.n_vis;
	case TU_ACCOUNT:
		return tu.n_acc;
	default:
		return tu.n_cc;
	}
}

/* The function (name index) under the cursor, TU_NONE when none. */
static uint32_t tu_cursor_fn(void)
{
	uint32_t c = tu.cur[tu.view];

	if (!tu_rows())
		return TU_NONE;
	switch (tu.view) {
	case TU_TREE:
		return tu.v[tu.vis[c]].name;
	case TU_ACCOUNT:
		return tu.acc[c];
	default:
		return tu.cc[c].name;
	}
}

static const char *tu_row_name(uint32_t r)
{
	switch (tu.view) {
	case TU_TREE:
		return tu_node_name(tu.vis[r]);
	case TU_ACCOUNT:
		return ri_names_str(&tu.names, tu.acc[r]);
	default:
		return ri_names_str(&tu.names, tu.cc[r].name);
	}
}

static uint64_t tu_fn_key(uint32_t i)
{
	const struct tu_fn *f = &tu.fns[i];

	switch (tu.key) {
	case TU_BY_SELF:
		return f->self;
	case TU_BY_CALLS:
		return f->calls;
	case TU_BY_MIN:
		return f->min;
	case TU_BY_MAX:
		return f->max;
	default:
		return f->total;
	}
}

static int tu_acc_cmp(const void *x, const void *y)
{
	uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;
	uint64_t a, b;

	if (tu.key == TU_BY_NAME)
		return strcmp(ri_names_str(&tu.names, p), ri_names_str(&tu.names, q));
	a = tu_fn_key(p);
	b = tu_fn_key(q);
	if (a != b)
		return a > b ? -1 : 1;
	return strcmp(ri_names_str(&tu.names, p), ri_names_str(&tu.names, q));
}

static void tu_acc_sort(void)
{
	uint32_t keep = tu.n_acc ? tu.acc[tu.cur[TU_ACCOUNT]] : TU_NONE;

	qsort(tu.acc, tu.n_acc, sizeof(*tu.acc), tu_acc_cmp);
	for (uint32_t i = 0; i < tu.n_acc; i++)
		if (tu.acc[i] == keep)
			tu.cur[TU_ACCOUNT] = i;
}

static int tu_cc_cmp(const void *x, const void *y)
{
	const struct tu_cc *p = x, *q = y;

	if (p->kind != q->kind)
		return p->kind - q->kind;
	if (p->incl != q->incl)
		return p->incl > q->incl ? -1 : 1;
	return strcmp(ri_names_str(&tu.names, p->name), ri_names_str(&tu.names, q->name));
}

/* The callers and callees of function @fn: every node of it, summed by name. */
static void tu_callers(uint32_t fn)
{
	struct tu_cc *up = calloc(tu.names.n, sizeof(*up)), *down = calloc(tu.names.n, sizeof(*down));
	uint64_t calls = 0, incl = 0;
	uint32_t i, n = 0;

	free(tu.cc);
	tu.cc = NULL;
	tu.n_cc = 0;
	tu.cc_fn = fn;
	if (!up || !down || !(tu.cc = malloc((2 * tu.names.n + 1) * sizeof(*tu.cc)))) {
		snprintf(tu.msg, sizeof(tu.msg), "out of memory");
		goto out;
	}
	for (i = 1; i < tu.n; i++) {
		const struct tu_node *nd = &tu.v[i];

		if (nd->name != fn)
			continue;
		calls += nd->calls;
		incl += nd->incl;
		if (tu.v[nd->parent].name != TU_NONE) {
			up[tu.v[nd->parent].name].calls += nd->calls;
			up[tu.v[nd->parent].name].incl += nd->incl;
		}
		for (uint32_t c = nd->child; c; c = tu.v[c].next) {
			down[tu.v[c].name].calls += tu.v[c].calls;
			down[tu.v[c].name].incl += tu.v[c].incl;
		}
	}
	for (i = 0; i < tu.names.n; i++) {
		if (up[i].calls)
			tu.cc[n++] = (struct tu_cc){ i, 0, up[i].calls, up[i].incl };
		if (down[i].calls)
			tu.cc[n++] = (struct tu_cc){ i, 2, down[i].calls, down[i].incl };
	}
	/* the function's own line: its calls, recursive ones counted once in the time */
	if (fn < tu.fns_cap && tu.fns[fn].calls) {
		calls = tu.fns[fn].calls;
		incl = tu.fns[fn].total;
	}
	tu.cc[n++] = (struct tu_cc){ fn, 1, calls, incl };
	qsort(tu.cc, n, sizeof(*tu.cc), tu_cc_cmp);
	tu.n_cc = n;
	tu.top[TU_CALLERS] = 0;
	for (i = 0; i < n; i++)
		if (tu.cc[i].kind == 1)
			tu.cur[TU_CALLERS] = i;
out:
	free(up);
	free(down);
}

static bool tu_match(const char *name, uint32_t fn, uint32_t want_fn)
{
	if (tu.search[0])
		return strcasestr(name, tu.search) != NULL;
	return want_fn != TU_NONE && fn == want_fn;
}

/*
 * The next (@dir 1) or previous (-1) match after the cursor, in the
 * current view: of the search text, else of the cursor's function. In the
 * tree, in preorder of the whole tree (folded nodes too: opened).
 */
static void tu_next(int dir)
{
	uint32_t want = tu.search[0] ? TU_NONE : tu_cursor_fn();
	uint32_t i, n, from;

	if (!tu.search[0] && want == TU_NONE) {
		snprintf(tu.msg, sizeof(tu.msg), "no function under the cursor");
		return;
	}
	if (tu.view == TU_TREE) {
		if (!tu.n_vis)
			return;
		n = tu.n - 1;	/* preorder without the root */
		from = tu.pos[tu.vis[tu.cur[TU_TREE]]] - 1;
		for (i = 1; i <= n; i++) {
			uint32_t k = (uint32_t)((from + (uint64_t)n + (uint64_t)(dir * (int64_t)i)) % n);
			uint32_t x = tu.ord[k + 1];

			if (tu_match(tu_node_name(x), tu.v[x].name, want)) {
				tu_goto(x);
				if (k == from)
					snprintf(tu.msg, sizeof(tu.msg), "the only match");
				return;
			}
		}
	} else {
		n = tu_rows();
		if (!n)
			return;
		from = tu.cur[tu.view];
		for (i = 1; i <= n; i++) {
			uint32_t k = (uint32_t)((from + (uint64_t)n + (uint64_t)(dir * (int64_t)i)) % n);
			uint32_t fn = tu.view == TU_ACCOUNT ? tu.acc[k] : tu.cc[k].name;

			if (tu_match(tu_row_name(k), fn, want)) {
				tu.cur[tu.view] = k;
				return;
			}
		}
	}
	snprintf(tu.msg, sizeof(tu.msg), "no match for '%s'", tu.search);
}

/* Line @y: the text, cut at the window's width (a long name never wraps). */
static void tu_put(int y, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void tu_put(int y, const char *fmt, ...)
{
	char buf[1024];
	int rows, cols;
	va_list ap;

	getmaxyx(stdscr, rows, cols);
	if (y < 0 || y >= rows || cols < 2)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* not the last column: the cursor would wrap onto the next line */
	mvaddnstr(y, 0, buf, cols - 1);
	clrtoeol();
}

static void tu_draw_progress(void)
{
	uint32_t k = atomic_load_explicit(&tu_prog.trace, memory_order_relaxed);
	uint64_t pos = atomic_load_explicit(&tu_prog.pos, memory_order_relaxed);
	uint64_t size = atomic_load_explicit(&tu_prog.size, memory_order_relaxed);
	uint64_t calls = atomic_load_explicit(&tu_prog.calls, memory_order_relaxed);

	static time_t start;

	if (!start)
		start = time(NULL);
	if (pos > size)
		pos = size;
	erase();
	if (tu.ri.run)
		tu_put(0, "fdrtrace tui: trace %u of %u", k + 1, tu.ri.n);
	/* the seconds show it is alive while the core scans the buffers' preambles */
	tu_put(1, "reading %s: %.1f MB of %.1f MB (%" PRIu64 " calls, %ld s)", tu.ri.t[k].path,
	       pos / 1e6, size / 1e6, calls, (long)(time(NULL) - start));
	tu_put(3, "q quits");
	refresh();
}

static void tu_draw_help(void)
{
	static const char *const lines[] = {
		"Keys",
		"",
		"  Up, Down, PgUp, PgDn, Home, End   move (also k, j, g, G)",
		"  Tab          switch views: tree, account, callers/callees",
		"  Enter, space fold or unfold the node (tree)",
		"  +, Right     unfold;  -  fold",
		"  p, Left      go to the parent (tree)",
		"  n, N         next, previous node of the same function;",
		"               after a search: next, previous match",
		"  /            search by name (Enter; Esc forgets the search)",
		"  c            callers and callees of the function under the cursor",
		"               (Enter on one of them: its callers and callees)",
		"  s            cycle the account's sort key",
		"  ?            this help (any key closes it)",
		"  q            quit",
	};

	erase();
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		tu_put((int)i, "%s", lines[i]);
	refresh();
}

static void tu_draw(void)
{
	int rows, cols, h, y;
	uint32_t v = tu.view, r, n = tu_rows();
	char b1[32], b2[32], b3[32];
	static const char *const vnames[] = { "tree", "account", "callers/callees" };

	getmaxyx(stdscr, rows, cols);
	(void)cols;
	if (rows < 4) {
		erase();
		tu_put(0, "(a taller terminal, please)");
		refresh();
		return;
	}
	if (tu.help) {
		tu_draw_help();
		return;
	}
	erase();
	h = rows - 3;
	if (h < 1)
		h = 1;
	if (n && tu.cur[v] >= n)
		tu.cur[v] = n - 1;
	if (tu.cur[v] < tu.top[v])
		tu.top[v] = tu.cur[v];
	if (tu.cur[v] >= tu.top[v] + (uint32_t)h)
		tu.top[v] = tu.cur[v] - (uint32_t)h + 1;
	attron(A_BOLD);
	if (v == TU_TREE)
		tu_put(0, "%10s  %10s  %10s  CALL TREE", "TOTAL", "SELF", "CALLS");
	else if (v == TU_ACCOUNT)
		tu_put(0, "%10s  %10s  %10s  %10s  %10s  FUNCTION (sorted by %s)", "CALLS", "TOTAL",
		       "SELF", "MIN", "MAX", tu_key_names[tu.key]);
	else
		tu_put(0, "%10s  %10s  %-8s  CALLERS AND CALLEES OF %s", "CALLS", "TOTAL", "",
		       ri_names_str(&tu.names, tu.cc_fn));
	attroff(A_BOLD);
	for (y = 0, r = tu.top[v]; y < h && r < n; y++, r++) {
		if (r == tu.cur[v])
			attron(A_REVERSE);
		if (v == TU_TREE) {
			const struct tu_node *nd = &tu.v[tu.vis[r]];
			uint32_t d = nd->depth - 1;
			char lv[16] = "";

			/* past TU_INDENT_MAX levels, the level instead of the indent */
			if (d > TU_INDENT_MAX) {
				snprintf(lv, sizeof(lv), "[%u] ", d);
				d = 0;
			}
			tu_put(y + 1, "%10s  %10s  %10" PRIu64 "  %*s%s%c %s", tu_time(nd->incl, b1),
			       nd->name == TU_NONE ? "" : tu_time(nd->self, b2), nd->calls,
			       (int)(2 * d), "", lv, !nd->child ? ' ' : nd->open ? '-' : '+',
			       tu_node_name(tu.vis[r]));
		} else if (v == TU_ACCOUNT) {
			const struct tu_fn *f = &tu.fns[tu.acc[r]];
			char b4[32];

			tu_put(y + 1, "%10" PRIu64 "  %10s  %10s  %10s  %10s  %s", f->calls,
			       tu_time(f->total, b1), tu_time(f->self, b2), tu_time(f->min, b3),
			       tu_time(f->max, b4), ri_names_str(&tu.names, tu.acc[r]));
		} else {
			static const char *const kinds[] = { "caller", ">>", "callee" };
			const struct tu_cc *c = &tu.cc[r];

			tu_put(y + 1, "%10" PRIu64 "  %10s  %-8s  %s%s", c->calls,
			       tu_time(c->incl, b1), kinds[c->kind], c->kind == 1 ? "" : "  ",
			       ri_names_str(&tu.names, c->name));
		}
		if (r == tu.cur[v])
			attroff(A_REVERSE);
	}
	attron(A_REVERSE);
	tu_put(rows - 2, "[%s] %u/%u  %s%s%s", vnames[v], n ? tu.cur[v] + 1 : 0, n,
	       n ? tu_row_name(tu.cur[v]) : "", tu.search[0] ? "  search: " : "", tu.search);
	attroff(A_REVERSE);
	tu_put(rows - 1, "%s", tu.msg[0] ? tu.msg : "? keys  q quit  Tab views  / search");
	refresh();
}

/* Read the search text on the last line. Return: false when cancelled. */
static bool tu_prompt(void)
{
	char buf[sizeof(tu.search)] = "";
	size_t n = 0;
	int rows, cols, c;

	for (;;) {
		getmaxyx(stdscr, rows, cols);
		(void)cols;
		tu_put(rows - 1, "/%s", buf);
		refresh();
		c = getch();
		if (tu_signal)
			return false;
		if (c == ERR || c == KEY_RESIZE)
			continue;
		if (c == 27)
			return false;
		if (c == '\n' || c == '\r' || c == KEY_ENTER)
			break;
		if (c == KEY_BACKSPACE || c == 127 || c == 8) {
			if (n)
				buf[--n] = '\0';
			continue;
		}
		if (c >= 32 && c < 256 && n + 1 < sizeof(buf)) {
			buf[n++] = (char)c;
			buf[n] = '\0';
		}
	}
	memcpy(tu.search, buf, sizeof(buf));
	return true;
}

static void tu_fold(int how)	/* 1 open, 0 close, -1 toggle */
{
	struct tu_node *nd;

	if (!tu.n_vis)
		return;
	nd = &tu.v[tu.vis[tu.cur[TU_TREE]]];
	if (!nd->child)
		return;
	nd->open = how < 0 ? !nd->open : how;
	tu_visible();
}

/* One key. Return: false to quit. */
static bool tu_key(int c)
{
	uint32_t v = tu.view, n = tu_rows(), page;
	int rows, cols;

	getmaxyx(stdscr, rows, cols);
	(void)cols;
	page = rows > 4 ? (uint32_t)rows - 4 : 1;
	tu.msg[0] = '\0';
	if (tu.help) {
		tu.help = false;
		return c != 'q';
	}
	switch (c) {
	case 'q':
		return false;
	case '?':
		tu.help = true;
		break;
	case KEY_UP:
	case 'k':
		if (tu.cur[v])
			tu.cur[v]--;
		break;
	case KEY_DOWN:
	case 'j':
		if (tu.cur[v] + 1 < n)
			tu.cur[v]++;
		break;
	case KEY_PPAGE:
		tu.cur[v] = tu.cur[v] > page ? tu.cur[v] - page : 0;
		break;
	case KEY_NPAGE:
		tu.cur[v] = n && tu.cur[v] + page < n ? tu.cur[v] + page : n ? n - 1 : 0;
		break;
	case KEY_HOME:
	case 'g':
		tu.cur[v] = 0;
		break;
	case KEY_END:
	case 'G':
		tu.cur[v] = n ? n - 1 : 0;
		break;
	case '\t':
		tu.view = (enum tu_view)((v + 1) % TU_N_VIEWS);
		if (tu.view == TU_CALLERS && !tu.cc) {
			uint32_t fn = tu_cursor_fn();

			if (fn == TU_NONE && tu.n_acc)
				fn = tu.acc[0];
			if (fn == TU_NONE)
				tu.view = TU_TREE;
			else
				tu_callers(fn);
		}
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
	case ' ':
		if (v == TU_TREE) {
			tu_fold(-1);
		} else if (n && tu_cursor_fn() != TU_NONE) {
			tu_callers(tu_cursor_fn());
			tu.view = TU_CALLERS;
		}
		break;
	case '+':
	case KEY_RIGHT:
		if (v == TU_TREE)
			tu_fold(1);
		break;
	case '-':
		if (v == TU_TREE)
			tu_fold(0);
		break;
	case 'p':
	case KEY_LEFT:
		if (v == TU_TREE && n) {
			uint32_t p = tu.v[tu.vis[tu.cur[v]]].parent;

			if (p)
				tu_goto(p);
		}
		break;
	case 'n':
		tu_next(1);
		break;
	case 'N':
		tu_next(-1);
		break;
	case 27:
		tu.search[0] = '\0';
		break;
	case '/':
		if (tu_prompt() && tu.search[0])
			tu_next(1);
		break;
	case 'c':
		if (tu_cursor_fn() == TU_NONE) {
			snprintf(tu.msg, sizeof(tu.msg), "no function under the cursor");
		} else {
			tu_callers(tu_cursor_fn());
			tu.view = TU_CALLERS;
		}
		break;
	case 's':
		if (v == TU_ACCOUNT) {
			tu.key = (enum tu_key)((tu.key + 1) % TU_N_KEYS);
			tu_acc_sort();
		}
		break;
	default:
		break;
	}
	return true;
}

/* The views once the model is read. */
static void tu_ready(void)
{
	uint32_t i;

	tu.acc = malloc((tu.names.n ? tu.names.n : 1) * sizeof(*tu.acc));
	if (!tu.acc) {
		tu.oom = true;
		return;
	}
	for (i = 0; i < tu.names.n; i++)
		if (i < tu.fns_cap && tu.fns[i].calls)
			tu.acc[tu.n_acc++] = i;
	tu_acc_sort();
	tu.cur[TU_ACCOUNT] = 0;
	/* open the labels (processes, threads): their outermost calls show */
	for (i = 1; i < tu.n; i++)
		if (tu.v[i].name == TU_NONE)
			tu.v[i].open = true;
	tu_visible();
	if (tu.status)
		snprintf(tu.msg, sizeof(tu.msg), "a trace could not be read: why is said after q");
	else if (!tu.n_vis)
		snprintf(tu.msg, sizeof(tu.msg), "no call in the trace");
}

static int tu_loop(void)
{
	bool ready = false;
	pthread_t th;
	sigset_t set, old;
	int c;

	/* the first screen names the first trace and its size */
	for (uint32_t k = 0; k < tu.ri.n; k++) {
		struct stat st;

		if (!tu.ri.t[k].selected)
			continue;
		atomic_store_explicit(&tu_prog.trace, k, memory_order_relaxed);
		if (stat(tu.ri.t[k].path, &st) == 0)
			atomic_store_explicit(&tu_prog.size, (uint64_t)st.st_size, memory_order_relaxed);
		break;
	}
	/* the worker takes no signal: the main thread's loop sees them */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGWINCH);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	if (pthread_create(&th, NULL, tu_worker, NULL)) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		tu_end_screen();
		tool_err("cannot start a thread");
		return EXIT_FAIL;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (;;) {
		if (!ready && atomic_load_explicit(&tu_prog.done, memory_order_acquire)) {
			pthread_join(th, NULL);
			ready = true;
			if (tu.oom)
				break;
			tu_ready();
		}
		if (ready)
			tu_draw();
		else
			tu_draw_progress();
		c = getch();
		if (tu_signal) {
			int sig = tu_signal;

			tu_end_screen();
			signal(sig, SIG_DFL);
			raise(sig);
			_exit(128 + sig);
		}
		if (c == ERR || c == KEY_RESIZE)
			continue;
		if (!ready) {
			if (c == 'q') {
				/* the worker cannot be stopped inside an_run(): leave it */
				tu_end_screen();
				_exit(EXIT_OK);
			}
			continue;
		}
		if (!tu_key(c))
			break;
	}
	tu_end_screen();
	return tu.oom ? EXIT_FAIL : tu.status;
}

int cmd_tui(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = tu_on_signal };
	struct cli cl;
	int status = EXIT_OK, k;
	SCREEN *scr;

	if (!cli_parse(&tui_cli, NULL, &cl, argc, argv, &status))
		return status;
	for (k = 0; k < cl.n_files; k++)
		if (!strcmp(cl.files[k], "-"))
			return tool_usage_err("tui", "reads files, not standard input (its keys come "
					      "from there)");
	tu.cl = &cl;
	tu.status = EXIT_OK;
	/* a missing file is said first: it is the more useful message */
	if (ri_open(&tu.ri, &cl, 0, cl.n_files))
		return EXIT_FAIL;
	for (uint32_t i = 0; i < tu.ri.n; i++) {
		if (tu.ri.t[i].selected && access(tu.ri.t[i].path, R_OK)) {
			fprintf(stderr, "fdrtrace tui: %s: %s\n", tu.ri.t[i].path, strerror(errno));
			ri_close(&tu.ri);
			return EXIT_FAIL;
		}
	}
	if (!isatty(STDOUT_FILENO)) {
		fprintf(stderr, "fdrtrace tui: standard output is not a terminal\n");
		ri_close(&tu.ri);
		return EXIT_FAIL;
	}
	tu.fa.freq = tu.ri.freq;
	setlocale(LC_ALL, "");
	/* the core's messages wait in a file while the screen is up */
	if (isatty(STDERR_FILENO)) {
		tu_err_file = tmpfile();
		if (tu_err_file) {
			fflush(stderr);
			tu_saved_err = dup(STDERR_FILENO);
			if (tu_saved_err < 0 || dup2(fileno(tu_err_file), STDERR_FILENO) < 0) {
				fclose(tu_err_file);
				tu_err_file = NULL;
			}
		}
	}
	atexit(tu_end_screen);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		tu_end_screen();
		tool_err("tui: cannot set up the terminal (TERM=%s)",
			 getenv("TERM") ? getenv("TERM") : "");
		ri_close(&tu.ri);
		return EXIT_FAIL;
	}
	tu_screen = true;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(50);
	curs_set(0);
	timeout(200);
	status = tu_loop();
	delscreen(scr);
	ri_close(&tu.ri);
	free(tu.v);
	free(tu.fns);
	for (uint32_t i = 0; i < tu.n_labels; i++)
		free(tu.labels[i]);
	free(tu.labels);
	free(tu.ord);
	free(tu.pos);
	free(tu.vis);
	free(tu.acc);
	free(tu.cc);
	ri_names_free(&tu.names);
	return status;
}
