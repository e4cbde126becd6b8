/* SPDX-License-Identifier: MIT */
/*
 * analysis.c - the streaming analysis core (see analysis.h): opening the
 * trace and reading it, through the reader, in file order or (a regular
 * file whose buffers are out of time order) buffer by buffer in time
 * order; the calls still open at the end.
 *
 * Which file holds what: analysis_names.c the functions and their names;
 * analysis_stack.c (and the inline analysis_stack.h) the threads, their
 * stacks and the calling-context tree; analysis_gaps.c losses;
 * analysis_events.c what each event and run of records does;
 * analysis_summary.c the summary lines and the end.
 *
 * Contract: single-threaded tool code. Allocates per buffer only when
 * buffers must be reordered; never per record.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "analysis_events.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

/*
 * Every record comes from the reader (tools/reader), the one place the
 * format's grammar is enforced: plain function records in runs through its
 * batch path (fdrtrace_reader_read_functions(); one event each with
 * FDRTRACE_ANALYSIS_READER=1, for the tests), everything else one event at
 * a time. A regular file whose buffers are out of time order on some
 * thread is read twice: once in file order for the extension records, then
 * buffer by buffer in time order, each fed to a memory reader from a
 * window onto the file (an_buffer_at()).
 */

static void an_report(struct analysis *a, struct fdrtrace_reader *rd)
{
	uint64_t off = 0;
	enum fdrtrace_error e = fdrtrace_reader_error(rd, &off);

	if (e == FDRTRACE_E_TRUNCATED)
		a->st.truncated = true;
	tool_stderr_sync();
	fprintf(stderr, "%s:%" PRIu64 ": %s\n", a->path, off, fdrtrace_reader_errmsg(rd));
}

/*
 * A buffer was damaged: the calls it opened may have lost their exits with
 * the rest of it. Forget them (counted as entries without exit).
 */
static void an_drop_buffer_calls(struct analysis *a)
{
	struct an_thread *t = a->cur;

	an_gap_settle(a, t);
	if (!t || t->depth <= a->buf_low)
		return;
	a->st.unmatched_entries += t->depth - a->buf_low;
	an_forget(a, t, a->buf_low);
}

/*
 * Everything @rd has, until it stops: at the end, at an error, or (memory
 * reader) where it must be fed. Return: the state it stopped in.
 */
static enum fdrtrace_state an_read(struct analysis *a, struct fdrtrace_reader *rd)
{
	struct fdrtrace_func_run run;
	struct fdrtrace_event ev;

	for (;;) {
		if (a->batch && fdrtrace_reader_read_functions(rd, &run, SIZE_MAX)) {
			an_functions(a, &run);
			continue;
		}
		if (fdrtrace_reader_read(rd, &ev))
			return ev.state;
		an_event(a, &ev);
	}
}

/*
 * Read the whole stream of @rd, skipping damaged buffers.
 * Return: 0, or -1 when the header itself could not be read.
 */
static int an_stream(struct analysis *a, struct fdrtrace_reader *rd, bool report)
{
	for (;;) {
		if (an_read(a, rd) != FDRTRACE_ERROR)
			return 0;
		if (report)
			an_report(a, rd);
		if (!a->have_hdr)
			return -1;
		if (a->pass_mode != 1)
			an_drop_buffer_calls(a);
		if (fdrtrace_reader_skip_buffer(rd))
			return 0;
		if (report)
			a->st.bad_buffers++;
		a->cur = NULL;
	}
}

/* ------------------------------------------------------------------ */
/* Buffers one by one, from a regular file                             */
/* ------------------------------------------------------------------ */

/*
 * The bytes the scan and the per-buffer readers take from a regular file
 * come through one window of AN_WIN_SIZE bytes (read ahead with pread,
 * whatever the buffer size): memory does not depend on the buffer size the
 * trace claims. The reader stages what a piece cuts in two.
 */
#define AN_WIN_SIZE (256u << 10)

/* A preamble's most bytes: BufferExtents NewBuffer WallTime Pid NewCPUId. */
#define AN_PREAMBLE_MAX (5u * FDRTRACE_METADATA_RECORD_SIZE)

/*
 * The @n bytes at file offset @off, contiguous; valid until the next call.
 * Return: a pointer into the window, or NULL on a read error or when the
 * file ends first (errno 0).
 */
static const uint8_t *an_win_get(struct analysis *a, uint64_t off, size_t n)
{
	size_t keep = 0;

	if (off >= a->win_pos && off - a->win_pos <= a->win_len &&
	    n <= a->win_len - (off - a->win_pos))
		return a->win + (off - a->win_pos);
	if (n > a->win_cap || !a->win) {
		size_t cap = n > AN_WIN_SIZE ? n : AN_WIN_SIZE;
		uint8_t *w = realloc(a->win, cap);

		if (!w) {
			errno = ENOMEM;
			return NULL;
		}
		a->win = w;
		a->win_cap = cap;
	}
	if (off >= a->win_pos && off - a->win_pos < a->win_len) {
		keep = a->win_len - (size_t)(off - a->win_pos);
		memmove(a->win, a->win + (off - a->win_pos), keep);
	}
	a->win_pos = off;
	a->win_len = keep;
	while (a->win_len < n) {
		ssize_t got = pread(a->fd, a->win + a->win_len, a->win_cap - a->win_len,
				    (off_t)(off + a->win_len));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = 0;
			return NULL;
		}
		a->win_len += (size_t)got;
	}
	return a->win;
}

static void an_io_error(struct analysis *a, uint64_t pos)
{
	if (errno == ENOMEM)
		tool_err("out of memory");
	else
		tool_err("%s: cannot read the buffer at offset %" PRIu64 ": %s", a->path, pos,
			 errno ? strerror(errno) : "short read");
}

/*
 * A memory reader for buffers read one by one: fed the file header (read
 * once already), it is between buffers at offset 32.
 * Return: the reader, NULL when out of memory.
 */
static struct fdrtrace_reader *an_mem_reader(struct analysis *a)
{
	struct fdrtrace_reader *rd = fdrtrace_reader_open(FDRTRACE_FD_NONE);
	struct fdrtrace_event ev;

	if (rd && (fdrtrace_reader_feed(rd, &a->hdr, sizeof(a->hdr)) ||
		   fdrtrace_reader_read(rd, &ev) != 0)) {
		fdrtrace_reader_close(rd);
		rd = NULL;
	}
	return rd;
}

/*
 * The buffer of @len bytes at file offset @pos (found by the scan), through
 * the memory reader *@rdp, fed from the window and told where the buffer
 * sits, so that every offset it reports (in the message too) is the file's.
 * A reader that stopped inside a buffer (an error) is replaced. Errors are
 * reported as an_stream() reports them.
 * Return: 0, -1 on a read error or ENOMEM (reported).
 */
static int an_buffer_at(struct analysis *a, struct fdrtrace_reader **rdp, uint64_t pos,
			uint64_t len)
{
	uint64_t fed = pos, end = pos + len;
	enum fdrtrace_state st;

	if (*rdp && fdrtrace_reader_set_offset(*rdp, pos)) {
		fdrtrace_reader_close(*rdp);
		*rdp = NULL;
	}
	if (!*rdp) {
		*rdp = an_mem_reader(a);
		if (!*rdp || fdrtrace_reader_set_offset(*rdp, pos)) {
			tool_err("out of memory");
			return -1;
		}
	}
	a->cur = NULL;
	for (;;) {
		size_t n = end - fed < AN_WIN_SIZE ? (size_t)(end - fed) : AN_WIN_SIZE;
		const uint8_t *p;

		st = an_read(a, *rdp);
		/* All of it read: the reader is between buffers. */
		if (st != FDRTRACE_REQUIRE_DATA || !n)
			break;
		p = an_win_get(a, fed, n);
		if (!p) {
			an_io_error(a, fed);
			return -1;
		}
		/* The reader is done with the previous piece: the window may move. */
		fdrtrace_reader_feed(*rdp, p, n);
		fed += n;
	}
	if (st == FDRTRACE_ERROR && a->pass_mode != 1) {
		an_report(a, *rdp);
		a->st.bad_buffers++;
		an_drop_buffer_calls(a);
	}
	return 0;
}

/* One buffer found by the preamble scan. */
struct an_buf {
	uint64_t offset, len, tsc;
};

static int an_buf_cmp(const void *x, const void *y)
{
	const struct an_buf *p = x, *q = y;

	if (p->tsc != q->tsc)
		return p->tsc < q->tsc ? -1 : 1;
	return p->offset < q->offset ? -1 : p->offset > q->offset;
}

/*
 * The preamble of the buffer at @pos, through the scan's memory reader @rd
 * (between buffers, at @pos), which steps over the rest: the buffer's
 * length *@len (16: an empty v2+ buffer, whose *@tid and *@tsc are not
 * set), its thread *@tid and first TSC *@tsc. Return: 0, or -1 when the
 * reader does not accept the preamble or the buffer does not fit in the
 * file (the scan gives up, and the trace is read in file order).
 */
static int an_scan_one(struct analysis *a, struct fdrtrace_reader *rd, uint64_t pos,
		       uint64_t fsize, uint64_t *len, int32_t *tid, uint64_t *tsc)
{
	size_t n = fsize - pos < AN_PREAMBLE_MAX ? (size_t)(fsize - pos) : AN_PREAMBLE_MAX;
	const uint8_t *b = an_win_get(a, pos, n);
	struct fdrtrace_event ev;

	if (!b || fdrtrace_reader_feed(rd, b, n))
		return -1;
	*len = a->hdr.buffer_size;	/* version 1 */
	while (fdrtrace_reader_read(rd, &ev) == 0) {
		switch (ev.type) {
		case FDRTRACE_EV_BUFFER_EXTENTS:
			if (ev.u.extents.size > fsize - pos - FDRTRACE_METADATA_RECORD_SIZE)
				return -1;
			*len = FDRTRACE_METADATA_RECORD_SIZE + ev.u.extents.size;
			if (!ev.u.extents.size)
				return fdrtrace_reader_leave_buffer(rd) ? -1 : 0;
			break;
		case FDRTRACE_EV_NEW_BUFFER:
			if (*len > fsize - pos)
				return -1;
			*tid = ev.tid;
			break;
		case FDRTRACE_EV_NEW_CPU_ID:
			*tsc = ev.tsc;
			return fdrtrace_reader_leave_buffer(rd) ? -1 : 0;
		default:
			break;
		}
	}
	return -1;
}

/*
 * Walk the buffer preambles. With @out NULL, only check the order
 * (Return: 1 out of order, 0 in order, -1 scan failed). Otherwise fill
 * *@out with every non-empty buffer (Return: the count, or -1).
 */
static long an_scan(struct analysis *a, uint64_t fsize, struct an_buf **out)
{
	struct fdrtrace_reader *rd = an_mem_reader(a);
	uint64_t pos = sizeof(a->hdr), len, tsc = 0;
	struct an_buf *v = NULL;
	long n = 0, cap = 0;
	int32_t tid = 0;
	bool disorder = false;
	uint32_t i;

	if (!rd)
		return -1;
	for (i = 0; i < a->n_threads; i++)
		a->threads[i]->scan_tsc = 0;
	while (pos < fsize) {
		if (an_scan_one(a, rd, pos, fsize, &len, &tid, &tsc))
			goto fail;
		if (len > FDRTRACE_METADATA_RECORD_SIZE) {
			if (out) {
				if (n == cap) {
					struct an_buf *nv;

					cap = cap ? cap * 2 : 256;
					nv = realloc(v, (size_t)cap * sizeof(*v));
					if (!nv)
						goto fail;
					v = nv;
				}
				v[n].offset = pos;
				v[n].len = len;
				v[n].tsc = tsc;
				n++;
			} else {
				struct an_thread *t = an_thread_get(a, tid);

				if (!t)
					goto fail;
				if (t->scan_tsc > tsc)
					disorder = true;
				t->scan_tsc = tsc;
			}
		}
		pos += len;
	}
	fdrtrace_reader_close(rd);
	if (!out)
		return disorder;
	*out = v;
	return n;
fail:
	fdrtrace_reader_close(rd);
	free(v);
	return -1;
}

/* Visit the buffers sorted by first TSC, each read by itself. */
static int an_reordered(struct analysis *a, uint64_t fsize)
{
	struct fdrtrace_reader *rd = NULL;
	struct an_buf *bufs = NULL;
	long n = an_scan(a, fsize, &bufs), i;
	int rc = 0;

	if (n < 0)
		return -1;
	if (n > 1)	/* bufs is NULL when there is none */
		qsort(bufs, (size_t)n, sizeof(*bufs), an_buf_cmp);
	a->pass_mode = 2;
	a->st.reordered = true;
	for (i = 0; i < n && !rc; i++)
		rc = an_buffer_at(a, &rd, bufs[i].offset, bufs[i].len);
	fdrtrace_reader_close(rd);
	free(bufs);
	return rc;
}

static void an_finish_threads(struct analysis *a)
{
	uint32_t i;

	for (i = 0; i < a->n_threads; i++) {
		struct an_thread *t = a->threads[i];

		an_gap_settle(a, t);
		for (uint32_t j = 0; j < t->depth; j++) {
			if (t->stack[j].lost) {
				a->st.spanning++;
				t->stack[j].fn->tally.spanning++;
			} else {
				a->st.unmatched_entries++;
			}
		}
		for (; t->depth; t->depth--) {
			if (a->ops && a->ops->unfinished)
				a->ops->unfinished(a, t, &t->stack[t->depth - 1]);
			an_open_leave(&t->stack[t->depth - 1]);
		}
		an_open_forget(t);
		t->over = 0;
	}
}

int an_run(struct analysis *a, const char *path)
{
	struct fdrtrace_reader *rd;
	struct stat sb;
	int fd, rc = 0;
	long order = 0;

	a->path = path;
	a->sym = sym_ctx_new(a->debug_dirs, a->n_debug_dirs);
	if (!a->sym) {
		tool_err("out of memory");
		return -1;
	}
	if (a->instr_map) {
		char err[512];

		if (xmap_load(a->sym, a->instr_map, &a->xmap, err, sizeof(err))) {
			tool_err("%s", err);
			return -1;
		}
	}
	fd = tool_open_input(path);
	if (fd < 0)
		return -1;
	rd = fdrtrace_reader_open(fd);
	if (!rd) {
		tool_err("%s: %s", path, strerror(errno));
		tool_close_input(fd);
		return -1;
	}
	/* The header first: the scan needs the version and buffer size. */
	{
		struct fdrtrace_event ev;

		if (fdrtrace_reader_read(rd, &ev) != 0) {
			if (ev.state == FDRTRACE_ERROR)
				an_report(a, rd);
			else
				tool_err("%s: empty trace", path);
			fdrtrace_reader_close(rd);
			tool_close_input(fd);
			return -1;
		}
		an_event(a, &ev);
	}
	/* FDRTRACE_ANALYSIS_READER=1: one event per record (for tests). */
	a->batch = !getenv("FDRTRACE_ANALYSIS_READER");
	a->fd = fd;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && lseek(fd, 0, SEEK_CUR) >= 0)
		order = an_scan(a, (uint64_t)sb.st_size, NULL);
	else
		order = -1;
	if (order == 1) {
		/* Out of order: names and the like first, then the buffers sorted. */
		a->pass_mode = 1;
		an_stream(a, rd, false);
		a->cur = NULL;
		if (an_reordered(a, (uint64_t)sb.st_size)) {
			tool_err("%s: cannot read the buffers in time order", path);
			rc = -1;
		}
	} else {
		rc = an_stream(a, rd, true);
	}
	an_finish_threads(a);
	an_names_settle(a);
	fdrtrace_reader_close(rd);
	tool_close_input(fd);
	return rc;
}
