/* SPDX-License-Identifier: MIT */
/*
 * scenario.h - the reference traces of the reader tests: for each FDR
 * version, two buffers that use every record kind legal in that version,
 * with the events a reader must produce (offsets, expanded TSC, wall-clock
 * time, context and per-type fields), computed by hand, not by the reader.
 */
#ifndef FDR_TEST_SCENARIO_H
#define FDR_TEST_SCENARIO_H

#include "builder.h"

#include <fdrtrace/reader.h>

/* 2 GHz: one tick is half a nanosecond, so scaling mistakes show. */
#define FREQ 2000000000ull
#define WALL_A (1000ull * 1000000000ull + 5000ull)	/* 1000 s + 5 us */
#define WALL_B (2000ull * 1000000000ull)
#define V1_BUFFER 512

struct expect {
	enum fdrtrace_event_type type;
	uint64_t offset, size, tsc, wall;
	int32_t tid, pid;
	uint16_t cpu;
	uint64_t buffer;
	uint64_t f1, f2, f3;	/* per-type fields, see test_valid.c */
};

struct scenario {
	struct tb b;
	struct expect e[64];
	size_t n;
	/* the context the next expectation inherits */
	int32_t tid, pid;
	uint16_t cpu;
	uint64_t buffer;
};

/* Build the reference trace of FDR version @v (1..5) into *@s. */
void scenario_build(struct scenario *s, unsigned v);

#endif /* FDR_TEST_SCENARIO_H */
