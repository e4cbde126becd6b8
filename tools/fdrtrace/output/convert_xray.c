/* SPDX-License-Identifier: MIT */
/*
 * convert_xray.c - "fdrtrace convert --format xray --tid TID FILE -o OUT":
 * one thread of a trace as a trace llvm-xray reads whole.
 *
 * llvm-xray 14 orders a thread's buffers by their WallTimeMarker with a
 * comparison that is not an ordering (seconds less *and* microseconds
 * less: lib/XRay/Trace.cpp, loadFDRLog). Buffers of one second all compare
 * equal, and its sort (unstable past 16 elements) shuffles a thread of more
 * than 16 buffers: account and stack then stop with "Error processing
 * record" on nearly every real trace, from our runtime or from LLVM's own.
 * Its account also takes threads in hash order and refuses a record older
 * than one it has seen, so a trace of several threads fails too.
 *
 * So this writes the records of one thread as one buffer: the file header;
 * one BufferExtents, NewBuffer, WallTimeMarker and Pid, those of the
 * thread's first buffer; then every record of the thread's buffers in file
 * order, each buffer's NewCPUId included (it sets the TSC base of the
 * deltas that follow; llvm-xray takes one anywhere in a buffer). The other
 * preamble records (BufferExtents, NewBuffer, WallTimeMarker, Pid) and a
 * version 1 trace's EndOfBuffer and padding are left out. Custom and typed
 * events are copied (fdrtrace's name records among them: llvm-xray skips
 * them); a version 1 trace's are left out, as their layout is not version
 * 5's and their TSC is their own (they move no base). A version 1 trace is
 * written as version 5, whose function and CPU records are the same.
 *
 * Two passes over FILE (a file, not standard input): the first adds up the
 * size the buffer will have, the second copies. Memory: the reader's.
 * Damaged buffers are not copied; the count is said.
 *
 * Contract: single-threaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "convert.h"
#include "select.h"
#include "util.h"

/* What one pass over the trace found, or copies. */
struct cx_pass {
	int32_t tid;
	bool copy;		/* the second pass: write the records */
	uint16_t version;
	uint64_t body;		/* bytes of the records kept */
	uint64_t records;	/* function records kept */
	uint64_t damaged;	/* the thread's buffers left out as damaged */
	bool seen;		/* the thread has a buffer */
	uint8_t first[3][FDRTRACE_METADATA_RECORD_SIZE];	/* its NewBuffer, WallTime, Pid */
	bool have_pid;
	struct fdrtrace_file_header hdr;
	uint32_t n_tids;	/* threads with function records, for the message */
	int32_t tids[8];
};

/* Does the event belong in the one buffer (beyond the preamble written first)? */
static bool cx_keep(const struct cx_pass *p, const struct fdrtrace_event *ev)
{
	switch (ev->type) {
	case FDRTRACE_EV_FUNCTION:
	case FDRTRACE_EV_NEW_CPU_ID:
	case FDRTRACE_EV_TSC_WRAP:
	case FDRTRACE_EV_CALL_ARGUMENT:
		return true;
	case FDRTRACE_EV_CUSTOM_EVENT:
	case FDRTRACE_EV_TYPED_EVENT:
		return p->version >= 2;
	default:
		return false;
	}
}

static void cx_note_tid(struct cx_pass *p, int32_t tid)
{
	for (uint32_t i = 0; i < p->n_tids && i < 8; i++)
		if (p->tids[i] == tid)
			return;
	if (p->n_tids < 8)
		p->tids[p->n_tids] = tid;
	p->n_tids++;
}

/* One pass over @path. Return: 0, or -1 after a message. */
static int cx_pass(const char *path, struct cx_pass *p)
{
	struct fdrtrace_reader *rd;
	struct fdrtrace_event ev;
	int fd = tool_open_input(path), rc = 0;
	bool in = false;	/* the current buffer is the thread's */

	if (fd < 0)
		return -1;
	rd = fdrtrace_reader_open(fd);
	if (!rd) {
		tool_err("out of memory");
		tool_close_input(fd);
		return -1;
	}
	for (;;) {
		if (fdrtrace_reader_read(rd, &ev) != 0) {
			if (ev.state == FDRTRACE_EOF)
				break;
			if (ev.state == FDRTRACE_ERROR && fdrtrace_reader_skip_buffer(rd) == 0) {
				p->damaged += in;
				in = false;
				continue;
			}
			{
				uint64_t off = 0;

				fdrtrace_reader_error(rd, &off);
				/* FILE:OFFSET: as verify and the other commands say it */
				fprintf(stderr, "%s:%" PRIu64 ": %s\n", path, off,
					fdrtrace_reader_errmsg(rd));
			}
			rc = -1;
			break;
		}
		switch (ev.type) {
		case FDRTRACE_EV_HEADER:
			p->version = ev.u.header.version;
			memcpy(&p->hdr, ev.raw, sizeof(p->hdr));
			continue;
		case FDRTRACE_EV_NEW_BUFFER:
			in = ev.tid == p->tid;
			if (in && !p->seen)
				memcpy(p->first[0], ev.raw, FDRTRACE_METADATA_RECORD_SIZE);
			continue;
		case FDRTRACE_EV_WALLTIME:
			if (in && !p->seen)
				memcpy(p->first[1], ev.raw, FDRTRACE_METADATA_RECORD_SIZE);
			continue;
		case FDRTRACE_EV_PID:
			if (in && !p->seen) {
				memcpy(p->first[2], ev.raw, FDRTRACE_METADATA_RECORD_SIZE);
				p->have_pid = true;
			}
			continue;
		default:
			break;
		}
		if (ev.type == FDRTRACE_EV_FUNCTION)
			cx_note_tid(p, ev.tid);
		if (!in || !cx_keep(p, &ev))
			continue;
		p->seen = true;
		p->body += ev.raw_len;
		p->records += ev.type == FDRTRACE_EV_FUNCTION;
		if (p->copy && fwrite(ev.raw, 1, ev.raw_len, stdout) != ev.raw_len) {
			rc = -1;	/* said by tool_output_close() */
			break;
		}
	}
	fdrtrace_reader_close(rd);
	tool_close_input(fd);
	return rc;
}

int cv_xray(const char *path, const struct sel_opts *sel, bool quiet)
{
	struct cx_pass p;
	struct fdrtrace_md_buffer_extents e;
	struct fdrtrace_file_header hdr;
	uint64_t size;

	if (!strcmp(path, "-"))
		return tool_usage_err("convert", "--format xray reads FILE twice: "
				      "standard input cannot be read so");
	if (sel->n_only || sel->n_hide || sel->max_depth || sel->threshold_ns || sel->have_range)
		return tool_usage_err("convert", "--format xray copies one thread's records: "
				      "only --tid selects");
	memset(&p, 0, sizeof(p));
	p.tid = sel->tid;
	if (!sel->have_tid) {
		/* the program's one thread, when it has one */
		p.tid = INT32_MIN;
		if (cx_pass(path, &p))
			return EXIT_FAIL;
		if (p.n_tids != 1) {
			char list[8 * 13 + 8] = "";

			for (uint32_t i = 0; i < p.n_tids && i < 8; i++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list),
					 "%s%" PRId32, i ? ", " : "", p.tids[i]);
			if (!p.n_tids) {
				tool_err("%s: no thread has function records", path);
				return EXIT_FAIL;
			}
			tool_err("%s: %" PRIu32 " threads have function records (%s%s); llvm-xray "
				 "reads one thread per file: give --tid TID", path, p.n_tids, list,
				 p.n_tids > 8 ? ", ..." : "");
			return EXIT_USAGE;
		}
		p.tid = p.tids[0];
		p.n_tids = 0;
	}
	if (cx_pass(path, &p))
		return EXIT_FAIL;
	if (!p.seen) {
		tool_err("%s: thread %" PRId32 " has no records", path, p.tid);
		return EXIT_FAIL;
	}
	hdr = p.hdr;
	if (hdr.version < 2)
		hdr.version = 5;	/* BufferExtents; the records are version 1's */
	size = 2 * FDRTRACE_METADATA_RECORD_SIZE + (p.have_pid ? FDRTRACE_METADATA_RECORD_SIZE : 0) +
	       p.body;
	memset(&e, 0, sizeof(e));
	e.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_BUFFER_EXTENTS);
	e.size = size;
	fwrite(&hdr, 1, sizeof(hdr), stdout);
	fwrite(&e, 1, sizeof(e), stdout);
	fwrite(p.first[0], 1, FDRTRACE_METADATA_RECORD_SIZE, stdout);
	fwrite(p.first[1], 1, FDRTRACE_METADATA_RECORD_SIZE, stdout);
	if (p.have_pid)
		fwrite(p.first[2], 1, FDRTRACE_METADATA_RECORD_SIZE, stdout);
	{
		uint64_t body = p.body;

		p.copy = true;
		p.body = 0;
		p.records = 0;
		p.damaged = 0;
		p.seen = false;
		if (cx_pass(path, &p))
			return EXIT_FAIL;
		if (p.body != body) {
			tool_err("%s: the file changed while it was read", path);
			return EXIT_FAIL;
		}
	}
	if (!quiet)
		fprintf(stderr, "fdrtrace convert: thread %" PRId32 ": %" PRIu64 " function records in "
			"one buffer of %" PRIu64 " bytes", p.tid, p.records, size);
	if (p.damaged)
		fprintf(stderr, "%s%" PRIu64 " damaged buffers of the thread left out", quiet ?
			"fdrtrace convert: " : "; ", p.damaged);
	if (!quiet || p.damaged)
		fputc('\n', stderr);
	return EXIT_OK;
}
