/* SPDX-License-Identifier: MIT */
/*
 * tui.h - the tui command's model, shared by its two halves: the worker
 * that builds it (tui_model.c) and the terminal view that shows it
 * (cmd_tui.c). Internal to the fdrtrace command.
 *
 * The model is one calling-context tree (struct tu_node, children by
 * total time), the functions' numbers by name (struct tu_fn) and the
 * labels of processes and threads; struct tu also holds the view's
 * state. Ownership: until tu_prog.done, the worker writes the model and
 * the main thread reads only struct tu_progress's atomics and what
 * neither changes (tu.cl, tu.ri); after it, the main thread owns all.
 */
#ifndef FDRTRACE_TUI_H
#define FDRTRACE_TUI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"
#include "cli.h"
#include "input.h"

#define TU_NONE UINT32_MAX
#define TU_INDENT_MAX 60u	/* levels indented; deeper ones say their level */

/* A node of the tree: a call path, or a label (process, thread). */
struct tu_node {
	uint32_t parent, child, next;	/* 0: none (node 0 is the root) */
	uint32_t name;			/* ri_names index, TU_NONE for a label */
	uint32_t label;			/* index in tu.labels for a label */
	uint32_t depth;			/* 0: the root */
	uint64_t calls, incl, self;
	bool open;
};

/* A function's numbers over the whole input (by name). */
struct tu_fn {
	uint64_t calls, total, self, min, max;
};

/* A row of the callers/callees view. */
struct tu_cc {
	uint32_t name;
	int kind;	/* 0: caller, 1: the function, 2: callee */
	uint64_t calls, incl;
};

enum tu_view { TU_TREE, TU_ACCOUNT, TU_CALLERS, TU_N_VIEWS };

enum tu_key { TU_BY_TOTAL, TU_BY_SELF, TU_BY_CALLS, TU_BY_MIN, TU_BY_MAX, TU_BY_NAME, TU_N_KEYS };

/*
 * What the worker says while it reads. @pos, @size, @calls and @trace are
 * for the reading screen only: relaxed (a screen may mix two moments).
 * @done is stored with release after the worker's last write to struct tu,
 * and loaded with acquire by the main thread before its first read of it.
 */
struct tu_progress {
	_Atomic uint64_t pos;		/* bytes of the current trace read */
	_Atomic uint64_t size;		/* its size */
	_Atomic uint64_t calls;		/* calls seen so far */
	_Atomic uint32_t trace;		/* which trace (0-based) */
	_Atomic bool done;
};

struct tu {
	const struct cli *cl;
	struct run_input ri;
	struct analysis fa;	/* the run's frequency, for an_seconds() */
	int status;

	struct tu_node *v;
	uint32_t n, cap;
	struct ri_names names;
	struct tu_fn *fns;	/* per name */
	uint32_t fns_cap;
	char **labels;
	uint32_t n_labels, labels_cap;
	bool oom;

	uint32_t *ord, *pos;	/* preorder of the whole tree, and each node's place */
	uint32_t *vis, n_vis;	/* the lines of the tree view */

	enum tu_view view;
	uint32_t cur[TU_N_VIEWS], top[TU_N_VIEWS];
	uint32_t *acc;		/* the account's rows (name indices) */
	uint32_t n_acc;
	enum tu_key key;
	struct tu_cc *cc;
	uint32_t n_cc, cc_fn;
	char search[128];
	char msg[256];
	bool help;
};

/* The model and the worker's progress (tui_model.c). */
extern struct tu tu;
extern struct tu_progress tu_prog;

/**
 * tu_worker - build the model: read the selected traces of tu.ri with
 * the analysis core, one after another, copying each one's tree under a
 * process node (a run) or the root (a trace)
 * @arg: unused (pthread start routine)
 *
 * Context: the worker thread, started once by the view with the signals
 * blocked. Publishes its place in tu_prog (relaxed), sets tu.status on a
 * trace that could not be read and tu.oom when memory ran out, and ends
 * with tu_prog.done stored with release order after its last write to tu.
 * Return: NULL.
 */
void *tu_worker(void *arg);

#endif /* FDRTRACE_TUI_H */
