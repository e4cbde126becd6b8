/* SPDX-License-Identifier: MIT */
/*
 * fdrtrace/format.h - the on-disk trace format, written down once.
 *
 * fdrtrace writes and reads LLVM XRay's Flight Data Recorder (FDR) format,
 * versions 1 to 5. A trace is a 32-byte file header followed by a stream of
 * 8-byte function records and 16-byte metadata records; some metadata
 * records (custom and typed events) are followed by a payload of the size
 * they announce. Nothing is aligned: a reader walks the stream as a state
 * machine and never seeks. docs/format.md has the byte tables and the
 * grammar; this header is the single source of the layouts, and every
 * layout carries _Static_asserts on its size and field offsets.
 *
 * All multi-byte fields are little-endian (the only byte order fdrtrace
 * produces or accepts: the format follows the producing host, and we run on
 * x86-64). The structs below are packed images of the bytes; read them with
 * memcpy into a local, never through a cast pointer into a byte stream.
 *
 * Our own additions (modules, function names, drops, the close marker, ...)
 * live inside custom-event payloads that start with FDRTRACE_EXT_MAGIC, so
 * that every trace we write stays plain FDR for other readers. Custom events
 * without that magic are the application's and pass through untouched.
 */
#ifndef FDRTRACE_FORMAT_H
#define FDRTRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FDRTRACE_PACKED __attribute__((packed))

/* ------------------------------------------------------------------ */
/* File header                                                         */
/* ------------------------------------------------------------------ */

/* Versions of the FDR layout this header describes (and the reader reads). */
#define FDRTRACE_FDR_VERSION_MIN 1
#define FDRTRACE_FDR_VERSION_MAX 5

/* The "type" field: 0 is XRay basic (naive) mode, 1 is FDR. */
enum fdrtrace_log_type {
	FDRTRACE_LOG_BASIC = 0,
	FDRTRACE_LOG_FDR = 1,
};

/* Bits of the header bitfield. The other 30 bits are reserved. */
#define FDRTRACE_HDR_CONSTANT_TSC (1u << 0)
#define FDRTRACE_HDR_NONSTOP_TSC (1u << 1)

/**
 * struct fdrtrace_file_header - the 32 bytes every trace begins with
 * @version: FDR layout version, 1 to 5
 * @type: enum fdrtrace_log_type; fdrtrace reads only FDRTRACE_LOG_FDR
 * @bitfield: FDRTRACE_HDR_CONSTANT_TSC | FDRTRACE_HDR_NONSTOP_TSC
 * @cycle_frequency: ticks per second of the clock behind every TSC value
 * @buffer_size: the writer's buffer size in bytes. In version 1 every buffer
 *	occupies exactly this many bytes of the file (EndOfBuffer, then padding
 *	up to the boundary). In later versions it is informational.
 * @reserved: unused, zero when fdrtrace writes it
 */
struct fdrtrace_file_header {
	uint16_t version;
	uint16_t type;
	uint32_t bitfield;
	uint64_t cycle_frequency;
	uint64_t buffer_size;
	uint8_t reserved[8];
} FDRTRACE_PACKED;

_Static_assert(sizeof(struct fdrtrace_file_header) == 32, "file header is 32 bytes");
_Static_assert(offsetof(struct fdrtrace_file_header, version) == 0, "version at 0");
_Static_assert(offsetof(struct fdrtrace_file_header, type) == 2, "type at 2");
_Static_assert(offsetof(struct fdrtrace_file_header, bitfield) == 4, "bitfield at 4");
_Static_assert(offsetof(struct fdrtrace_file_header, cycle_frequency) == 8, "freq at 8");
_Static_assert(offsetof(struct fdrtrace_file_header, buffer_size) == 16, "buffer_size at 16");
_Static_assert(offsetof(struct fdrtrace_file_header, reserved) == 24, "reserved at 24");

/* ------------------------------------------------------------------ */
/* Function records: 8 bytes                                           */
/* ------------------------------------------------------------------ */

#define FDRTRACE_FUNC_RECORD_SIZE 8

/* Function record actions (bits 1..3 of byte 0). */
enum fdrtrace_func_action {
	FDRTRACE_FN_ENTRY = 0,
	FDRTRACE_FN_EXIT = 1,
	FDRTRACE_FN_TAIL_EXIT = 2,
	FDRTRACE_FN_ENTRY_ARGS = 3,
};

/* The function id field is 28 bits wide. */
#define FDRTRACE_FUNC_ID_BITS 28
#define FDRTRACE_FUNC_ID_MAX ((1u << FDRTRACE_FUNC_ID_BITS) - 1)

/**
 * struct fdrtrace_func_record - one function entry or exit
 * @word: bit 0 discriminant (0), bits 1..3 action, bits 4..31 function id
 * @tsc_delta: ticks since the previous TSC reference of this buffer
 */
struct fdrtrace_func_record {
	uint32_t word;
	uint32_t tsc_delta;
} FDRTRACE_PACKED;

_Static_assert(sizeof(struct fdrtrace_func_record) == FDRTRACE_FUNC_RECORD_SIZE, "8 bytes");
_Static_assert(offsetof(struct fdrtrace_func_record, tsc_delta) == 4, "delta at 4");

static inline __attribute__((no_instrument_function)) uint32_t
fdrtrace_func_word(enum fdrtrace_func_action action, uint32_t func_id)
{
	return ((uint32_t)action << 1) | (func_id << 4);
}

static inline __attribute__((no_instrument_function)) unsigned
fdrtrace_func_word_action(uint32_t word)
{
	return (word >> 1) & 0x7u;
}

static inline __attribute__((no_instrument_function)) uint32_t
fdrtrace_func_word_id(uint32_t word)
{
	return word >> 4;
}

/* ------------------------------------------------------------------ */
/* Metadata records: 16 bytes                                          */
/* ------------------------------------------------------------------ */

#define FDRTRACE_METADATA_RECORD_SIZE 16

/* Metadata record kinds (bits 1..7 of byte 0). 0..6 are version 1. */
enum fdrtrace_md_kind {
	FDRTRACE_MD_NEW_BUFFER = 0,
	FDRTRACE_MD_END_OF_BUFFER = 1,	/* version 1 only */
	FDRTRACE_MD_NEW_CPU_ID = 2,
	FDRTRACE_MD_TSC_WRAP = 3,
	FDRTRACE_MD_WALLTIME = 4,
	FDRTRACE_MD_CUSTOM_EVENT = 5,
	FDRTRACE_MD_CALL_ARGUMENT = 6,
	FDRTRACE_MD_BUFFER_EXTENTS = 7,	/* version 2 and later */
	FDRTRACE_MD_TYPED_EVENT = 8,	/* version 5 */
	FDRTRACE_MD_PID = 9,		/* version 3 and later */
	FDRTRACE_MD_KIND_COUNT
};

/* Byte 0 of a metadata record of kind @kind. */
#define FDRTRACE_MD_TYPE_BYTE(kind) ((uint8_t)(((kind) << 1) | 1u))

/**
 * struct fdrtrace_md_record - any metadata record, undecoded
 * @type: bit 0 discriminant (1), bits 1..7 enum fdrtrace_md_kind
 * @data: kind-dependent; unused bytes are "reserved" and written as zero
 */
struct fdrtrace_md_record {
	uint8_t type;
	uint8_t data[15];
} FDRTRACE_PACKED;

_Static_assert(sizeof(struct fdrtrace_md_record) == FDRTRACE_METADATA_RECORD_SIZE, "16 bytes");

/*
 * NewBuffer: the first record of every buffer (after BufferExtents in v2+).
 * Version 1's document gives the thread id 2 bytes; every writer we know,
 * LLVM's included, stores a 32-bit tid, and so do we.
 */
struct fdrtrace_md_new_buffer {
	uint8_t type;
	int32_t tid;
	uint8_t reserved[11];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_new_buffer) == 16, "16 bytes");
_Static_assert(offsetof(struct fdrtrace_md_new_buffer, tid) == 1, "tid at 1");

/* EndOfBuffer (v1): no fields; the rest of the buffer is padding. */
struct fdrtrace_md_end_of_buffer {
	uint8_t type;
	uint8_t reserved[15];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_end_of_buffer) == 16, "16 bytes");

/* NewCPUId: the thread runs on @cpu from now on; @tsc is the new reference. */
struct fdrtrace_md_new_cpu_id {
	uint8_t type;
	uint16_t cpu;
	uint64_t tsc;
	uint8_t reserved[5];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_new_cpu_id) == 16, "16 bytes");
_Static_assert(offsetof(struct fdrtrace_md_new_cpu_id, cpu) == 1, "cpu at 1");
_Static_assert(offsetof(struct fdrtrace_md_new_cpu_id, tsc) == 3, "tsc at 3");

/* TSCWrap: a new absolute TSC reference (delta overflow, or TSC went back). */
struct fdrtrace_md_tsc_wrap {
	uint8_t type;
	uint64_t tsc;
	uint8_t reserved[7];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_tsc_wrap) == 16, "16 bytes");
_Static_assert(offsetof(struct fdrtrace_md_tsc_wrap, tsc) == 1, "tsc at 1");

/*
 * WallTimeMarker: the wall-clock time at the buffer's start. The second
 * field is microseconds in the format document and in LLVM's runtime;
 * fdrtrace writes microseconds too (0..999999).
 */
struct fdrtrace_md_walltime {
	uint8_t type;
	uint64_t seconds;
	uint32_t micros;
	uint8_t reserved[3];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_walltime) == 16, "16 bytes");
_Static_assert(offsetof(struct fdrtrace_md_walltime, seconds) == 1, "seconds at 1");
_Static_assert(offsetof(struct fdrtrace_md_walltime, micros) == 9, "micros at 9");

/* CallArgument: one argument of the preceding Entry_Args record. */
struct fdrtrace_md_call_argument {
	uint8_t type;
	uint64_t arg;
	uint8_t reserved[7];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_call_argument) == 16, "16 bytes");
_Static_assert(offsetof(struct fdrtrace_md_call_argument, arg) == 1, "arg at 1");

/*
 * BufferExtents (v2+): the number of bytes of this buffer that follow the
 * extents record itself (the preamble, records and payloads).
 */
struct fdrtrace_md_buffer_extents {
	uint8_t type;
	uint64_t size;
	uint8_t reserved[7];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_buffer_extents) == 16, "16 bytes");
_Static_assert(offsetof(struct fdrtrace_md_buffer_extents, size) == 1, "size at 1");

/* Pid (v3+): the process id, right after the WallTimeMarker. */
struct fdrtrace_md_pid {
	uint8_t type;
	int32_t pid;
	uint8_t reserved[11];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_pid) == 16, "16 bytes");
_Static_assert(offsetof(struct fdrtrace_md_pid, pid) == 1, "pid at 1");

/*
 * CustomEventMarker, three layouts. @size payload bytes follow the record.
 *   v1..v3: size, absolute TSC
 *   v4:     size, absolute TSC, CPU
 *   v5:     size, TSC delta (like a function record's; it moves the reference)
 */
struct fdrtrace_md_custom_event_v1 {
	uint8_t type;
	int32_t size;
	uint64_t tsc;
	uint8_t reserved[3];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_custom_event_v1) == 16, "16 bytes");
_Static_assert(offsetof(struct fdrtrace_md_custom_event_v1, size) == 1, "size at 1");
_Static_assert(offsetof(struct fdrtrace_md_custom_event_v1, tsc) == 5, "tsc at 5");

struct fdrtrace_md_custom_event_v4 {
	uint8_t type;
	int32_t size;
	uint64_t tsc;
	uint16_t cpu;
	uint8_t reserved[1];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_custom_event_v4) == 16, "16 bytes");
_Static_assert(offsetof(struct fdrtrace_md_custom_event_v4, cpu) == 13, "cpu at 13");

struct fdrtrace_md_custom_event_v5 {
	uint8_t type;
	int32_t size;
	int32_t delta;
	uint8_t reserved[7];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_custom_event_v5) == 16, "16 bytes");
_Static_assert(offsetof(struct fdrtrace_md_custom_event_v5, size) == 1, "size at 1");
_Static_assert(offsetof(struct fdrtrace_md_custom_event_v5, delta) == 5, "delta at 5");

/* TypedEventMarker (v5): size, TSC delta, event type; @size payload bytes follow. */
struct fdrtrace_md_typed_event {
	uint8_t type;
	int32_t size;
	int32_t delta;
	uint16_t event_type;
	uint8_t reserved[5];
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_md_typed_event) == 16, "16 bytes");
_Static_assert(offsetof(struct fdrtrace_md_typed_event, delta) == 5, "delta at 5");
_Static_assert(offsetof(struct fdrtrace_md_typed_event, event_type) == 9, "type at 9");

/* ------------------------------------------------------------------ */
/* fdrtrace extension records, carried in custom-event payloads        */
/* ------------------------------------------------------------------ */

/*
 * Every payload of ours starts with this 8-byte header; the body follows.
 * Body fields are little-endian and packed. A string is a uint16_t byte
 * count followed by that many bytes, no terminating NUL. A reader skips an
 * extension whose version it does not know, and a kind it does not know,
 * using @body_len; extensions only ever append fields to a body, so a
 * reader of an older version reads the prefix it knows and ignores the rest.
 */
#define FDRTRACE_EXT_MAGIC "FDRx"
#define FDRTRACE_EXT_MAGIC_LEN 4
#define FDRTRACE_EXT_VERSION 1

struct fdrtrace_ext_header {
	char magic[4];
	uint8_t version;
	uint8_t kind;
	uint16_t body_len;
} FDRTRACE_PACKED;
_Static_assert(sizeof(struct fdrtrace_ext_header) == 8, "8 bytes");
_Static_assert(offsetof(struct fdrtrace_ext_header, kind) == 5, "kind at 5");
_Static_assert(offsetof(struct fdrtrace_ext_header, body_len) == 6, "len at 6");

/*
 * Extension kinds, with their bodies (u8/u16/u32/u64 little-endian, str as
 * above). docs/format.md has the byte tables.
 */
enum fdrtrace_ext_kind {
	/* pid u32, ppid u32, start_realtime_ns u64, clock u8, freq_source u8,
	 * program str, then (writers since 2026-12-01) start_tsc u64 (the
	 * trace clock when recording began in the process), argc u32 and
	 * args str: the command line, each argument ended by a NUL byte
	 * (fewer than argc NULs: the arguments were cut to fit) */
	FDRTRACE_EXT_PROCESS = 1,
	/* pairs u16, then pairs of (key str, value str): the run's configuration */
	FDRTRACE_EXT_CONFIG = 2,
	/* module_id u32, load_base u64, size u64, build_id_len u8,
	 * build_id[build_id_len], path str */
	FDRTRACE_EXT_MODULE_MAP = 3,
	/* module_id u32, load_base u64, size u64 */
	FDRTRACE_EXT_MODULE_UNMAP = 4,
	/* func_id u32, address u64, module_id u32 (0xffffffff: unknown), name str */
	FDRTRACE_EXT_FUNC = 5,
	/* tid u32, name str */
	FDRTRACE_EXT_THREAD_NAME = 6,
	/* tid u32 (0: process-wide), reason u8 (enum fdrtrace_drop_reason),
	 * records u64, buffers u64. A *gap* (records lost in the middle of a
	 * thread's records, written in that thread's buffer where recording
	 * resumed) appends: first_tsc u64, last_tsc u64 (of the first and the
	 * last record lost), exited u32 (calls open before the gap that
	 * returned in it; FDRTRACE_GAP_UNKNOWN: not known), depth u32, then
	 * depth function ids u32, outermost first (calls entered in the gap
	 * and still open when recording resumed). */
	FDRTRACE_EXT_DROP = 7,
	/* parent_pid u32, child_pid u32, then (writers since 2026-12-01)
	 * parent_tid u32, tsc u64 (the forking thread's clock at the fork)
	 * and serial u32: the FDRTRACE_EXT_SPAWN record of the parent's trace
	 * with the same serial marks the fork there. In the child's trace. */
	FDRTRACE_EXT_FORK = 8,
	/* pid u32, path str, then (writers since 2026-12-01) tid u32 and
	 * tsc u64: the thread that called exec and its clock then. In the
	 * trace of the image that exec replaced. */
	FDRTRACE_EXT_EXEC = 9,
	/* how u8 (enum fdrtrace_close_how), records u64, records_dropped u64,
	 * buffers u64, buffers_dropped u64, threads u32, cycle_frequency u64
	 * (the refined value), end_realtime_ns u64, then (writers since
	 * 2026-11-26) records_left_out u64 and (since 2026-11-27) error u32:
	 * the errno of the write that failed when how is
	 * FDRTRACE_CLOSE_STOPPED, else 0, then (since 2026-12-01) end u8
	 * (enum fdrtrace_end) and end_value u32: how the process ended, its
	 * exit status or the signal that ended it. The last extension of a
	 * trace that was closed by the runtime. */
	FDRTRACE_EXT_CLOSE = 10,
	/* tid u32, depth u32, then depth function ids u32, outermost first:
	 * the calls open on the thread when the buffer was started. Ring
	 * policy appends the buffer's place in its thread's records:
	 * buffer_no u64 (the thread's buffers from 1), records_before u64
	 * (function records in its earlier buffers), skipped u32 (outer calls
	 * left out of the ids). */
	FDRTRACE_EXT_STACK = 11,
	/* tid u32, why u8 (enum fdrtrace_native_why), signal u8 (0: none),
	 * fault_address u64 (si_addr; 0 unless a signal gave one), depth u32,
	 * then depth frames of (address u64, module_id u32), innermost first:
	 * the thread's native stack (libunwind), instrumented or not. Frame 0
	 * of a signal stack is the interrupted instruction; every other
	 * address is a return address (look up address - 1 to name it). */
	FDRTRACE_EXT_NATIVE_STACK = 12,
	/* tid u32, first_tsc u64, last_tsc u64: on_full=wait, the thread waited
	 * for a free buffer from first_tsc to last_tsc (nothing was lost) */
	FDRTRACE_EXT_WAIT = 13,
	/* tid u32, tsc u64, serial u32, child_pid u32 (0: not known when
	 * written): the thread forked there, its clock then; serial counts
	 * the process's forks from 1 and matches the child's
	 * FDRTRACE_EXT_FORK. Written in the forking thread's records. */
	FDRTRACE_EXT_SPAWN = 14,
	/* func_id u32, tsc u64 (the clock when it was decided), calls u32
	 * and sum_ticks u64 (the evidence: the calls timed so far and their
	 * total duration), threshold_ticks u64 (auto_exclude's DURATION),
	 * after u32 (its N), undone u8: auto_exclude decided that the
	 * function's later calls are counted, not recorded
	 * (FDRTRACE_EXT_COUNTED); undone 1: that they are timed again, a
	 * counted function whose sampled calls were no longer short (calls
	 * and sum_ticks: those samples). In a runtime buffer. */
	FDRTRACE_EXT_EXCLUDED = 15,
	/* tid u32 (0: threads that ended, and counts no thread's table held),
	 * lost u64 (calls neither recorded nor counted: every table was full;
	 * nonzero means the counts are short by that many, in all), count
	 * u32, then count pairs of (func_id u32, calls u64): calls counted,
	 * not recorded, since the thread's previous FDRTRACE_EXT_COUNTED of
	 * the same tid in this trace (a reader adds them up). In a runtime
	 * buffer. */
	FDRTRACE_EXT_COUNTED = 16,
	FDRTRACE_EXT_KIND_COUNT
};

/* Why records were lost (FDRTRACE_EXT_DROP). */
enum fdrtrace_drop_reason {
	FDRTRACE_DROP_POOL_EMPTY = 1,	/* no free buffer when a thread needed one */
	FDRTRACE_DROP_REENTRY = 2,	/* hook re-entered (signal handler, runtime) */
	FDRTRACE_DROP_BEFORE_INIT = 3,	/* hook ran before the runtime was ready */
	FDRTRACE_DROP_AFTER_FINI = 4,	/* hook ran after the runtime finished */
	FDRTRACE_DROP_OVERWRITTEN = 5,	/* ring policy overwrote the buffer */
	FDRTRACE_DROP_IO_ERROR = 6,	/* the file could not take the buffer */
	FDRTRACE_DROP_FILTERED = 7,	/* not recorded on purpose (counted only) */
	FDRTRACE_DROP_REASON_COUNT
};

/* FDRTRACE_EXT_DROP gap: what the runtime could not follow (exited, depth). */
#define FDRTRACE_GAP_UNKNOWN 0xffffffffu

/* How a trace ended (FDRTRACE_EXT_CLOSE). */
enum fdrtrace_close_how {
	FDRTRACE_CLOSE_EXIT = 1,	/* normal exit: return from main, exit() */
	FDRTRACE_CLOSE_SIGNAL = 2,	/* a fatal signal; what was in memory */
	FDRTRACE_CLOSE_SNAPSHOT = 3,	/* a snapshot; the program went on */
	FDRTRACE_CLOSE_STOPPED = 4,	/* a write failed: recording stopped there, the program went on */
};

/* How the process ended (FDRTRACE_EXT_CLOSE.end). */
enum fdrtrace_end {
	FDRTRACE_END_UNKNOWN = 0,	/* not known (a snapshot, an older writer) */
	FDRTRACE_END_EXITED = 1,	/* exit(), _exit(), return from main: end_value is the status */
	FDRTRACE_END_SIGNALED = 2,	/* killed by a signal: end_value is its number */
	FDRTRACE_END_EXECED = 3,	/* the image was replaced by exec (FDRTRACE_EXT_EXEC) */
};

/* Why a native stack was taken (FDRTRACE_EXT_NATIVE_STACK). */
enum fdrtrace_native_why {
	FDRTRACE_NATIVE_SIGNAL = 1,	/* a fatal signal: the faulting thread, at the fault */
	FDRTRACE_NATIVE_START = 2,	/* fdrtrace_start(): its caller's stack */
	/*
	 * a fault's signal (SEGV, BUS, ILL, FPE, ABRT) sent by
	 * another process (kill -SEGV): the thread that took it, where it was
	 * (writers since 2026-11-26; before, such a stack was SIGNAL)
	 */
	FDRTRACE_NATIVE_SENT = 3,
};

/* Bytes of one frame of FDRTRACE_EXT_NATIVE_STACK: address u64, module_id u32. */
#define FDRTRACE_NATIVE_FRAME_SIZE 12
/* Bytes of its body before the frames. */
#define FDRTRACE_NATIVE_HEAD_SIZE 18

/* Clock sources (FDRTRACE_EXT_PROCESS.clock). */
enum fdrtrace_clock_source {
	FDRTRACE_CLOCK_RDTSCP = 1,
	FDRTRACE_CLOCK_RDTSC = 2,
	FDRTRACE_CLOCK_MONOTONIC = 3,
};

/* Where the cycle frequency came from (FDRTRACE_EXT_PROCESS.freq_source). */
enum fdrtrace_freq_source {
	FDRTRACE_FREQ_CPUID = 1,
	FDRTRACE_FREQ_SYSFS = 2,
	FDRTRACE_FREQ_CALIBRATED = 3,
	FDRTRACE_FREQ_FIXED = 4,	/* CLOCK_MONOTONIC_RAW: 1 GHz by definition */
};

#ifdef __cplusplus
}
#endif

#endif /* FDRTRACE_FORMAT_H */
