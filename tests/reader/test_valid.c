// SPDX-License-Identifier: MIT
/*
 * test_valid.c - valid traces of every FDR version (1 to 5), with every
 * record kind legal in that version, read through the fd path: every
 * event's type, offset, size, expanded TSC, wall-clock time, thread,
 * process, CPU, buffer index and per-type fields are checked exactly.
 */
#include <criterion/criterion.h>

#include "collect.h"
#include "scenario.h"

static void check_fields(const struct fdrtrace_event *ev, const struct expect *e, size_t i)
{
	switch (e->type) {
	case FDRTRACE_EV_HEADER:
		cr_expect_eq(ev->u.header.version, e->f1, "event %zu", i);
		cr_expect_eq(ev->u.header.type, FDRTRACE_LOG_FDR, "event %zu", i);
		cr_expect_eq(ev->u.header.cycle_frequency, e->f2, "event %zu", i);
		cr_expect_eq(ev->u.header.buffer_size, e->f3, "event %zu", i);
		break;
	case FDRTRACE_EV_FUNCTION:
		cr_expect_eq(ev->u.func.action, e->f1, "event %zu", i);
		cr_expect_eq(ev->u.func.func_id, e->f2, "event %zu", i);
		cr_expect_eq(ev->u.func.delta, e->f3, "event %zu", i);
		break;
	case FDRTRACE_EV_NEW_CPU_ID:
		cr_expect_eq(ev->u.ref.cpu, e->f1, "event %zu", i);
		/* fallthrough */
	case FDRTRACE_EV_TSC_WRAP:
		cr_expect_eq(ev->u.ref.tsc, e->f2, "event %zu", i);
		break;
	case FDRTRACE_EV_WALLTIME:
		cr_expect_eq(ev->u.walltime.seconds, e->f1, "event %zu", i);
		cr_expect_eq(ev->u.walltime.micros, e->f2, "event %zu", i);
		break;
	case FDRTRACE_EV_CALL_ARGUMENT:
		cr_expect_eq(ev->u.arg.arg, e->f1, "event %zu", i);
		break;
	case FDRTRACE_EV_BUFFER_EXTENTS:
		cr_expect_eq(ev->u.extents.size, e->f1, "event %zu", i);
		break;
	case FDRTRACE_EV_CUSTOM_EVENT:
		cr_expect_eq(ev->u.event.size, e->f1, "event %zu", i);
		cr_expect_eq(ev->u.event.delta, (int32_t)e->f2, "event %zu", i);
		cr_expect(memcmp(ev->u.event.data, "hello", 5) == 0, "event %zu payload", i);
		break;
	case FDRTRACE_EV_TYPED_EVENT:
		cr_expect_eq(ev->u.event.size, e->f1, "event %zu", i);
		cr_expect_eq(ev->u.event.delta, (int32_t)e->f2, "event %zu", i);
		cr_expect_eq(ev->u.event.event_type, e->f3, "event %zu", i);
		cr_expect(memcmp(ev->u.event.data, "abc", 3) == 0, "event %zu payload", i);
		break;
	default:
		break;
	}
}

static void check_version(unsigned v)
{
	struct scenario s;
	struct run r;

	scenario_build(&s, v);
	r = run_fd(s.b.data, s.b.len);
	cr_assert_eq(r.final, FDRTRACE_EOF, "v%u: %s", v, r.msg);
	cr_assert_eq(r.n, s.n, "v%u: %zu events, expected %zu", v, r.n, s.n);
	for (size_t i = 0; i < s.n; i++) {
		const struct fdrtrace_event *ev = &r.ev[i];
		const struct expect *e = &s.e[i];

		cr_expect_eq(ev->state, FDRTRACE_OK);
		cr_expect_eq(ev->type, e->type, "v%u event %zu: type %s, expected %s", v, i,
			     fdrtrace_event_type_name(ev->type), fdrtrace_event_type_name(e->type));
		cr_expect_eq(ev->serial, i, "v%u event %zu serial", v, i);
		cr_expect_eq(ev->version, v);
		cr_expect_eq(ev->offset, e->offset, "v%u event %zu offset %llu", v, i,
			     (unsigned long long)ev->offset);
		cr_expect_eq(ev->size, e->size, "v%u event %zu size %llu", v, i,
			     (unsigned long long)ev->size);
		cr_expect_eq(ev->raw_len, e->size, "v%u event %zu raw_len", v, i);
		cr_expect(memcmp(ev->raw, s.b.data + e->offset, ev->raw_len) == 0,
			  "v%u event %zu raw bytes", v, i);
		cr_expect_eq(ev->tsc, e->tsc, "v%u event %zu tsc %llu, expected %llu", v, i,
			     (unsigned long long)ev->tsc, (unsigned long long)e->tsc);
		cr_expect_eq(ev->wall_ns, e->wall, "v%u event %zu wall %llu, expected %llu", v, i,
			     (unsigned long long)ev->wall_ns, (unsigned long long)e->wall);
		cr_expect_eq(ev->tid, e->tid, "v%u event %zu tid %d", v, i, ev->tid);
		cr_expect_eq(ev->pid, e->pid, "v%u event %zu pid %d", v, i, ev->pid);
		cr_expect_eq(ev->cpu, e->cpu, "v%u event %zu cpu %u", v, i, ev->cpu);
		cr_expect_eq(ev->buffer, e->buffer, "v%u event %zu buffer", v, i);
		check_fields(ev, e, i);
	}
	run_free(&r);
	tb_free(&s.b);
}

Test(valid_trace, version_1_every_record_kind_expands_exactly) { check_version(1); }
Test(valid_trace, version_2_every_record_kind_expands_exactly) { check_version(2); }
Test(valid_trace, version_3_every_record_kind_expands_exactly) { check_version(3); }
Test(valid_trace, version_4_every_record_kind_expands_exactly) { check_version(4); }
Test(valid_trace, version_5_every_record_kind_expands_exactly) { check_version(5); }

Test(valid_trace, header_is_available_after_the_first_event)
{
	struct scenario s;
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;

	scenario_build(&s, 5);
	cr_assert_null(fdrtrace_reader_header(rd));
	fdrtrace_reader_feed(rd, s.b.data, s.b.len);
	cr_assert_eq(fdrtrace_reader_read(rd, &ev), 0);
	cr_assert_not_null(fdrtrace_reader_header(rd));
	cr_expect_eq(fdrtrace_reader_header(rd)->cycle_frequency, FREQ);
	cr_expect_eq(fdrtrace_reader_error(rd, NULL), FDRTRACE_E_NONE);
	cr_expect_str_eq(fdrtrace_reader_errmsg(rd), "");
	fdrtrace_reader_close(rd);
	tb_free(&s.b);
}

