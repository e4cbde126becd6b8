/* SPDX-License-Identifier: MIT */
/*
 * runs_compare.h - test helpers for fdrtrace_reader_read_functions(): read
 * a byte array per record only, or with runs of function records taken by
 * the batch call (expanded back into the events the per-record path gives,
 * each record's wall time from fdrtrace_reader_wall_ns()), through a file
 * descriptor or fed from memory in chosen pieces, skipping damaged buffers
 * as verify does; then say whether two readings differ (events, every
 * error with its offset and message, how the reading ended).
 *
 * Every run is also checked against its contract (reader.h): 1 to max
 * records of actions Entry, Exit or TailExit, first_wall_ns and
 * last_wall_ns those of its first and last record, times that do not go
 * down, all 0 or none.
 *
 * Contract: test code only (test_runs.c, runs_check.c).
 */
#ifndef FDR_TEST_RUNS_COMPARE_H
#define FDR_TEST_RUNS_COMPARE_H

#include <stdarg.h>

#include "collect.h"

/* Errors kept per reading: the reader resumes after at most this many. */
#define RC_MAX_ERRORS 8

struct rc_error {
	enum fdrtrace_error err;
	uint64_t offset;
	char msg[256];
};

struct rc_log {
	struct run run;		/* every event; run.final: how the reading ended */
	struct rc_error errs[RC_MAX_ERRORS];
	size_t n_errs;
	uint64_t functions;	/* FDRTRACE_EV_FUNCTION events, however they came */
	uint64_t batched;	/* of them, those that came in runs */
	uint64_t runs;
	char broken[256];	/* a run that broke its contract: what, else "" */
};

/* How to read: @max 0 is the per-record path alone. */
struct rc_mode {
	bool fd;				/* else fed from memory */
	size_t (*split)(size_t i, void *arg);	/* feed piece sizes; NULL: one piece */
	void *arg;
	size_t max;				/* the batch call's max */
};

static inline void rc_free(struct rc_log *l)
{
	run_free(&l->run);
}

static inline __attribute__((format(printf, 2, 3))) void rc_broken(struct rc_log *l,
								  const char *fmt, ...)
{
	va_list ap;

	if (l->broken[0])
		return;
	va_start(ap, fmt);
	vsnprintf(l->broken, sizeof(l->broken), fmt, ap);
	va_end(ap);
}

/* A run, checked, then kept as the events the per-record path would give. */
static inline void rc_take_run(struct rc_log *l, struct fdrtrace_reader *rd,
			       const struct fdrtrace_func_run *fr, size_t n, size_t max)
{
	uint64_t tsc = fr->tsc_before, prev_wall = 0;
	size_t zeros = 0;

	if (n != fr->count || n < 1 || n > max)
		rc_broken(l, "run at %llu: %zu records returned, count %zu, max %zu",
			  (unsigned long long)fr->offset, n, fr->count, max);
	for (size_t i = 0; i < fr->count; i++) {
		const uint8_t *p = fr->records + i * FDRTRACE_FUNC_RECORD_SIZE;
		struct fdrtrace_event ev;
		uint32_t word, delta;

		memcpy(&word, p, 4);
		memcpy(&delta, p + 4, 4);
		if (tsc + delta < tsc)
			rc_broken(l, "run at %llu: the TSC wraps at record %zu",
				  (unsigned long long)fr->offset, i);
		tsc += delta;
		memset(&ev, 0, sizeof(ev));
		ev.state = FDRTRACE_OK;
		ev.offset = fr->offset + i * FDRTRACE_FUNC_RECORD_SIZE;
		ev.serial = fr->serial + i;
		ev.size = FDRTRACE_FUNC_RECORD_SIZE;
		ev.type = FDRTRACE_EV_FUNCTION;
		ev.version = fr->version;
		ev.tsc = tsc;
		ev.wall_ns = fdrtrace_reader_wall_ns(rd, tsc);
		ev.tid = fr->tid;
		ev.pid = fr->pid;
		ev.cpu = fr->cpu;
		ev.buffer = fr->buffer;
		ev.raw = p;
		ev.raw_len = FDRTRACE_FUNC_RECORD_SIZE;
		ev.u.func.action = (enum fdrtrace_func_action)fdrtrace_func_word_action(word);
		ev.u.func.func_id = fdrtrace_func_word_id(word);
		ev.u.func.delta = delta;
		if ((word & 1) || ev.u.func.action > FDRTRACE_FN_TAIL_EXIT)
			rc_broken(l, "run at %llu: record %zu is not a plain function record",
				  (unsigned long long)fr->offset, i);
		if (i == 0 && ev.wall_ns != fr->first_wall_ns)
			rc_broken(l, "run at %llu: first_wall_ns %llu, its first record's %llu",
				  (unsigned long long)fr->offset,
				  (unsigned long long)fr->first_wall_ns,
				  (unsigned long long)ev.wall_ns);
		if (i + 1 == fr->count && ev.wall_ns != fr->last_wall_ns)
			rc_broken(l, "run at %llu: last_wall_ns %llu, its last record's %llu",
				  (unsigned long long)fr->offset,
				  (unsigned long long)fr->last_wall_ns,
				  (unsigned long long)ev.wall_ns);
		if (ev.wall_ns < prev_wall)
			rc_broken(l, "run at %llu: wall_ns goes down at record %zu",
				  (unsigned long long)fr->offset, i);
		prev_wall = ev.wall_ns;
		zeros += ev.wall_ns == 0;
		run_keep(&l->run, &ev);
	}
	if (tsc != fr->tsc)
		rc_broken(l, "run at %llu: tsc %llu, its records' %llu",
			  (unsigned long long)fr->offset, (unsigned long long)fr->tsc,
			  (unsigned long long)tsc);
	if (zeros && zeros != fr->count)
		rc_broken(l, "run at %llu: %zu of %zu wall times are 0",
			  (unsigned long long)fr->offset, zeros, fr->count);
	l->functions += fr->count;
	l->batched += fr->count;
	l->runs++;
}

/* Read @data (@len bytes) as @m says, to the end or the last error. */
static inline struct rc_log rc_read(const uint8_t *data, size_t len, const struct rc_mode *m)
{
	struct rc_log l = { 0 };
	struct fdrtrace_reader *rd;
	struct fdrtrace_event ev;
	size_t pos = 0, piece = 0;
	int fd = -1;

	if (m->fd) {
		fd = memfd_create("trace", 0);
		if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) ||
		    lseek(fd, 0, SEEK_SET))
			abort();
		rd = fdrtrace_reader_open(fd);
	} else {
		rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	}
	if (!rd)
		abort();
	/* Each call consumes bytes or stops; a feed adds one: bound the loop. */
	for (size_t i = 0; i < 8 * len + 64; i++) {
		struct fdrtrace_func_run fr;
		size_t n = m->max ? fdrtrace_reader_read_functions(rd, &fr, m->max) : 0;

		if (n) {
			rc_take_run(&l, rd, &fr, n, m->max);
			continue;
		}
		if (fdrtrace_reader_read(rd, &ev) == 0) {
			l.functions += ev.type == FDRTRACE_EV_FUNCTION;
			run_keep(&l.run, &ev);
			continue;
		}
		if (ev.state == FDRTRACE_REQUIRE_DATA && !m->fd) {
			size_t k = m->split ? m->split(piece++, m->arg) : len;

			if (pos == len) {
				fdrtrace_reader_feed(rd, NULL, 0);
				continue;
			}
			if (k == 0)
				k = 1;
			if (k > len - pos)
				k = len - pos;
			fdrtrace_reader_feed(rd, data + pos, k);
			pos += k;
			continue;
		}
		if (ev.state == FDRTRACE_ERROR && l.n_errs < RC_MAX_ERRORS) {
			struct rc_error *e = &l.errs[l.n_errs++];

			e->err = fdrtrace_reader_error(rd, &e->offset);
			snprintf(e->msg, sizeof(e->msg), "%s", fdrtrace_reader_errmsg(rd));
			if (fdrtrace_reader_skip_buffer(rd) == 0)
				continue;
		}
		run_finish(&l.run, rd, ev.state);
		fdrtrace_reader_close(rd);
		if (fd >= 0)
			close(fd);
		return l;
	}
	l.run.hung = true;
	fdrtrace_reader_close(rd);
	if (fd >= 0)
		close(fd);
	return l;
}

/*
 * Whether @b (a reading with runs) differs from @a (per record): the first
 * difference in @why (@size bytes), or a run's broken contract. Return:
 * true when they differ.
 */
static inline bool rc_differ(const struct rc_log *a, const struct rc_log *b, char *why,
			     size_t size)
{
	if (b->broken[0]) {
		snprintf(why, size, "%s", b->broken);
		return true;
	}
	if (a->run.hung || b->run.hung) {
		snprintf(why, size, "hung (per record: %d, with runs: %d)", a->run.hung,
			 b->run.hung);
		return true;
	}
	if (a->run.final != b->run.final) {
		snprintf(why, size, "ended %s, with runs %s", fdrtrace_state_name(a->run.final),
			 fdrtrace_state_name(b->run.final));
		return true;
	}
	if (a->run.err != b->run.err || a->run.err_offset != b->run.err_offset ||
	    strcmp(a->run.msg, b->run.msg)) {
		snprintf(why, size, "last error %s at %llu: %s; with runs %s at %llu: %s",
			 fdrtrace_error_name(a->run.err), (unsigned long long)a->run.err_offset,
			 a->run.msg, fdrtrace_error_name(b->run.err),
			 (unsigned long long)b->run.err_offset, b->run.msg);
		return true;
	}
	if (a->n_errs != b->n_errs) {
		snprintf(why, size, "%zu errors, with runs %zu", a->n_errs, b->n_errs);
		return true;
	}
	for (size_t i = 0; i < a->n_errs; i++)
		if (a->errs[i].err != b->errs[i].err || a->errs[i].offset != b->errs[i].offset ||
		    strcmp(a->errs[i].msg, b->errs[i].msg)) {
			snprintf(why, size, "error %zu: %s at %llu: %s; with runs %s at %llu: %s",
				 i, fdrtrace_error_name(a->errs[i].err),
				 (unsigned long long)a->errs[i].offset, a->errs[i].msg,
				 fdrtrace_error_name(b->errs[i].err),
				 (unsigned long long)b->errs[i].offset, b->errs[i].msg);
			return true;
		}
	if (a->run.n != b->run.n) {
		snprintf(why, size, "%zu events, with runs %zu", a->run.n, b->run.n);
		return true;
	}
	for (size_t i = 0; i < a->run.n; i++)
		if (!same_event(&a->run.ev[i], &b->run.ev[i])) {
			snprintf(why, size, "event %zu (%s at offset %llu) differs", i,
				 fdrtrace_event_type_name(a->run.ev[i].type),
				 (unsigned long long)a->run.ev[i].offset);
			return true;
		}
	return false;
}

#endif /* FDR_TEST_RUNS_COMPARE_H */
