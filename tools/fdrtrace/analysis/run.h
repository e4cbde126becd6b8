/* SPDX-License-Identifier: MIT */
/*
 * run.h - a run directory: the traces `fdrtrace record` left, one per
 * traced process (one per image when a process execs), and their tree.
 *
 * Each trace is read cheaply: its first records (process, fork, config:
 * the runtime writes them first) and the tail (exec, close: its last
 * writes), never the function records between. Everything comes from the
 * traces' own FDRx records (docs/format.md §5), so a trace copied out of
 * the directory stays self-describing; the index file record writes
 * (docs/format.md "Run directory") is for people and scripts, and is not
 * read back here.
 *
 * Contract: single-threaded; a struct run_dir is owned by its caller.
 */
#ifndef FDRTRACE_TOOL_RUN_H
#define FDRTRACE_TOOL_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The index file record writes in a run directory, and its first line's start. */
#define RUN_INDEX "index"
#define RUN_INDEX_MAGIC "# fdrtrace run index"

/* The run directory fdrtrace record writes by default, in the current directory. */
#define RUN_DEFAULT_DIR "fdrtrace.run"

/* Is the file at @path a run's index (a regular file starting with RUN_INDEX_MAGIC)? */
bool run_is_index(const char *path);

/**
 * run_default_input - what a command reads when given no FILE: the run
 * directory record wrote here (RUN_DEFAULT_DIR, with its index), else the
 * newest trace file (*.fdr, by modification time) of the current directory
 * @buf: room for the name
 * @cap: its size
 *
 * Return: @buf, or NULL when there is neither.
 */
char *run_default_input(char *buf, size_t cap);

/**
 * struct run_proc - one trace of a run directory: a process, or one image
 * of a process that exec'd
 * @file: the trace's file name (in the directory)
 * @size: its size in bytes
 * @readable: it opened and holds a trace header; false: empty (0 bytes, a
 *	process killed as it began) or not a trace
 * @has_process: it has a process record (the fields to @argc are set)
 * @pid, @ppid: from the process record; without one, @pid from the name
 * @start_ns, @end_ns: recording began and ended (ns since the epoch; 0:
 *	not known)
 * @program: the process record's program path ("" when none)
 * @args: its command line, arguments separated by NULs, @args_len bytes;
 *	NULL when the writer did not record it (an older runtime)
 * @argc, @args_cut: how many arguments it had; fewer kept (cut to fit)
 * @forked: a fork record: the process is a fork child of @ppid
 * @exec_path: the exec record's path (the image that replaced this one), or NULL
 * @has_close: the close record's fields below are set; without one the
 *	trace was cut short (the process killed, or the file truncated)
 * @how: enum fdrtrace_close_how
 * @has_end, @end, @end_value: how the process ended (enum fdrtrace_end),
 *	from writers since 2026-12-01
 * @records, @lost, @left_out: function records written; lost (dropped
 *	and not left out on purpose); left out on purpose (filters)
 * @error: how stopped: the errno of the write that failed
 * @parent: index of the trace of its parent in the run (-1: not traced);
 *	the parent's image that was current when this one began
 * @prev_image: index of the trace of the image this one replaced by exec, or -1
 * @first_child, @next_sibling: the tree, ordered by start time (-1: none).
 *	A process's next image is a child of its parent, after it.
 * @depth: its depth in the tree (0: top level)
 * @running: set by the caller: the process still ran when the run was
 *	listed (its trace not closed yet)
 */
struct run_proc {
	char *file;
	uint64_t size;
	bool readable, has_process, forked, args_cut, has_close, has_end;
	uint32_t pid, ppid, argc, args_len, end_value, error;
	uint64_t start_ns, end_ns;
	char *program, *args, *exec_path;
	uint8_t how, end;
	uint64_t records, lost, left_out;
	long parent, prev_image, first_child, next_sibling;
	unsigned depth;
	bool running;
};

/**
 * struct run_dir - the traces of a run directory
 * @path: the directory
 * @procs, @n: its traces, sorted by start time (then pid, then file name)
 * @has_index: the directory holds record's index file
 * @roots: the first top-level trace (-1: none); linked by next_sibling
 */
struct run_dir {
	char *path;
	struct run_proc *procs;
	size_t n;
	bool has_index;
	long roots;
};

/**
 * run_is_dir - is @path a directory? Return: 1, 0, or -errno (stat failed).
 */
int run_is_dir(const char *path);

/**
 * run_list - the trace files in directory @dir
 * @dir: the directory
 * @prefix: only names starting with it ("" for all)
 * @names, @n: set to a sorted, malloc'd array of malloc'd names: those
 *	ending in ".fdr", not snapshots (NAME.snapN.fdr); free with
 *	run_names_free()
 *
 * Return: 0, or -errno (the directory unreadable, out of memory).
 */
int run_list(const char *dir, const char *prefix, char ***names, size_t *n);
void run_names_free(char **names, size_t n);

/**
 * run_read_trace - read what a trace says of its process
 * @path: the trace
 * @p: filled in (@p->file is left alone; the tree fields set to -1)
 *
 * Return: 0, or -ENOMEM. A trace that cannot be read sets readable false.
 */
int run_read_trace(const char *path, struct run_proc *p);

/**
 * run_open - read every trace of run directory @dir and build the tree
 * @r: filled in; free with run_close() whatever the result
 * @dir: the directory
 * @only: NULL, or the names to read (a run's traces among older files)
 * @n_only: how many in @only
 *
 * Return: 0, or -errno (the directory unreadable, out of memory).
 */
int run_open(struct run_dir *r, const char *dir, char *const *only, size_t n_only);
void run_close(struct run_dir *r);

/**
 * run_command - a trace's command line for people, into @buf
 * @p: the trace
 * @buf, @cap: the text: the arguments, quoted as a shell would need, or
 *	the program path when the trace has no command line; cut to @cap
 *	with "..."
 * @tabs: escape tabs and newlines (\t, \n) too, for a TSV field
 */
void run_command(const struct run_proc *p, char *buf, size_t cap, bool tabs);

/**
 * run_ended - how the process of a trace ended, for people, into @buf:
 * "exited 3", "killed by SIGKILL", "exec'd /bin/ls", "exited (status not
 * recorded)", "no close: killed or cut short", "empty: no records", ...
 */
void run_ended(const struct run_proc *p, char *buf, size_t cap);

/**
 * run_write_index - write @r's index file, DIR/index, atomically
 * @r: the run
 * @header: lines to put first (each starting with "# "), or NULL
 *
 * Return: 0, or -errno.
 */
int run_write_index(const struct run_dir *r, const char *header);

/* The pid in a trace's name (NAME.PID.fdr, NAME.PID.N.fdr), or 0. */
pid_t run_name_pid(const char *name, char *const *names, size_t n);

#endif /* FDRTRACE_TOOL_RUN_H */
