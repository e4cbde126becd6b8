/* SPDX-License-Identifier: MIT */
/*
 * runtime/base/state.h - the process's recording state: what every layer of
 * the runtime reads and only the named owners write.
 *
 * Who writes what:
 *   - fdr_cfg, fdr_min_ticks, fdr_all_slow, fdr_filtering, fdr_gate_rec:
 *     the thread that starts recording (the process layer), before the
 *     gate opens with a release store; read by everyone after an acquire
 *     load of the gate, or after a synchronising handover.
 *   - fdr_gate: the hooks' first load (relaxed on the fast path); moved by
 *     the process layer (start, stop, finish, fork), by
 *     fdr_stop_on_error() on a write error, and by the fatal-signal path.
 *   - fdr_phase: the lifecycle below; CAS by its owners.
 *   - fdr_pid, fdr_program, fdr_start_ns, fdr_start_tsc, the command line
 *     and the fork point: the process layer (start of recording, the fork
 *     handlers); read by the writers of the process records afterwards,
 *     on the same thread or after a synchronising handover (the flush
 *     thread's start, its finish, the file lock).
 *   - The process-wide drop counters: relaxed atomic adds by whoever drops.
 *
 * Memory ordering of the gate and the phase: every change of either is a
 * release store or CAS (the process layer's start, stop, finish and fork
 * handlers, fdr_stop_on_error()); a reader that goes on to use what the
 * change published (the configuration, the file, the flush thread) loads
 * it with acquire, and its comment says "pairs with the gate's (phase's)
 * release stores (state.h)". The hooks' fast path loads the gate relaxed
 * (record/fastpath_inline.h): what it then touches is its own thread's;
 * the slow path loads it again with acquire before it uses the runtime's
 * state (record/slowpath.c, fdr_record_slow()).
 *
 * Phases (fdr_phase): INIT -> ARMED (the constructor: recording asked
 * for) -> RECORDING (the first hook or API call: the process layer's
 * lazy start) -> FINISHING -> DONE, or INIT -> OFF (mode off, setuid) and
 * ARMED -> OFF (the start failed); ARMED -> DONE at an exit that never
 * started; RECORDING -> DYING in the fatal-signal handler; RECORDING ->
 * STOPPED on a write error (fdr_stop_on_error()). A fork child of a
 * recording process goes back to ARMED (its own trace starts at its own
 * first hook).
 */
#ifndef FDR_STATE_H
#define FDR_STATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <fdrtrace/format.h>

#include "compiler.h"
#include "config.h"

/* What the hooks do: one load and one compare on the fast path. */
enum fdr_gate_value {
	FDR_GATE_ON = 1,
	FDR_GATE_OFF = 0,		/* mode off, or recording stopped: return at once */
	FDR_GATE_BEFORE_INIT = 2,	/* count BEFORE_INIT drops */
	FDR_GATE_AFTER_FINI = 3,	/* count AFTER_FINI drops */
	FDR_GATE_LAZY = 4,		/* recording asked for, not started: the first hook starts it */
	FDR_GATE_COUNTED = 5,		/* recording with auto_exclude: every hook to autoexclude.c */
};

/*
 * The gate's value while recording: FDR_GATE_ON, or FDR_GATE_COUNTED with
 * auto_exclude (autoexclude.c sets it once at the start, before the gate
 * opens; a fork child inherits it). Every start of recording stores it.
 */
extern int fdr_gate_rec fdr_hidden;

/* Is @g a recording gate (ON, or COUNTED)? */
static inline notrace bool fdr_gate_recording(int g)
{
	return g == FDR_GATE_ON || g == FDR_GATE_COUNTED;
}

enum fdr_phase_value {
	FDR_PHASE_INIT = 0,
	FDR_PHASE_OFF,
	FDR_PHASE_RECORDING,
	FDR_PHASE_FINISHING,
	FDR_PHASE_DONE,
	FDR_PHASE_DYING,
	FDR_PHASE_STOPPED,
	FDR_PHASE_ARMED,	/* recording asked for; started by the first hook (lazy start) */
};

extern _Atomic int fdr_gate fdr_hidden;
extern _Atomic int fdr_phase fdr_hidden;
extern struct fdr_config fdr_cfg fdr_hidden;
extern pid_t fdr_pid fdr_hidden;
/* func_duration_threshold_us in clock ticks; 0 keeps every call */
extern uint64_t fdr_min_ticks fdr_hidden;
/* max_depth set: every hook takes the slow path (@end stays NULL), which counts depth */
extern bool fdr_all_slow fdr_hidden;
/*
 * max_depth: bumped by fdrtrace_start() (OFF -> ON): the calls open at a
 * stop may have returned unseen, so every thread's counted depth starts
 * again from 0 at its next hook (the slow path). Bumped before the gate's
 * release CAS, read relaxed after the slow path's acquire load of the gate.
 */
extern _Atomic uint32_t fdr_depth_epoch fdr_hidden;
/* filter/exclude set: the slow path asks fdr_filter_skip() once per new function */
extern bool fdr_filtering fdr_hidden;

/**
 * fdr_stop_on_error() - recording stops for good: a write failed
 *
 * Closes the gate (release: pairs with the slow path's acquire load of
 * it) and moves the phase RECORDING -> STOPPED; any other phase stays.
 * Context: any thread, the fatal-signal handler too; async-signal-safe.
 */
void fdr_stop_on_error(void) fdr_hidden;

/*
 * Set when a thread first claims a buffer (a record, or a drop, is on its
 * way) or an instrumented call happened before initialisation: the trace
 * file is created only then (the file layer).
 */
extern _Atomic bool fdr_recorded fdr_hidden;
/* Has this process anything for a trace file? */
bool fdr_has_records(void) fdr_hidden;

/* hooks before initialisation and after the finish, counted */
extern _Atomic uint64_t fdr_before_init_drops fdr_hidden;
extern _Atomic uint64_t fdr_after_fini_drops fdr_hidden;
/* drops of threads that exited without a buffer to report them in, and the ring's overwrites */
extern _Atomic uint64_t fdr_orphan_rec[FDRTRACE_DROP_REASON_COUNT] fdr_hidden;
extern _Atomic uint64_t fdr_orphan_buf[FDRTRACE_DROP_REASON_COUNT] fdr_hidden;

/* ---- the process: who it is and where its trace begins ---- */

extern char fdr_program[256] fdr_hidden;
extern uint64_t fdr_start_ns fdr_hidden;
extern pid_t fdr_fork_parent fdr_hidden;

/*
 * The process tree (docs/format.md 5: process, fork, exec, close, spawn).
 * Written by the thread that starts recording (fdr_start_tsc, the command
 * line), the forking thread in the fork's prepare handler (fdr_fork_point,
 * which the child inherits for its fork record); read by the writers of
 * those records afterwards (see the contract above).
 */
extern uint64_t fdr_start_tsc fdr_hidden;
extern char fdr_cmdline[4096] fdr_hidden;	/* NUL-ended arguments, cut to whole ones */
extern uint32_t fdr_cmdline_len fdr_hidden, fdr_argc fdr_hidden;
struct fdr_fork_point {
	uint32_t tid;		/* the thread that called fork() */
	uint32_t serial;	/* this process's forks, from 1 */
	uint64_t tsc;		/* the trace clock in the prepare handler */
};
extern struct fdr_fork_point fdr_fork_point fdr_hidden;

/*
 * fdr_note_args - where the constructor's @argc arguments at @argv lie
 * (glibc passes them to constructors), for fdr_read_cmdline(): nothing is
 * copied; a layout other than one area of NUL-ended strings is not noted.
 */
void fdr_note_args(int argc, char **argv) fdr_hidden;
/* The command line into fdr_cmdline, as /proc/self/cmdline gives it (start of recording; async-signal-safe). */
void fdr_read_cmdline(void) fdr_hidden;

#endif /* FDR_STATE_H */
