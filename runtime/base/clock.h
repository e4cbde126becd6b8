/* SPDX-License-Identifier: MIT */
/*
 * runtime/base/clock.h - the trace clock: which instruction, which frequency.
 *
 * fdr_clock_begin() decides once, at initialisation, which clock the hooks
 * use and how fast it ticks: rdtscp where CPUID reports it and it executes
 * (valgrind reports the bit but faults; TSC_AUX gives the CPU); rdtsc otherwise, with the CPU from the rseq area (glibc >= 2.35)
 * or sched_getcpu(); CLOCK_MONOTONIC_RAW in ns (1 GHz) where the TSC is not
 * usable (no invariant TSC, or the user asked). Never CLOCK_REALTIME.
 * The frequency comes from CPUID leaf 0x15/0x16, or sysfs tsc_freq_khz, or
 * a calibration against CLOCK_MONOTONIC_RAW over the rest of initialisation
 * (fdr_clock_finish()); fdr_clock_refine() improves it
 * from the (TSC, CLOCK_MONOTONIC_RAW) pairs taken at init and now.
 *
 * The read functions are the hot path: inline, notrace, no syscalls
 * (clock_gettime of CLOCK_MONOTONIC_RAW goes through the vDSO).
 */
#ifndef FDR_CLOCK_H
#define FDR_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <fdrtrace/format.h>

#include "compiler.h"
#include "config.h"

/**
 * struct fdr_clock_info - what fdr_clock_init() decided
 * @source: FDRTRACE_CLOCK_RDTSCP, _RDTSC or _MONOTONIC
 * @freq: ticks per second of what the read functions return
 * @freq_source: enum fdrtrace_freq_source
 * @constant_tsc: CPUID 0x80000007 EDX bit 8 (invariant TSC) or the kernel's
 *	constant_tsc flag in /proc/cpuinfo; 1 for MONOTONIC
 * @nonstop_tsc: same bit or the kernel's nonstop_tsc flag (the invariant TSC
 *	also runs in deep C-states); 1 for MONOTONIC
 * @cpuid_rdtscp: CPUID 0x80000001 EDX bit 27
 * @cpu_from_rseq: the rdtsc/monotonic clocks take the CPU from rseq
 */
struct fdr_clock_info {
	enum fdrtrace_clock_source source;
	uint64_t freq;
	enum fdrtrace_freq_source freq_source;
	bool constant_tsc;
	bool nonstop_tsc;
	bool cpuid_rdtscp;
	bool cpu_from_rseq;
};

/* Set by fdr_clock_init(); read-only afterwards. */
extern struct fdr_clock_info fdr_clock fdr_hidden;

/**
 * fdr_clock_anchor - take the run's start pair, before the clock is chosen
 *
 * Cheap (no system call): the constructor takes it, so that the lazy
 * start's calibration (fdr_clock_finish()) measures from the load of the
 * library and rarely waits. Context: the constructor.
 */
void fdr_clock_anchor(void);

/**
 * fdr_clock_begin - choose the clock; start measuring its frequency
 * @choice: the user's clock option
 *
 * A choice the machine cannot honour (rdtscp without CPUID support) falls
 * back to the best available clock and says so once on stderr. When the
 * frequency must be calibrated, the calibration's start pair is the
 * anchor (fdr_clock_anchor()), or taken now without one, and
 * fdr_clock.freq stays 0 until fdr_clock_finish(), which waits at most
 * until the pair is 25 us old (a provisional value, refined over the run).
 *
 * Context: initialisation only. Return: 0 (a clock is always found).
 */
int fdr_clock_begin(enum fdr_clock_choice choice);

/**
 * fdr_clock_finish - end the calibration fdr_clock_begin() started
 *
 * Sets fdr_clock.freq (and, should the TSC not move forward, switches to
 * CLOCK_MONOTONIC_RAW with one line on stderr). Nothing to do when no
 * calibration was needed. Call before anything reads fdr_clock.freq or
 * records: the hooks, the file header, duration options.
 *
 * Context: initialisation only, after fdr_clock_begin().
 */
void fdr_clock_finish(void);

/**
 * fdr_clock_init - fdr_clock_begin() then fdr_clock_finish()
 * @choice: the user's clock option
 *
 * Context: initialisation only. Return: 0.
 */
int fdr_clock_init(enum fdr_clock_choice choice);

/**
 * fdr_clock_refine - the frequency measured over the whole run
 *
 * Return: the refined frequency when the run was long enough to improve on
 * the initial value (at least 4 ms and a calibrated/unknown source),
 * otherwise fdr_clock.freq. Does not change fdr_clock.freq.
 *
 * Context: any, including signal handlers (the vDSO's clock_gettime).
 */
uint64_t fdr_clock_refine(void);

/**
 * fdr_clock_refinable - would fdr_clock_refine() ever differ from
 * fdr_clock.freq (a calibrated or nominal frequency)?
 */
bool fdr_clock_refinable(void);

/**
 * fdr_clock_run_ns - CLOCK_MONOTONIC_RAW nanoseconds since fdr_clock_begin()
 * took its start pair (0 before)
 */
uint64_t fdr_clock_run_ns(void);

/**
 * fdr_clock_read - read the trace clock and the current CPU
 * @cpu: set to the CPU the thread runs on (best effort: 0 when unknown)
 *
 * Context: any, including signal handlers. Return: the clock value.
 */
static fdr_always_inline notrace uint64_t fdr_clock_read(unsigned *cpu);

/* Out-of-line fallbacks used by the inline reader. */
uint64_t fdr_clock_read_monotonic(void) fdr_hidden;
unsigned fdr_clock_cpu_slow(void) fdr_hidden;

#include "clock_inline.h"

#endif /* FDR_CLOCK_H */
