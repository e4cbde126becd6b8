// SPDX-License-Identifier: MIT
/*
 * scenario.c - the reference traces (see scenario.h).
 *
 * Buffer A: tid 42 (pid 7 from v3), walltime 1000 s 5 us, NewCPUId 3 at TSC
 * 1000000, entry/entry_args+2 args/exit, TSCWrap, tail exit, a custom event
 * (in its version's layout), a typed event (v5), NewCPUId 4, exit.
 * Buffer B: tid 43, walltime 2000 s, NewCPUId 0 at TSC 10, one entry.
 * Version 1 buffers end with EndOfBuffer and padding to 512 bytes; later
 * versions are bounded by BufferExtents.
 */
#include <string.h>

#include "scenario.h"

static struct expect *expect(struct scenario *s, enum fdrtrace_event_type type, size_t at,
			     uint64_t tsc, uint64_t wall)
{
	struct expect *e = &s->e[s->n++];

	*e = (struct expect){ .type = type, .offset = at, .size = s->b.len - at, .tsc = tsc,
			      .wall = wall, .tid = s->tid, .pid = s->pid, .cpu = s->cpu,
			      .buffer = s->buffer };
	return e;
}

void scenario_build(struct scenario *s, unsigned v)
{
	struct tb *b = &s->b;
	size_t at, ext = 0, start;
	const int32_t pid = v >= 3 ? 7 : 0;
	struct expect *e;

	memset(s, 0, sizeof(*s));
	at = tb_header(b, (uint16_t)v, FDRTRACE_LOG_FDR, FREQ, V1_BUFFER);
	e = expect(s, FDRTRACE_EV_HEADER, at, 0, 0);
	e->f1 = v;
	e->f2 = FREQ;
	e->f3 = V1_BUFFER;

	/* Buffer A */
	start = b->len;
	if (v >= 2) {
		ext = tb_extents(b, 0);
		e = expect(s, FDRTRACE_EV_BUFFER_EXTENTS, ext, 0, 0);
	}
	at = tb_new_buffer(b, 42);
	s->tid = 42;
	expect(s, FDRTRACE_EV_NEW_BUFFER, at, 0, 0);
	at = tb_walltime(b, 1000, 5);
	e = expect(s, FDRTRACE_EV_WALLTIME, at, 0, WALL_A);
	e->f1 = 1000;
	e->f2 = 5;
	if (v >= 3) {
		at = tb_pid(b, 7);
		s->pid = pid;
		expect(s, FDRTRACE_EV_PID, at, 0, WALL_A);
	}
	at = tb_new_cpu(b, 3, 1000000);
	s->cpu = 3;
	e = expect(s, FDRTRACE_EV_NEW_CPU_ID, at, 1000000, WALL_A);
	e->f1 = 3;
	e->f2 = 1000000;
	at = tb_func(b, FDRTRACE_FN_ENTRY, 5, 100);
	e = expect(s, FDRTRACE_EV_FUNCTION, at, 1000100, WALL_A + 50);
	e->f1 = FDRTRACE_FN_ENTRY, e->f2 = 5, e->f3 = 100;
	at = tb_func(b, FDRTRACE_FN_ENTRY_ARGS, 6, 200);
	e = expect(s, FDRTRACE_EV_FUNCTION, at, 1000300, WALL_A + 150);
	e->f1 = FDRTRACE_FN_ENTRY_ARGS, e->f2 = 6, e->f3 = 200;
	at = tb_arg(b, 0xdeadbeefcafeull);
	e = expect(s, FDRTRACE_EV_CALL_ARGUMENT, at, 1000300, WALL_A + 150);
	e->f1 = 0xdeadbeefcafeull;
	at = tb_arg(b, 0x1234);
	e = expect(s, FDRTRACE_EV_CALL_ARGUMENT, at, 1000300, WALL_A + 150);
	e->f1 = 0x1234;
	at = tb_func(b, FDRTRACE_FN_EXIT, 6, 50);
	e = expect(s, FDRTRACE_EV_FUNCTION, at, 1000350, WALL_A + 175);
	e->f1 = FDRTRACE_FN_EXIT, e->f2 = 6, e->f3 = 50;
	at = tb_tsc_wrap(b, 5000000);
	e = expect(s, FDRTRACE_EV_TSC_WRAP, at, 5000000, WALL_A + 2000000);
	e->f2 = 5000000;
	at = tb_func(b, FDRTRACE_FN_TAIL_EXIT, FDRTRACE_FUNC_ID_MAX, 10);
	e = expect(s, FDRTRACE_EV_FUNCTION, at, 5000010, WALL_A + 2000005);
	e->f1 = FDRTRACE_FN_TAIL_EXIT, e->f2 = FDRTRACE_FUNC_ID_MAX, e->f3 = 10;
	if (v <= 3) {
		/* absolute TSC 4000000: the event's own, the reference stays */
		at = tb_custom_v1(b, 5, 4000000, "hello", 5);
		e = expect(s, FDRTRACE_EV_CUSTOM_EVENT, at, 4000000, WALL_A + 1500000);
	} else if (v == 4) {
		at = tb_custom_v4(b, 5, 4000000, 9, "hello", 5);
		e = expect(s, FDRTRACE_EV_CUSTOM_EVENT, at, 4000000, WALL_A + 1500000);
		e->cpu = 9;
	} else {
		at = tb_custom_v5(b, 5, 20, "hello", 5);
		e = expect(s, FDRTRACE_EV_CUSTOM_EVENT, at, 5000030, WALL_A + 2000015);
		e->f2 = 20;
	}
	e->f1 = 5;
	uint64_t tsc = v == 5 ? 5000030 : 5000010;
	if (v == 5) {
		at = tb_typed(b, 3, 10, 77, "abc", 3);
		tsc += 10;
		e = expect(s, FDRTRACE_EV_TYPED_EVENT, at, tsc, WALL_A + (tsc - 1000000) / 2);
		e->f1 = 3, e->f2 = 10, e->f3 = 77;
	}
	at = tb_new_cpu(b, 4, 6000000);
	s->cpu = 4;
	e = expect(s, FDRTRACE_EV_NEW_CPU_ID, at, 6000000, WALL_A + 2500000);
	e->f1 = 4, e->f2 = 6000000;
	at = tb_func(b, FDRTRACE_FN_EXIT, 5, 2);
	e = expect(s, FDRTRACE_EV_FUNCTION, at, 6000002, WALL_A + 2500001);
	e->f1 = FDRTRACE_FN_EXIT, e->f2 = 5, e->f3 = 2;
	if (v == 1) {
		at = tb_eob(b);
		expect(s, FDRTRACE_EV_END_OF_BUFFER, at, 6000002, WALL_A + 2500001);
		at = tb_fill_to(b, start + V1_BUFFER, 0xa5);
		expect(s, FDRTRACE_EV_PADDING, at, 6000002, WALL_A + 2500001);
	} else {
		tb_close_extents(b, ext);
		s->e[v >= 2 ? 1 : 0].f1 = b->len - ext - 16;
	}

	/* Buffer B: everything resets */
	s->tid = 0, s->pid = 0, s->cpu = 0, s->buffer = 1;
	start = b->len;
	if (v >= 2) {
		ext = tb_extents(b, 0);
		e = expect(s, FDRTRACE_EV_BUFFER_EXTENTS, ext, 0, 0);
	}
	at = tb_new_buffer(b, 43);
	s->tid = 43;
	expect(s, FDRTRACE_EV_NEW_BUFFER, at, 0, 0);
	at = tb_walltime(b, 2000, 0);
	e = expect(s, FDRTRACE_EV_WALLTIME, at, 0, WALL_B);
	e->f1 = 2000;
	if (v >= 3) {
		at = tb_pid(b, 7);
		s->pid = pid;
		expect(s, FDRTRACE_EV_PID, at, 0, WALL_B);
	}
	at = tb_new_cpu(b, 0, 10);
	e = expect(s, FDRTRACE_EV_NEW_CPU_ID, at, 10, WALL_B);
	e->f2 = 10;
	at = tb_func(b, FDRTRACE_FN_ENTRY, 1, 4);
	e = expect(s, FDRTRACE_EV_FUNCTION, at, 14, WALL_B + 2);
	e->f1 = FDRTRACE_FN_ENTRY, e->f2 = 1, e->f3 = 4;
	if (v == 1) {
		at = tb_eob(b);
		expect(s, FDRTRACE_EV_END_OF_BUFFER, at, 14, WALL_B + 2);
		at = tb_fill_to(b, start + V1_BUFFER, 0);
		expect(s, FDRTRACE_EV_PADDING, at, 14, WALL_B + 2);
	} else {
		tb_close_extents(b, ext);
		s->e[s->n - (v >= 3 ? 6 : 5)].f1 = b->len - ext - 16;
	}
}

