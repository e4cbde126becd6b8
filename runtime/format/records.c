// SPDX-License-Identifier: MIT
/*
 * runtime/format/records.c - the FDR metadata records the runtime writes: a
 * buffer's preamble and the header of a custom event (the FDRx extension
 * records' frame), in the format version of fdr_cfg.
 *
 * Contract: pure encoders into the caller's memory, async-signal-safe
 * (the clocks read by the preamble are the vDSO's); any thread.
 */
#include <string.h>
#include <time.h>

#include "clock.h"
#include "records.h"
#include "state.h"

/*
 * The wall time of trace clock value @tsc: the realtime clock now, less
 * the trace clock's advance since @tsc. A buffer is begun with the clock
 * value its first record was stamped with, read in the hook, and the
 * thread may have handed the previous buffer over, woken the flush thread
 * and been preempted since: the wall time read then was up to 26 ms late
 * against its buffer's TSC (db_bench), so that info's "last event" came
 * after "closed at". Capped at a minute: a value from another clock base
 * is not corrected. Async-signal-safe (the fatal-signal dump begins
 * buffers too).
 */
__extension__ typedef unsigned __int128 rec_u128;

static notrace void rec_walltime_of(uint64_t tsc, struct timespec *ts)
{
	unsigned cpu;
	uint64_t before, now, late_ns;

	/* the two clocks read together: again if preempted between (3 tries) */
	for (int i = 0; i < 3; i++) {
		before = fdr_clock_read(&cpu);
		clock_gettime(CLOCK_REALTIME, ts);
		now = fdr_clock_read(&cpu);
		if (now - before < fdr_clock.freq / 50000)	/* 20 us */
			break;
	}
	if (now <= tsc || !fdr_clock.freq)
		return;
	late_ns = (uint64_t)((rec_u128)(now - tsc) * 1000000000u / fdr_clock.freq);
	if (late_ns > 60ull * 1000000000u)
		return;
	ts->tv_sec -= (time_t)(late_ns / 1000000000u);
	ts->tv_nsec -= (long)(late_ns % 1000000000u);
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += 1000000000;
		ts->tv_sec--;
	}
}

/*
 * The preamble every buffer starts with (format.md 3): BufferExtents (v5;
 * its size filled in when the buffer is written), NewBuffer, WallTimeMarker,
 * Pid (v5) and NewCPUId. Return: its length.
 */
notrace size_t fdr_preamble(uint8_t *p, int32_t tid, unsigned cpu, uint64_t tsc)
{
	uint8_t *start = p;
	struct timespec ts;

	rec_walltime_of(tsc, &ts);
	if (fdr_cfg.format_version != 1) {
		struct fdrtrace_md_buffer_extents e;

		memset(&e, 0, sizeof(e));
		e.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_BUFFER_EXTENTS);
		memcpy(p, &e, sizeof(e));
		p += sizeof(e);
	}
	{
		struct fdrtrace_md_new_buffer nb;

		memset(&nb, 0, sizeof(nb));
		nb.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_NEW_BUFFER);
		nb.tid = tid;
		memcpy(p, &nb, sizeof(nb));
		p += sizeof(nb);
	}
	{
		struct fdrtrace_md_walltime w;

		memset(&w, 0, sizeof(w));
		w.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_WALLTIME);
		w.seconds = (uint64_t)ts.tv_sec;
		w.micros = (uint32_t)(ts.tv_nsec / 1000);
		memcpy(p, &w, sizeof(w));
		p += sizeof(w);
	}
	if (fdr_cfg.format_version != 1) {
		struct fdrtrace_md_pid pr;

		memset(&pr, 0, sizeof(pr));
		pr.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_PID);
		pr.pid = fdr_pid;
		memcpy(p, &pr, sizeof(pr));
		p += sizeof(pr);
	}
	{
		struct fdrtrace_md_new_cpu_id c;

		memset(&c, 0, sizeof(c));
		c.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_NEW_CPU_ID);
		c.cpu = (uint16_t)cpu;
		c.tsc = tsc;
		memcpy(p, &c, sizeof(c));
		p += sizeof(c);
	}
	return (size_t)(p - start);
}

notrace size_t fdr_custom_event_md(uint8_t *p, uint32_t size, uint64_t tsc)
{
	if (fdr_cfg.format_version == 1) {
		struct fdrtrace_md_custom_event_v1 m;

		memset(&m, 0, sizeof(m));
		m.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_CUSTOM_EVENT);
		m.size = (int32_t)size;
		m.tsc = tsc;
		memcpy(p, &m, sizeof(m));
	} else {
		struct fdrtrace_md_custom_event_v5 m;

		memset(&m, 0, sizeof(m));
		m.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_CUSTOM_EVENT);
		m.size = (int32_t)size;
		m.delta = 0;	/* the event shares the previous record's time */
		memcpy(p, &m, sizeof(m));
	}
	return FDRTRACE_METADATA_RECORD_SIZE;
}
