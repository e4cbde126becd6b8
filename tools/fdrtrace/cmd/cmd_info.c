/* SPDX-License-Identifier: MIT */
/*
 * cmd_info.c - "fdrtrace info FILE": a summary of one trace; "fdrtrace info
 * DIR": the process tree of a run directory (info_run.c).
 *
 * One pass with the reader, plain function records taken in runs
 * (fdrtrace_reader_read_functions()); counters only. The memory is bounded: a fixed
 * table of thread ids (with names from FDRTRACE_EXT_THREAD_NAME) and of
 * process ids; records are never stored. When the reader stops on an
 * error, the summary of what was read is printed anyway, then the error,
 * and the exit status is 1.
 *
 * Contract: single-threaded.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "info.h"
#include "nstack.h"
#include "run.h"
#include "util.h"

#define INFO_MAX_TIDS 256
#define INFO_MAX_PIDS 8
#define INFO_NAME_LEN 32
#define INFO_MAX_NSTACKS 8	/* native stacks kept (copies of their payloads) */
#define INFO_AX_SHOW 16	/* auto_exclude decisions listed */

struct info_thread {
	int32_t tid;
	char name[INFO_NAME_LEN];
	bool program_records;	/* function records or application events */
	/* ring policy: the last numbered stack record read, and function records since */
	uint64_t records, ring_no, ring_before, ring_records;
};

/* The name the runtime gives its own flush thread (runtime/flush/flush_thread.c). */
#define INFO_RUNTIME_THREAD "fdrtrace-flush"

struct info {
	bool have_hdr;
	struct fdrtrace_file_header hdr;
	/* FDRTRACE_EXT_PROCESS, the first one seen */
	bool have_process;
	uint32_t pid;
	uint8_t clock, freq_source;
	char program[128];
	char exec_path[256];	/* an FDRx exec record's: the image that replaced this one */
	bool have_exec;

	int32_t pids[INFO_MAX_PIDS];
	unsigned n_pids, more_pids;
	struct info_thread threads[INFO_MAX_TIDS];
	unsigned n_threads, more_threads;
	struct info_thread *cur;	/* the thread of the buffer being read, or NULL */

	uint64_t buffers;
	uint64_t events;
	uint64_t by_type[FDRTRACE_EV_TYPE_COUNT];
	uint64_t by_action[8];
	uint64_t first_ns, last_ns;

	uint64_t drop_records[FDRTRACE_DROP_REASON_COUNT + 1];
	uint64_t drop_buffers[FDRTRACE_DROP_REASON_COUNT + 1];
	bool any_drop;
	/*
	 * What the ring's buffer numbering says is missing (FDRx stack
	 * records): buffers and records between two kept buffers of a thread,
	 * and before a thread's first kept one. The drop records count most
	 * of them already (process-wide); not those overwritten while a
	 * snapshot was written. Shown apart, never added to the drops.
	 */
	uint64_t ring_gap_buffers, ring_gap_records, ring_gaps;
	uint64_t ring_head_buffers, ring_head_records, ring_heads;

	uint64_t ext_by_kind[FDRTRACE_EXT_KIND_COUNT + 1];	/* last: unknown kinds */

	/* auto_exclude: decisions (the first INFO_AX_SHOW kept), calls counted, lost */
	uint64_t start_tsc;	/* the process record's (0: not known) */
	uint64_t ax_counted, ax_lost;
	uint32_t ax_decisions, ax_undone;
	struct fdrtrace_ext ax_dec[INFO_AX_SHOW];	/* decoded fields only (no pointers) */
	uint64_t ext_bad, ext_newer, custom_other, typed;

	bool have_close;
	uint8_t close_how;
	uint64_t close_records, close_records_dropped, close_buffers, close_buffers_dropped;
	uint32_t close_error;	/* how stopped: the write's errno */
	uint32_t close_threads;
	uint64_t close_freq, close_end_ns;
	/* the pool: buffer_max of the first config record, pool_buffers of the last growth */
	uint64_t pool_start, pool_now;
	unsigned pool_grew;

	/* native stacks (crash, start), printed at the end, named from the modules */
	struct nstack ns;
	uint8_t *nstack[INFO_MAX_NSTACKS];
	size_t nstack_len[INFO_MAX_NSTACKS];
	unsigned n_nstacks, more_nstacks;
};

/* Keep a copy of a native stack's payload; a crash stack takes the last slot if need be. */
static void info_keep_nstack(struct info *in, const struct fdrtrace_ext *x, const uint8_t *data,
			     size_t len)
{
	unsigned slot = in->n_nstacks;
	uint8_t *copy;

	if (slot == INFO_MAX_NSTACKS) {
		in->more_nstacks++;
		if (ns_kind(x) == NS_START)
			return;
		slot--;
	}
	copy = malloc(len);
	if (!copy)
		return;
	memcpy(copy, data, len);
	if (slot < in->n_nstacks)
		free(in->nstack[slot]);
	else
		in->n_nstacks++;
	in->nstack[slot] = copy;
	in->nstack_len[slot] = len;
}

static struct info_thread *info_thread(struct info *in, int32_t tid)
{
	unsigned i;

	for (i = 0; i < in->n_threads; i++)
		if (in->threads[i].tid == tid)
			return &in->threads[i];
	if (in->n_threads == INFO_MAX_TIDS) {
		in->more_threads++;	/* counts sightings past the table, not threads */
		return NULL;
	}
	memset(&in->threads[in->n_threads], 0, sizeof(in->threads[0]));
	in->threads[in->n_threads].tid = tid;
	return &in->threads[in->n_threads++];
}

static void info_pid(struct info *in, int32_t pid)
{
	unsigned i;

	for (i = 0; i < in->n_pids; i++)
		if (in->pids[i] == pid)
			return;
	if (in->n_pids == INFO_MAX_PIDS)
		in->more_pids = 1;
	else
		in->pids[in->n_pids++] = pid;
}

static void info_copy_str(char *dst, size_t cap, struct fdrtrace_str s)
{
	size_t n = s.len < cap - 1 ? s.len : cap - 1;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s.ptr[i];

		dst[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	dst[n] = '\0';
}

/* A decimal value of a config pair; 0 for anything else. */
static uint64_t info_cfg_u64(const struct fdrtrace_str *v)
{
	uint64_t n = 0;

	for (size_t i = 0; i < v->len; i++) {
		if (v->ptr[i] < '0' || v->ptr[i] > '9' || n > UINT64_MAX / 10 - 9)
			return 0;
		n = n * 10 + (uint64_t)(v->ptr[i] - '0');
	}
	return n;
}

/*
 * The pool's size: buffer_max in the start records' configuration, then
 * pool_buffers each time the runtime grew the pool (stream policy).
 */
static void info_config(struct info *in, const struct fdrtrace_ext *x)
{
	struct fdrtrace_str k, v;
	size_t pos = 0;

	while (fdrtrace_ext_config_pair(x, &pos, &k, &v) == 1) {
		if (k.len == 10 && !memcmp(k.ptr, "buffer_max", 10) && !in->pool_start) {
			in->pool_start = info_cfg_u64(&v);
		} else if (k.len == 12 && !memcmp(k.ptr, "pool_buffers", 12)) {
			in->pool_now = info_cfg_u64(&v);
			in->pool_grew++;
		}
	}
}

/*
 * A numbered stack record (ring policy): a buffer number more than one past
 * the thread's previous one, or a thread's first kept buffer numbered above
 * one, says buffers were overwritten, and its records_before how many
 * function records they held (as the analyses count them, analysis.c).
 * A number already read (a snapshot's copy of a partial buffer) says
 * nothing.
 */
static void info_ring_no(struct info *in, const struct fdrtrace_ext *x)
{
	struct info_thread *t = info_thread(in, (int32_t)x->u.stack.tid);
	uint64_t no = x->u.stack.buffer_no, before = x->u.stack.records_before;

	if (!t || (t->ring_no && no <= t->ring_no))
		return;
	if (t->ring_no && no > t->ring_no + 1) {
		uint64_t seen = t->ring_before + (t->records - t->ring_records);

		in->ring_gaps++;
		in->ring_gap_buffers += no - t->ring_no - 1;
		in->ring_gap_records += before > seen ? before - seen : 0;
	} else if (!t->ring_no && no > 1 && !t->records) {
		in->ring_heads++;
		in->ring_head_buffers += no - 1;
		in->ring_head_records += before;
	}
	t->ring_no = no;
	t->ring_before = before;
	t->ring_records = t->records;
}

/* auto_exclude's records: decisions kept for the listing, counts added up */
static void info_ax(struct info *in, const struct fdrtrace_ext *x)
{
	uint32_t id;
	uint64_t calls;

	if (x->kind == FDRTRACE_EXT_EXCLUDED) {
		if (in->ax_decisions + in->ax_undone < INFO_AX_SHOW)
			in->ax_dec[in->ax_decisions + in->ax_undone] = *x;
		if (x->u.excluded.undone)
			in->ax_undone++;
		else
			in->ax_decisions++;
		return;
	}
	in->ax_lost += x->u.counted.lost;
	for (uint32_t i = 0; fdrtrace_ext_counted_pair(x, i, &id, &calls) == 0; i++)
		in->ax_counted += calls;
}

static void info_ext(struct info *in, const uint8_t *data, size_t len)
{
	struct fdrtrace_ext x;
	int rc = fdrtrace_ext_decode(data, len, &x);

	if (rc == -ENOENT) {
		in->custom_other++;
		return;
	}
	if (rc == -ENOTSUP) {
		in->ext_newer++;
		return;
	}
	if (rc < 0) {
		in->ext_bad++;
		return;
	}
	in->ext_by_kind[x.kind < FDRTRACE_EXT_KIND_COUNT ? x.kind : FDRTRACE_EXT_KIND_COUNT]++;
	switch (x.kind) {
	case FDRTRACE_EXT_EXCLUDED:
	case FDRTRACE_EXT_COUNTED:
		info_ax(in, &x);
		break;
	case FDRTRACE_EXT_PROCESS:
		if (in->have_process)
			break;
		in->have_process = true;
		if (x.u.process.has_cmdline)
			in->start_tsc = x.u.process.start_tsc;
		in->pid = x.u.process.pid;
		in->clock = x.u.process.clock;
		in->freq_source = x.u.process.freq_source;
		info_copy_str(in->program, sizeof(in->program), x.u.process.program);
		break;
	case FDRTRACE_EXT_THREAD_NAME: {
		struct info_thread *t = info_thread(in, (int32_t)x.u.thread_name.tid);

		if (t)
			info_copy_str(t->name, sizeof(t->name), x.u.thread_name.name);
		break;
	}
	case FDRTRACE_EXT_DROP: {
		unsigned r = x.u.drop.reason < FDRTRACE_DROP_REASON_COUNT ? x.u.drop.reason : 0;

		in->any_drop = true;
		in->drop_records[r] += x.u.drop.records;
		in->drop_buffers[r] += x.u.drop.buffers;
		break;
	}
	case FDRTRACE_EXT_STACK:
		if (x.u.stack.numbered)
			info_ring_no(in, &x);
		break;
	case FDRTRACE_EXT_CONFIG:
		info_config(in, &x);
		break;
	case FDRTRACE_EXT_MODULE_MAP:
		in->ns.demangle = true;	/* as the analyses do by default */
		ns_add_module(&in->ns, &x);
		break;
	case FDRTRACE_EXT_NATIVE_STACK:
		info_keep_nstack(in, &x, data, len);
		break;
	case FDRTRACE_EXT_EXEC:
		in->have_exec = true;
		info_copy_str(in->exec_path, sizeof(in->exec_path), x.u.exec.path);
		break;
	case FDRTRACE_EXT_CLOSE:
		in->have_close = true;
		in->close_how = x.u.close.how;
		in->close_records = x.u.close.records;
		in->close_records_dropped = x.u.close.records_dropped;
		in->close_buffers = x.u.close.buffers;
		in->close_buffers_dropped = x.u.close.buffers_dropped;
		in->close_threads = x.u.close.threads;
		in->close_freq = x.u.close.cycle_frequency;
		in->close_end_ns = x.u.close.end_realtime_ns;
		in->close_error = x.u.close.error;
		break;
	default:
		break;
	}
}

static void info_event(struct info *in, const struct fdrtrace_event *ev)
{
	in->events++;
	in->by_type[ev->type]++;
	if (ev->wall_ns) {
		if (!in->first_ns || ev->wall_ns < in->first_ns)
			in->first_ns = ev->wall_ns;
		if (ev->wall_ns > in->last_ns)
			in->last_ns = ev->wall_ns;
	}
	switch (ev->type) {
	case FDRTRACE_EV_HEADER:
		in->have_hdr = true;
		memcpy(&in->hdr, ev->raw, sizeof(in->hdr));
		break;
	case FDRTRACE_EV_NEW_BUFFER:
		in->buffers++;
		in->cur = info_thread(in, ev->tid);
		break;
	case FDRTRACE_EV_PID:
		info_pid(in, ev->pid);
		break;
	case FDRTRACE_EV_FUNCTION:
		in->by_action[ev->u.func.action & 7]++;
		if (in->cur) {
			in->cur->program_records = true;
			in->cur->records++;
		}
		break;
	case FDRTRACE_EV_CUSTOM_EVENT: {
		uint64_t other = in->custom_other;

		info_ext(in, ev->u.event.data, ev->u.event.size);
		if (in->cur && in->custom_other != other)
			in->cur->program_records = true;
		break;
	}
	case FDRTRACE_EV_TYPED_EVENT:
		in->typed++;
		if (in->cur)
			in->cur->program_records = true;
		break;
	default:
		break;
	}
}

/*
 * A run of plain function records (fdrtrace_reader_read_functions()): what
 * info_event() does for each of their events. Their wall_ns do not go down
 * and are all 0 or none is, so the first and the last bound them all.
 */
static void info_functions(struct info *in, const struct fdrtrace_func_run *run)
{
	const uint8_t *p = run->records, *end = p + run->count * FDRTRACE_FUNC_RECORD_SIZE;
	uint64_t n[4] = { 0 };

	in->events += run->count;
	in->by_type[FDRTRACE_EV_FUNCTION] += run->count;
	if (run->first_wall_ns) {
		if (!in->first_ns || run->first_wall_ns < in->first_ns)
			in->first_ns = run->first_wall_ns;
		if (run->last_wall_ns > in->last_ns)
			in->last_ns = run->last_wall_ns;
	}
	/* Entry, Exit or TailExit only (the run's contract): bits 1..2 of the first byte. */
	for (; p < end; p += FDRTRACE_FUNC_RECORD_SIZE)
		n[(p[0] >> 1) & 3]++;
	for (unsigned a = 0; a < 4; a++)
		in->by_action[a] += n[a];
	if (in->cur) {
		in->cur->program_records = true;
		in->cur->records += run->count;
	}
}

/* The runtime's flush thread: its name, and nothing of the program's in its buffers. */
static int info_is_runtime(const struct info_thread *t)
{
	return !t->program_records && strcmp(t->name, INFO_RUNTIME_THREAD) == 0;
}

static const char *info_clock_name(unsigned c)
{
	switch (c) {
	case FDRTRACE_CLOCK_RDTSCP: return "rdtscp";
	case FDRTRACE_CLOCK_RDTSC: return "rdtsc";
	case FDRTRACE_CLOCK_MONOTONIC: return "clock_monotonic_raw";
	default: return "unknown";
	}
}

static const char *info_freq_name(unsigned f)
{
	switch (f) {
	case FDRTRACE_FREQ_CPUID: return "from CPUID";
	case FDRTRACE_FREQ_SYSFS: return "from sysfs";
	case FDRTRACE_FREQ_CALIBRATED: return "calibrated";
	case FDRTRACE_FREQ_FIXED: return "fixed (1 GHz)";
	default: return "of unknown origin";
	}
}

/* auto_exclude: what was decided, on what evidence, and the calls counted */
static void info_print_ax(const struct info *in)
{
	double freq = (double)(in->close_freq ? in->close_freq : in->hdr.cycle_frequency);

	if (!in->ax_decisions && !in->ax_undone && !in->ax_counted && !in->ax_lost)
		return;
	printf("%-17s%" PRIu32 " function%s counted only, %" PRIu64 " call%s counted, not "
	       "recorded", "auto_exclude:", in->ax_decisions, in->ax_decisions == 1 ? "" : "s",
	       in->ax_counted, in->ax_counted == 1 ? "" : "s");
	if (in->ax_undone)
		printf("; %" PRIu32 " of them timed again later", in->ax_undone);
	if (in->ax_lost)
		printf("; %" PRIu64 " call%s neither recorded nor counted (tables full: counts "
		       "short by that many)", in->ax_lost, in->ax_lost == 1 ? "" : "s");
	putchar('\n');
	for (uint32_t i = 0; i < in->ax_decisions + in->ax_undone && i < INFO_AX_SHOW; i++) {
		const struct fdrtrace_ext *x = &in->ax_dec[i];

		printf("%-17sfunction id %" PRIu32 ": %s%" PRIu32 " calls timed, mean ", "",
		       x->u.excluded.func_id,
		       x->u.excluded.undone ? "timed again, " : "", x->u.excluded.calls);
		if (freq > 0 && x->u.excluded.calls) {
			printf(x->u.excluded.undone ? "%.1f ns (most of them above %.1f ns)"
						    : "%.1f ns (below %.1f ns)",
			       (double)x->u.excluded.sum_ticks * 1e9 / freq / x->u.excluded.calls,
			       (double)x->u.excluded.threshold_ticks * 1e9 / freq);
			if (in->start_tsc && x->u.excluded.tsc >= in->start_tsc)
				printf(", %s %.6f s after recording began",
				       x->u.excluded.undone ? "timed again" : "decided",
				       (double)(x->u.excluded.tsc - in->start_tsc) / freq);
		} else {
			fputs("unknown (no clock frequency)", stdout);
		}
		putchar('\n');
	}
	if (in->ax_decisions + in->ax_undone > INFO_AX_SHOW)
		printf("%-17s(%" PRIu32 " more; fdrtrace account marks every one '+')\n", "",
		       in->ax_decisions + in->ax_undone - INFO_AX_SHOW);
}

/* The program's threads, then the runtime's own (named so, no program records). */
static void info_print_threads(const struct info *in)
{
	unsigned i;

	for (int rt = 0; rt < 2; rt++) {
		unsigned n = 0, k = 0;

		for (i = 0; i < in->n_threads; i++)
			n += info_is_runtime(&in->threads[i]) == rt;
		if (rt && !n)
			break;
		printf("%-17s%u%s", rt ? "runtime threads:" : "threads:", n,
		       !rt && in->more_threads ? "+" : "");
		for (i = 0; i < in->n_threads; i++) {
			if (info_is_runtime(&in->threads[i]) != rt)
				continue;
			printf("%s%" PRId32, k++ ? ", " : ": ", in->threads[i].tid);
			if (in->threads[i].name[0])
				printf(" (%s)", in->threads[i].name);
		}
		if (!rt && in->more_threads)
			printf(", ... (table full at %d)", INFO_MAX_TIDS);
		putchar('\n');
	}
}

/* Every record of the file, of any kind; the function records by action. */
static void info_print_records(const struct info *in)
{
	static const char *const actions[4] = { "entry", "exit", "tail_exit", "entry_args" };
	unsigned i;
	bool first;

	printf("%-17s%" PRIu64 " (all kinds)\n", "records:", in->events - in->by_type[FDRTRACE_EV_HEADER]);
	for (i = 0; i < FDRTRACE_EV_TYPE_COUNT; i++) {
		if (!in->by_type[i] || i == FDRTRACE_EV_HEADER)
			continue;
		printf("  %-15s%" PRIu64, fdrtrace_event_type_name((enum fdrtrace_event_type)i),
		       in->by_type[i]);
		if (i == FDRTRACE_EV_FUNCTION) {
			unsigned a;

			first = true;
			for (a = 0; a < 8; a++) {
				if (!in->by_action[a])
					continue;
				if (a < 4)
					printf("%s%s %" PRIu64, first ? " (" : ", ", actions[a],
					       in->by_action[a]);
				else
					printf("%saction %u: %" PRIu64, first ? " (" : ", ", a,
					       in->by_action[a]);
				first = false;
			}
			if (!first)
				putchar(')');
		}
		putchar('\n');
	}
}

/* What was lost: the runtime's drop records, and the ring's numbering. */
static void info_print_drops(const struct info *in)
{
	unsigned i;
	bool first;

	printf("%-17s", "drops:");
	if (!in->any_drop) {
		fputs("none recorded\n", stdout);
	} else {
		first = true;
		for (i = 0; i <= FDRTRACE_DROP_REASON_COUNT; i++) {
			if (!in->drop_records[i] && !in->drop_buffers[i])
				continue;
			printf("%s%s: %" PRIu64 " records, %" PRIu64 " buffers", first ? "" : "; ",
			       fdrtrace_drop_reason_name(i), in->drop_records[i],
			       in->drop_buffers[i]);
			first = false;
		}
		if (first)
			fputs("reported, but none lost", stdout);
		putchar('\n');
	}
	if (in->ring_gaps || in->ring_heads) {
		printf("%-17s", "ring numbering:");
		if (in->ring_gaps)
			printf("%" PRIu64 " buffers (%" PRIu64 " records) overwritten between kept "
			       "buffers of a thread (%" PRIu64 " gap%s)%s", in->ring_gap_buffers,
			       in->ring_gap_records, in->ring_gaps, in->ring_gaps == 1 ? "" : "s",
			       in->ring_heads ? "; " : "");
		if (in->ring_heads)
			printf("%" PRIu64 " buffers (%" PRIu64 " records) before the first kept "
			       "buffer of %" PRIu64 " thread%s", in->ring_head_buffers,
			       in->ring_head_records, in->ring_heads, in->ring_heads == 1 ? "" : "s");
		fputs(" (in the drops above as far as the runtime knew of them)\n", stdout);
	}
}

/* The custom events: fdrtrace's own by kind, the others, the typed ones. */
static void info_print_events(const struct info *in)
{
	unsigned i;
	bool first;

	printf("%-17s", "custom events:");
	first = true;
	for (i = 0; i <= FDRTRACE_EXT_KIND_COUNT; i++) {
		if (!in->ext_by_kind[i])
			continue;
		printf("%s%s %" PRIu64, first ? "fdrtrace: " : ", ",
		       i < FDRTRACE_EXT_KIND_COUNT ? fdrtrace_ext_kind_name(i) : "unknown",
		       in->ext_by_kind[i]);
		first = false;
	}
	if (in->ext_newer) {
		printf("%sof a newer version %" PRIu64, first ? "fdrtrace: " : ", ", in->ext_newer);
		first = false;
	}
	if (in->ext_bad) {
		printf("%smalformed %" PRIu64, first ? "fdrtrace: " : ", ", in->ext_bad);
		first = false;
	}
	printf("%sother %" PRIu64 "; typed %" PRIu64 "\n", first ? "" : "; ", in->custom_other,
	       in->typed);
}

/* Whether and how the trace was closed. */
static void info_print_closed(const struct info *in)
{
	printf("%-17s", "closed:");
	if (in->have_close) {
		printf("yes, %s: %" PRIu64 " function records (%" PRIu64 " dropped), %" PRIu64
		       " buffers (%" PRIu64 " dropped), %" PRIu32 " threads, refined frequency %"
		       PRIu64 " Hz\n",
		       /* the runtime closes a trace at exec as at exit; the exec record says which */
		       in->have_exec && in->close_how == FDRTRACE_CLOSE_EXIT ?
			       "exec" : fdrtrace_close_how_name(in->close_how), in->close_records,
		       in->close_records_dropped, in->close_buffers, in->close_buffers_dropped,
		       in->close_threads, in->close_freq);
		if (in->close_end_ns)
			info_time("closed at:", in->close_end_ns);
		if (in->close_how == FDRTRACE_CLOSE_STOPPED)
			printf("%-17sa write failed (%s): recording stopped; the program went on, "
			       "and what it did after is in no trace\n", "stopped by:",
			       in->close_error ? strerror((int)in->close_error) : "error not known");
		if (in->have_exec)
			printf("%-17sexec of %s (same pid; a trace of its own if it runs "
			       "instrumented code)\n", "replaced by:", in->exec_path);
	} else {
		fputs("no close marker: the trace may be incomplete", stdout);
		if (!in->have_process && !in->ext_bad && !in->ext_newer)
			fputs(" (it has no fdrtrace records at all: written by XRay's runtime?)",
			      stdout);
		putchar('\n');
	}
}

static void info_print(const struct info *in, const char *path)
{
	unsigned i;

	printf("%-17s%s\n", "file:", path);
	if (!in->have_hdr)
		return;
	printf("%-17s%u\n", "version:", in->hdr.version);
	printf("%-17s%u (%s)\n", "type:", in->hdr.type,
	       in->hdr.type == FDRTRACE_LOG_FDR ? "fdr" :
	       in->hdr.type == FDRTRACE_LOG_BASIC ? "basic" : "unknown");
	printf("%-17s%s tsc, %s tsc", "clock:",
	       in->hdr.bitfield & FDRTRACE_HDR_CONSTANT_TSC ? "constant" : "non-constant",
	       in->hdr.bitfield & FDRTRACE_HDR_NONSTOP_TSC ? "nonstop" : "stopping");
	if (in->have_process)
		printf("; source %s, frequency %s", info_clock_name(in->clock),
		       info_freq_name(in->freq_source));
	putchar('\n');
	printf("%-17s%" PRIu64 " Hz\n", "cycle frequency:", in->hdr.cycle_frequency);
	printf("%-17s%" PRIu64 " bytes\n", "buffer size:", in->hdr.buffer_size);
	if (in->have_process)
		printf("%-17s%s (pid %" PRIu32 ")\n", "program:", in->program, in->pid);
	printf("%-17s", "pids:");
	if (!in->n_pids)
		fputs("none recorded", stdout);
	for (i = 0; i < in->n_pids; i++)
		printf("%s%" PRId32, i ? " " : "", in->pids[i]);
	if (in->more_pids)
		fputs(" and more", stdout);
	putchar('\n');
	info_print_threads(in);
	printf("%-17s%" PRIu64 "\n", "buffers:", in->buffers);
	if (in->pool_start) {
		printf("%-17s%" PRIu64 " buffers at start", "pool:", in->pool_start);
		if (in->pool_grew)
			printf(", grew %u time%s to %" PRIu64 " (%" PRIu64 " MiB)", in->pool_grew,
			       in->pool_grew == 1 ? "" : "s", in->pool_now,
			       in->pool_now * in->hdr.buffer_size >> 20);
		putchar('\n');
	}
	info_print_records(in);
	if (in->first_ns) {
		uint64_t d = in->last_ns - in->first_ns;

		info_time("first event:", in->first_ns);
		info_time("last event:", in->last_ns);
		printf("%-17s%" PRIu64 ".%09" PRIu64 " s\n", "duration:", d / 1000000000u,
		       d % 1000000000u);
	} else {
		printf("%-17s%s\n", "time span:", "unknown (no wall-clock time)");
	}
	info_print_drops(in);
	info_print_ax(in);
	info_print_events(in);
	info_print_closed(in);
}

/* The native stacks: where a fatal signal struck, where recording started. */
static void info_print_nstacks(struct info *in)
{
	for (unsigned i = 0; i < in->n_nstacks; i++) {
		struct fdrtrace_ext x;

		if (fdrtrace_ext_decode(in->nstack[i], in->nstack_len[i], &x) < 0)
			continue;
		if (ns_kind(&x) != NS_START) {
			printf("%-17sthread %" PRIu32 ", signal %u (%s)%s",
			       ns_kind(&x) == NS_CRASH ? "crash stack:" : "killed at:",
			       x.u.native_stack.tid, x.u.native_stack.signal,
			       sigabbrev_np(x.u.native_stack.signal) ?
				       sigabbrev_np(x.u.native_stack.signal) : "?",
			       x.u.native_stack.why == FDRTRACE_NATIVE_SENT ?
				       ", sent by another process" : "");
			if (x.u.native_stack.fault_address)
				printf(", fault address 0x%" PRIx64, x.u.native_stack.fault_address);
		} else {
			printf("%-17sthread %" PRIu32 " (%s)", "start stack:", x.u.native_stack.tid,
			       x.u.native_stack.why == FDRTRACE_NATIVE_START ?
				       "fdrtrace_start()" :
				       fdrtrace_native_why_name(x.u.native_stack.why));
		}
		printf(", %" PRIu32 " frames, innermost first\n", x.u.native_stack.depth);
		if (!x.u.native_stack.depth)
			printf("  (the stack could not be unwound)\n");
		ns_print(&in->ns, &x, stdout, "  ");
	}
	if (in->more_nstacks)
		printf("%-17s%u more not shown (see dump)\n", "native stacks:", in->more_nstacks);
}

static const char info_help[] =
	"Usage: fdrtrace info FILE\n"
	"       fdrtrace info DIR\n"
	"\n"
	"Summarize the trace FILE ('-': standard input): version, clock, cycle\n"
	"frequency, buffer size, processes, threads (with names), buffers, records by\n"
	"kind, time span, drops (and, in ring policy, the buffers the threads'\n"
	"numbering says were overwritten), custom events and whether the trace was\n"
	"closed.\n"
	"\n"
	"DIR, a run directory (fdrtrace record): its processes as a tree, each\n"
	"indented under its parent (those whose parent was not traced under its pid):\n"
	"pid, start (from the run's first), time span, records, records lost, how it\n"
	"ended, command line (the program path when the trace has none), trace file.\n"
	"\n"
	"Options:\n"
	"  -h, --help  show this help\n"
	"\n"
	"Exit status: 0, or 1 when the trace is malformed (the summary of what was\n"
	"read is printed, then FILE:OFFSET: message) or output fails.\n";

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fdrtrace_reader *rd;
	struct fdrtrace_event ev;
	struct info *in;
	const char *path;
	int c, fd, status = EXIT_OK;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			return tool_print_help(info_help);
		return tool_bad_option("info", "h", argv);
	}
	if (optind == argc) {
		/* no FILE: the run or the newest trace here, as the analyses */
		static char def[256];

		if (!run_default_input(def, sizeof(def)))
			return tool_usage_err("info", "missing FILE (and no " RUN_DEFAULT_DIR
					      " run or *.fdr trace in this directory)");
		fprintf(stderr, "fdrtrace info: reading %s (no FILE given)\n", def);
		path = def;
	} else if (optind != argc - 1) {
		return tool_usage_err("info", "one FILE or DIR only");
	} else {
		path = argv[optind];
	}
	if (strcmp(path, "-") && run_is_dir(path) == 1)
		return info_run(path);
	in = calloc(1, sizeof(*in));
	if (!in) {
		tool_err("out of memory");
		return EXIT_FAIL;
	}
	fd = tool_open_input(path);
	if (fd < 0) {
		free(in);
		return EXIT_FAIL;
	}
	rd = fdrtrace_reader_open(fd);
	if (!rd) {
		tool_err("%s: %s", path, strerror(errno));
		tool_close_input(fd);
		free(in);
		return EXIT_FAIL;
	}
	/* Plain function records in runs, everything else event by event. */
	for (;;) {
		struct fdrtrace_func_run run;

		if (fdrtrace_reader_read_functions(rd, &run, SIZE_MAX)) {
			info_functions(in, &run);
			continue;
		}
		if (fdrtrace_reader_read(rd, &ev) != 0)
			break;
		info_event(in, &ev);
	}
	info_print(in, path);
	info_print_nstacks(in);
	if (ev.state == FDRTRACE_ERROR) {
		uint64_t off = 0;

		fdrtrace_reader_error(rd, &off);
		printf("%-17s%s:%" PRIu64 ": %s\n", "error:", path, off,
		       fdrtrace_reader_errmsg(rd));
		fflush(stdout);
		fprintf(stderr, "%s:%" PRIu64 ": %s\n", path, off, fdrtrace_reader_errmsg(rd));
		status = EXIT_FAIL;
	}
	fdrtrace_reader_close(rd);
	tool_close_input(fd);
	for (unsigned i = 0; i < in->n_nstacks; i++)
		free(in->nstack[i]);
	ns_fini(&in->ns);
	free(in);
	if (tool_finish_stdout())
		status = EXIT_FAIL;
	return status;
}
