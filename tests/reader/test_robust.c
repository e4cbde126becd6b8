// SPDX-License-Identifier: MIT
/*
 * test_robust.c - the reader against how bytes arrive and against damage:
 * the memory path, fed one byte at a time or in random pieces, gives the
 * same events as the fd path; every prefix of a valid trace and copies with
 * every byte changed end in a sane state (OK events, then EOF or ERROR,
 * never a hang or a crash).
 */
#include <pthread.h>

#include <criterion/criterion.h>

#include "collect.h"
#include "scenario.h"

static void expect_same_run(const struct run *a, const struct run *b, const char *what)
{
	cr_assert_not(b->hung, "%s: hung", what);
	cr_expect_eq(a->final, b->final, "%s: final state %s vs %s", what,
		     fdrtrace_state_name(a->final), fdrtrace_state_name(b->final));
	cr_expect_eq(a->err, b->err, "%s: error", what);
	cr_expect_eq(a->err_offset, b->err_offset, "%s: error offset", what);
	cr_expect_str_eq(a->msg, b->msg, "%s: message", what);
	cr_assert_eq(a->n, b->n, "%s: %zu events vs %zu", what, a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		cr_expect(same_event(&a->ev[i], &b->ev[i]), "%s: event %zu differs", what, i);
}

static size_t split_one(size_t i, void *arg)
{
	(void)i;
	(void)arg;
	return 1;
}

/* xorshift64*: reproducible random piece sizes of 1..max */
static size_t split_random(size_t i, void *arg)
{
	uint64_t *st = arg;

	(void)i;
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return (size_t)((*st * 2685821657736338717ull) >> 33) % 40 + 1;
}

Test(feed, one_byte_at_a_time_matches_the_fd_path)
{
	for (unsigned v = 1; v <= 5; v++) {
		struct scenario s;
		struct run a, b;
		char what[32];

		scenario_build(&s, v);
		a = run_fd(s.b.data, s.b.len);
		cr_assert_eq(a.final, FDRTRACE_EOF, "v%u: %s", v, a.msg);
		cr_assert_eq(a.n, s.n);
		b = run_feed(s.b.data, s.b.len, split_one, NULL);
		snprintf(what, sizeof(what), "v%u bytewise", v);
		expect_same_run(&a, &b, what);
		run_free(&a);
		run_free(&b);
		tb_free(&s.b);
	}
}

Test(feed, random_splits_match_the_fd_path)
{
	for (unsigned v = 1; v <= 5; v++) {
		struct scenario s;
		struct run a;

		scenario_build(&s, v);
		a = run_fd(s.b.data, s.b.len);
		for (uint64_t seed = 1; seed <= 50; seed++) {
			uint64_t st = seed * 0x9e3779b97f4a7c15ull;
			struct run b = run_feed(s.b.data, s.b.len, split_random, &st);
			char what[48];

			snprintf(what, sizeof(what), "v%u seed %llu", v, (unsigned long long)seed);
			expect_same_run(&a, &b, what);
			run_free(&b);
		}
		run_free(&a);
		tb_free(&s.b);
	}
}

Test(feed, errors_are_the_same_on_both_paths)
{
	struct scenario s;
	struct run a, b;

	scenario_build(&s, 5);
	s.b.data[s.b.len - 8] = 0x0e;	/* function action 7 in the last record */
	a = run_fd(s.b.data, s.b.len);
	b = run_feed(s.b.data, s.b.len, split_one, NULL);
	cr_expect_eq(a.final, FDRTRACE_ERROR);
	cr_expect_eq(a.err, FDRTRACE_E_BAD_KIND);
	expect_same_run(&a, &b, "bad kind");
	run_free(&a);
	run_free(&b);
	tb_free(&s.b);
}

/* A run is sane when it ended (no hang) in EOF or ERROR with a known error. */
static void expect_sane(const struct run *r, const char *what)
{
	cr_assert_not(r->hung, "%s: hung", what);
	cr_assert(r->final == FDRTRACE_EOF || r->final == FDRTRACE_ERROR, "%s: state %d", what,
		  r->final);
	if (r->final == FDRTRACE_ERROR) {
		cr_assert(r->err > FDRTRACE_E_NONE && r->err < FDRTRACE_E_COUNT, "%s", what);
		cr_assert(r->msg[0] != '\0', "%s: no message", what);
	} else {
		cr_assert_eq(r->err, FDRTRACE_E_NONE, "%s", what);
	}
	for (size_t i = 0; i < r->n; i++) {
		cr_assert_eq(r->ev[i].state, FDRTRACE_OK);
		cr_assert_eq(r->ev[i].serial, i);
		cr_assert(r->ev[i].type < FDRTRACE_EV_TYPE_COUNT);
		if (i)
			cr_assert_eq(r->ev[i].offset, r->ev[i - 1].offset + r->ev[i - 1].size,
				     "%s: event %zu is not contiguous", what, i);
	}
}

Test(damage, every_prefix_ends_sanely)
{
	for (unsigned v = 1; v <= 5; v++) {
		struct scenario s;
		size_t boundaries = 0;

		scenario_build(&s, v);
		for (size_t len = 0; len <= s.b.len; len++) {
			struct run r = run_fd(s.b.data, len);
			char what[48];
			bool at_boundary = false;

			snprintf(what, sizeof(what), "v%u prefix %zu", v, len);
			expect_sane(&r, what);
			for (size_t i = 0; i < s.n; i++)
				if ((s.e[i].type == (v == 1 ? FDRTRACE_EV_NEW_BUFFER :
							       FDRTRACE_EV_BUFFER_EXTENTS) &&
				     s.e[i].offset == len) ||
				    (len == s.b.len) || (len == 32))
					at_boundary = true;
			/* EOF exactly at buffer boundaries, truncation everywhere else */
			if (at_boundary) {
				cr_expect_eq(r.final, FDRTRACE_EOF, "%s: %s", what, r.msg);
				boundaries++;
			} else {
				cr_expect_eq(r.err, FDRTRACE_E_TRUNCATED, "%s: %s", what, r.msg);
				cr_expect_eq(r.err_offset, len, "%s", what);
			}
			run_free(&r);
		}
		cr_expect_eq(boundaries, 3, "v%u", v);
		tb_free(&s.b);
	}
}

Test(damage, every_byte_changed_ends_sanely)
{
	static const int deltas[] = { 0x01, 0x02, 0x80, 0xff, 0x10, 0x7f };

	for (unsigned v = 1; v <= 5; v++) {
		struct scenario s;
		size_t errors = 0;

		scenario_build(&s, v);
		for (size_t at = 0; at < s.b.len; at++) {
			uint8_t orig = s.b.data[at];

			for (size_t d = 0; d < sizeof(deltas) / sizeof(deltas[0]); d++) {
				struct run r;
				char what[48];

				s.b.data[at] = (uint8_t)(orig ^ deltas[d]);
				r = run_fd(s.b.data, s.b.len);
				snprintf(what, sizeof(what), "v%u byte %zu ^0x%02x", v, at, deltas[d]);
				expect_sane(&r, what);
				errors += r.final == FDRTRACE_ERROR;
				run_free(&r);
			}
			s.b.data[at] = orig;
		}
		/* Damage must be noticed often (padding and many field bytes cannot be). */
		size_t checkable = s.b.len;

		for (size_t i = 0; i < s.n; i++)
			if (s.e[i].type == FDRTRACE_EV_PADDING)
				checkable -= s.e[i].size;
		cr_expect_gt(errors, checkable / 2, "v%u: only %zu errors", v, errors);
		tb_free(&s.b);
	}
}

Test(damage, byte_values_fed_randomly_end_sanely)
{
	struct scenario s;
	uint64_t st = 42;

	scenario_build(&s, 5);
	for (size_t at = 32; at < s.b.len; at++) {
		uint8_t orig = s.b.data[at];

		for (unsigned val = 0; val < 256; val += 17) {
			struct run r;
			char what[48];

			s.b.data[at] = (uint8_t)val;
			r = run_feed(s.b.data, s.b.len, split_random, &st);
			snprintf(what, sizeof(what), "byte %zu = 0x%02x", at, val);
			expect_sane(&r, what);
			run_free(&r);
		}
		s.b.data[at] = orig;
	}
	tb_free(&s.b);
}

Test(feed, payload_larger_than_the_io_buffer_is_staged_whole)
{
	const size_t big = 200000;	/* spans several 64 KiB reads */
	uint8_t *payload = malloc(big);
	struct tb b = { 0 };
	size_t ext, at;
	uint64_t st = 7;
	struct run a, c;

	for (size_t i = 0; i < big; i++)
		payload[i] = (uint8_t)(i * 131 + 7);
	tb_header(&b, 5, FDRTRACE_LOG_FDR, FREQ, 0);
	ext = tb_extents(&b, 0);
	tb_new_buffer(&b, 1);
	tb_walltime(&b, 1, 0);
	tb_new_cpu(&b, 0, 1);
	tb_func(&b, FDRTRACE_FN_ENTRY, 1, 1);
	at = tb_custom_v5(&b, (int32_t)big, 2, payload, big);
	tb_func(&b, FDRTRACE_FN_EXIT, 1, 1);
	tb_close_extents(&b, ext);

	a = run_fd(b.data, b.len);
	cr_assert_eq(a.final, FDRTRACE_EOF, "%s", a.msg);
	cr_assert_eq(a.n, 8);
	cr_expect_eq(a.ev[6].offset, at);
	cr_expect_eq(a.ev[6].size, 16 + big);
	cr_expect_eq(a.ev[6].u.event.size, big);
	cr_expect_eq(a.ev[6].tsc, 4);
	cr_expect(memcmp(a.ev[6].u.event.data, payload, big) == 0);
	cr_expect_eq(a.ev[7].tsc, 5);
	c = run_feed(b.data, b.len, split_random, &st);
	expect_same_run(&a, &c, "big payload, random splits");
	run_free(&c);
	c = run_feed(b.data, b.len, NULL, NULL);
	expect_same_run(&a, &c, "big payload, one piece");
	run_free(&c);
	run_free(&a);
	tb_free(&b);
	free(payload);
}

struct pipe_writer {
	int fd;
	const uint8_t *data;
	size_t len;
};

static void *write_in_dribbles(void *arg)
{
	struct pipe_writer *w = arg;

	for (size_t pos = 0; pos < w->len;) {
		size_t n = w->len - pos < 7 ? w->len - pos : 7;
		ssize_t k = write(w->fd, w->data + pos, n);

		if (k <= 0)
			break;
		pos += (size_t)k;
		if (pos % 70 == 0)
			usleep(100);
	}
	close(w->fd);
	return NULL;
}

Test(feed, a_pipe_with_short_reads_matches_a_file)
{
	struct scenario s;
	struct run a, b = { 0 };
	struct pipe_writer w;
	pthread_t t;
	int fds[2];
	struct fdrtrace_reader *rd;

	scenario_build(&s, 1);
	a = run_fd(s.b.data, s.b.len);
	cr_assert_eq(pipe(fds), 0);
	w = (struct pipe_writer){ fds[1], s.b.data, s.b.len };
	cr_assert_eq(pthread_create(&t, NULL, write_in_dribbles, &w), 0);
	rd = fdrtrace_reader_open(fds[0]);
	run_drain(&b, rd, 10000);
	fdrtrace_reader_close(rd);
	pthread_join(t, NULL);
	close(fds[0]);
	expect_same_run(&a, &b, "pipe");
	run_free(&a);
	run_free(&b);
	tb_free(&s.b);
}
