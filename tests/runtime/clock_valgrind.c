// SPDX-License-Identifier: MIT
/*
 * tests/runtime/clock_valgrind.c - the clock under valgrind.
 *
 * Run by valgrind (tests/runtime/meson.build). Valgrind's CPU does not
 * execute rdtscp unless it reports it, so clock=rdtscp must fall back to a
 * clock valgrind runs, and the clock must still tick and report a CPU.
 * Exit 0 on success, 1 with a message otherwise.
 */
#include <sched.h>
#include <stdio.h>

#include "clock.h"

int main(void)
{
	unsigned cpu = ~0u;
	uint64_t prev, t;

	fdr_clock_init(FDR_CLOCK_CHOICE_RDTSCP);
	if (fdr_clock.source == FDRTRACE_CLOCK_RDTSCP && !fdr_clock.cpuid_rdtscp) {
		fprintf(stderr, "rdtscp chosen without CPUID support\n");
		return 1;
	}
	if (!fdr_clock.freq) {
		fprintf(stderr, "no frequency\n");
		return 1;
	}
	prev = fdr_clock_read(&cpu);
	for (int i = 0; i < 10000; i++) {
		t = fdr_clock_read(&cpu);
		if (t < prev) {
			fprintf(stderr, "clock went back: %llu < %llu\n", (unsigned long long)t,
				(unsigned long long)prev);
			return 1;
		}
		prev = t;
	}
	if (sched_getcpu() >= 0 && cpu != (unsigned)sched_getcpu() &&
	    fdr_clock.source != FDRTRACE_CLOCK_RDTSCP) {
		fprintf(stderr, "cpu %u, sched_getcpu %d\n", cpu, sched_getcpu());
		return 1;
	}
	printf("source %d freq %llu freq_source %d rseq %d\n", fdr_clock.source,
	       (unsigned long long)fdr_clock.freq, fdr_clock.freq_source, fdr_clock.cpu_from_rseq);
	return 0;
}
