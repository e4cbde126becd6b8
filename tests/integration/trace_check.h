/* SPDX-License-Identifier: MIT */
/*
 * tests/integration/trace_check.h - run a traced program, summarise its trace.
 */
#ifndef TRACE_CHECK_H
#define TRACE_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include <fdrtrace/format.h>

#define TC_MAX_IDS 4096
#define TC_MAX_TIDS 256

struct tc_run {
	char dir[256];
	int status;		/* waitpid status */
	char out[8192];		/* the program's stdout */
	char err[8192];		/* its stderr */
};

struct tc_trace {
	bool ok;
	char error[512];
	uint16_t version;
	uint64_t buffer_size;
	uint64_t file_size;
	uint64_t func_records, entries, exits;
	uint64_t dropped, dropped_by[FDRTRACE_DROP_REASON_COUNT];
	uint64_t entry_count[TC_MAX_IDS], exit_count[TC_MAX_IDS];
	char *names[TC_MAX_IDS];
	uint64_t unmatched;	/* exits that do not close the innermost open entry */
	uint64_t gaps;		/* drop records that place a gap (their calls applied to the stack) */
	uint64_t open_at_end;	/* entries never closed */
	uint64_t unnamed;	/* function records before their id's FDRTRACE_EXT_FUNC */
	uint32_t max_depth;
	int ntids;
	int32_t tids[TC_MAX_TIDS];
	int32_t pids[8];
	int npids;
	bool closed;
	uint8_t close_how;
	uint64_t close_records, close_dropped;
	uint32_t close_error;	/* how stopped: the errno of the write that failed */
	uint64_t close_freq;	/* the close record's (refined) cycle frequency */
	int forks;
	uint32_t fork_parent, fork_child;
	int processes, thread_names, funcs, module_maps, configs;
	int pool_growths;	/* config records pool_buffers=N: the pool grew */
	uint64_t pool_buffers;	/* the last one's N */
	int execs;		/* FDRTRACE_EXT_EXEC records */
	char exec_path[512];	/* the last one's path */
	/* the first function record came after a process, a config and a module_map record */
	bool start_records_first;
	/*
	 * function records whose function can be named neither online (its
	 * FDRx func record has a name) nor offline (it names a module that a
	 * module_map record before it mapped)
	 */
	uint64_t nameless;
	bool offline[TC_MAX_IDS];	/* named only through its module (no name in the trace) */
	bool cannot_name[TC_MAX_IDS];
	uint8_t mapped[256];		/* module ids seen in module_map records */
	uint64_t freq;		/* the header's cycle frequency */
	uint64_t entry_args;	/* Entry_Args records (also counted as entries) */
	uint64_t args[64];	/* CallArgument values, in order (first 64) */
	int nargs;
	int user_events;	/* custom events that are not fdrtrace extensions */
	char user_event[64];	/* the last one's first bytes, NUL-terminated */
	int typed_events;
	uint16_t typed_type;	/* the last typed event's type */
	char typed_event[64];
	int stacks;		/* FDRTRACE_EXT_STACK records */
	uint32_t stack_depth_max;
	uint64_t stack_unmatched; /* stack records that disagree with the stack rebuilt so far */
	int ring_numbered;	/* stack records with their buffer's number (ring policy) */
	uint64_t ring_misnumbered; /* a thread's buffer not numbered one past its previous one */
	uint64_t ring_first_before; /* sum over threads: records before their first kept buffer */
	int buffers;
	/* auto_exclude: calls counted, not recorded, per id; FDRx excluded records */
	uint64_t counted[TC_MAX_IDS];
	uint64_t counted_lost;
	int counted_records, excluded, undone;
	bool excluded_id[TC_MAX_IDS];
	/* every function record in file order (tc_read fills it when tc_want_log) */
	struct tc_rec {
		int32_t tid;
		uint8_t action;
		uint32_t id;
		uint64_t tsc;
	} *log;
	uint64_t nlog;
};

/* tc_read() keeps every function record in t->log */
extern bool tc_want_log;
/* RLIMIT_FSIZE for the next runs (0: unchanged). */
extern long tc_fsize_limit;
/* > 0: the next runs are sent SIGKILL this many milliseconds after they start. */
extern long tc_kill_ms;
/* Run @argv (argv[0] a path) in a fresh temp dir with @env added (NULL-terminated). */
void tc_run(struct tc_run *r, const char *const *argv, const char *const *env);
/* Run under a wrapper: @pre (e.g. valgrind ...) then argv. */
void tc_run_wrapped(struct tc_run *r, const char *const *pre, const char *const *argv,
		    const char *const *env);
/* Number of *.fdr files in the run's dir; @first gets the path of the first (sorted). */
int tc_find_traces(const struct tc_run *r, char paths[][512], int max);
/* Parse @path completely with the reader; fills @t (t->ok false + error on a reader error). */
void tc_read(const char *path, struct tc_trace *t);
void tc_free(struct tc_trace *t);
/* Entries of the function named @name (0 if unknown). */
uint64_t tc_calls(const struct tc_trace *t, const char *name);
uint64_t tc_exits(const struct tc_trace *t, const char *name);
/* Calls of the function named @name counted, not recorded (auto_exclude). */
uint64_t tc_counted(const struct tc_trace *t, const char *name);
/* auto_exclude decided the function named @name counted-only. */
bool tc_excluded(const struct tc_trace *t, const char *name);
/* Remove the run's temp dir. */
void tc_done(struct tc_run *r);
/* Lines in @s */
int tc_lines(const char *s);
/*
 * Run the shell command @cmd; its standard output (the first @cap - 1
 * bytes) into @out, NUL-terminated. Return: pclose()'s status, -1 when
 * it could not be started.
 */
int tc_output(const char *cmd, char *out, size_t cap);

#endif
