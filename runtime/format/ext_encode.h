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
size_t fdr_ext_process(uint8_t *buf, size_t cap, const struct fdr_ext_process_info *pi);
/* @keys and @values: @pairs strings each */
size_t fdr_ext_config(uint8_t *buf, size_t cap, uint16_t pairs, const char *const *keys,
		      const char *const *values);
size_t fdr_ext_module_map(uint8_t *buf, size_t cap, uint32_t module_id, uint64_t load_base,
			  uint64_t size, const uint8_t *build_id, uint8_t build_id_len,
			  const char *path);
size_t fdr_ext_module_unmap(uint8_t *buf, size_t cap, uint32_t module_id, uint64_t load_base,
			    uint64_t size);
size_t fdr_ext_func(uint8_t *buf, size_t cap, uint32_t func_id, uint64_t address,
		    uint32_t module_id, const char *name);
size_t fdr_ext_thread_name(uint8_t *buf, size_t cap, uint32_t tid, const char *name);
size_t fdr_ext_drop(uint8_t *buf, size_t cap, uint32_t tid, uint8_t reason, uint64_t records,
		    uint64_t buffers);
/*
 * A drop that is a gap in @tid's records (format.h, FDRTRACE_EXT_DROP):
 * the lost records' TSC span, the calls open before it that returned in
 * it (@exited, or FDRTRACE_GAP_UNKNOWN) and the @depth calls entered in
 * it and still open (@ids, outermost first).
 */
size_t fdr_ext_gap(uint8_t *buf, size_t cap, uint32_t tid, uint8_t reason, uint64_t records,
		   uint64_t buffers, uint64_t first_tsc, uint64_t last_tsc, uint32_t exited,
		   uint32_t depth, const uint32_t *ids);
/* on_full=wait: @tid waited for a free buffer from @first_tsc to @last_tsc. */
size_t fdr_ext_wait(uint8_t *buf, size_t cap, uint32_t tid, uint64_t first_tsc, uint64_t last_tsc);
/* In the child's trace: @serial and @tsc name the parent's FDRTRACE_EXT_SPAWN. */
size_t fdr_ext_fork(uint8_t *buf, size_t cap, uint32_t parent_pid, uint32_t child_pid,
		    uint32_t parent_tid, uint64_t tsc, uint32_t serial);
/* @tid called exec at @tsc */
size_t fdr_ext_exec(uint8_t *buf, size_t cap, uint32_t pid, const char *path, uint32_t tid,
		    uint64_t tsc);
/* In the forking thread's records: the fork @serial at @tsc (@child_pid 0: not known). */
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

/* @pos: NULL for a stack record without the buffer's position */
size_t fdr_ext_stack(uint8_t *buf, size_t cap, uint32_t tid, uint32_t depth,
		     const uint32_t *ids, const struct fdr_ext_bufpos *pos);
/* @addrs and @modules: @depth entries each, innermost frame first */
size_t fdr_ext_native_stack(uint8_t *buf, size_t cap, uint32_t tid, uint8_t why,
			    uint8_t signal, uint64_t fault_address, uint32_t depth,
			    const uint64_t *addrs, const uint32_t *modules);

/*
 * auto_exclude decided at @tsc that @func_id's calls are counted from now
 * on, from this evidence; @undone: that they are timed again (the evidence:
 * the counted calls it timed since)
 */
size_t fdr_ext_excluded(uint8_t *buf, size_t cap, uint32_t func_id, uint64_t tsc,
			uint32_t calls, uint64_t sum_ticks, uint64_t threshold_ticks, uint32_t after,
			bool undone);
/* @count pairs (@ids, @calls): calls of @tid counted, not recorded, since its last such record */
size_t fdr_ext_counted(uint8_t *buf, size_t cap, uint32_t tid, uint64_t lost, uint32_t count,
		       const uint32_t *ids, const uint64_t *calls);

#endif /* FDR_EXT_ENCODE_H */
