/* SPDX-License-Identifier: MIT */
/*
 * analysis_types.h - the bottom of the analysis core (its API is
 * analysis.h): the types every file of the core and every command shares
 * (a function, a frame, a thread, the calling-context tree's node, a
 * module, the callbacks, the run itself), the limits, and the small inlines
 * on them that call nothing of the core. No .c goes with it.
 *
 * The core's files are a stack; each uses only names defined in the files
 * below it (a header counting as its .c's), and includes the header of the
 * layer right below (which includes the rest):
 *
 *   analysis.c          the driver: opening, reading (scan, stream,
 *                       reorder), the end; analysis.h is its header and the
 *                       commands' API                     analysis_events.h
 *   analysis_events.c   each event and run of function records, and the
 *                       call-stack machine's step per record (an_function())
 *                                                         analysis_gaps.h
 *   analysis_gaps.c     losses: gaps held and applied, stack records
 *                                                         analysis_stack.h
 *   analysis_stack.c    threads, calling-context nodes, open-call counts;
 *                       the push and pop inline in        analysis_names.h
 *                       analysis_stack.h
 *   analysis_names.c    functions by id (the fast path, an_func_get(),
 *                       inline in analysis_names.h), modules, names
 *                                                         (this header)
 *   analysis_summary.c  the summary lines, an_fini(): beside the stack,
 *                       called by the commands            (this header)
 *
 * analysis.h includes analysis_names.h, analysis_stack.h and
 * analysis_summary.h, whose functions the commands call; nothing outside
 * the core includes the others.
 *
 * Contract: single-threaded tool code.
 */
#ifndef FDR_TOOL_ANALYSIS_TYPES_H
#define FDR_TOOL_ANALYSIS_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "histogram.h"
#include "nstack.h"
#include "symbolizer.h"
#include "xray_map.h"

/*
 * A thread keeps at most AN_DEPTH_MAX open calls (a frame each, and each
 * command's state per open call): 9 MB of zero bytes read as 1.1 M nested
 * entries took 80-200 MB. A call past that depth is counted
 * (an_stats.too_deep, in the summary), not timed and not given to the
 * command; the next exit closes the innermost such call. Real stacks stay
 * far shallower (an 8 MiB stack holds some 100,000 of the smallest frames).
 */
#define AN_DEPTH_MAX (1u << 16)

/* The hash of the function and thread tables (open addressing). */
static inline uint32_t an_hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/**
 * struct an_tally - the numbers of a function's calls (zeroed before use)
 * @calls, @sum, @min, @max: its timed calls (not partial, not across a
 *	loss; counted by an_tally_add()) and their durations (ticks)
 * @total: the durations of those of its timed calls that no call of the
 *	same function on their thread encloses: a recursive function counted
 *	once per outermost call (set by the core, and by a command that keeps
 *	tallies of its own, from an_frame.nested)
 * @self: their durations less their callees' (which callees: the caller's)
 * @spanning: calls that lost their own entry or exit in a loss (not in the
 *	numbers above)
 * @self_unknown: of @calls, those timed across a gap (their entry and exit
 *	recorded, records lost inside them): their self time is not known, and
 *	not in @self
 * @unwound: of @calls, those ended by an outer exit (timed to it: an upper bound)
 * @hist: the durations, for percentiles (when the caller asks for them)
 */
struct an_tally {
	uint64_t calls, sum, self, min, max, total;
	uint64_t spanning, unwound, self_unknown;
	struct hist hist;
};

/**
 * an_tally_add - count one timed call (@self: @dur less its callees')
 * @t: the tally
 * @dur, @self: ticks
 * @want_hist: count @dur in @t->hist too
 *
 * Return: 0, or hist_add()'s -ENOMEM (not in @t->hist, counted elsewhere).
 */
static inline __attribute__((always_inline)) int an_tally_add(struct an_tally *t, uint64_t dur,
							     uint64_t self, bool want_hist)
{
	if (!t->calls || dur < t->min)
		t->min = dur;
	if (dur > t->max)
		t->max = dur;
	t->calls++;
	t->sum += dur;
	t->self += self;
	return want_hist ? hist_add(&t->hist, dur) : 0;
}

/**
 * struct an_func - one function id of the trace
 * @id: the 28-bit function id
 * @module_id: from FDRTRACE_EXT_FUNC, 0xffffffff when unknown
 * @address: from FDRTRACE_EXT_FUNC, 0 when unknown
 * @name: the symbol as recorded (mangled), NULL when unknown
 * @base: the printable name without location (see an_func_name()), built
 *	on first use: a demangled C++ name in its short form (shortname.h)
 *	unless struct analysis.full_names
 * @full: the whole demangled name when @base is its short form, else NULL
 * @display: @base and, when it must be told apart, its location; built on
 *	first use (the same pointer as @base when there is nothing to add)
 * @base_len: strlen(@base): @display starts with it
 * @collides: another function of the trace has the same @base
 * @same_next, @same_prev: the other functions with the same @base (the
 *	name hash's chain; analysis_names.c)
 * @name_gen: bumped when a record names the function after it was named
 *	(its @base and @display are then made again): a command that keeps
 *	a name of its own made from them compares it
 * @tally: its completed calls (@tally.hist when struct analysis.want_hist)
 * @open_thread, @open_n: its calls open on one thread (struct
 *	an_thread.index + 1), the first that had one open; @open_far: its
 *	calls open on other threads meanwhile (found by a walk of their
 *	stacks): what tells a recursive call (an_frame.nested) at no cost in
 *	the common case
 * @uptr: for the command (freed with free() by an_fini() when not NULL)
 * @counted: calls counted, not recorded (auto_exclude, FDRTRACE_EXT_COUNTED):
 *	in no tally, not timed; their time is in their callers' self time
 * @excluded: auto_exclude decided it counted-only (FDRTRACE_EXT_EXCLUDED)
 */
struct an_func {
	uint32_t id;
	uint32_t module_id;
	uint64_t address;
	char *name;
	char *base;
	char *full;
	char *display;
	uint32_t base_len;
	uint32_t name_gen;
	bool collides;
	struct an_func *same_next, *same_prev;
	struct an_tally tally;
	uint32_t open_thread, open_n, open_far;
	void *uptr;
	uint64_t counted;
	bool excluded;
};

/**
 * struct an_frame - one open call on a thread's stack
 * @fn: the function
 * @id: its id
 * @tsc: TSC of the entry
 * @children: ticks spent in completed calls made from this one
 * @node: calling-context tree node (when struct analysis.want_cct)
 * @partial: the entry was not seen (seeded from an FDRTRACE_EXT_STACK
 *	record), or records of the call were lost (@lost): no duration is known
 * @lost: the call's own entry or exit may be in a gap: not timed (a gap
 *	whose calls are not known, a ring's overwritten buffers)
 * @holed: records were lost inside the call (a gap that says which calls
 *	it closed, not this one), but its entry and exit are its own: its
 *	duration is exact, its self time (its callees' sum) is not known
 * @nested: a call of the same function encloses it on its thread (timed
 *	or not): a recursive call, not in an_tally.total
 * @counted: in its function's @open_n (else its @open_far)
 */
struct an_frame {
	struct an_func *fn;
	uint32_t id;		/* fn->id, kept here for the exit search */
	uint64_t tsc;
	uint64_t children;
	uint32_t node;
	bool partial;
	bool lost;
	bool holed;
	bool nested;
	bool counted;
};

/* A thread's count of open frames of one function id (struct an_thread.open). */
struct an_open {
	uint32_t key;	/* function id + 1; 0: empty */
	uint32_t count;	/* its frames on the stack */
};

/*
 * A gap read where the thread's records resume, kept until the first record
 * stamped at or after its first TSC (struct an_thread.held;
 * analysis_gaps.c holds and applies it).
 */
struct an_gap_held {
	uint64_t first_tsc, last_tsc, records;
	uint32_t reason, exited, depth;
	uint32_t ids[];
};

/**
 * struct an_thread - one thread of the trace
 * @tid, @pid: from the buffers
 * @name: from FDRTRACE_EXT_THREAD_NAME, NULL when unknown
 * @stack, @depth, @cap: the open calls, outermost first
 * @last_tsc: the latest TSC of a function record seen on the thread (kept
 *	once per run of function records from the reader's batch path, per
 *	record otherwise): a buffer that starts before it is out of order
 * @scan_tsc: first TSC of its last buffer (used by the order scan)
 * @index: order of first appearance, from 0
 * @root: its calling-context node when struct analysis.cct_per_thread
 * @uptr: for the command
 */
struct an_thread {
	int32_t tid, pid;
	char *name;
	struct an_frame *stack;
	uint32_t depth, cap;
	uint32_t over;	/* calls open past AN_DEPTH_MAX levels, not on @stack */
	uint64_t last_tsc, scan_tsc;
	uint32_t index;
	uint32_t root;
	void *uptr;
	/* ring policy: the numbered stack record of the thread's last buffer */
	uint64_t records;	/* function records read for the thread */
	uint64_t ring_no;	/* that buffer's number (0: none seen yet) */
	uint64_t ring_before;	/* function records the thread wrote before it */
	uint64_t ring_records;	/* @records when it was read */
	/*
	 * Open frames per function id (open addressing: key id + 1, count),
	 * made when an exit's id is not near the top of a deep stack, kept
	 * while the stack stays deep (analysis_stack.c, an_open_count())
	 */
	struct an_open *open;
	uint32_t open_cap, open_used;
	/*
	 * A gap read but not applied yet (analysis_gaps.c, an_gap_hold()): records
	 * stored after it but stamped before its first TSC come first
	 */
	struct an_gap_held *held;
};

/* A node of the calling-context tree: one distinct call path. */
struct an_node {
	uint32_t parent;	/* 0 for children of the root; the root is node 0 */
	uint32_t depth;		/* 1 for outermost calls */
	struct an_func *fn;		/* NULL for a thread's root (cct_per_thread) */
	struct an_thread *thread;	/* the thread of a thread's root */
	uint64_t calls, incl, self;
};

/* A module from FDRTRACE_EXT_MODULE_MAP, for ELF symbol fallback. */
struct an_module {
	uint32_t id;
	uint64_t load_base, size;
	uint8_t build_id[64];
	uint8_t build_id_len;
	char *path;
	int loaded;		/* 0 not tried, 1 usable, -1 failed */
	struct sym_file *file;	/* shared by every module record of the file */
};

/* How a call ended. */
enum an_end {
	AN_END_EXIT = 0,	/* its own exit (or tail exit) record */
	AN_END_UNWOUND,		/* an exit of an outer call closed it */
	AN_END_LOST,		/* it returned inside a gap (@end: where the gap began) */
};

struct analysis;

/**
 * struct an_ops - what the command wants to hear about (any may be NULL)
 * @enter: a call began; it is t->stack[t->depth - 1]
 * @exit: a call ended at @end after @dur ticks (0 when partial); it is
 *	still t->stack[t->depth - 1], removed after the callback
 * @event: an application custom or typed event (not fdrtrace's own FDRx
 *	extension records, nor payloads with the FDRx magic that do not
 *	decode), on the thread of its buffer, with t->stack as it is at the
 *	event's time; counted in struct an_stats either way
 * @unfinished: at the end of the trace, a call that never ended (innermost
 *	first); it is t->stack[t->depth - 1], removed after the callback
 * @native: a native stack (FDRTRACE_EXT_NATIVE_STACK: a crash, a start) of
 *	thread @t at @tsc, with t->stack as it is then; name its frames with
 *	ns_print()/ns_resolve() on a->ns
 * @dropped: a call forgotten because records after its entry were lost (a
 *	damaged buffer, buffers missing before a stack record): its end is
 *	unknown; innermost first, t->stack[t->depth - 1], removed after
 * @gap: @t lost @records records (enum fdrtrace_drop_reason @reason) made
 *	from @first_tsc to @last_tsc; t->stack holds the calls open where the
 *	gap began, those timed across it marked @holed already (self
 *	unknown), the others marked lost after the callback (the gap
 *	closes the innermost of them when it says so). @first_tsc 0: the
 *	records the thread made before its first buffer read (ring policy,
 *	overwritten), when is not known; @last_tsc is that buffer's start
 * @wait: @t waited for a free buffer from @first_tsc to @last_tsc
 *	(on_full=wait; nothing was lost)
 * @arg: a value fdrtrace_log_arg() logged for the innermost call on @t
 *	(a CallArgument record after its Entry_Args), in order
 * @spawn: a spawn record (FDRTRACE_EXT_SPAWN): thread @tid of the process
 *	started a child at @tsc (a fork: @serial is the one the child's fork
 *	record carries; posix_spawn: @child_pid, 0 when not known); once each
 */
struct an_ops {
	void (*enter)(struct analysis *a, struct an_thread *t, const struct an_frame *f);
	void (*exit)(struct analysis *a, struct an_thread *t, const struct an_frame *f,
		     uint64_t end, uint64_t dur, enum an_end how);
	void (*event)(struct analysis *a, struct an_thread *t, const struct fdrtrace_event *ev);
	void (*unfinished)(struct analysis *a, struct an_thread *t, const struct an_frame *f);
	void (*native)(struct analysis *a, struct an_thread *t, const struct fdrtrace_ext *x,
		       uint64_t tsc);
	void (*dropped)(struct analysis *a, struct an_thread *t, const struct an_frame *f);
	void (*gap)(struct analysis *a, struct an_thread *t, uint64_t first_tsc, uint64_t last_tsc,
		    uint64_t records, unsigned reason);
	void (*wait)(struct analysis *a, struct an_thread *t, uint64_t first_tsc, uint64_t last_tsc);
	void (*arg)(struct analysis *a, struct an_thread *t, uint64_t value);
	void (*spawn)(struct analysis *a, int32_t tid, uint64_t tsc, uint32_t serial,
		      int32_t child_pid);
};

/* What was imperfect, for the summary line. */
struct an_stats {
	uint64_t buffers, records, calls;
	uint64_t unmatched_exits;	/* exits with no open entry for them */
	uint64_t unmatched_entries;	/* entries still open at the end */
	uint64_t unwound;		/* closed by the exit of an outer call */
	uint64_t partial;		/* calls whose entry was not in the trace */
	uint64_t gaps, gap_records;	/* gaps in threads' records, and records lost in them */
	uint64_t repeated;		/* buffers numbered as one already read: left out */
	uint64_t spanning;		/* calls open across a gap: not timed */
	uint64_t holed;			/* calls timed across a gap: self time unknown */
	uint64_t waits, wait_ticks;	/* on_full=wait: waits for a free buffer */
	uint64_t clamped;		/* ends before their starts */
	uint64_t too_deep;		/* calls past AN_DEPTH_MAX levels: counted, not timed */
	uint64_t dropped_records, dropped_buffers;
	uint64_t out_of_order;		/* buffers earlier than their thread's previous one */
	uint64_t bad_buffers;		/* damaged buffers skipped */
	uint64_t app_custom;		/* application custom events (not FDRx) */
	uint64_t app_typed;		/* application typed events */
	uint64_t counted;		/* auto_exclude: calls counted, not recorded */
	uint64_t counted_lost;		/* auto_exclude: calls neither recorded nor counted */
	uint32_t counted_fns;		/* functions with counted calls */
	uint32_t excluded_fns;		/* functions decided counted-only */
	bool reordered;			/* buffers were visited in TSC order */
	bool have_close;
	/* the close said recording stopped on a write error: its errno (0: not known) */
	bool stopped;
	uint32_t stop_error;
	bool truncated;
};

/**
 * struct analysis - one run over one trace
 * Set by the caller before an_run(): @ops, @ctx, @demangle, @want_hist,
 * @want_cct, @cct_per_thread, @quiet, @no_elf, and the naming options
 * @debug_dirs/@n_debug_dirs (--debug-dir), @instr_map (--instr-map) and
 * @locations (--locations). The rest is the core's.
 */
struct analysis {
	const struct an_ops *ops;
	void *ctx;
	bool demangle;
	bool full_names;	/* C++ names whole, not in their short form */
	bool want_hist;
	bool want_cct;
	bool cct_per_thread;
	bool quiet;
	bool no_elf;
	bool locations;
	const char *const *debug_dirs;
	size_t n_debug_dirs;
	const char *instr_map;

	const char *path;
	uint16_t version;
	uint64_t freq;
	char *program;
	int32_t pid;
	struct fdrtrace_file_header hdr;
	bool have_hdr;
	/* an exec record: the image was replaced; where, when has_point */
	bool exec_seen, exec_point;
	int32_t exec_tid;
	uint64_t exec_tsc;

	/* functions: hash of id -> func, and the list in order of first use */
#define AN_FN_DIRECT 4096
	struct an_func *fn_direct[AN_FN_DIRECT];
	struct an_func **fn_hash;
	uint32_t fn_hash_cap;
	struct an_func **fns;
	uint32_t n_fns, fns_cap;

	struct an_module *mods;
	uint32_t n_mods, mods_cap;
	struct nstack ns;	/* the modules again, for native stacks' frames */

	/*
	 * names: the ELF files, the map, and base name -> the functions with
	 * that name (the newest, chained by same_next: collisions)
	 */
	struct sym_ctx *sym;
	struct xmap xmap;
	struct an_func **name_hash;
	uint32_t name_hash_cap, n_named;

	/* threads: in order of first appearance, and a hash of tid -> thread */
	struct an_thread **threads;
	uint32_t n_threads, threads_cap;
	struct an_thread **thread_hash;
	uint32_t thread_hash_cap;
	struct an_thread *cur;

	struct an_node *nodes;
	uint32_t n_nodes, nodes_cap;
	uint64_t *node_hash;	/* (parent << 32 | fn id) + 1, 0 empty */
	uint32_t *node_hash_val;
	uint32_t node_hash_cap;

	/* the regular file's window (the order scan, the buffers one by one) */
	int fd;
	uint8_t *win;
	size_t win_cap, win_len;
	uint64_t win_pos;

	/* 1: collect extensions only; 2: skip extensions (reordered pass) */
	int pass_mode;
	bool batch;		/* function records in runs (the reader's batch path) */
	bool buf_fresh;		/* no NewCPUId yet in the current buffer */
	bool buf_repeat;	/* its stack record numbers it as one already read */
	bool buf_ooo;		/* counted as out of time order */
	uint32_t buf_low;	/* lowest stack depth of a->cur in this buffer */

	struct an_stats st;
};
#endif /* FDR_TOOL_ANALYSIS_TYPES_H */
