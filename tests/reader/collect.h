/* SPDX-License-Identifier: MIT */
/*
 * collect.h - test helpers: run a reader over a byte array (through a file
 * descriptor, or fed from memory in chosen pieces) and keep every event,
 * with a private copy of its raw bytes, plus the final state and error.
 *
 * Contract: test code only. A run stops at the first non-OK state other
 * than REQUIRE_DATA, or after a bound on reads (a hang is a test failure).
 */
#ifndef FDR_TEST_COLLECT_H
#define FDR_TEST_COLLECT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fdrtrace/reader.h>

struct run {
	struct fdrtrace_event *ev;	/* ev[i].raw points at a private copy */
	size_t n;
	size_t cap;
	enum fdrtrace_state final;
	enum fdrtrace_error err;
	uint64_t err_offset;
	char msg[256];
	bool hung;
};

static inline void run_free(struct run *r)
{
	for (size_t i = 0; i < r->n; i++)
		free((void *)r->ev[i].raw);
	free(r->ev);
	memset(r, 0, sizeof(*r));
}

static inline void run_keep(struct run *r, const struct fdrtrace_event *ev)
{
	uint8_t *copy = malloc(ev->raw_len ? ev->raw_len : 1);

	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->ev = realloc(r->ev, r->cap * sizeof(*r->ev));
		if (!r->ev)
			abort();
	}
	if (!copy)
		abort();
	memcpy(copy, ev->raw, ev->raw_len);
	r->ev[r->n] = *ev;
	r->ev[r->n].raw = copy;
	if (ev->type == FDRTRACE_EV_CUSTOM_EVENT || ev->type == FDRTRACE_EV_TYPED_EVENT)
		r->ev[r->n].u.event.data = copy + (ev->u.event.data - ev->raw);
	r->n++;
}

static inline void run_finish(struct run *r, struct fdrtrace_reader *rd, enum fdrtrace_state s)
{
	r->final = s;
	r->err = fdrtrace_reader_error(rd, &r->err_offset);
	snprintf(r->msg, sizeof(r->msg), "%s", fdrtrace_reader_errmsg(rd));
}

/* Two events are the same, field by field and byte by byte. */
static inline bool same_event(const struct fdrtrace_event *a, const struct fdrtrace_event *b)
{
	if (a->state != b->state || a->offset != b->offset || a->serial != b->serial ||
	    a->size != b->size || a->type != b->type || a->version != b->version ||
	    a->tsc != b->tsc || a->wall_ns != b->wall_ns || a->tid != b->tid ||
	    a->pid != b->pid || a->cpu != b->cpu || a->buffer != b->buffer ||
	    a->raw_len != b->raw_len || memcmp(a->raw, b->raw, a->raw_len) != 0)
		return false;
	switch (a->type) {
	case FDRTRACE_EV_HEADER:
		return memcmp(&a->u.header, &b->u.header, sizeof(a->u.header)) == 0;
	case FDRTRACE_EV_FUNCTION:
		return a->u.func.action == b->u.func.action && a->u.func.func_id == b->u.func.func_id &&
		       a->u.func.delta == b->u.func.delta;
	case FDRTRACE_EV_NEW_CPU_ID:
	case FDRTRACE_EV_TSC_WRAP:
		return a->u.ref.cpu == b->u.ref.cpu && a->u.ref.tsc == b->u.ref.tsc;
	case FDRTRACE_EV_WALLTIME:
		return a->u.walltime.seconds == b->u.walltime.seconds &&
		       a->u.walltime.micros == b->u.walltime.micros;
	case FDRTRACE_EV_CALL_ARGUMENT:
		return a->u.arg.arg == b->u.arg.arg;
	case FDRTRACE_EV_BUFFER_EXTENTS:
		return a->u.extents.size == b->u.extents.size;
	case FDRTRACE_EV_CUSTOM_EVENT:
	case FDRTRACE_EV_TYPED_EVENT:
		return a->u.event.size == b->u.event.size && a->u.event.delta == b->u.event.delta &&
		       a->u.event.event_type == b->u.event.event_type &&
		       a->u.event.data - a->raw == b->u.event.data - b->raw;
	default:
		return true;
	}
}

/* Read until EOF or ERROR from an already set-up reader (fd path). */
static inline void run_drain(struct run *r, struct fdrtrace_reader *rd, size_t max_reads)
{
	struct fdrtrace_event ev;

	for (size_t i = 0; i < max_reads; i++) {
		if (fdrtrace_reader_read(rd, &ev) == 0) {
			run_keep(r, &ev);
			continue;
		}
		run_finish(r, rd, ev.state);
		return;
	}
	r->hung = true;
}

/* The whole array through a memfd and fdrtrace_reader_open(fd). */
static inline struct run run_fd(const uint8_t *data, size_t len)
{
	struct run r = { 0 };
	int fd = memfd_create("trace", 0);
	struct fdrtrace_reader *rd;

	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) || lseek(fd, 0, SEEK_SET))
		abort();
	rd = fdrtrace_reader_open(fd);
	run_drain(&r, rd, 4 * len + 64);
	fdrtrace_reader_close(rd);
	close(fd);
	return r;
}

/*
 * The array fed from memory in pieces: piece sizes come from @split(i)
 * (at least 1), or one piece when @split is NULL.
 */
static inline struct run run_feed(const uint8_t *data, size_t len, size_t (*split)(size_t i, void *arg),
				  void *arg)
{
	struct run r = { 0 };
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;
	size_t pos = 0, piece = 0;
	size_t max_reads = 8 * len + 64;

	for (size_t i = 0; i < max_reads; i++) {
		if (fdrtrace_reader_read(rd, &ev) == 0) {
			run_keep(&r, &ev);
			continue;
		}
		if (ev.state != FDRTRACE_REQUIRE_DATA) {
			run_finish(&r, rd, ev.state);
			fdrtrace_reader_close(rd);
			return r;
		}
		if (pos == len) {
			fdrtrace_reader_feed(rd, NULL, 0);
		} else {
			size_t n = split ? split(piece++, arg) : len;

			if (n == 0)
				n = 1;
			if (n > len - pos)
				n = len - pos;
			fdrtrace_reader_feed(rd, data + pos, n);
			pos += n;
		}
	}
	r.hung = true;
	fdrtrace_reader_close(rd);
	return r;
}

#endif /* FDR_TEST_COLLECT_H */
