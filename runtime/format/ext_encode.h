/* SPDX-License-Identifier: MIT */
/*
 * runtime/format/ext_encode.h - encode fdrtrace extension payloads.
 *
 * Each function writes one complete custom-event payload (the 8-byte
 * "FDRx" header and the body of its kind, include/fdrtrace/format.h) into
 * @buf and returns its length, or 0 when @cap is too small (nothing is
 * written then). Strings longer than 65535 bytes are cut. Pure functions:
 * no allocation, no locks, async-signal-safe.
 */
#ifndef FDR_EXT_ENCODE_H
#define FDR_EXT_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

/**
 * struct fdr_ext_process_info - what a process record says
 * @pid, @ppid: the process and its parent
 * @start_realtime_ns: CLOCK_REALTIME when recording began
 * @clock, @freq_source: enum fdrtrace_clock_source, enum fdrtrace_freq_source
 * @program: the executable's path
 * @start_tsc: the trace clock when recording began
 * @argc: the number of arguments
 * @args, @args_len: the arguments, each ended by a NUL (as /proc/PID/cmdline);
 *	cut to what the record has room for
 */
struct fdr_ext_process_info {
	uint32_t pid, ppid;
	uint64_t start_realtime_ns;
	uint8_t clock, freq_source;
	const char *program;
	uint64_t start_tsc;
	uint32_t argc;
	const char *args;
	size_t args_len;
};

/**
 * fdr_ext_process() - FDRTRACE_EXT_PROCESS: the process and its start
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @pi:	what the record says (its command line cut to what fits)
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_process(uint8_t *buf, size_t cap, const struct fdr_ext_process_info *pi);

/**
 * fdr_ext_config() - FDRTRACE_EXT_CONFIG: the run's options
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @pairs:	the number of options
 * @keys, @values: @pairs strings each
 *
 * The pairs are not cut: a configuration too big for one record is not
 * written.
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_config(uint8_t *buf, size_t cap, uint16_t pairs, const char *const *keys,
		      const char *const *values);

/**
 * fdr_ext_module_map() - FDRTRACE_EXT_MODULE_MAP: a module is mapped
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @module_id:	its id in the trace
 * @load_base, @size: where it is loaded, and the span of its segments
 * @build_id, @build_id_len: its GNU build-id (NULL: none)
 * @path:	its file
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_module_map(uint8_t *buf, size_t cap, uint32_t module_id, uint64_t load_base,
			  uint64_t size, const uint8_t *build_id, uint8_t build_id_len,
			  const char *path);

/**
 * fdr_ext_module_unmap() - FDRTRACE_EXT_MODULE_UNMAP: a module is gone
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @module_id, @load_base, @size: as its FDRTRACE_EXT_MODULE_MAP said
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_module_unmap(uint8_t *buf, size_t cap, uint32_t module_id, uint64_t load_base,
			    uint64_t size);

/**
 * fdr_ext_func() - FDRTRACE_EXT_FUNC: a function id's address and name
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @func_id:	the id its records carry
 * @address:	the function's address
 * @module_id:	the module that holds it (FDR_MODULE_UNKNOWN: none)
 * @name:	its (mangled) symbol name, "" when unknown
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_func(uint8_t *buf, size_t cap, uint32_t func_id, uint64_t address,
		    uint32_t module_id, const char *name);

/**
 * fdr_ext_thread_name() - FDRTRACE_EXT_THREAD_NAME: a thread's name
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @tid:	the thread
 * @name:	its name
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_thread_name(uint8_t *buf, size_t cap, uint32_t tid, const char *name);

/**
 * fdr_ext_drop() - FDRTRACE_EXT_DROP: records lost, as counts
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @tid:	the thread they were lost on (0: process-wide)
 * @reason:	enum fdrtrace_drop_reason
 * @records, @buffers: how many
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_drop(uint8_t *buf, size_t cap, uint32_t tid, uint8_t reason, uint64_t records,
		    uint64_t buffers);

/**
 * fdr_ext_gap() - FDRTRACE_EXT_DROP: a gap in a thread's records
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @tid, @reason, @records, @buffers: as fdr_ext_drop()
 * @first_tsc, @last_tsc: the clock of the first and the last record lost
 * @exited:	calls open before the gap that returned in it
 *		(FDRTRACE_GAP_UNKNOWN: not known)
 * @depth:	calls entered in the gap and still open after it
 * @ids:	their function ids, outermost first (@depth of them)
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_gap(uint8_t *buf, size_t cap, uint32_t tid, uint8_t reason, uint64_t records,
		   uint64_t buffers, uint64_t first_tsc, uint64_t last_tsc, uint32_t exited,
		   uint32_t depth, const uint32_t *ids);

/**
 * fdr_ext_wait() - FDRTRACE_EXT_WAIT: on_full=wait, a thread waited
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @tid:	the thread
 * @first_tsc, @last_tsc: when it began and stopped waiting for a free buffer
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_wait(uint8_t *buf, size_t cap, uint32_t tid, uint64_t first_tsc, uint64_t last_tsc);

/**
 * fdr_ext_fork() - FDRTRACE_EXT_FORK: this trace's process is a fork child
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @parent_pid, @child_pid: the two processes
 * @parent_tid:	the thread that forked
 * @tsc, @serial: its clock then, and the serial of the parent's
 *		FDRTRACE_EXT_SPAWN that marks the fork
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_fork(uint8_t *buf, size_t cap, uint32_t parent_pid, uint32_t child_pid,
		    uint32_t parent_tid, uint64_t tsc, uint32_t serial);

/**
 * fdr_ext_exec() - FDRTRACE_EXT_EXEC: the process called exec
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @pid:	the process
 * @path:	the file it executes
 * @tid, @tsc:	the thread that called exec, and its clock then
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_exec(uint8_t *buf, size_t cap, uint32_t pid, const char *path, uint32_t tid,
		    uint64_t tsc);

/**
 * fdr_ext_spawn() - FDRTRACE_EXT_SPAWN: a thread forked
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @tid, @tsc:	the forking thread and its clock at the fork
 * @serial:	the process's forks counted from 1 (the child's FDRTRACE_EXT_FORK)
 * @child_pid:	the child (0: not known yet)
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_spawn(uint8_t *buf, size_t cap, uint32_t tid, uint64_t tsc, uint32_t serial,
		     uint32_t child_pid);

/**
 * struct fdr_ext_close_info - what a close marker says
 * @how: enum fdrtrace_close_how
 * @records: function records written
 * @records_dropped: records not written, of any reason (@records_left_out
 *	among them)
 * @buffers: buffers written
 * @buffers_dropped: buffers not written
 * @threads: threads that recorded
 * @cycle_frequency: the refined trace clock frequency, Hz
 * @end_realtime_ns: CLOCK_REALTIME at the close
 * @records_left_out: of @records_dropped, those left out on purpose (drop
 *	reason FILTERED), so that a reader of the close alone (fdrtrace
 *	record) tells them from the lost ones
 * @error: FDRTRACE_CLOSE_STOPPED: the errno of the write that failed
 *	(0 otherwise)
 * @end: enum fdrtrace_end: how the process ended (FDRTRACE_END_UNKNOWN for
 *	a snapshot or a stop)
 * @end_value: the exit status (FDRTRACE_END_EXITED) or the signal
 *	(FDRTRACE_END_SIGNALED), else 0
 */
struct fdr_ext_close_info {
	uint8_t how;
	uint64_t records, records_dropped, buffers, buffers_dropped;
	uint32_t threads;
	uint64_t cycle_frequency, end_realtime_ns, records_left_out;
	uint32_t error;
	uint8_t end;
	uint32_t end_value;
};

/**
 * fdr_ext_close() - FDRTRACE_EXT_CLOSE: the close marker
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @c:		what it says
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_close(uint8_t *buf, size_t cap, const struct fdr_ext_close_info *c);

/**
 * struct fdr_ext_bufpos - where a ring buffer sits in its thread's records
 * (the fields a stack record appends in ring policy; docs/format.md 5.2)
 * @buffer_no: the thread's buffers numbered from 1 in the order it began them
 * @records_before: function records the thread wrote in its earlier buffers
 * @skipped: outer calls left out of the stack record (it keeps the innermost)
 */
struct fdr_ext_bufpos {
	uint64_t buffer_no;
	uint64_t records_before;
	uint32_t skipped;
};

/**
 * fdr_ext_stack() - FDRTRACE_EXT_STACK: the calls open as a buffer starts
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @tid:	the thread
 * @depth:	the calls open
 * @ids:	their function ids, outermost first (@depth of them)
 * @pos:	ring policy: the buffer's place in the thread's records; NULL:
 *		none (a record without it)
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_stack(uint8_t *buf, size_t cap, uint32_t tid, uint32_t depth,
		     const uint32_t *ids, const struct fdr_ext_bufpos *pos);

/**
 * fdr_ext_native_stack() - FDRTRACE_EXT_NATIVE_STACK: a native stack
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @tid:	the thread
 * @why:	enum fdrtrace_native_why
 * @signal:	the signal (0: none)
 * @fault_address: its si_addr (0: none)
 * @depth:	the frames
 * @addrs, @modules: @depth entries each, innermost frame first
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_native_stack(uint8_t *buf, size_t cap, uint32_t tid, uint8_t why,
			    uint8_t signal, uint64_t fault_address, uint32_t depth,
			    const uint64_t *addrs, const uint32_t *modules);

/**
 * fdr_ext_excluded() - FDRTRACE_EXT_EXCLUDED: an auto_exclude decision
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @func_id:	the function
 * @tsc:	the clock when it was decided
 * @calls, @sum_ticks: the evidence: calls timed and their total duration
 * @threshold_ticks, @after: auto_exclude's DURATION and N
 * @undone:	false: its calls are counted from now on; true: they are timed
 *		again (the evidence: the counted calls it timed since)
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_excluded(uint8_t *buf, size_t cap, uint32_t func_id, uint64_t tsc,
			uint32_t calls, uint64_t sum_ticks, uint64_t threshold_ticks, uint32_t after,
			bool undone);

/**
 * fdr_ext_counted() - FDRTRACE_EXT_COUNTED: calls counted, not recorded
 * @buf:	where the payload goes
 * @cap:	room at @buf
 * @tid:	the thread (0: threads that ended, and counts no table held)
 * @lost:	calls neither recorded nor counted (every table was full)
 * @count:	the pairs that follow
 * @ids, @calls: @count function ids and their calls since @tid's last
 *		such record
 *
 * Context: any thread; async-signal-safe.
 * Return: the payload's length in bytes, 0 when it does not fit @cap or the
 * 64 KiB body of one record (nothing is written then).
 */
size_t fdr_ext_counted(uint8_t *buf, size_t cap, uint32_t tid, uint64_t lost, uint32_t count,
		       const uint32_t *ids, const uint64_t *calls);

#endif /* FDR_EXT_ENCODE_H */
