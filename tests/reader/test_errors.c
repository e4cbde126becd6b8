// SPDX-License-Identifier: MIT
/*
 * test_errors.c - what the reader rejects, and how it says so: one test per
 * grammar violation, bad kind, bad size and overrun, bad and unsupported
 * headers, truncation at several points, resuming with
 * fdrtrace_reader_skip_buffer(), misuse of the API, and a lone buffer read
 * with fdrtrace_reader_set_offset() reporting file offsets. Every error is
 * checked for its enum, its byte offset and a piece of its message, through
 * both the fd path and the memory path, and the batch path
 * (fdrtrace_reader_read_functions()) must reject each trace exactly as the
 * per-record path does.
 */
#include <errno.h>
#include <fcntl.h>

#include <criterion/criterion.h>

#include "runs_compare.h"
#include "scenario.h"

static size_t split_one(size_t i, void *arg)
{
	(void)i;
	(void)arg;
	return 1;
}

/*
 * With runs of function records taken by the batch call (whole, one record
 * at a time, the input fed byte by byte), @b reads as it does per record:
 * the same events, errors, offsets and messages.
 */
static void expect_batch_same(const struct tb *b)
{
	static const struct rc_mode ref = { .fd = true };
	const struct rc_mode modes[] = {
		{ .fd = true, .max = SIZE_MAX },
		{ .fd = false, .max = 1 },
		{ .fd = false, .split = split_one, .max = SIZE_MAX },
	};
	struct rc_log a = rc_read(b->data, b->len, &ref);
	char why[1024];

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct rc_log r = rc_read(b->data, b->len, &modes[i]);

		cr_expect_not(rc_differ(&a, &r, why, sizeof(why)), "batch mode %zu: %s", i, why);
		rc_free(&r);
	}
	rc_free(&a);
}

/* Runs @b both ways and checks both end in the same error. */
static void expect_error(const struct tb *b, enum fdrtrace_error err, uint64_t offset,
			 const char *substr)
{
	struct run paths[2] = { run_fd(b->data, b->len), run_feed(b->data, b->len, NULL, NULL) };

	for (int i = 0; i < 2; i++) {
		struct run *r = &paths[i];

		cr_assert_not(r->hung, "path %d hung", i);
		cr_expect_eq(r->final, FDRTRACE_ERROR, "path %d: state %s", i,
			     fdrtrace_state_name(r->final));
		cr_expect_eq(r->err, err, "path %d: error %s, expected %s (%s)", i,
			     fdrtrace_error_name(r->err), fdrtrace_error_name(err), r->msg);
		cr_expect_eq(r->err_offset, offset, "path %d: offset %llu, expected %llu (%s)", i,
			     (unsigned long long)r->err_offset, (unsigned long long)offset, r->msg);
		cr_expect(strstr(r->msg, substr) != NULL, "path %d: message \"%s\" lacks \"%s\"", i,
			  r->msg, substr);
		run_free(r);
	}
	expect_batch_same(b);
}

/* Header, then a v@v buffer preamble for @tid; returns the extents offset (0 in v1). */
static size_t preamble(struct tb *b, unsigned v, int32_t tid)
{
	size_t ext = 0;

	if (b->len == 0)
		tb_header(b, (uint16_t)v, FDRTRACE_LOG_FDR, FREQ, V1_BUFFER);
	if (v >= 2)
		ext = tb_extents(b, 0);
	tb_new_buffer(b, tid);
	tb_walltime(b, 1, 0);
	if (v >= 3)
		tb_pid(b, 1);
	tb_new_cpu(b, 0, 100);
	return ext;
}

/* ---------------- grammar ---------------- */

Test(grammar, walltime_must_follow_new_buffer)
{
	struct tb b = { 0 };
	size_t at;

	tb_header(&b, 5, 1, FREQ, 0);
	tb_extents(&b, 64);
	tb_new_buffer(&b, 1);
	at = tb_new_cpu(&b, 0, 1);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at, "expected WallTimeMarker, found NewCPUId");
	tb_free(&b);
}

Test(grammar, v2_function_before_new_cpu_id)
{
	struct tb b = { 0 };
	size_t at;

	tb_header(&b, 2, 1, FREQ, 0);
	tb_extents(&b, 64);
	tb_new_buffer(&b, 1);
	tb_walltime(&b, 1, 0);
	at = tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at, "expected NewCPUId, found Function");
	tb_free(&b);
}

Test(grammar, v3_pid_or_new_cpu_id_after_walltime)
{
	struct tb b = { 0 };
	size_t at;

	tb_header(&b, 3, 1, FREQ, 0);
	tb_extents(&b, 64);
	tb_new_buffer(&b, 1);
	tb_walltime(&b, 1, 0);
	at = tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at, "expected Pid or NewCPUId, found Function");
	tb_free(&b);
}

Test(grammar, v5_buffer_must_start_with_extents)
{
	struct tb b = { 0 };

	tb_header(&b, 5, 1, FREQ, 0);
	tb_new_buffer(&b, 1);
	expect_error(&b, FDRTRACE_E_GRAMMAR, 32, "expected BufferExtents, found NewBuffer");
	tb_free(&b);
}

Test(grammar, v1_buffer_must_start_with_new_buffer)
{
	struct tb b = { 0 };

	tb_header(&b, 1, 1, FREQ, V1_BUFFER);
	tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);
	expect_error(&b, FDRTRACE_E_GRAMMAR, 32, "expected NewBuffer, found Function");
	tb_free(&b);
}

Test(grammar, call_argument_only_after_entry_args)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 5, 1);
	tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);
	at = tb_arg(&b, 1);
	tb_close_extents(&b, 32);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at, "found CallArgument");
	tb_free(&b);
}

Test(grammar, call_argument_not_after_new_cpu_id)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 1, 1);
	at = tb_arg(&b, 1);
	tb_eob(&b);
	tb_fill_to(&b, 32 + V1_BUFFER, 0);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at,
		     "expected NewCPUId, TSCWrap, CustomEvent, EndOfBuffer, Function or end of buffer, found CallArgument");
	tb_free(&b);
}

Test(grammar, end_of_buffer_is_version_1_only)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 5, 1);
	at = tb_eob(&b);
	tb_close_extents(&b, 32);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at,
		     "found EndOfBuffer (not part of version 5 traces)");
	tb_free(&b);
}

Test(grammar, buffer_extents_not_in_version_1)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 1, 1);
	at = tb_extents(&b, 0);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at,
		     "found BufferExtents (not part of version 1 traces)");
	tb_free(&b);
}

Test(grammar, pid_not_in_version_2)
{
	struct tb b = { 0 };
	size_t at;

	tb_header(&b, 2, 1, FREQ, 0);
	tb_extents(&b, 64);
	tb_new_buffer(&b, 1);
	tb_walltime(&b, 1, 0);
	at = tb_pid(&b, 1);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at, "found Pid (not part of version 2 traces)");
	tb_free(&b);
}

Test(grammar, typed_event_not_in_version_4)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 4, 1);
	at = tb_typed(&b, 1, 0, 1, "x", 1);
	tb_close_extents(&b, 32);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at,
		     "found TypedEvent (not part of version 4 traces)");
	tb_free(&b);
}

Test(grammar, pid_only_in_the_preamble)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 5, 1);
	at = tb_pid(&b, 2);
	tb_close_extents(&b, 32);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at, "found Pid");
	tb_free(&b);
}

Test(grammar, no_new_buffer_inside_a_buffer)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 5, 1);
	tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);
	at = tb_new_buffer(&b, 2);
	tb_close_extents(&b, 32);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at, "found NewBuffer");
	tb_free(&b);
}

Test(grammar, buffer_cannot_end_inside_the_preamble)
{
	struct tb b = { 0 };

	tb_header(&b, 5, 1, FREQ, 0);
	tb_extents(&b, 32);
	tb_new_buffer(&b, 1);
	tb_walltime(&b, 1, 0);
	expect_error(&b, FDRTRACE_E_GRAMMAR, b.len,
		     "expected Pid or NewCPUId, found end of buffer (buffer at offset 32)");
	tb_free(&b);
}

Test(grammar, extents_must_be_followed_by_new_buffer)
{
	struct tb b = { 0 };
	size_t at;

	tb_header(&b, 5, 1, FREQ, 0);
	tb_extents(&b, 16);
	at = tb_walltime(&b, 1, 0);
	expect_error(&b, FDRTRACE_E_GRAMMAR, at, "expected NewBuffer or end of buffer, found WallTimeMarker");
	tb_free(&b);
}

/* ---------------- kinds, sizes, overruns ---------------- */

Test(kinds, unknown_metadata_kind)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 5, 1);
	at = tb_md(&b, 10, NULL, 0);
	tb_close_extents(&b, 32);
	expect_error(&b, FDRTRACE_E_BAD_KIND, at, "unknown metadata record kind 10 (byte 0x15)");
	tb_free(&b);
}

Test(kinds, unknown_function_action)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 5, 1);
	at = tb_func(&b, (enum fdrtrace_func_action)5, 1, 1);
	tb_close_extents(&b, 32);
	expect_error(&b, FDRTRACE_E_BAD_KIND, at, "unknown function record action 5");
	tb_free(&b);
}

Test(sizes, negative_custom_event_size)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 5, 1);
	at = tb_custom_v5(&b, -1, 0, NULL, 0);
	tb_close_extents(&b, 32);
	expect_error(&b, FDRTRACE_E_BAD_SIZE, at, "CustomEvent with a negative size (-1)");
	tb_free(&b);
}

Test(sizes, payload_over_the_reader_limit)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 3, 1);
	at = tb_custom_v1(&b, (int32_t)FDRTRACE_READER_MAX_PAYLOAD + 1, 0, NULL, 0);
	/* An extents that would allow it: the limit must trigger first. */
	memcpy(b.data + 33, &(uint64_t){ 1ull << 40 }, 8);
	expect_error(&b, FDRTRACE_E_BAD_SIZE, at, "exceeds the reader's limit");
	tb_free(&b);
}

Test(sizes, typed_event_payload_crossing_the_extents)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 5, 1);
	at = tb_typed(&b, 100, 0, 1, "0123456789", 10);
	tb_close_extents(&b, 32);
	expect_error(&b, FDRTRACE_E_OVERRUN, at,
		     "TypedEvent payload of 100 bytes crosses the end of the buffer");
	tb_free(&b);
}

Test(sizes, function_record_crossing_the_extents)
{
	struct tb b = { 0 };
	size_t at;

	preamble(&b, 5, 1);
	at = tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);
	tb_close_extents(&b, 32);
	memcpy(b.data + 33, &(uint64_t){ at - 48 + 4 }, 8);
	expect_error(&b, FDRTRACE_E_OVERRUN, at,
		     "Function record of 8 bytes crosses the end of the buffer");
	tb_free(&b);
}

Test(sizes, v1_record_crossing_the_boundary)
{
	struct tb b = { 0 };
	size_t at;

	tb_header(&b, 1, 1, FREQ, 56);
	tb_new_buffer(&b, 1);
	tb_walltime(&b, 1, 0);
	tb_new_cpu(&b, 0, 1);
	at = tb_tsc_wrap(&b, 5);
	expect_error(&b, FDRTRACE_E_OVERRUN, at,
		     "TSCWrap record of 16 bytes crosses the end of the buffer at offset 88");
	tb_free(&b);
}

Test(sizes, impossible_extents_cannot_be_skipped)
{
	struct tb b = { 0 };
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;

	tb_header(&b, 5, 1, FREQ, 0);
	tb_extents(&b, UINT64_MAX);
	expect_error(&b, FDRTRACE_E_BAD_SIZE, 32, "BufferExtents size 18446744073709551615");
	fdrtrace_reader_feed(rd, b.data, b.len);
	while (fdrtrace_reader_read(rd, &ev) == 0)
		;
	cr_expect_eq(ev.state, FDRTRACE_ERROR);
	cr_expect_eq(fdrtrace_reader_skip_buffer(rd), -ENOENT);
	fdrtrace_reader_close(rd);
	tb_free(&b);
}

/* ---------------- headers ---------------- */

Test(header, basic_mode_is_unsupported_with_a_clear_message)
{
	struct tb b = { 0 };

	tb_header(&b, 3, FDRTRACE_LOG_BASIC, FREQ, 0);
	expect_error(&b, FDRTRACE_E_UNSUPPORTED, 2,
		     "XRay basic-mode log (type 0): not supported; fdrtrace reads FDR traces (type 1)");
	tb_free(&b);
}

Test(header, a_header_of_zeros_is_no_trace)
{
	static const uint8_t zeros[64];
	struct tb b = { 0 };

	tb_bytes(&b, zeros, sizeof(zeros));
	expect_error(&b, FDRTRACE_E_BAD_HEADER, 0,
		     "not an XRay trace: its 32-byte file header is all zeros");
	tb_free(&b);
}

Test(header, version_6_is_unsupported)
{
	struct tb b = { 0 };

	tb_header(&b, 6, 1, FREQ, 0);
	expect_error(&b, FDRTRACE_E_UNSUPPORTED, 0, "FDR version 6: not supported");
	tb_free(&b);
}

Test(header, version_0_is_unsupported)
{
	struct tb b = { 0 };

	tb_header(&b, 0, 1, FREQ, 0);
	expect_error(&b, FDRTRACE_E_UNSUPPORTED, 0, "FDR version 0: not supported");
	tb_free(&b);
}

Test(header, unknown_log_type)
{
	struct tb b = { 0 };

	tb_header(&b, 5, 2, FREQ, 0);
	expect_error(&b, FDRTRACE_E_BAD_HEADER, 2, "unknown log type 2");
	tb_free(&b);
}

Test(header, v1_buffer_size_too_small)
{
	struct tb b = { 0 };

	tb_header(&b, 1, 1, FREQ, 16);
	expect_error(&b, FDRTRACE_E_BAD_HEADER, 16, "version 1 buffer_size 16 out of range");
	tb_free(&b);
}

Test(header, v1_buffer_size_absurd)
{
	struct tb b = { 0 };

	tb_header(&b, 1, 1, FREQ, 1ull << 40);
	expect_error(&b, FDRTRACE_E_BAD_HEADER, 16, "out of range");
	tb_free(&b);
}

Test(header, shorter_than_32_bytes_is_truncated)
{
	struct tb b = { 0 };

	tb_header(&b, 5, 1, FREQ, 0);
	b.len = 31;
	expect_error(&b, FDRTRACE_E_TRUNCATED, 31,
		     "truncated: the file header needs 32 bytes, the input has 31");
	b.len = 0;
	expect_error(&b, FDRTRACE_E_TRUNCATED, 0, "the input has 0");
	tb_free(&b);
}

/* ---------------- truncation ---------------- */

static void expect_cut(unsigned v, size_t cut, const char *substr)
{
	struct scenario s;

	scenario_build(&s, v);
	cr_assert_leq(cut, s.b.len);
	s.b.len = cut;
	expect_error(&s.b, FDRTRACE_E_TRUNCATED, cut, substr);
	tb_free(&s.b);
}

static size_t find(const struct scenario *s, enum fdrtrace_event_type type, int nth)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].type == type && nth-- == 0)
			return (size_t)s->e[i].offset;
	cr_assert_fail("no such event");
	return 0;
}

Test(truncation, inside_a_record)
{
	struct scenario s;
	size_t at, a_len;
	char msg[128];

	scenario_build(&s, 5);
	at = find(&s, FDRTRACE_EV_FUNCTION, 0);
	a_len = find(&s, FDRTRACE_EV_BUFFER_EXTENTS, 1) - 32;
	tb_free(&s.b);
	snprintf(msg, sizeof(msg),
		 "truncated: buffer at offset 32 ends after %zu of its %zu bytes (in Function at offset %zu)",
		 at + 3 - 32, a_len, at);
	expect_cut(5, at + 3, msg);
}

Test(truncation, between_records_inside_a_buffer)
{
	struct scenario s;
	size_t at;
	char msg[128];

	scenario_build(&s, 4);
	at = find(&s, FDRTRACE_EV_TSC_WRAP, 0);
	tb_free(&s.b);
	snprintf(msg, sizeof(msg), "buffer at offset 32 ends after %zu of its", at - 32);
	expect_cut(4, at, msg);
}

Test(truncation, inside_the_next_buffers_extents)
{
	struct scenario s;
	size_t at;
	char msg[128];

	scenario_build(&s, 2);
	at = find(&s, FDRTRACE_EV_BUFFER_EXTENTS, 1);
	tb_free(&s.b);
	snprintf(msg, sizeof(msg),
		 "truncated: BufferExtents at offset %zu ends after 5 of its bytes", at);
	expect_cut(2, at + 5, msg);
}

Test(truncation, inside_a_custom_event_payload)
{
	struct scenario s;
	size_t at;

	scenario_build(&s, 3);
	at = find(&s, FDRTRACE_EV_CUSTOM_EVENT, 0);
	tb_free(&s.b);
	expect_cut(3, at + 18, "(in CustomEvent at offset");
}

Test(truncation, inside_v1_padding)
{
	struct scenario s;
	size_t at;
	char msg[128];

	scenario_build(&s, 1);
	at = find(&s, FDRTRACE_EV_PADDING, 0);
	tb_free(&s.b);
	snprintf(msg, sizeof(msg), "buffer at offset 32 ends after %zu of its 512 bytes (in padding",
		 at + 10 - 32);
	expect_cut(1, at + 10, msg);
}

Test(truncation, at_a_buffer_boundary_is_a_clean_eof)
{
	for (unsigned v = 1; v <= 5; v++) {
		struct scenario s;
		size_t at;
		struct run r;

		scenario_build(&s, v);
		at = find(&s, v == 1 ? FDRTRACE_EV_NEW_BUFFER : FDRTRACE_EV_BUFFER_EXTENTS, 1);
		r = run_fd(s.b.data, at);
		cr_expect_eq(r.final, FDRTRACE_EOF, "v%u: %s", v, r.msg);
		cr_expect_eq(r.ev[r.n - 1].buffer, 0);
		run_free(&r);
		tb_free(&s.b);
	}
}

Test(truncation, cannot_be_skipped)
{
	struct scenario s;
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;

	scenario_build(&s, 5);
	fdrtrace_reader_feed(rd, s.b.data, s.b.len - 1);
	while (fdrtrace_reader_read(rd, &ev) == 0)
		;
	cr_assert_eq(ev.state, FDRTRACE_REQUIRE_DATA);
	fdrtrace_reader_feed(rd, NULL, 0);
	cr_assert_eq(fdrtrace_reader_read(rd, &ev), -1);
	cr_assert_eq(ev.state, FDRTRACE_ERROR);
	cr_expect_eq(fdrtrace_reader_error(rd, NULL), FDRTRACE_E_TRUNCATED);
	cr_expect_eq(fdrtrace_reader_skip_buffer(rd), -ENOENT);
	/* errors are sticky */
	cr_expect_eq(fdrtrace_reader_read(rd, &ev), -1);
	cr_expect_eq(ev.state, FDRTRACE_ERROR);
	fdrtrace_reader_close(rd);
	tb_free(&s.b);
}

/* ---------------- skip_buffer ---------------- */

/* Reads to the end, skipping damaged buffers; returns the tids of NewBuffer events. */
static size_t read_skipping(const struct tb *b, int32_t *tids, size_t max, int *skips)
{
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;
	size_t n = 0;

	*skips = 0;
	fdrtrace_reader_feed(rd, b->data, b->len);
	for (int i = 0; i < 1000; i++) {
		if (fdrtrace_reader_read(rd, &ev) == 0) {
			if (ev.type == FDRTRACE_EV_NEW_BUFFER && n < max)
				tids[n++] = ev.tid;
			continue;
		}
		if (ev.state == FDRTRACE_REQUIRE_DATA) {
			fdrtrace_reader_feed(rd, NULL, 0);
			continue;
		}
		if (ev.state == FDRTRACE_EOF)
			break;
		cr_assert_eq(fdrtrace_reader_skip_buffer(rd), 0, "cannot skip: %s",
			     fdrtrace_reader_errmsg(rd));
		cr_expect_eq(fdrtrace_reader_error(rd, NULL), FDRTRACE_E_NONE);
		(*skips)++;
	}
	cr_expect_eq(ev.state, FDRTRACE_EOF);
	fdrtrace_reader_close(rd);
	return n;
}

Test(skip_buffer, resumes_at_the_next_v5_buffer)
{
	struct tb b = { 0 };
	int32_t tids[8];
	size_t ext, n;
	int skips;

	ext = preamble(&b, 5, 1);
	tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);
	tb_close_extents(&b, ext);
	ext = preamble(&b, 5, 2);
	tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);
	tb_arg(&b, 7);				/* grammar violation */
	tb_func(&b, FDRTRACE_FN_EXIT, 1, 1);
	tb_md(&b, 12, NULL, 0);			/* and garbage */
	tb_close_extents(&b, ext);
	ext = preamble(&b, 5, 3);
	tb_func(&b, FDRTRACE_FN_EXIT, 1, 1);
	tb_close_extents(&b, ext);

	n = read_skipping(&b, tids, 8, &skips);
	cr_expect_eq(skips, 1);
	cr_assert_eq(n, 3);
	cr_expect_eq(tids[0], 1);
	cr_expect_eq(tids[1], 2);
	cr_expect_eq(tids[2], 3);
	tb_free(&b);
}

Test(skip_buffer, resumes_at_the_next_v1_boundary)
{
	struct tb b = { 0 };
	int32_t tids[8];
	size_t n;
	int skips;

	preamble(&b, 1, 1);
	tb_md(&b, 11, NULL, 0);			/* unknown kind */
	tb_fill_to(&b, 32 + V1_BUFFER, 0xee);
	preamble(&b, 1, 2);
	tb_eob(&b);
	tb_fill_to(&b, 32 + 2 * V1_BUFFER, 0);
	tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);	/* a buffer that does not start right */
	tb_fill_to(&b, 32 + 3 * V1_BUFFER, 0);
	preamble(&b, 1, 4);
	tb_fill_to(&b, 32 + 4 * V1_BUFFER - 16, 0);	/* zeros: entries of function 0 */
	tb_eob(&b);

	n = read_skipping(&b, tids, 8, &skips);
	cr_expect_eq(skips, 2);
	cr_assert_eq(n, 3);
	cr_expect_eq(tids[0], 1);
	cr_expect_eq(tids[1], 2);
	cr_expect_eq(tids[2], 4);
	tb_free(&b);
}

Test(skip_buffer, refuses_without_an_error)
{
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);

	cr_expect_eq(fdrtrace_reader_skip_buffer(rd), -ENOENT);
	fdrtrace_reader_close(rd);
}

/* ---------------- accepted edge cases ---------------- */

Test(edge, empty_extents_is_an_empty_buffer)
{
	struct tb b = { 0 };
	size_t ext;
	struct run r;

	tb_header(&b, 5, 1, FREQ, 0);
	tb_extents(&b, 0);
	ext = preamble(&b, 5, 9);
	tb_close_extents(&b, ext);
	r = run_fd(b.data, b.len);
	cr_assert_eq(r.final, FDRTRACE_EOF, "%s", r.msg);
	cr_assert_eq(r.n, 7);
	cr_expect_eq(r.ev[1].type, FDRTRACE_EV_BUFFER_EXTENTS);
	cr_expect_eq(r.ev[1].u.extents.size, 0);
	cr_expect_eq(r.ev[1].buffer, 0);
	cr_expect_eq(r.ev[2].type, FDRTRACE_EV_BUFFER_EXTENTS);
	cr_expect_eq(r.ev[2].buffer, 1);
	cr_expect_eq(r.ev[3].tid, 9);
	run_free(&r);
	tb_free(&b);
}

Test(edge, v1_buffer_filled_exactly_needs_no_end_of_buffer)
{
	struct tb b = { 0 };
	struct run r;

	tb_header(&b, 1, 1, FREQ, 56);
	preamble(&b, 1, 1);
	tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);
	preamble(&b, 1, 2);
	tb_func(&b, FDRTRACE_FN_EXIT, 1, 1);
	r = run_fd(b.data, b.len);
	cr_assert_eq(r.final, FDRTRACE_EOF, "%s", r.msg);
	cr_assert_eq(r.n, 9);
	cr_expect_eq(r.ev[5].type, FDRTRACE_EV_NEW_BUFFER);
	cr_expect_eq(r.ev[5].offset, 32 + 56);
	cr_expect_eq(r.ev[5].buffer, 1);
	cr_expect_eq(r.ev[8].type, FDRTRACE_EV_FUNCTION);
	cr_expect_eq(r.ev[8].tid, 2);
	run_free(&r);
	tb_free(&b);
}

Test(edge, v1_padding_comes_in_bounded_pieces)
{
	struct tb b = { 0 };
	struct run r;

	tb_header(&b, 1, 1, FREQ, 10000);
	preamble(&b, 1, 1);
	tb_eob(&b);
	tb_fill_to(&b, 32 + 10000, 0x5a);
	r = run_fd(b.data, b.len);
	cr_assert_eq(r.final, FDRTRACE_EOF, "%s", r.msg);
	cr_assert_eq(r.n, 8);
	cr_expect_eq(r.ev[5].type, FDRTRACE_EV_PADDING);
	cr_expect_eq(r.ev[5].offset, 32 + 64);
	cr_expect_eq(r.ev[5].size, FDRTRACE_READER_PADDING_PIECE);
	cr_expect_eq(r.ev[6].size, FDRTRACE_READER_PADDING_PIECE);
	cr_expect_eq(r.ev[7].size, 10000 - 64 - 2 * FDRTRACE_READER_PADDING_PIECE);
	cr_expect_eq(r.ev[7].raw[0], 0x5a);
	run_free(&r);
	tb_free(&b);
}

Test(header, zero_frequency_is_refused_at_offset_8)
{
	struct tb b = { 0 };
	size_t ext;

	/* no tick rate: no time in the trace could be computed (issue 33) */
	tb_header(&b, 5, 1, 0, 0);
	ext = preamble(&b, 5, 1);
	tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1000);
	tb_close_extents(&b, ext);
	expect_error(&b, FDRTRACE_E_BAD_HEADER, 8, "cycle_frequency 0: the header gives no tick rate");
	tb_free(&b);
}

/* ---------------- API ---------------- */

Test(api, feed_is_for_memory_readers_only)
{
	struct fdrtrace_reader *rd = fdrtrace_reader_open(0);

	cr_expect_eq(fdrtrace_reader_feed(rd, "x", 1), -EINVAL);
	fdrtrace_reader_close(rd);
}

Test(api, feed_refuses_while_bytes_are_unread_and_after_the_end)
{
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;

	cr_expect_eq(fdrtrace_reader_read(rd, &ev), -1);
	cr_expect_eq(ev.state, FDRTRACE_REQUIRE_DATA);
	cr_expect_eq(fdrtrace_reader_feed(rd, "abc", 3), 0);
	cr_expect_eq(fdrtrace_reader_feed(rd, "def", 3), -EBUSY);
	cr_expect_eq(fdrtrace_reader_feed(rd, NULL, 5), -EINVAL);
	cr_expect_eq(fdrtrace_reader_read(rd, &ev), -1);
	cr_expect_eq(ev.state, FDRTRACE_REQUIRE_DATA);
	cr_expect_eq(fdrtrace_reader_feed(rd, NULL, 0), 0);
	cr_expect_eq(fdrtrace_reader_feed(rd, "def", 3), -EINVAL);
	cr_expect_eq(fdrtrace_reader_read(rd, &ev), -1);
	cr_expect_eq(ev.state, FDRTRACE_ERROR);
	cr_expect_eq(fdrtrace_reader_error(rd, NULL), FDRTRACE_E_TRUNCATED);
	fdrtrace_reader_close(rd);
	fdrtrace_reader_close(NULL);
}

Test(api, read_errors_are_reported_with_errno)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	struct fdrtrace_reader *rd = fdrtrace_reader_open(fd);
	struct fdrtrace_event ev;

	cr_assert_geq(fd, 0);
	cr_expect_eq(fdrtrace_reader_read(rd, &ev), -1);
	cr_expect_eq(ev.state, FDRTRACE_ERROR);
	cr_expect_eq(fdrtrace_reader_error(rd, NULL), FDRTRACE_E_IO);
	cr_expect_eq(fdrtrace_reader_errno(rd), EISDIR);
	cr_expect(strstr(fdrtrace_reader_errmsg(rd), "read error") != NULL);
	fdrtrace_reader_close(rd);
	close(fd);
}

/* ---------------- fdrtrace_reader_set_offset ---------------- */

/*
 * A buffer read by itself after the header, told where it sits in its file
 * (at 1000): event offsets, the error offset and the offsets in the message
 * are the file's. Misuse (inside a buffer) is refused.
 */
Test(api, set_offset_makes_a_lone_buffer_report_file_offsets)
{
	struct tb b = { 0 };
	struct fdrtrace_reader *r = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;
	uint64_t off = 0;
	char want[80];
	size_t at;

	preamble(&b, 5, 1);
	at = tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);
	tb_close_extents(&b, 32);
	memcpy(b.data + 33, &(uint64_t){ at - 48 + 4 }, 8);	/* the record crosses the end */
	cr_assert_eq(fdrtrace_reader_feed(r, b.data, 32), 0);
	cr_assert_eq(fdrtrace_reader_read(r, &ev), 0);
	cr_assert_eq(ev.type, FDRTRACE_EV_HEADER);
	cr_assert_eq(fdrtrace_reader_set_offset(r, 1000), 0);
	cr_assert_eq(fdrtrace_reader_read(r, &ev), -1);
	cr_assert_eq(ev.state, FDRTRACE_REQUIRE_DATA);
	cr_assert_eq(fdrtrace_reader_feed(r, b.data + 32, b.len - 32), 0);
	cr_assert_eq(fdrtrace_reader_read(r, &ev), 0);
	cr_assert_eq(ev.type, FDRTRACE_EV_BUFFER_EXTENTS);
	cr_assert_eq(ev.offset, 1000);
	cr_assert_eq(fdrtrace_reader_set_offset(r, 5), -EBUSY, "inside a buffer");
	while (fdrtrace_reader_read(r, &ev) == 0)
		;
	cr_assert_eq(ev.state, FDRTRACE_ERROR);
	cr_assert_eq(fdrtrace_reader_error(r, &off), FDRTRACE_E_OVERRUN);
	cr_assert_eq(off, at - 32 + 1000);
	/* the buffer ends 16 + (at - 48 + 4) bytes after 1000 */
	snprintf(want, sizeof(want), "crosses the end of the buffer at offset %zu", 1000 + at - 28);
	cr_assert(strstr(fdrtrace_reader_errmsg(r), want) != NULL, "%s", fdrtrace_reader_errmsg(r));
	fdrtrace_reader_close(r);
	tb_free(&b);
}
