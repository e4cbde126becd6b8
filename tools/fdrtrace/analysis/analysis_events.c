/* SPDX-License-Identifier: MIT */
/*
 * analysis_events.c - what each of the reader's events does to the
 * analysis (an_event()), and its runs of function records
 * (an_functions()): buffers and their threads, function records on the
 * thread's stack, fdrtrace's extension records (names, modules, threads,
 * losses, waits, ...), the application's own events.
 *
 * Contract: single-threaded tool code. Allocates per function, thread and
 * module as they are named; never per record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_events.h"

/*
 * One function record of @t (@action, function @id, at @tsc): an entry
 * pushes a call; an exit closes the innermost call of @id, and those
 * above it as unwound; an exit with no open call of @id is counted as
 * unmatched. @plain as at an_push().
 */
static inline __attribute__((always_inline)) void an_function(struct analysis *a, struct an_thread *t, unsigned action, uint32_t id,
			uint64_t tsc, bool plain)
{
	struct an_func *fn;
	uint32_t i;

	/* a record stamped before a held gap began is applied before it */
	if (__builtin_expect(t->held != NULL, 0) && tsc >= t->held->first_tsc)
		an_gap_apply(a, t);
	switch (action) {
	case FDRTRACE_FN_ENTRY:
	case FDRTRACE_FN_ENTRY_ARGS:
		fn = an_func_get(a, id);
		if (!fn || !an_push(a, t, fn, tsc, false, plain))
			return;	/* out of memory: the call is lost, the stack stays right */
		if (!plain && a->ops && a->ops->enter)
			a->ops->enter(a, t, &t->stack[t->depth - 1]);
		return;
	case FDRTRACE_FN_EXIT:
	case FDRTRACE_FN_TAIL_EXIT:
		if (__builtin_expect(t->over != 0, 0)) {
			t->over--;	/* the innermost of the calls too deep to keep */
			return;
		}
		/* Mostly the innermost call's exit. */
		if (__builtin_expect(t->depth && t->stack[t->depth - 1].id == id, 1)) {
			an_close_top(a, t, tsc, AN_END_EXIT, plain);
			return;
		}
		if (an_open_count(t, id) == 0) {
			a->st.unmatched_exits++;
			return;
		}
		for (i = t->depth; i > 0; i--)
			if (t->stack[i - 1].id == id)
				break;
		if (i == 0) {
			a->st.unmatched_exits++;
			return;
		}
		while (t->depth > i)
			an_close_top(a, t, tsc, AN_END_UNWOUND, plain);
		an_close_top(a, t, tsc, AN_END_EXIT, plain);
		return;
	default:
		return;	/* actions 4..7 have no meaning */
	}
}

/*
 * An application's custom or typed event (its payload is not ours): counted,
 * and handed to the command.
 */
static void an_app_event(struct analysis *a, const struct fdrtrace_event *ev)
{
	if (a->pass_mode == 1 || a->buf_repeat)
		return;	/* the reordering pass sees it again; a repeated buffer was seen */
	an_gap_settle(a, a->cur);
	if (ev->type == FDRTRACE_EV_TYPED_EVENT)
		a->st.app_typed++;
	else
		a->st.app_custom++;
	if (a->ops && a->ops->event && a->cur)
		a->ops->event(a, a->cur, ev);
}

/* FDRTRACE_EXT_MODULE_MAP: a module, for ELF names and native stacks' frames. */
static void an_module_add(struct analysis *a, const struct fdrtrace_ext *x)
{
	size_t bl = x->u.module_map.build_id_len;
	struct an_module *m;

	a->ns.no_elf = a->no_elf;
	a->ns.demangle = a->demangle;
	a->ns.sym = a->sym;	/* one symbolizer: each file opened once */
	ns_add_module(&a->ns, x);
	if (a->n_mods == a->mods_cap) {
		uint32_t cap = a->mods_cap ? a->mods_cap * 2 : 16;
		struct an_module *nm = realloc(a->mods, cap * sizeof(*nm));

		if (!nm)
			return;
		a->mods = nm;
		a->mods_cap = cap;
	}
	m = &a->mods[a->n_mods++];
	memset(m, 0, sizeof(*m));
	m->id = x->u.module_map.module_id;
	m->load_base = x->u.module_map.load_base;
	m->size = x->u.module_map.size;
	if (bl > sizeof(m->build_id))
		bl = 0;
	if (bl)
		memcpy(m->build_id, x->u.module_map.build_id, bl);
	m->build_id_len = (uint8_t)bl;
	m->path = malloc((size_t)x->u.module_map.path.len + 1);
	if (m->path) {
		if (x->u.module_map.path.len)
			memcpy(m->path, x->u.module_map.path.ptr, x->u.module_map.path.len);
		m->path[x->u.module_map.path.len] = '\0';
	}
}

static void an_ext(struct analysis *a, const struct fdrtrace_event *ev)
{
	struct fdrtrace_ext x;
	struct an_thread *t;
	struct an_func *fn;
	int rc = fdrtrace_ext_decode(ev->u.event.data, ev->u.event.size, &x);

	if (rc == -ENOENT) {
		an_app_event(a, ev);
		return;
	}
	if (rc < 0)
		return;
	if (a->pass_mode != 1 && !a->buf_repeat)
		an_gap_settle(a, a->cur);
	if (x.kind == FDRTRACE_EXT_STACK) {
		if (a->pass_mode != 1)
			an_seed_stack(a, &x, ev->tsc);
		return;
	}
	if (x.kind == FDRTRACE_EXT_NATIVE_STACK) {
		/* in the pass that walks the calls: it belongs where it happened */
		t = a->pass_mode != 1 ? an_thread_get(a, (int32_t)x.u.native_stack.tid) : NULL;
		if (t && a->ops && a->ops->native)
			a->ops->native(a, t, &x, ev->tsc);
		return;
	}
	/* a gap or a wait is applied in time order, where the thread's buffer says */
	if (a->pass_mode != 1 && a->cur && !a->buf_repeat && x.kind == FDRTRACE_EXT_DROP &&
	    x.u.drop.gap && x.u.drop.tid == (uint32_t)a->cur->tid)
		an_gap_hold(a, a->cur, &x);
	if (a->pass_mode != 1 && a->cur && x.kind == FDRTRACE_EXT_WAIT &&
	    x.u.wait.tid == (uint32_t)a->cur->tid) {
		a->st.waits++;
		if (x.u.wait.last_tsc > x.u.wait.first_tsc)
			a->st.wait_ticks += x.u.wait.last_tsc - x.u.wait.first_tsc;
		if (a->ops && a->ops->wait)
			a->ops->wait(a, a->cur, x.u.wait.first_tsc, x.u.wait.last_tsc);
	}
	if (a->pass_mode == 2)
		return;	/* already collected by the first pass */
	switch (x.kind) {
	case FDRTRACE_EXT_PROCESS:
		if (!a->program) {
			a->program = an_strdup_str(x.u.process.program);
			a->pid = (int32_t)x.u.process.pid;
		}
		break;
	case FDRTRACE_EXT_FUNC:
		fn = an_func_get(a, x.u.func.func_id);
		if (!fn)
			break;
		fn->address = x.u.func.address;
		fn->module_id = x.u.func.module_id;
		if (x.u.func.name.len && !fn->name) {
			fn->name = an_strdup_str(x.u.func.name);
			an_func_rename(a, fn);
		}
		break;
	case FDRTRACE_EXT_MODULE_MAP:
		an_module_add(a, &x);
		break;
	case FDRTRACE_EXT_THREAD_NAME:
		t = an_thread_get(a, (int32_t)x.u.thread_name.tid);
		if (t) {
			free(t->name);
			t->name = an_strdup_str(x.u.thread_name.name);
		}
		break;
	case FDRTRACE_EXT_DROP:
		a->st.dropped_records += x.u.drop.records;
		a->st.dropped_buffers += x.u.drop.buffers;
		break;
	case FDRTRACE_EXT_EXEC:
		a->exec_seen = true;
		if (x.u.exec.has_point && x.u.exec.tsc) {	/* 0: not filled in */
			a->exec_point = true;
			a->exec_tid = (int32_t)x.u.exec.tid;
			a->exec_tsc = x.u.exec.tsc;
		}
		break;
	case FDRTRACE_EXT_SPAWN:
		if (a->ops && a->ops->spawn)
			a->ops->spawn(a, (int32_t)x.u.spawn.tid, x.u.spawn.tsc, x.u.spawn.serial,
				      (int32_t)x.u.spawn.child_pid);
		break;
	case FDRTRACE_EXT_EXCLUDED:
		fn = an_func_get(a, x.u.excluded.func_id);
		if (fn && !x.u.excluded.undone && !fn->excluded) {
			fn->excluded = true;
			a->st.excluded_fns++;
		}
		break;
	case FDRTRACE_EXT_COUNTED: {
		uint32_t id;
		uint64_t calls;

		a->st.counted_lost += x.u.counted.lost;
		for (uint32_t i = 0; fdrtrace_ext_counted_pair(&x, i, &id, &calls) == 0; i++) {
			fn = calls ? an_func_get(a, id) : NULL;
			if (!fn)
				continue;
			if (!fn->counted)
				a->st.counted_fns++;
			fn->counted += calls;
			a->st.counted += calls;
		}
		break;
	}
	case FDRTRACE_EXT_CLOSE:
		a->st.have_close = true;
		a->st.stopped = x.u.close.how == FDRTRACE_CLOSE_STOPPED;
		a->st.stop_error = x.u.close.error;
		break;
	default:
		break;
	}
}

void an_event(struct analysis *a, const struct fdrtrace_event *ev)
{
	struct an_thread *t;

	switch (ev->type) {
	case FDRTRACE_EV_HEADER:
		if (!a->have_hdr) {
			memcpy(&a->hdr, ev->raw, sizeof(a->hdr));
			a->have_hdr = true;
			a->version = ev->u.header.version;
			a->freq = ev->u.header.cycle_frequency;
		}
		return;
	case FDRTRACE_EV_NEW_BUFFER:
		if (a->pass_mode != 1)
			a->st.buffers++;
		a->cur = an_thread_get(a, ev->tid);
		if (a->pass_mode != 1)
			an_gap_settle(a, a->cur);
		a->buf_fresh = true;
		a->buf_repeat = false;
		a->buf_ooo = false;
		a->buf_low = a->cur ? a->cur->depth : 0;
		return;
	case FDRTRACE_EV_PID:
		if (a->cur)
			a->cur->pid = ev->pid;
		return;
	case FDRTRACE_EV_NEW_CPU_ID:
		t = a->cur;
		if (!t || a->pass_mode == 1 || !a->buf_fresh)
			return;
		/* The first reference of a buffer: is it before the thread's last? */
		a->buf_fresh = false;
		a->buf_ooo = t->last_tsc && ev->tsc < t->last_tsc;
		a->st.out_of_order += a->buf_ooo;
		return;
	case FDRTRACE_EV_FUNCTION:
		t = a->cur;
		if (!t || a->pass_mode == 1 || a->buf_repeat)
			return;
		if (ev->tsc > t->last_tsc)
			t->last_tsc = ev->tsc;
		t->records++;
		a->st.records++;
		an_function(a, t, ev->u.func.action, ev->u.func.func_id, ev->tsc, false);
		return;
	case FDRTRACE_EV_CUSTOM_EVENT:
		an_ext(a, ev);
		return;
	case FDRTRACE_EV_TYPED_EVENT:
		an_app_event(a, ev);
		return;
	case FDRTRACE_EV_CALL_ARGUMENT:
		t = a->cur;
		if (t && a->pass_mode != 1 && !a->buf_repeat && a->ops && a->ops->arg && t->depth)
			a->ops->arg(a, t, ev->u.arg.arg);
		return;
	default:
		return;
	}
}

/*
 * The records of @run on @t, each as an_event() takes its event. @plain
 * is a constant where it is inlined: one loop each.
 */
static inline __attribute__((always_inline)) void
an_run_apply(struct analysis *a, struct an_thread *t, const struct fdrtrace_func_run *run,
	     bool plain)
{
	const uint8_t *p = run->records;
	const uint8_t *end = p + run->count * FDRTRACE_FUNC_RECORD_SIZE;
	uint64_t tsc = run->tsc_before;

	for (; p < end; p += FDRTRACE_FUNC_RECORD_SIZE) {
		uint32_t word, delta;

		memcpy(&word, p, 4);
		memcpy(&delta, p + 4, 4);
		tsc += delta;
		an_function(a, t, fdrtrace_func_word_action(word), fdrtrace_func_word_id(word), tsc,
			    plain);
	}
}

/*
 * A run of function records from the reader's batch path: what an_event()
 * does for FDRTRACE_EV_FUNCTION, record by record, without the events.
 * The thread's latest TSC is kept once per run: a run's TSC never wraps,
 * so its last record's is its largest (an_function() does not read it).
 */
void an_functions(struct analysis *a, const struct fdrtrace_func_run *run)
{
	struct an_thread *t = a->cur;

	if (!t || a->pass_mode == 1 || a->buf_repeat)
		return;
	/* nothing to call back per call, no tree: account's loop */
	if (!a->want_cct && (!a->ops || (!a->ops->enter && !a->ops->exit)))
		an_run_apply(a, t, run, true);
	else
		an_run_apply(a, t, run, false);
	t->records += run->count;
	a->st.records += run->count;
	if (run->tsc > t->last_tsc)
		t->last_tsc = run->tsc;
}

