/* SPDX-License-Identifier: MIT */
/*
 * analysis.h - the streaming analysis core shared by account, stack,
 * convert, replay, graph and extract-map.
 *
 * The core reads a trace once and rebuilds the call stack of every thread
 * from the entries and exits. Each completed call is reported to the
 * command through struct an_ops, with its inclusive duration (and the frame
 * still on the stack, so the command sees the whole path). Names come from
 * the instrumentation map when one is given (--instr-map, for traces
 * written by LLVM's XRay runtime), else the trace's FDRTRACE_EXT_FUNC
 * records, else the ELF symbols of the recorded module (build-id checked),
 * through one shared symbolizer (symbolizer.h: each ELF file opened once,
 * never blocking), demangled on request, with "#ID@0xADDRESS" (or "#ID")
 * as the last resort: never empty. Same-named functions are told apart by
 * their source file and line (see an_func_name()). The
 * application's custom events (payloads without the FDRx magic) and typed
 * events go to an_ops.event where they happen, and are counted
 * (an_events_note() tells the commands that do not show them).
 *
 * Reading: every record comes from the reader library (fdrtrace/reader.h),
 * the one place where the format's grammar is checked: plain function
 * records in runs through its batch path (fdrtrace_reader_read_functions(),
 * without an event per record), everything else one event at a time. A
 * damaged buffer is reported with its file offset and skipped. With
 * FDRTRACE_ANALYSIS_READER=1 every record comes as an event (the tests
 * compare the two).
 *
 * Imperfect traces: an exit without a matching entry is counted and ignored;
 * an exit that matches a frame deeper in the stack closes the frames above
 * it at the exit's time (a longjmp, an unseen tail exit: what llvm-xray
 * account -d does); frames still open at the end are counted, not timed
 * (an_ops.unfinished sees them); a duration whose end TSC is before its
 * start is clamped to 0 and counted.
 *
 * Losses: a drop record that is a gap (format.h: records a thread lost
 * where its records resume, with the span and the calls the gap closed and
 * opened) goes to an_ops.gap; every call open on the thread at that point
 * is marked @holed when the gap says which calls it closed and opened and
 * this was neither: its entry and exit are its own, so it is timed, but its
 * self time is unknown (an_tally.self_unknown, an_stats.holed). Else it is
 * marked @lost and @partial: it is never given a duration, nor counted
 * in its function's calls, sum or self, nor in its parent's children, but
 * in an_func.tally.spanning and an_stats.spanning. The calls the gap closed end
 * there (AN_END_LOST); those it opened are pushed as lost frames. So a
 * number computed from a trace with losses is never built from a span
 * whose records are missing. on_full=wait's waits go to an_ops.wait. Damaged buffers are skipped (reported
 * once each on stderr) and the calls they opened are forgotten.
 *
 * Order: the buffers of each thread are processed in TSC order. On a
 * regular file a first pass reads only the preambles of the buffers (the
 * reader steps over each body: fdrtrace_reader_leave_buffer()) and checks
 * each thread's buffer order; when some thread's buffers are out of order,
 * a second pass collects the fdrtrace extension records, then a third
 * visits every buffer sorted by (first TSC, file offset), each fed to a
 * memory reader placed at its file offset. Memory then grows with the
 * number of buffers (24 bytes each), never with records. On a pipe the
 * trace is read in file order and out-of-order buffers are counted in the
 * summary.
 *
 * Memory: functions, threads, stack frames, modules' symbol tables (when
 * needed for names) and (when asked for) the calling-context tree; never
 * per record.
 *
 * Contract: single-threaded tool code.
 */
#ifndef FDRTRACE_TOOL_ANALYSIS_H
#define FDRTRACE_TOOL_ANALYSIS_H

#include <stdbool.h>

/*
 * The types (analysis_types.h), and the parts of the core whose functions
 * the commands call besides an_run(): names (an_func_name()), threads and
 * the calling-context tree (an_thread_label(), an_node_child()), the
 * summary and the end (an_summary(), an_fini()).
 */
#include "analysis_types.h"
#include "analysis_names.h"
#include "analysis_stack.h"
#include "analysis_summary.h"

/**
 * an_run - read the trace at @path ("-": stdin) and feed the command
 * @a: set up as described at struct analysis
 * @path: the trace
 *
 * Prints damaged-buffer messages ("FILE:OFFSET: message") on stderr.
 * At the end, the name of every function is settled, so that same-named
 * functions are known before the commands that print after the run do.
 *
 * Return: 0 when the trace was read (perhaps with skipped damage), -1 when
 * it could not be opened, its header is unreadable, or the instrumentation
 * map cannot be read (already reported).
 */
int an_run(struct analysis *a, const char *path);

/* The commands built on the core: cmd_<name>.c, rows of main.c's table. */
int cmd_account(int argc, char **argv);
int cmd_stack(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_graph(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_extract_map(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_live(int argc, char **argv);
/* record's summary names the run directory (false: live's, removed after) */
extern bool rec_say_dir;
int cmd_tui(int argc, char **argv);

#endif /* FDRTRACE_TOOL_ANALYSIS_H */
