/* SPDX-License-Identifier: MIT */
/*
 * fdrtrace/reader.h - the streaming trace reader.
 *
 * A reader parses an FDR trace (versions 1 to 5) one record at a time, in
 * the shape of FreeBSD's pmclog(3): open it on a file descriptor, or on
 * memory that the caller hands over piece by piece with
 * fdrtrace_reader_feed(); call fdrtrace_reader_read() until it stops
 * returning 0 and look at the state it left in the event. Consumers that
 * spend their time on function records take runs of them at once with
 * fdrtrace_reader_read_functions(), and everything else one event at a
 * time: the reader enforces the same rules on both paths.
 *
 * The reader never seeks and its memory does not grow with the size of the
 * trace: it holds one record (plus, at most, one custom-event payload, capped
 * at FDRTRACE_READER_MAX_PAYLOAD bytes). It enforces the grammar of the
 * format (docs/format.md) and stops at the first violation with the byte
 * offset, what it expected and what it found. Errors are sticky; where the
 * end of the damaged buffer is known, fdrtrace_reader_skip_buffer() resumes
 * at the next one.
 *
 * Events come out expanded: the absolute TSC rebuilt from deltas, TSCWrap
 * and NewCPUId applied, the wall-clock time derived from the buffer's
 * WallTimeMarker and the header's cycle_frequency, and the thread, process
 * and CPU of the buffer attached to every event.
 *
 * The grammar it enforces, per version (checked against LLVM's writer and
 * its BlockVerifier):
 *   v1:  NewBuffer WallTimeMarker NewCPUId Body* [EndOfBuffer Padding],
 *        each buffer exactly header.buffer_size bytes from its NewBuffer
 *        (EndOfBuffer may be left out when the records fill the buffer);
 *   v2+: BufferExtents NewBuffer WallTimeMarker [Pid (v3+)] NewCPUId Body*,
 *        ending exactly where the extents say; an extents of 0 bytes is an
 *        empty buffer (LLVM never writes one, and its reader skips it).
 *   Body: NewCPUId | TSCWrap | Function | CallArgument (only after an
 *        Entry_Args function or another CallArgument) | CustomEvent |
 *        TypedEvent (v5).
 * Custom and typed event sizes of 0 are accepted (LLVM's reader refuses
 * them, its writer never produces them).
 *
 * Thread safety: a reader belongs to one thread at a time.
 */
#ifndef FDRTRACE_READER_H
#define FDRTRACE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fdrtrace/format.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Pass as fd to fdrtrace_reader_open() for a reader fed from memory. */
#define FDRTRACE_FD_NONE (-1)

/* Largest custom/typed event payload the reader will hold (bytes). */
#define FDRTRACE_READER_MAX_PAYLOAD (64u << 20)

/*
 * Version 1 padding (the bytes between EndOfBuffer and the buffer boundary)
 * comes out as FDRTRACE_EV_PADDING events of at most this many bytes each,
 * cut at fixed distances from the padding's start, so that the events are
 * the same however the input was split, and memory stays bounded.
 */
#define FDRTRACE_READER_PADDING_PIECE 4096u

/* The parser state left in fdrtrace_event.state by every read. */
enum fdrtrace_state {
	FDRTRACE_OK = 0,		/* a complete event is in the struct */
	FDRTRACE_EOF = 1,		/* clean end of the trace, at a buffer boundary */
	FDRTRACE_ERROR = 2,		/* malformed, truncated or unreadable input */
	FDRTRACE_REQUIRE_DATA = 3,	/* memory reader: feed more, then read again */
};

/* What an event is. One per record, plus the header and v1 padding. */
enum fdrtrace_event_type {
	FDRTRACE_EV_HEADER = 0,		/* the 32-byte file header */
	FDRTRACE_EV_FUNCTION,		/* an 8-byte function record */
	FDRTRACE_EV_NEW_BUFFER,
	FDRTRACE_EV_END_OF_BUFFER,
	FDRTRACE_EV_NEW_CPU_ID,
	FDRTRACE_EV_TSC_WRAP,
	FDRTRACE_EV_WALLTIME,
	FDRTRACE_EV_CUSTOM_EVENT,	/* marker and its payload */
	FDRTRACE_EV_CALL_ARGUMENT,
	FDRTRACE_EV_BUFFER_EXTENTS,
	FDRTRACE_EV_TYPED_EVENT,	/* marker and its payload */
	FDRTRACE_EV_PID,
	FDRTRACE_EV_PADDING,		/* v1: the bytes after EndOfBuffer up to the boundary */
	FDRTRACE_EV_TYPE_COUNT
};

/* Why the reader stopped with FDRTRACE_ERROR (see fdrtrace_reader_errmsg()). */
enum fdrtrace_error {
	FDRTRACE_E_NONE = 0,
	FDRTRACE_E_IO,			/* read(2) failed; errno in fdrtrace_reader_errno() */
	FDRTRACE_E_NOMEM,		/* an allocation failed */
	FDRTRACE_E_TRUNCATED,		/* the input ended inside a record or buffer */
	FDRTRACE_E_BAD_HEADER,		/* too short, or fields that make no sense */
	FDRTRACE_E_UNSUPPORTED,		/* a valid XRay log we do not read (basic mode, version) */
	FDRTRACE_E_GRAMMAR,		/* a record where the grammar forbids it */
	FDRTRACE_E_BAD_KIND,		/* an unknown metadata record kind */
	FDRTRACE_E_BAD_SIZE,		/* a size field that cannot be right */
	FDRTRACE_E_OVERRUN,		/* a record or payload crosses its buffer's end */
	FDRTRACE_E_USAGE,		/* the API was misused (feed on a file reader, ...) */
	FDRTRACE_E_COUNT
};

/**
 * struct fdrtrace_event - one parsed record, expanded
 * @state: enum fdrtrace_state; the fields below are valid only for FDRTRACE_OK
 * @offset: byte offset of the record in the stream (0 is the file header)
 * @serial: serial number of this event, from 0
 * @size: bytes of the stream the event covers (record plus payload/padding)
 * @type: enum fdrtrace_event_type
 * @version: the trace's FDR version (from the header)
 * @tsc: absolute TSC after this record (0 before the first reference).
 *	NewCPUId and TSCWrap set the reference; function records and v5
 *	custom/typed events add their delta to it. A v1..v4 custom event
 *	carries its own absolute TSC: @tsc is that value, and (as in LLVM)
 *	the reference for later records does not change.
 * @wall_ns: wall-clock time of @tsc in ns since the epoch of the buffer's
 *	WallTimeMarker: the marker's time plus (@tsc - the buffer's first TSC
 *	reference) / cycle_frequency (never 0: the reader refuses that header);
 *	0 when the buffer has no WallTimeMarker yet
 * @tid: thread id of the current buffer (0 outside buffers)
 * @pid: process id (the Pid record of the buffer, 0 when unknown)
 * @cpu: CPU from the last NewCPUId in the buffer; a v4 custom event
 *	reports its own CPU here without changing the buffer's
 * @buffer: index of the current buffer, from 0 (0 for the file header).
 *	A buffer starts at its BufferExtents (v2+) or NewBuffer (v1).
 * @raw: the record's bytes (header, record, then payload; for padding, the
 *	padding piece); valid until the next call on the reader
 * @raw_len: bytes at @raw (always equal to @size)
 * @u: per-type fields
 */
struct fdrtrace_event {
	enum fdrtrace_state state;
	uint64_t offset;
	uint64_t serial;
	uint64_t size;
	enum fdrtrace_event_type type;
	uint16_t version;
	uint64_t tsc;
	uint64_t wall_ns;
	int32_t tid;
	int32_t pid;
	uint16_t cpu;
	uint64_t buffer;
	const uint8_t *raw;
	size_t raw_len;
	union {
		/* FDRTRACE_EV_HEADER */
		struct {
			uint16_t version;
			uint16_t type;
			uint32_t bitfield;
			uint64_t cycle_frequency;
			uint64_t buffer_size;
		} header;
		/* FDRTRACE_EV_FUNCTION */
		struct {
			enum fdrtrace_func_action action;
			uint32_t func_id;
			uint32_t delta;
		} func;
		/* FDRTRACE_EV_NEW_BUFFER: @tid above */
		/* FDRTRACE_EV_NEW_CPU_ID and FDRTRACE_EV_TSC_WRAP */
		struct {
			uint16_t cpu;	/* NewCPUId only */
			uint64_t tsc;
		} ref;
		/* FDRTRACE_EV_WALLTIME */
		struct {
			uint64_t seconds;
			uint32_t micros;
		} walltime;
		/* FDRTRACE_EV_CALL_ARGUMENT */
		struct {
			uint64_t arg;
		} arg;
		/* FDRTRACE_EV_BUFFER_EXTENTS */
		struct {
			uint64_t size;
		} extents;
		/* FDRTRACE_EV_PID: @pid above */
		/* FDRTRACE_EV_CUSTOM_EVENT and FDRTRACE_EV_TYPED_EVENT */
		struct {
			uint32_t size;		/* payload bytes */
			const uint8_t *data;	/* the payload */
			int32_t delta;		/* v5 custom and typed events */
			uint16_t event_type;	/* typed events */
		} event;
		/* FDRTRACE_EV_PADDING: @size bytes, at @raw */
	} u;
};

struct fdrtrace_reader;

/**
 * fdrtrace_reader_open - allocate a reader
 * @fd: a descriptor open for reading, or FDRTRACE_FD_NONE to feed memory
 *
 * The reader does not own @fd and never seeks it.
 *
 * Return: the reader, or NULL with errno ENOMEM.
 */
struct fdrtrace_reader *fdrtrace_reader_open(int fd);

/**
 * fdrtrace_reader_feed - hand a memory reader its next bytes
 * @r: a reader opened on FDRTRACE_FD_NONE
 * @data: the bytes; they must stay valid until the next read returns
 *	FDRTRACE_REQUIRE_DATA, FDRTRACE_EOF or FDRTRACE_ERROR
 * @len: number of bytes; 0 marks the end of the stream
 *
 * Feed once before the first read, then again each time a read returns
 * FDRTRACE_REQUIRE_DATA (the reader has then used every byte it was given;
 * a record split between two feeds is staged inside the reader).
 *
 * Return: 0; -EINVAL on a file reader, after the end was marked, or for
 * NULL @data with a non-zero @len; -EBUSY while bytes of the previous feed
 * are still unread.
 */
int fdrtrace_reader_feed(struct fdrtrace_reader *r, const void *data, size_t len);

/**
 * fdrtrace_reader_read - parse the next event
 * @r: the reader
 * @ev: filled in; @ev->state is always set
 *
 * FDRTRACE_EOF comes only at a buffer boundary (between buffers). When the
 * input ends anywhere else, the read fails with FDRTRACE_E_TRUNCATED; its
 * error offset is where the data ended, and the message names the offset of
 * the incomplete buffer (or record) and how many of its bytes there were.
 *
 * Return: 0 with @ev->state FDRTRACE_OK, or -1 with @ev->state one of
 * FDRTRACE_EOF, FDRTRACE_ERROR (see fdrtrace_reader_error()) or
 * FDRTRACE_REQUIRE_DATA.
 */
int fdrtrace_reader_read(struct fdrtrace_reader *r, struct fdrtrace_event *ev);

/**
 * struct fdrtrace_func_run - plain function records handed out at once
 * @records: the records as they are in the stream (struct
 *	fdrtrace_func_record, FDRTRACE_FUNC_RECORD_SIZE bytes each); valid
 *	until the next call on the reader
 * @count: how many records, at least 1
 * @offset: stream offset of the first record (record i is at @offset + 8 i)
 * @serial: the serial number of the first record's event; the others follow
 * @tsc_before: the TSC reference before the first record: record i's event
 *	@tsc is @tsc_before plus the deltas of records 0 to i (never past 2^64:
 *	a run ends before a record whose delta would carry the TSC past it)
 * @tsc: the TSC of the last record's event, and the reference after the run
 * @first_wall_ns: wall_ns of the first record's event
 * @last_wall_ns: wall_ns of the last record's event. The TSC does not go
 *	down inside a run, so neither does wall_ns: every record's lies between
 *	the two. Either every record's wall_ns is 0 or none is.
 * @version: the trace's FDR version
 * @tid, @pid, @cpu, @buffer: as in each of these records' events
 *
 * Every record of a run is one the per-record path would have returned as
 * an FDRTRACE_EV_FUNCTION event with the same fields: an Entry, Exit or
 * TailExit record (never Entry_Args, whose CallArguments follow, nor an
 * action with no meaning), in the body of the current buffer, whole before
 * the buffer's end.
 */
struct fdrtrace_func_run {
	const uint8_t *records;
	size_t count;
	uint64_t offset;
	uint64_t serial;
	uint64_t tsc_before;
	uint64_t tsc;
	uint64_t first_wall_ns;
	uint64_t last_wall_ns;
	uint16_t version;
	int32_t tid;
	int32_t pid;
	uint16_t cpu;
	uint64_t buffer;
};

/**
 * fdrtrace_reader_read_functions - take the next function records at once
 * @r: the reader
 * @run: filled in when records are returned
 * @max: return at most this many records
 *
 * The batch path beside fdrtrace_reader_read(), for consumers that spend
 * most of their time on function records: when the next records are plain
 * function records (Entry, Exit, TailExit) that the reader holds whole and
 * contiguous, they come out as one run, without an event for each. They
 * are consumed exactly as if fdrtrace_reader_read() had returned them one
 * by one (offsets, serial numbers, TSC, state of the grammar), so the two
 * calls can be mixed freely: call this one first, and fdrtrace_reader_read()
 * whenever it returns 0.
 *
 * It returns 0, consuming nothing, wherever the next item is anything else
 * or needs the per-record path: a metadata record, an Entry_Args record, a
 * record that breaks a rule (an unknown action, one that crosses the
 * buffer's end, one where the grammar allows no function record), the end
 * of a buffer, the end of the input, a record split between two feeds (or
 * reads), a memory reader that needs feeding, a sticky error. The rules and
 * every error are therefore the per-record path's: fdrtrace_reader_read()
 * reports them, at the same offset and with the same message, whichever
 * way the records before were read. A run ends where the reader's bytes
 * end (a file reader refills its 64 KiB buffer only when it is empty), at
 * the end of the buffer, before any other record, and before a record
 * whose delta would carry the TSC past 2^64 (that record comes from the
 * per-record path) or make the first records' wall_ns 0 and later ones
 * not.
 *
 * Context: as fdrtrace_reader_read(); the records stay valid until the
 * next call on @r.
 *
 * Return: the number of records in @run (1 to @max), or 0.
 */
size_t fdrtrace_reader_read_functions(struct fdrtrace_reader *r, struct fdrtrace_func_run *run,
				      size_t max);

/**
 * fdrtrace_reader_wall_ns - the wall-clock time of a TSC in the current buffer
 * @r: the reader
 * @tsc: a TSC of the buffer the last event or run came from
 *
 * For a consumer of fdrtrace_reader_read_functions() that needs the
 * wall_ns of a record inside a run (tsc_before plus the deltas up to it):
 * the value the record's event would have carried. Valid until the next
 * buffer starts.
 *
 * Return: the time in ns since the epoch, 0 when the buffer has no
 * WallTimeMarker (as fdrtrace_event.wall_ns).
 */
uint64_t fdrtrace_reader_wall_ns(const struct fdrtrace_reader *r, uint64_t tsc);

/**
 * fdrtrace_reader_skip_buffer - resume after an error at the next buffer
 * @r: a reader whose last read returned FDRTRACE_ERROR
 *
 * Possible when the damaged buffer's end is known: its BufferExtents (v2+)
 * or the buffer_size boundary (v1). Errors in the file header, in a
 * BufferExtents record or between v2+ buffers, I/O errors and truncation
 * cannot be skipped. The reader does not seek: it reads and discards the
 * rest of the buffer. The error is cleared.
 *
 * Return: 0 when the next read continues at the next buffer, -ENOENT when
 * the error cannot be skipped.
 */
int fdrtrace_reader_skip_buffer(struct fdrtrace_reader *r);

/**
 * fdrtrace_reader_leave_buffer - step over the rest of the current buffer
 * @r: a reader inside a buffer (from its first record on: its end is
 *	known), whose last read did not fail
 *
 * For a consumer that wants only some buffers, or only their preambles
 * (an index of the buffers: where each one is, whose, its first TSC),
 * and reads the others later, each by itself (fdrtrace_reader_set_offset()).
 * The rest of the buffer is not parsed: its records are neither returned
 * nor checked. A file reader reads and discards them on the next read (it
 * never seeks), which then returns the next buffer's first event. A memory
 * reader drops every byte it holds, of this buffer and after it: its next
 * feed must start at the buffer's end, the offset it counts from there.
 *
 * Context: as fdrtrace_reader_read().
 * Return: 0; -EINVAL when @r is not inside a buffer, is already stepping
 * over one, or its last read failed.
 */
int fdrtrace_reader_leave_buffer(struct fdrtrace_reader *r);

/**
 * fdrtrace_reader_set_offset - say where the next bytes sit in the file
 * @r: a reader between buffers, with nothing of the next item read yet
 *	(after the header event, or after a buffer ended)
 * @offset: the stream offset of the next byte the reader will get
 *
 * For a caller that reads one buffer of a file by itself: it feeds the
 * file header, then the buffer's bytes from @offset. Event offsets, error
 * offsets and the offsets inside error messages are then those of the
 * file, as if the bytes in between had been read.
 *
 * Return: 0, or -EBUSY when the reader is not between buffers or holds
 * unread bytes.
 */
int fdrtrace_reader_set_offset(struct fdrtrace_reader *r, uint64_t offset);

/**
 * fdrtrace_reader_error - the reason for the last FDRTRACE_ERROR
 * @r: the reader
 * @offset: if not NULL, set to the byte offset the error refers to
 *
 * Return: enum fdrtrace_error, FDRTRACE_E_NONE if there was no error.
 */
enum fdrtrace_error fdrtrace_reader_error(const struct fdrtrace_reader *r, uint64_t *offset);

/**
 * fdrtrace_reader_errno - the errno of the last FDRTRACE_E_IO error
 * @r: the reader
 *
 * Return: the errno value read(2) failed with, 0 if none did.
 */
int fdrtrace_reader_errno(const struct fdrtrace_reader *r);

/**
 * fdrtrace_reader_errmsg - the last error as one line of text
 * @r: the reader
 *
 * The message says what was expected and what was found, without the offset
 * (callers print "FILE:OFFSET: message").
 *
 * Return: a string owned by the reader, valid until the next call on it;
 * "" if there was no error.
 */
const char *fdrtrace_reader_errmsg(const struct fdrtrace_reader *r);

/**
 * fdrtrace_reader_header - the file header, once it has been read
 * @r: the reader
 *
 * Return: the header, or NULL before the first event.
 */
const struct fdrtrace_file_header *fdrtrace_reader_header(const struct fdrtrace_reader *r);

/**
 * fdrtrace_reader_close - free a reader (not its descriptor)
 * @r: the reader, or NULL
 */
void fdrtrace_reader_close(struct fdrtrace_reader *r);

/* Names for printing: "OK", "new_buffer", "truncated", ... */
const char *fdrtrace_state_name(enum fdrtrace_state s);
const char *fdrtrace_event_type_name(enum fdrtrace_event_type t);
const char *fdrtrace_error_name(enum fdrtrace_error e);

/* ------------------------------------------------------------------ */
/* fdrtrace extension records (custom-event payloads starting "FDRx") */
/* ------------------------------------------------------------------ */

/* A length-counted string inside a payload (not NUL-terminated). */
struct fdrtrace_str {
	const char *ptr;
	uint16_t len;
};

/**
 * struct fdrtrace_ext - a decoded extension record
 * @kind: enum fdrtrace_ext_kind
 * @version: the extension's version byte
 * @body, @body_len: the raw body (for kinds this reader does not know)
 * @u: the decoded fields; pointers point into the payload
 */
struct fdrtrace_ext {
	uint8_t kind;
	uint8_t version;
	const uint8_t *body;
	uint16_t body_len;
	union {
		struct {
			uint32_t pid, ppid;
			uint64_t start_realtime_ns;
			uint8_t clock, freq_source;
			struct fdrtrace_str program;
			/* writers since 2026-12-01 (has_cmdline): the clock
			 * when recording began, and the command line: argc
			 * arguments, each ended by a NUL in args (fewer NULs
			 * than argc: cut to fit) */
			bool has_cmdline;
			uint64_t start_tsc;
			uint32_t argc;
			struct fdrtrace_str args;
		} process;
		struct {
			uint16_t pairs;
			const uint8_t *data;	/* walk with fdrtrace_ext_config_pair() */
			uint16_t data_len;
		} config;
		struct {
			uint32_t module_id;
			uint64_t load_base, size;
			uint8_t build_id_len;
			const uint8_t *build_id;
			struct fdrtrace_str path;
		} module_map;
		struct {
			uint32_t module_id;
			uint64_t load_base, size;
		} module_unmap;
		struct {
			uint32_t func_id;
			uint64_t address;
			uint32_t module_id;
			struct fdrtrace_str name;
		} func;
		struct {
			uint32_t tid;
			struct fdrtrace_str name;
		} thread_name;
		struct {
			uint32_t tid;
			uint8_t reason;
			uint64_t records, buffers;
			/* a gap: the fields below are set (format.h) */
			bool gap;
			uint64_t first_tsc, last_tsc;
			uint32_t exited;	/* FDRTRACE_GAP_UNKNOWN: not known */
			uint32_t depth;
			const uint8_t *ids;	/* depth little-endian u32s */
		} drop;
		struct {
			uint32_t parent_pid, child_pid;
			/* writers since 2026-12-01 (has_point): the fork in
			 * the parent's trace (its FDRTRACE_EXT_SPAWN) */
			bool has_point;
			uint32_t parent_tid;
			uint64_t tsc;
			uint32_t serial;
		} fork;
		struct {
			uint32_t pid;
			struct fdrtrace_str path;
			/* writers since 2026-12-01 (has_point) */
			bool has_point;
			uint32_t tid;
			uint64_t tsc;
		} exec;
		struct {
			uint8_t how;
			uint64_t records, records_dropped, buffers, buffers_dropped;
			uint32_t threads;
			uint64_t cycle_frequency;
			uint64_t end_realtime_ns;
			/* of records_dropped, left out on purpose (filters,
			 * max_depth, short calls); writers before 2026-11-26
			 * do not say (has_left_out false) */
			bool has_left_out;
			uint64_t records_left_out;
			/* how FDRTRACE_CLOSE_STOPPED: the errno of the
			 * write that failed (0: not known) */
			uint32_t error;
			/* writers since 2026-12-01 (has_end): enum
			 * fdrtrace_end, and the exit status or signal */
			bool has_end;
			uint8_t end;
			uint32_t end_value;
		} close;
		struct {
			uint32_t tid;
			uint32_t depth;
			const uint8_t *ids;	/* depth little-endian u32s */
			/* ring policy: the buffer's place in its thread's records */
			bool numbered;		/* the three fields below are set */
			uint64_t buffer_no;	/* the thread's buffers, from 1 */
			uint64_t records_before; /* function records in its earlier buffers */
			uint32_t skipped;	/* outer calls left out of ids */
		} stack;
		struct {
			uint32_t tid;
			uint8_t why;		/* enum fdrtrace_native_why */
			uint8_t signal;
			uint64_t fault_address;
			uint32_t depth;
			/* depth frames of FDRTRACE_NATIVE_FRAME_SIZE bytes, innermost
			 * first: read them with fdrtrace_ext_native_frame() */
			const uint8_t *frames;
		} native_stack;
		struct {
			uint32_t tid;
			uint64_t first_tsc, last_tsc;
		} wait;
		struct {
			uint32_t tid;
			uint64_t tsc;
			uint32_t serial;
			uint32_t child_pid;	/* 0: not known */
		} spawn;
		struct {
			/* auto_exclude decided at tsc that func_id is counted from now on */
			uint32_t func_id;
			uint64_t tsc;
			uint32_t calls;		/* the evidence: calls timed so far */
			uint64_t sum_ticks;	/* and their total duration */
			uint64_t threshold_ticks;	/* the option's DURATION */
			uint32_t after;		/* the option's N */
			/* 1: timed again from tsc on (calls, sum_ticks: the samples) */
			uint8_t undone;
		} excluded;
		struct {
			/* calls counted, not recorded, since tid's previous such record */
			uint32_t tid;		/* 0: ended threads, and what no table held */
			uint64_t lost;		/* calls neither recorded nor counted */
			uint32_t count;
			/* count pairs: read them with fdrtrace_ext_counted_pair() */
			const uint8_t *pairs;
		} counted;
	} u;
};

/**
 * fdrtrace_ext_decode - decode a custom-event payload written by fdrtrace
 * @data: the payload
 * @len: its size
 * @ext: filled in on success
 *
 * Return: 0 on success; -ENOENT when the payload is not ours (no magic: an
 * application's event, to pass through untouched); -EBADMSG when it has our
 * magic but its body is shorter than its kind requires or its length is
 * wrong; -ENOTSUP for an extension version newer than this reader (the
 * header fields of @ext are still set).
 */
int fdrtrace_ext_decode(const void *data, size_t len, struct fdrtrace_ext *ext);

/**
 * fdrtrace_ext_config_pair - walk the pairs of an FDRTRACE_EXT_CONFIG body
 * @ext: a decoded config extension
 * @pos: cursor, start at 0
 * @key: set to the next key
 * @value: set to the next value
 *
 * Return: 1 with @key/@value set, 0 at the end, -EBADMSG if malformed.
 */
int fdrtrace_ext_config_pair(const struct fdrtrace_ext *ext, size_t *pos, struct fdrtrace_str *key,
			     struct fdrtrace_str *value);

/**
 * fdrtrace_ext_native_frame - one frame of an FDRTRACE_EXT_NATIVE_STACK
 * @ext: a decoded native_stack extension
 * @i: the frame, 0 (innermost) to depth - 1
 * @address: set to its address (frame 0 of a signal stack: the interrupted
 *	instruction; any other frame: a return address)
 * @module_id: set to its module (0xffffffff when unknown)
 *
 * Return: 0, or -EINVAL when @ext is not a native stack or @i is too big.
 */
int fdrtrace_ext_native_frame(const struct fdrtrace_ext *ext, uint32_t i, uint64_t *address,
			      uint32_t *module_id);

/**
 * fdrtrace_ext_counted_pair - one pair of an FDRTRACE_EXT_COUNTED record
 * @ext: a decoded counted extension
 * @i: the pair, 0 to count - 1
 * @func_id: set to the function
 * @calls: set to its calls counted, not recorded
 *
 * Return: 0, or -EINVAL when @ext is not a counted record or @i is too big.
 */
int fdrtrace_ext_counted_pair(const struct fdrtrace_ext *ext, uint32_t i, uint32_t *func_id,
			      uint64_t *calls);

/* "process", "config", "module_map", ...; "unknown" for others. */
const char *fdrtrace_ext_kind_name(unsigned kind);
const char *fdrtrace_drop_reason_name(unsigned reason);
const char *fdrtrace_close_how_name(unsigned how);
/* "unknown", "exited", "signaled", "execed" (enum fdrtrace_end). */
const char *fdrtrace_end_name(unsigned end);
/* "signal", "start", "sent"; "unknown" for others (enum fdrtrace_native_why). */
const char *fdrtrace_native_why_name(unsigned why);

#ifdef __cplusplus
}
#endif

#endif /* FDRTRACE_READER_H */
