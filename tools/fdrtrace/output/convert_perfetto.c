/* SPDX-License-Identifier: MIT */
/*
 * convert_perfetto.c - convert's Perfetto trace: protobuf TracePackets
 * (perfetto.protos.Trace, field 1 repeated), which ui.perfetto.dev and
 * trace_processor read natively.
 *
 * Hand-encoded: the few messages needed (TracePacket, TrackEvent,
 * TrackDescriptor with Process/ThreadDescriptor, InternedData with event
 * names and categories, DebugAnnotation) are a page of varints and
 * length-delimited fields. A protobuf library (protobuf-c) would bring a
 * code generator, the .proto files and a run-time dependency for the same
 * bytes, and still need a streaming writer around it.
 *
 * Layout of the output, one packet sequence (trusted_packet_sequence_id 1):
 *   - the first packet clears the incremental state and interns the
 *     categories and the names of instants;
 *   - a process track (uuid 2^32 + pid) and a thread track (uuid: thread
 *     index + 1, parent: its process) are described before the thread's
 *     first event, and again at the end with the final names;
 *   - a call is a TYPE_SLICE_BEGIN and a TYPE_SLICE_END on its thread's
 *     track, in time order (order.c with @split); its name is interned
 *     (InternedData.event_names) in the packet of its first use;
 *   - the values logged inside a call (fdrtrace_log_arg(), typed events)
 *     are debug annotations "arg0", "event0.type", ... of its begin (or
 *     end, when they came after the begin was written);
 *   - application events, gaps and native stacks are TYPE_INSTANT events
 *     with debug annotations (payload size, type; lost records; signal,
 *     frames).
 * Timestamps are nanoseconds of the trace's clock.
 *
 * Field numbers (perfetto/protos/perfetto/trace/...):
 *   Trace.packet 1; TracePacket: timestamp 8, trusted_packet_sequence_id 10,
 *   track_event 11, interned_data 12, sequence_flags 13, track_descriptor 60;
 *   TrackEvent: category_iids 3, debug_annotations 4, type 9, name_iid 10,
 *   track_uuid 11; TrackDescriptor: uuid 1, name 2, process 3, thread 4,
 *   parent_uuid 5; ProcessDescriptor: pid 1, process_name 6;
 *   ThreadDescriptor: pid 1, tid 2, thread_name 5; InternedData:
 *   event_categories 1, event_names 2 (EventCategory/EventName: iid 1,
 *   name 2); DebugAnnotation: uint_value 3, int_value 4, string_value 6,
 *   name 10.
 *
 * Contract: single-threaded tool code.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

/* Wire types. */
#define PB_VARINT 0
#define PB_LEN 2

/* TracePacket.sequence_flags */
#define PF_SEQ_CLEARED 1
#define PF_SEQ_NEEDS 2

/* TrackEvent.Type */
#define PF_BEGIN 1
#define PF_END 2
#define PF_INSTANT 3

#define PF_SEQ 1		/* our only packet sequence */
#define PF_SLICE_ROOM 64	/* what pf_slice_put() may touch */
#define PF_TS_NONE UINT64_MAX	/* no timestamp's bits 21 and above are this */
#define PF_NAME_MAX 4096	/* longer names are cut (never in practice) */
#define PF_MSG_MAX 40000	/* a packet: a name, or a native stack of 64 frames */

/* Interned categories and instant names, in the first packet. */
enum { PF_CAT_FUNCTION = 1, PF_CAT_EVENT, PF_CAT_GAP, PF_CAT_NATIVE, PF_CAT_FDRTRACE,
       PF_CAT_PROCESS };
static const char *const pf_cats[] = { NULL, "function", "event", "gap", "native_stack",
				       "fdrtrace", "process" };
enum { PF_NAME_CUSTOM = 1, PF_NAME_TYPED, PF_NAME_LOST, PF_NAME_CRASH, PF_NAME_STARTED,
       PF_NAME_KILLED, PF_NAME_WAIT, PF_NAME_FORK, PF_NAME_EXEC, PF_NAME_SPAWN,
       PF_NAME_FIRST_FN };
static const char *const pf_names[] = { NULL, "custom event", "typed event", "records lost",
					"crash", "recording started", "killed by a signal",
					"fdrtrace: waited for a buffer", "fork", "exec", "spawn" };

/*
 * A thread's state: described yet, and the bytes of its slice packets after
 * the timestamp (pf_slice()): 'sequence id 1, flags 2, TrackEvent (length
 * at [5]): type BEGIN|END, track uuid U', @tail_len bytes; a begin adds its
 * name's iid (struct pf_name).
 */
struct pf_thread {
	bool described, ready;
	uint8_t tail_len;	/* at most 9 + 7: a uuid below 2^49 (pf_thread_uuid()) */
	uint8_t begin[20], end[20];
};

/* A function's interned name (an_func.uptr): the iid, and 'name_iid IID' as bytes. */
struct pf_name {
	uint64_t iid;
	uint8_t field[16];	/* at most 1 + 10 bytes */
	uint8_t len;
};

/*
 * @last_t, @last: the thread of the last slice and its state (the array
 * moves when it grows: both are reset then); @ts_hi, @ts_len, @ts_bytes:
 * the timestamp varint of the last slice, reused from its fourth byte on
 * when the next one has the same bits 21 and above, @ts_hi (PF_TS_NONE
 * when there is none, or it had three bytes or fewer: see pf_ts()).
 */
struct pf {
	uint64_t next_iid;	/* the next function name iid */
	struct pf_thread *threads;
	uint32_t n_threads;
	int32_t *pids;		/* processes described, in that order */
	uint32_t n_pids, pids_cap;
	uint32_t *pid_hash;	/* pid -> index + 1 in @pids (0: empty; load <= 1/2) */
	uint32_t pid_hash_cap;
	bool oom;
	bool flow_track;	/* the trace's fork/exec track is described (pf_flow()) */
	const struct an_thread *last_t;
	struct pf_thread *last;
	uint64_t ts_hi;
	uint32_t ts_low;	/* the continuation bits of the three low bytes, the fourth byte */
	uint8_t ts_len;
	uint8_t ts_bytes[16];
};

/* A message being built, in a fixed buffer. */
struct pb {
	uint8_t *p, *end;
	uint8_t buf[PF_MSG_MAX];
};

static void pb_init(struct pb *m)
{
	m->p = m->buf;
	m->end = m->buf + sizeof(m->buf);
}

static size_t pb_len(const struct pb *m)
{
	return (size_t)(m->p - m->buf);
}

static uint8_t *pb_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Each writer below checks room for its worst case (a tag and a varint: 20 bytes). */
static bool pb_room(const struct pb *m, size_t n)
{
	return (size_t)(m->end - m->p) >= n + 20;
}

static void pb_uint(struct pb *m, unsigned field, uint64_t v)
{
	if (!pb_room(m, 0))
		return;
	m->p = pb_put_varint(m->p, (uint64_t)field << 3 | PB_VARINT);
	m->p = pb_put_varint(m->p, v);
}

static void pb_int(struct pb *m, unsigned field, int64_t v)
{
	pb_uint(m, field, (uint64_t)v);	/* int32/int64: two's complement varint */
}

static void pb_bytes(struct pb *m, unsigned field, const void *data, size_t len)
{
	if (!pb_room(m, len))
		return;
	m->p = pb_put_varint(m->p, (uint64_t)field << 3 | PB_LEN);
	m->p = pb_put_varint(m->p, len);
	memcpy(m->p, data, len);
	m->p += len;
}

static void pb_str(struct pb *m, unsigned field, const char *s)
{
	size_t n = strlen(s);

	pb_bytes(m, field, s, n < PF_NAME_MAX ? n : PF_NAME_MAX);
}

static void pb_msg(struct pb *m, unsigned field, const struct pb *sub)
{
	pb_bytes(m, field, sub->buf, pb_len(sub));
}

/* Trace.packet: one length-delimited field 1 per packet, straight to the output. */
static void pf_emit(struct cv *cv, const struct pb *pk)
{
	uint8_t hdr[12], *p = hdr;

	*p++ = 1 << 3 | PB_LEN;
	p = pb_put_varint(p, pb_len(pk));
	cv_put(cv, hdr, (size_t)(p - hdr));
	cv_put(cv, pk->buf, pb_len(pk));
	cv->events++;
}

/*
 * cv->uuid_base of the trace being written: of a run, trace k's threads
 * are k * 2^33 + index + 1 (below 2^49 for 2^15 traces), apart from each
 * other and from the processes' 2^32 + pid. Taken from the cv before a
 * thread is described (pf_track_slow()) and where names are written.
 */
static uint64_t pf_uuid_base;

static uint64_t pf_thread_uuid(const struct an_thread *t)
{
	return pf_uuid_base + (uint64_t)t->index + 1;
}

static uint64_t pf_process_uuid(int32_t pid)
{
	return (1ull << 32) | (uint32_t)pid;
}

/* A packet with a TrackDescriptor: a process's, or a thread's (@t not NULL). */
static void pf_describe(struct cv *cv, const struct analysis *a, int32_t pid,
			const struct an_thread *t)
{
	static struct pb pk, td, d;
	char label[80];

	pb_init(&pk);
	pb_init(&td);
	pb_init(&d);
	pb_int(&d, 1, pid);
	if (t) {
		pb_int(&d, 2, t->tid);
		pb_str(&d, 5, an_thread_label(t, label, sizeof(label)));
		pb_uint(&td, 1, pf_thread_uuid(t));
		pb_uint(&td, 5, pf_process_uuid(pid));
		pb_msg(&td, 4, &d);
	} else {
		if (pid == a->pid && cv->proc_name)
			pb_str(&d, 6, cv->proc_name);
		else if (pid == a->pid && a->program)
			pb_str(&d, 6, a->program);
		pb_uint(&td, 1, pf_process_uuid(pid));
		pb_msg(&td, 3, &d);
	}
	pb_uint(&pk, 10, PF_SEQ);
	pb_msg(&pk, 60, &td);
	pf_emit(cv, &pk);
}

static uint32_t pf_pid_slot(const struct pf *pf, int32_t pid)
{
	uint32_t j = ((uint32_t)pid * 0x9e3779b1u) & (pf->pid_hash_cap - 1);

	while (pf->pid_hash[j] && pf->pids[pf->pid_hash[j] - 1] != pid)
		j = (j + 1) & (pf->pid_hash_cap - 1);
	return j;
}

/*
 * A process's track, described once: its pid found in a hash (100,000
 * processes took 3.4 s with a search of the list per thread).
 */
static void pf_describe_process(struct cv *cv, struct pf *pf, const struct analysis *a,
				int32_t pid)
{
	if (pf->pid_hash_cap && pf->pid_hash[pf_pid_slot(pf, pid)])
		return;
	if (pf->n_pids == pf->pids_cap) {
		uint32_t cap = pf->pids_cap ? pf->pids_cap * 2 : 8;
		int32_t *n = realloc(pf->pids, cap * sizeof(*n));
		uint32_t *h = calloc((size_t)cap * 2, sizeof(*h));

		if (!n || !h) {
			free(h);
			if (n)
				pf->pids = n;
			pf->oom = true;
			return;
		}
		pf->pids = n;
		pf->pids_cap = cap;
		free(pf->pid_hash);
		pf->pid_hash = h;
		pf->pid_hash_cap = cap * 2;
		for (uint32_t i = 0; i < pf->n_pids; i++)
			pf->pid_hash[pf_pid_slot(pf, pf->pids[i])] = i + 1;
	}
	pf->pids[pf->n_pids++] = pid;
	pf->pid_hash[pf_pid_slot(pf, pid)] = pf->n_pids;
	pf_describe(cv, a, pid, NULL);
}

/* A thread's slice bytes (struct pf_thread), made once. */
static void pf_thread_ready(struct pf_thread *th, const struct an_thread *t)
{
	uint8_t uuid[10];
	size_t n = (size_t)(pb_put_varint(uuid, pf_thread_uuid(t)) - uuid);
	static const uint8_t head[] = {
		10 << 3 | PB_VARINT, PF_SEQ, 13 << 3 | PB_VARINT, PF_SEQ_NEEDS,
		11 << 3 | PB_LEN, 0, 9 << 3 | PB_VARINT, 0, 11 << 3 | PB_VARINT,
	};

	memcpy(th->begin, head, sizeof(head));
	th->begin[7] = PF_BEGIN;
	memcpy(th->begin + sizeof(head), uuid, n);
	memcpy(th->end, th->begin, sizeof(th->begin));
	th->end[7] = PF_END;
	th->end[5] = (uint8_t)(3 + n);	/* type (2 bytes), uuid (1 + n) */
	th->tail_len = (uint8_t)(sizeof(head) + n);
	th->ready = true;
}

/* A thread's state, @t's slot made when new; NULL when out of memory. */
static struct pf_thread *pf_thread(struct pf *pf, const struct an_thread *t)
{
	struct pf_thread *th;

	if (t->index >= pf->n_threads) {
		uint32_t n = pf->n_threads ? pf->n_threads : 16;
		struct pf_thread *p;

		while (n <= t->index)
			n *= 2;
		p = realloc(pf->threads, n * sizeof(*p));
		if (!p) {
			pf->oom = true;
			return NULL;
		}
		memset(p + pf->n_threads, 0, (n - pf->n_threads) * sizeof(*p));
		pf->threads = p;
		pf->n_threads = n;
		pf->last_t = NULL;	/* @last pointed into the old array */
	}
	th = &pf->threads[t->index];
	if (!th->ready)
		pf_thread_ready(th, t);
	return th;
}

/* Before a thread's first event: its process's and its own track. */
static struct pf_thread *pf_track_slow(struct cv *cv, const struct analysis *a,
				       const struct an_thread *t)
{
	struct pf *pf = cv->fmt_state;
	struct pf_thread *th;

	pf_uuid_base = cv->uuid_base;
	th = pf_thread(pf, t);
	if (!th)
		return NULL;
	if (!th->described) {
		th->described = true;
		pf_describe_process(cv, pf, a, cv_pid(a, t));
		pf_describe(cv, a, cv_pid(a, t), t);
	}
	pf->last_t = t;
	pf->last = th;
	return th;
}

/* pf_track_slow(), the same thread as the last time in a few instructions. */
static inline struct pf_thread *pf_track(struct cv *cv, const struct analysis *a,
					 const struct an_thread *t)
{
	struct pf *pf = cv->fmt_state;

	if (__builtin_expect(pf->last_t == t, 1))
		return pf->last;
	return pf_track_slow(cv, a, t);
}

/* A debug annotation with a string name and a uint or string value. */
static void pf_arg_uint(struct pb *te, const char *name, uint64_t v)
{
	struct pb d;

	pb_init(&d);
	pb_str(&d, 10, name);
	pb_uint(&d, 3, v);
	pb_msg(te, 4, &d);
}

static void pf_arg_str(struct pb *te, const char *name, const char *v)
{
	struct pb d;

	pb_init(&d);
	pb_str(&d, 10, name);
	pb_str(&d, 6, v);
	pb_msg(te, 4, &d);
}

/*
 * The values logged inside a call (struct ord_args) as debug annotations:
 * fdrtrace_log_arg()'s "arg0", "arg1", ...: int_value for a negative
 * 32-bit number, else uint_value (exact: no viewer's rounding); a typed
 * event's "event0.type", "event0.size" and "event0.value" (printable) or
 * "event0.hex", "event0.bytes_left_out" when longer than ORD_ARG_BYTES
 * (pf_typed()); "args_left_out" when more than ORD_ARGS were logged.
 */
static void pf_typed(struct pb *te, const struct ord_arg *e, unsigned k)
{
	char name[32], text[2 * ORD_ARG_BYTES + 1];
	size_t n = e->len;
	bool printable = true;

	if (n && n == e->size && e->bytes[n - 1] == 0)
		n--;	/* a C string */
	for (size_t i = 0; i < n; i++)
		printable &= e->bytes[i] >= 0x20 && e->bytes[i] < 0x7f;
	snprintf(name, sizeof(name), "event%u.type", k);
	pf_arg_uint(te, name, e->type);
	snprintf(name, sizeof(name), "event%u.size", k);
	pf_arg_uint(te, name, e->size);
	if (printable) {
		memcpy(text, e->bytes, n);
		text[n] = '\0';
		snprintf(name, sizeof(name), "event%u.value", k);
	} else {
		for (size_t i = 0; i < e->len; i++)
			snprintf(text + 2 * i, 3, "%02x", e->bytes[i]);
		text[2 * e->len] = '\0';
		snprintf(name, sizeof(name), "event%u.hex", k);
	}
	pf_arg_str(te, name, text);
	if (e->size > e->len) {
		snprintf(name, sizeof(name), "event%u.bytes_left_out", k);
		pf_arg_uint(te, name, e->size - e->len);
	}
}

static void pf_args(struct pb *te, const struct ord_args *r)
{
	unsigned n_val = 0, n_ev = 0;

	for (uint32_t k = 0; r && k < r->n && k < ORD_ARGS; k++) {
		uint64_t v = r->a[k].v;
		char name[16];
		struct pb d;

		if (r->a[k].kind == ORD_ARG_TYPED) {
			pf_typed(te, &r->a[k], n_ev++);
			continue;
		}
		snprintf(name, sizeof(name), "arg%u", n_val++);
		pb_init(&d);
		pb_str(&d, 10, name);
		if ((int64_t)v < 0 && (int64_t)v >= INT32_MIN)
			pb_int(&d, 4, (int64_t)v);
		else
			pb_uint(&d, 3, v);
		pb_msg(te, 4, &d);
	}
	if (r && r->n > ORD_ARGS)
		pf_arg_uint(te, "args_left_out", r->n - ORD_ARGS);
}

/*
 * One event packet: @te is the TrackEvent; @interned, when not NULL, the
 * InternedData that goes with it (a name's first use).
 */
static void pf_event(struct cv *cv, const struct analysis *a, uint64_t tsc, const struct pb *te,
		     const struct pb *interned)
{
	static struct pb pk;

	pb_init(&pk);
	pb_uint(&pk, 8, cv_ns(cv, a, tsc));
	pb_uint(&pk, 10, PF_SEQ);
	pb_uint(&pk, 13, PF_SEQ_NEEDS);
	if (interned)
		pb_msg(&pk, 12, interned);
	pb_msg(&pk, 11, te);
	pf_emit(cv, &pk);
}

/* The interned name of a function; @interned gets its entry on first use. */
static const struct pf_name *pf_name_slow(struct cv *cv, struct analysis *a, struct an_func *fn,
					  struct pb *interned, bool *fresh)
{
	struct pf *pf = cv->fmt_state;
	struct pf_name *nm;
	struct pb e;

	nm = malloc(sizeof(*nm));
	if (!nm) {
		pf->oom = true;
		return NULL;
	}
	nm->iid = pf->next_iid++;
	nm->field[0] = 10 << 3 | PB_VARINT;
	nm->len = (uint8_t)(pb_put_varint(nm->field + 1, nm->iid) - nm->field);
	fn->uptr = nm;	/* freed by an_fini() */
	pb_init(&e);
	pb_uint(&e, 1, nm->iid);
	pb_str(&e, 2, an_func_name(a, fn));
	pb_init(interned);
	pb_msg(interned, 2, &e);
	*fresh = true;
	return nm;
}

/*
 * The timestamp as a TracePacket field (tag and varint) at @p. A varint's
 * bytes from the fourth on hold bits 21 and above, and its length depends
 * on them only: when they are the last timestamp's (for 2 ms of trace),
 * those bytes are copied and only the three low bytes made.
 */
static inline uint8_t *pf_ts(struct pf *pf, uint8_t *p, uint64_t ns)
{
	uint32_t lo = (uint32_t)ns, b;

	*p++ = 8 << 3 | PB_VARINT;
	if (__builtin_expect(ns >> 21 != pf->ts_hi, 0)) {
		uint8_t *e = pb_put_varint(pf->ts_bytes, ns);

		pf->ts_len = (uint8_t)(e - pf->ts_bytes);
		pf->ts_hi = ns >> 21;
		pf->ts_low = 0x808080u | (uint32_t)pf->ts_bytes[3] << 24;
		if (pf->ts_len <= 3) {
			/* a small timestamp: no bytes to reuse */
			memcpy(p, pf->ts_bytes, sizeof(pf->ts_bytes));
			pf->ts_hi = PF_TS_NONE;
			return p + pf->ts_len;
		}
	}
	/* the three low 7-bit groups, each with its continuation bit */
	b = (lo & 0x7f) | (lo << 1 & 0x7f00) | (lo << 2 & 0x7f0000) | pf->ts_low;
	memcpy(p, pf->ts_bytes, sizeof(pf->ts_bytes));
	memcpy(p, &b, 4);
	return p + pf->ts_len;
}

/*
 * The packet of a slice's begin (@nm not NULL) or end without debug
 * annotations, the most of the output: the bytes pf_event() makes for it,
 * from the thread's prepared bytes, at @p (PF_SLICE_ROOM bytes of room at
 * the end of the output). No call: pf_begin() and pf_end() need no saved
 * registers.
 */
static inline __attribute__((always_inline)) void pf_slice_put(struct cv *cv, struct pf *pf,
							       uint8_t *p, uint64_t ns,
							       const struct pf_thread *th,
							       const struct pf_name *nm)
{
	uint8_t *b = pf_ts(pf, p + 2, ns);

	if (nm) {
		memcpy(b, th->begin, sizeof(th->begin));
		b[5] = (uint8_t)(th->end[5] + nm->len);
		b += th->tail_len;
		memcpy(b, nm->field, sizeof(nm->field));
		b += nm->len;
	} else {
		memcpy(b, th->end, sizeof(th->end));
		b += th->tail_len;
	}
	p[0] = 1 << 3 | PB_LEN;
	p[1] = (uint8_t)(b - (p + 2));	/* < 128: a one-byte length */
	cv->len += (size_t)(b - p);
	cv->events++;
}

/* pf_slice_put() anywhere: flushes the output and scales the time as needed. */
static void pf_slice(struct cv *cv, const struct analysis *a, uint64_t tsc,
		     const struct pf_thread *th, const struct pf_name *nm)
{
	uint8_t *p = (uint8_t *)cv_room(cv, PF_SLICE_ROOM);

	pf_slice_put(cv, cv->fmt_state, p, cv_ns(cv, a, tsc), th, nm);
}

/*
 * cv_ns() when the trace has a frequency and the result is below 2^63 (what
 * pf_slice_put() has room for); false otherwise.
 */
static inline bool pf_ns_fast(struct cv *cv, const struct analysis *a, uint64_t tsc, uint64_t *ns)
{
	if (__builtin_expect(!a->freq, 0))
		return false;
	*ns = cv_ns(cv, a, tsc);
	return !(*ns >> 63);
}

/* pf_begin() of a new thread, a name's first use, a call without a known end, ... */
static __attribute__((noinline)) void pf_begin_slow(struct cv *cv, struct analysis *a,
						    struct an_thread *t, const struct ord_item *it)
{
	static struct pb te, interned;
	const struct pf_thread *th = pf_track(cv, a, t);
	const struct pf_name *nm = it->fn->uptr;
	struct pf_thread spare;
	bool fresh = false;

	if (!nm)
		nm = pf_name_slow(cv, a, it->fn, &interned, &fresh);
	if (!fresh && !it->lost && it->closed && nm && !it->args) {
		if (!th) {
			pf_thread_ready(&spare, t);
			th = &spare;
		}
		pf_slice(cv, a, it->tsc, th, nm);
		return;
	}
	pb_init(&te);
	pb_uint(&te, 9, PF_BEGIN);
	pb_uint(&te, 11, pf_thread_uuid(t));
	pb_uint(&te, 10, nm ? nm->iid : 0);
	if (it->lost)
		pf_arg_str(&te, "ended", "unknown: records lost");
	else if (it->never)
		pf_arg_str(&te, "ended", a->st.stopped ? "after recording stopped" : "never");
	else if (!it->closed)
		pf_arg_str(&te, "ended", "unknown when written");
	pf_args(&te, it->args);
	pf_event(cv, a, it->tsc, &te, fresh ? &interned : NULL);
}

/* Inline fast path: the thread of the last slice, a known name, room, a plain time. */
static inline __attribute__((always_inline)) void
pf_begin(void *w, struct analysis *a, struct an_thread *t, const struct ord_item *it)
{
	struct cv *cv = w;
	struct pf *pf = cv->fmt_state;
	const struct pf_name *nm = it->fn->uptr;
	uint64_t ns;

	if (__builtin_expect(pf->last_t != t || !nm || it->lost || !it->closed || it->args ||
			     cv->len > CV_OUT_SIZE - PF_SLICE_ROOM ||
			     !pf_ns_fast(cv, a, it->tsc, &ns), 0)) {
		pf_begin_slow(cv, a, t, it);
		return;
	}
	pf_slice_put(cv, pf, (uint8_t *)cv->out + cv->len, ns, pf->last, nm);
}

/*
 * pf_end() of a call ended by an outer exit, of another thread than the
 * last, with values logged after its begin was written (@args: trace
 * processor adds an end's annotations to the slice), ...
 */
static __attribute__((noinline)) void pf_end_slow(struct cv *cv, struct analysis *a,
						  struct an_thread *t, bool unwound,
						  uint64_t end_tsc, const struct ord_args *args)
{
	struct pf *pf = cv->fmt_state;
	const struct pf_thread *th;
	struct pf_thread spare;
	static struct pb te;

	if (!unwound && !args) {
		th = pf->last_t == t ? pf->last : pf_thread(pf, t);
		if (!th) {
			pf_thread_ready(&spare, t);
			th = &spare;
		}
		pf_slice(cv, a, end_tsc, th, NULL);
		return;
	}
	pb_init(&te);
	pb_uint(&te, 9, PF_END);
	pb_uint(&te, 11, pf_thread_uuid(t));
	if (unwound)
		pf_arg_str(&te, "ended", "by an outer exit");
	pf_args(&te, args);
	pf_event(cv, a, end_tsc, &te, NULL);
}

static inline __attribute__((always_inline)) void
pf_end(void *w, struct analysis *a, struct an_thread *t, bool unwound,
       uint64_t end_tsc, const struct ord_args *args)
{
	struct cv *cv = w;
	struct pf *pf = cv->fmt_state;
	uint64_t ns;

	if (__builtin_expect(unwound || args || pf->last_t != t ||
			     cv->len > CV_OUT_SIZE - PF_SLICE_ROOM ||
			     !pf_ns_fast(cv, a, end_tsc, &ns), 0)) {
		pf_end_slow(cv, a, t, unwound, end_tsc, args);
		return;
	}
	pf_slice_put(cv, pf, (uint8_t *)cv->out + cv->len, ns, pf->last, NULL);
}

static void pf_instant(void *w, struct analysis *a, struct an_thread *t,
		       const struct ord_item *it)
{
	struct cv *cv = w;
	struct pb te;

	pf_track(cv, a, t);
	pb_init(&te);
	if (it->kind == ORD_WAIT) {
		/* a slice: nothing happened on the thread meanwhile */
		pb_uint(&te, 9, PF_BEGIN);
		pb_uint(&te, 11, pf_thread_uuid(t));
		pb_uint(&te, 3, PF_CAT_FDRTRACE);
		pb_uint(&te, 10, PF_NAME_WAIT);
		pf_arg_str(&te, "on_full", "wait");
		pf_event(cv, a, it->tsc, &te, NULL);
		pb_init(&te);
		pb_uint(&te, 9, PF_END);
		pb_uint(&te, 11, pf_thread_uuid(t));
		pf_event(cv, a, it->tsc + it->dur, &te, NULL);
		return;
	}
	pb_uint(&te, 9, PF_INSTANT);
	pb_uint(&te, 11, pf_thread_uuid(t));
	if (it->kind == ORD_GAP) {
		pb_uint(&te, 3, PF_CAT_GAP);
		pb_uint(&te, 10, PF_NAME_LOST);
		pf_arg_uint(&te, "records", it->size);
	} else {
		pb_uint(&te, 3, PF_CAT_EVENT);
		pb_uint(&te, 10, it->type >= 0 ? PF_NAME_TYPED : PF_NAME_CUSTOM);
		pf_arg_uint(&te, "size", it->size);
		if (it->type >= 0)
			pf_arg_uint(&te, "type", (uint64_t)it->type);
	}
	pf_event(cv, a, it->tsc, &te, NULL);
}

static const struct ord_writer pf_writer;

/* ord_drain() with this format's calls made directly (struct ord_writer.drain). */
static void pf_drain(struct ord *o, struct analysis *a, struct an_thread *t, struct ord_queue *q)
{
	ord_drain_with(o, a, t, q, &pf_writer, true);
}

static const struct ord_writer pf_writer = {
	.begin = pf_begin,
	.end = pf_end,
	.instant = pf_instant,
	.drain = pf_drain,
};

static void pf_native(struct cv *cv, struct analysis *a, struct an_thread *t,
		      const struct fdrtrace_ext *x, uint64_t tsc)
{
	enum ns_kind kind = ns_kind(x);
	bool signalled = kind != NS_START;	/* then its number and address too */
	static struct pb te;
	struct ns_frame f;
	uint64_t addr;

	pf_track(cv, a, t);
	pb_init(&te);
	pb_uint(&te, 9, PF_INSTANT);
	pb_uint(&te, 11, pf_thread_uuid(t));
	pb_uint(&te, 3, PF_CAT_NATIVE);
	pb_uint(&te, 10, kind == NS_START ? PF_NAME_STARTED :
			 kind == NS_CRASH ? PF_NAME_CRASH : PF_NAME_KILLED);
	if (signalled) {
		pf_arg_uint(&te, "signal", x->u.native_stack.signal);
		pf_arg_uint(&te, "fault_address", x->u.native_stack.fault_address);
	}
	for (uint32_t i = 0; ns_resolve(&a->ns, x, i, &addr, &f) == 0 && i < 64; i++) {
		char name[24], text[512];

		snprintf(name, sizeof(name), "frame %02" PRIu32, i);
		if (f.module)
			snprintf(text, sizeof(text), "%s (%s+0x%" PRIx64 ")", f.name ? f.name : "??",
				 f.module, f.offset);
		else
			snprintf(text, sizeof(text), "%s (0x%" PRIx64 ", unknown module)",
				 f.name ? f.name : "??", addr);
		pf_arg_str(&te, name, text);
	}
	pf_event(cv, a, tsc, &te, NULL);
}

/* The first packet: a clean incremental state, categories and instant names. */
static int pf_start(struct cv *cv)
{
	static struct pb pk, interned;
	struct pf *pf = calloc(1, sizeof(*pf));
	struct pb e;
	unsigned i;

	if (!pf)
		return -ENOMEM;
	pf->next_iid = PF_NAME_FIRST_FN;
	pf->ts_hi = PF_TS_NONE;
	cv->fmt_state = pf;
	pb_init(&interned);
	for (i = 1; i < sizeof(pf_cats) / sizeof(pf_cats[0]); i++) {
		pb_init(&e);
		pb_uint(&e, 1, i);
		pb_str(&e, 2, pf_cats[i]);
		pb_msg(&interned, 1, &e);
	}
	for (i = 1; i < sizeof(pf_names) / sizeof(pf_names[0]); i++) {
		pb_init(&e);
		pb_uint(&e, 1, i);
		pb_str(&e, 2, pf_names[i]);
		pb_msg(&interned, 2, &e);
	}
	pb_init(&pk);
	pb_uint(&pk, 10, PF_SEQ);
	pb_uint(&pk, 13, PF_SEQ_CLEARED);
	pb_msg(&pk, 12, &interned);
	pf_emit(cv, &pk);
	return 0;
}

/*
 * The names known at the end: every process and thread described again.
 * Of a run, after each trace: its process and threads, then the threads'
 * state is made again for the next trace.
 */
static void pf_finish(struct cv *cv, struct analysis *a)
{
	struct pf *pf = cv->fmt_state;
	uint32_t i;

	if (!a)
		return;	/* the end of a run: nothing more */
	pf_uuid_base = cv->uuid_base;
	for (i = 0; i < pf->n_pids; i++)
		if (!cv->run || pf->pids[i] == a->pid)
			pf_describe(cv, a, pf->pids[i], NULL);
	for (i = 0; i < a->n_threads; i++) {
		const struct an_thread *t = a->threads[i];

		pf_describe_process(cv, pf, a, cv_pid(a, t));
		pf_describe(cv, a, cv_pid(a, t), t);
	}
	if (pf->oom)
		fprintf(stderr, "fdrtrace convert: out of memory: some names are missing\n");
	if (cv->run) {
		if (pf->threads)
			memset(pf->threads, 0, pf->n_threads * sizeof(*pf->threads));
		pf->last_t = NULL;
		pf->last = NULL;
		pf->flow_track = false;
	}
}

/*
 * An end of an arrow between processes: an instant ("fork", "exec") with
 * TrackEvent.flow_ids (47) at the parent's end, terminating_flow_ids (48)
 * at the child's (both fixed64), on a track of the trace's own ("fork/exec",
 * uuid: its uuid_base + 2^32 - 1, under its process): they are written
 * after the trace was read, and a thread's track must not go back in time.
 */
static void pf_flow(struct cv *cv, struct analysis *a, const struct cv_flow *fl)
{
	struct pf *pf = cv->fmt_state;
	uint64_t uuid = cv->uuid_base + 0xffffffffu;
	static struct pb pk, td;
	struct pb te;
	uint8_t *p;

	if (!pf->flow_track) {
		pf->flow_track = true;
		pf_describe_process(cv, pf, a, fl->pid);
		pb_init(&pk);
		pb_init(&td);
		pb_uint(&td, 1, uuid);
		pb_str(&td, 2, "fork/exec");
		pb_uint(&td, 5, pf_process_uuid(fl->pid));
		pb_uint(&pk, 10, PF_SEQ);
		pb_msg(&pk, 60, &td);
		pf_emit(cv, &pk);
	}
	pb_init(&te);
	pb_uint(&te, 9, PF_INSTANT);
	pb_uint(&te, 11, uuid);
	pb_uint(&te, 3, PF_CAT_PROCESS);
	pb_uint(&te, 10, strcmp(fl->name, "exec") == 0 ? PF_NAME_EXEC :
		 strcmp(fl->name, "spawn") == 0 ? PF_NAME_SPAWN : PF_NAME_FORK);
	p = pb_put_varint(te.p, (uint64_t)(fl->end ? 48 : 47) << 3 | 1);	/* fixed64 */
	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(fl->id >> (8 * i));
	te.p = p;
	pf_event(cv, a, fl->tsc, &te, NULL);
}

static void pf_fini(struct cv *cv)
{
	struct pf *pf = cv->fmt_state;

	if (!pf)
		return;
	free(pf->threads);
	free(pf->pids);
	free(pf->pid_hash);
	free(pf);
	cv->fmt_state = NULL;
}

const struct cv_format cv_perfetto = {
	.name = "perfetto",
	.split = true,
	.wr = &pf_writer,
	.start = pf_start,
	.native = pf_native,
	.finish = pf_finish,
	.flow = pf_flow,
	.fini = pf_fini,
};
