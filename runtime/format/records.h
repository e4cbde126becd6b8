/* SPDX-License-Identifier: MIT */
/*
 * runtime/format/records.h - the FDR metadata records the runtime writes
 * (records.c): encoders into the caller's memory, async-signal-safe.
 */
#ifndef FDR_RECORDS_H
#define FDR_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include <fdrtrace/format.h>

#include "compiler.h"

/*
 * v1 buffers end with EndOfBuffer and padding; we keep room for the
 * EndOfBuffer and for one padding marker (the file layer), so the padding
 * is always at least 32 bytes.
 */
#define FDR_V1_TAIL (FDRTRACE_METADATA_RECORD_SIZE + 32u)

/**
 * fdr_preamble() - a buffer's first records, at @p
 * @p:		room for them (at most 5 metadata records)
 * @tid:	the thread the buffer is of
 * @cpu:	the CPU its first record was stamped on
 * @tsc:	the clock value of its first record
 *
 * BufferExtents (v5; its size filled in when the buffer is written),
 * NewBuffer, WallTimeMarker (the wall time of @tsc), Pid (v5), NewCPUId.
 * Context: any thread; async-signal-safe.
 * Return: the bytes written.
 */
size_t fdr_preamble(uint8_t *p, int32_t tid, unsigned cpu, uint64_t tsc) fdr_hidden;

/**
 * fdr_custom_event_md() - the metadata record before a custom event's
 * @size bytes of payload, at @p
 *
 * v1 carries @tsc; v5 a delta of 0 (the event shares the previous
 * record's time). Context: any thread; async-signal-safe.
 * Return: FDRTRACE_METADATA_RECORD_SIZE.
 */
size_t fdr_custom_event_md(uint8_t *p, uint32_t size, uint64_t tsc) fdr_hidden;

#endif /* FDR_RECORDS_H */
