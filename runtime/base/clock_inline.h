/* SPDX-License-Identifier: MIT */
/*
 * runtime/base/clock_inline.h - the inline clock read, included by clock.h
 * only.
 *
 * Hot path: the hooks call fdr_clock_read() twice per traced call. It reads
 * fdr_clock.source (written once by fdr_clock_init() before any hook may
 * record, read-only afterwards, so a plain load is enough) and executes
 * one instruction for the time and, for rdtsc/monotonic, one load from the
 * thread's rseq area for the CPU. No syscall unless rseq is unavailable
 * (then sched_getcpu(), which is a vDSO call on x86-64).
 */
#ifndef FDR_CLOCK_INLINE_H
#define FDR_CLOCK_INLINE_H

#ifndef FDR_CLOCK_H
#error "include clock.h, not clock_inline.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/*
 * glibc 2.35+ registers an rseq area for every thread and says where it is:
 * __rseq_offset from the thread pointer, __rseq_size (0: not registered).
 * struct rseq's cpu_id is the u32 at offset 4; it is negative (-1
 * uninitialised, -2 registration failed) when the kernel does not update it.
 */
#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 35)
#define FDR_HAVE_RSEQ 1
extern const ptrdiff_t __rseq_offset;
extern const unsigned int __rseq_size;
#endif
#endif
#ifndef FDR_HAVE_RSEQ
#define FDR_HAVE_RSEQ 0
#endif

#define FDR_RSEQ_CPU_ID_OFFSET 4

#if FDR_HAVE_RSEQ
/*
 * cpu_id of this thread's struct rseq, at %fs + __rseq_offset + 4: the CPU
 * it runs on, negative (-1 uninitialised, -2 registration failed) when the
 * kernel does not keep it. One %fs-relative load; only where glibc says
 * where the area is (FDR_HAVE_RSEQ).
 */
static fdr_always_inline notrace int32_t fdr_rseq_cpu_id(void)
{
	int32_t id;

	__asm__ __volatile__("movl %%fs:(%1), %0"
			     : "=r"(id)
			     : "r"(__rseq_offset + FDR_RSEQ_CPU_ID_OFFSET));
	return id;
}
#endif

/**
 * fdr_clock_cpu - the CPU this thread runs on, without the TSC
 *
 * Context: any. Return: the CPU number; 0 if the kernel will not say.
 */
static fdr_always_inline notrace unsigned fdr_clock_cpu(void)
{
#if FDR_HAVE_RSEQ
	if (likely(fdr_clock.cpu_from_rseq)) {
		int32_t id = fdr_rseq_cpu_id();

		if (likely(id >= 0))
			return (unsigned)id;
	}
#endif
	return fdr_clock_cpu_slow();
}

/**
 * fdr_clock_read_fast - the clock read with no call on any path
 * @tsc: set to the clock, when read
 * @cpu: set to the CPU, when read
 *
 * rdtscp (the CPU from TSC_AUX), or rdtsc with the CPU from this thread's
 * rseq area: what the hooks' fast path reads (fastpath_inline.h), and
 * auto_exclude's recorded calls. Needing no call, it needs no stack frame
 * in its caller.
 *
 * Context: any. Return: false, @tsc and @cpu unset, when the clock needs a
 * call: CLOCK_MONOTONIC_RAW, or rdtsc without a registered rseq area
 * (fdr_clock_read(), which starts here, then).
 */
static fdr_always_inline notrace bool fdr_clock_read_fast(uint64_t *tsc, unsigned *cpu)
{
	uint32_t lo, hi, aux;

	if (likely(fdr_clock.source == FDRTRACE_CLOCK_RDTSCP)) {
		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
		*cpu = aux & 0xfffu;	/* TSC_AUX: (node << 12) | cpu */
		*tsc = ((uint64_t)hi << 32) | lo;
		return true;
	}
#if FDR_HAVE_RSEQ
	{
		int32_t id;

		if (unlikely(fdr_clock.source != FDRTRACE_CLOCK_RDTSC || !fdr_clock.cpu_from_rseq))
			return false;
		/*
		 * No lfence: the TSC may be read a few instructions early,
		 * which moves a timestamp by nanoseconds, not order of records.
		 */
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		id = fdr_rseq_cpu_id();
		if (unlikely(id < 0))
			return false;
		*cpu = (unsigned)id;
		*tsc = ((uint64_t)hi << 32) | lo;
		return true;
	}
#else
	return false;
#endif
}

static fdr_always_inline notrace uint64_t fdr_clock_read(unsigned *cpu)
{
	uint32_t lo, hi;
	uint64_t tsc;

	if (likely(fdr_clock_read_fast(&tsc, cpu)))
		return tsc;
	*cpu = fdr_clock_cpu();
	if (fdr_clock.source == FDRTRACE_CLOCK_RDTSC) {
		/* no rseq area: the CPU came from sched_getcpu() */
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
	return fdr_clock_read_monotonic();
}

/* ------------------------------------------------------------------ */
/* For tests and the lifecycle: the pieces behind fdr_clock_refine()    */
/* ------------------------------------------------------------------ */

/**
 * fdr_clock_freq_from_pairs - ticks per second between two clock pairs
 * @tsc0, @ns0: clock value and CLOCK_MONOTONIC_RAW ns at the start
 * @tsc1, @ns1: the same at the end
 *
 * Computed as (tsc1 - tsc0) * 1e9 / (ns1 - ns0) in 128 bits, rounded to
 * nearest. Return: the frequency, or 0 when the pairs do not move forward.
 */
notrace uint64_t fdr_clock_freq_from_pairs(uint64_t tsc0, uint64_t ns0, uint64_t tsc1,
				   uint64_t ns1) fdr_hidden;

/**
 * fdr_clock_pair - read the trace clock and CLOCK_MONOTONIC_RAW together
 * @tsc: set to the trace clock
 * @ns: set to CLOCK_MONOTONIC_RAW in ns, taken as the midpoint of two
 *	reads that bracket the clock read (the tightest of a few tries)
 *
 * Context: any thread, after fdr_clock_init().
 */
notrace void fdr_clock_pair(uint64_t *tsc, uint64_t *ns) fdr_hidden;

/**
 * fdr_clock_ns - a system clock in nanoseconds
 * @clk: the clock (CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID...)
 *
 * Context: any, including signal handlers. Return: the clock's value, 0
 * when it cannot be read.
 */
notrace uint64_t fdr_clock_ns(clockid_t clk) fdr_hidden;

/* CLOCK_MONOTONIC_RAW in ns. */
static inline notrace uint64_t fdr_clock_raw_ns(void)
{
	return fdr_clock_ns(CLOCK_MONOTONIC_RAW);
}

#endif /* FDR_CLOCK_INLINE_H */
