/* SPDX-License-Identifier: MIT */
/*
 * input.h - what an analysis command reads: one trace, or a run of several
 * (a run directory written by `fdrtrace record`, or several trace files).
 *
 * ri_open() turns the FILE arguments into a list of traces: a directory
 * gives its *.fdr files (not the snapshots, *.snapN.fdr); a file is itself.
 * With more than one trace, or a directory, the input is a run: each trace
 * is looked at up to its first function record (the process record, the
 * fork record and the first TSC come first in a trace), and the list is
 * sorted by process start (start TSC, else start time, then pid and path).
 * The commands then read the traces one after another with the analysis
 * core (never two at once), so memory is that of the largest trace plus a
 * few hundred bytes per trace here.
 *
 * A run has one time axis: the traces of a run share one TSC (one machine),
 * converted with one frequency (the earliest-started trace's cycle
 * frequency) from one base (the earliest start TSC of the run).
 *
 * Contract: single-threaded tool code.
 */
#ifndef FDRTRACE_TOOL_INPUT_H
#define FDRTRACE_TOOL_INPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis.h"

struct cli;

/* A trace's parent in the run: how it came to be. */
enum ri_origin {
	RI_ROOT = 0,	/* no parent in the run */
	RI_FORK,	/* forked by ri_trace.parent */
	RI_EXEC,	/* the image ri_trace.parent replaced by exec (same pid) */
};

/**
 * struct ri_trace - one trace of the input
 * @path: its file
 * @pid, @ppid: from its process record (0 when it has none)
 * @start_ns: start time, ns since the epoch (0: not known)
 * @start_tsc: the clock when recording began (the process record's, else
 *	the first TSC of the trace; 0 when not known)
 * @freq: the header's cycle frequency
 * @program: the program path (NULL when not known)
 * @cmdline: the command line, arguments joined by spaces (NULL when not
 *	recorded: writers before 2026-12-01)
 * @fork_rec: the trace has a fork record (else a child is one its parent
 *	spawned: posix_spawn, vfork, or a fork child that ran no traced code
 *	before it exec'd)
 * @fork_point: the fork record names the forking thread and time
 * @parent_tid, @fork_tsc: that thread and time
 * @fork_serial: the fork record's serial (0: none), which the parent's
 *	spawn record of the fork carries
 * @origin, @parent: enum ri_origin and the index of the parent trace in
 *	the sorted list (-1 for RI_ROOT)
 * @exec_next: the trace of the image this one exec'd (-1: none)
 * @first_child, @next_sibling: the traces whose @parent it is, linked
 *	(-1 ends; in no particular order)
 * @prev_same: the latest earlier trace of the same pid (-1: none)
 * @selected: --pid keeps it (true without --pid)
 */
struct ri_trace {
	char *path;
	int32_t pid, ppid;
	uint64_t start_ns, start_tsc, freq;
	char *program;
	char *cmdline;
	bool fork_rec, fork_point;
	int32_t parent_tid;
	uint64_t fork_tsc;
	uint32_t fork_serial;
	enum ri_origin origin;
	int32_t parent;
	int32_t exec_next;
	int32_t first_child, next_sibling;
	int32_t prev_same;
	bool selected;
};

/**
 * struct run_input - the traces a command reads
 * @cmd: the command's name (messages)
 * @t, @n: the traces, in process start order for a run
 * @run: several traces, or a directory: the commands read it as one run
 * @n_selected: traces --pid keeps
 * @freq, @base: the run's one frequency and time base (see above)
 */
struct run_input {
	const char *cmd;
	struct ri_trace *t;
	uint32_t n, cap;
	bool run;
	uint32_t n_selected;
	uint64_t freq, base;
};

/**
 * ri_open - list the traces of the FILE arguments
 * @ri: filled in
 * @cl: the parsed command line (its files, --pid, -q)
 * @from, @count: which of @cl's files (diff reads each side alone)
 *
 * Reports errors ("fdrtrace CMD: ..."): a directory with no trace, a --pid
 * that no trace has. With a run and not -q, says on stderr how many traces
 * were read.
 *
 * Return: 0, or -1 (reported; @ri is empty).
 */
int ri_open(struct run_input *ri, const struct cli *cl, int from, int count);

/**
 * ri_close - free the list
 * @ri: the input
 */
void ri_close(struct run_input *ri);

/**
 * ri_name - a trace's process named for people: its command line, else its
 * program path, else its file
 * @t: the trace
 *
 * Return: the name.
 */
const char *ri_name(const struct ri_trace *t);

/**
 * ri_process_name - a process named for people across its execs: the
 * names (ri_name()) of its images, joined by "; exec "
 * @ri: the run
 * @k: one of the process's traces
 *
 * Return: the name, malloc()ed; NULL when out of memory.
 */
char *ri_process_name(const struct run_input *ri, uint32_t k);

/**
 * ri_say_read - "fdrtrace CMD: read N traces (M processes) of a run" on
 * stderr, for a run and not @quiet
 * @ri: the input
 * @quiet: -q
 * @read: traces read
 */
void ri_say_read(const struct run_input *ri, bool quiet, uint32_t read);

/**
 * ri_ticks - @ticks of a trace with frequency @freq in the run's ticks
 * (the same when either frequency is unknown or they are equal)
 * @ri: the run
 * @freq: the trace's frequency
 * @ticks: a duration
 *
 * Return: the duration at the run's frequency.
 */
uint64_t ri_ticks(const struct run_input *ri, uint64_t freq, uint64_t ticks);

/*
 * Interned strings: a string -> index table that commands use to merge
 * functions (and paths) of several traces by name. Indices are dense, from
 * 0, in order of first use; the strings are kept (ri_names_str()).
 */
struct ri_names {
	char **str;
	uint32_t n, cap;
	uint32_t *hash;		/* index + 1, 0 empty; load at most 1/2 */
	uint32_t hash_cap;
};

/**
 * ri_names_get - the index of @s, added when new
 * @nm: the table
 * @s: the string
 * @len: its length
 *
 * Return: the index, or UINT32_MAX when out of memory.
 */
uint32_t ri_names_get(struct ri_names *nm, const char *s, size_t len);

static inline const char *ri_names_str(const struct ri_names *nm, uint32_t i)
{
	return nm->str[i];
}

void ri_names_free(struct ri_names *nm);

/**
 * ri_tally_merge - add the calls of @src to @dst (an_tally's numbers and
 * histogram)
 * @dst, @src: tallies
 *
 * Return: 0, or -ENOMEM (the histogram misses some values).
 */
int ri_tally_merge(struct an_tally *dst, const struct an_tally *src);

#endif /* FDRTRACE_TOOL_INPUT_H */
