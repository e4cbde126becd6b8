// SPDX-License-Identifier: MIT
/*
 * runtime/record/events.c - what the control API writes into the calling thread's
 * buffer: extension records, custom and typed events, call arguments, and a
 * thread's ignore.
 *
 * Contract: the calling thread, its guard held (FDR_GUARD_BUSY); a record
 * that does not fit hands the buffer over and claims a fresh one, as the
 * slow path does.
 */
#include <errno.h>
#include <string.h>

#include "buffer_queue.h"
#include "clock.h"
#include "record_internal.h"
#include "records.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"

/*
 * Room in @t's buffer for one metadata record and @len payload bytes: a
 * buffer that lacks it is handed over and a fresh one claimed. Return:
 * where the record goes, or NULL with *@err -EAGAIN (no thread state),
 * -ENOBUFS (the pool is empty) or -EMSGSIZE (no buffer can hold it).
 */
static notrace uint8_t *slow_reserve_event(struct fdr_thread *t, size_t len, int *err)
{
	size_t need = FDRTRACE_METADATA_RECORD_SIZE + len;
	uint64_t tsc;
	unsigned cpu;
	uint8_t *pos;

	if (fdr_thread_ensure(t) < 0) {
		*err = -EAGAIN;
		return NULL;
	}
	tsc = fdr_clock_read(&cpu);
	if (t->buf && atomic_load_explicit(&t->pos, memory_order_relaxed) + need > slow_cap_end(t->buf))
		fdr_thread_handover(t);
	if (!t->buf && slow_claim(t, tsc, cpu) < 0) {
		*err = -ENOBUFS;
		return NULL;
	}
	pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	if (pos + need > slow_cap_end(t->buf)) {
		*err = -EMSGSIZE;
		return NULL;
	}
	return pos;
}

notrace int fdr_thread_emit_ext(struct fdr_thread *t, const uint8_t *payload, size_t len)
{
	uint8_t *pos;
	int err;

	pos = slow_reserve_event(t, len, &err);
	if (!pos)
		return err;
	pos = slow_put_custom(t, pos, payload, len);
	t->buf->counted = false;
	t->rewind_floor = pos;
	/* release: the records before @pos; pairs with fdr_snapshot_thread()'s acquire load */
	atomic_store_explicit(&t->pos, pos, memory_order_release);
	return 0;
}

notrace size_t fdr_event_max(void)
{
	/*
	 * Half a buffer: a fresh buffer always has room for it after its
	 * preamble, drop notices and stack record (at most a quarter).
	 */
	return fdr_cfg.buffer_size / 2 - FDRTRACE_METADATA_RECORD_SIZE;
}

/*
 * A custom event (@typed 0) or typed event (@typed 1, v5 only) with the
 * application's bytes. The caller holds the guard and checked @len.
 */
notrace int fdr_thread_emit_event(struct fdr_thread *t, int typed, uint16_t type,
				  const void *data, size_t len)
{
	uint8_t *pos;
	int err;

	if (len > fdr_event_max())
		return -EMSGSIZE;
	/* -EMSGSIZE is not returned here: a fresh buffer has room for fdr_event_max() */
	pos = slow_reserve_event(t, len, &err);
	if (!pos)
		return err;
	if (typed) {
		struct fdrtrace_md_typed_event m;

		memset(&m, 0, sizeof(m));
		m.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_TYPED_EVENT);
		m.size = (int32_t)len;
		m.delta = 0;	/* the event shares the previous record's time */
		m.event_type = type;
		memcpy(pos, &m, sizeof(m));
		pos += sizeof(m);
	} else {
		pos += fdr_custom_event_md(pos, (uint32_t)len, t->last_tsc);
	}
	memcpy(pos, data, len);
	pos += len;
	t->buf->counted = false;
	t->rewind_floor = pos;
	/* release: the records before @pos; pairs with fdr_snapshot_thread()'s acquire load */
	atomic_store_explicit(&t->pos, pos, memory_order_release);
	return 0;
}

/*
 * fdrtrace_log_arg(): the last record must be the calling function's
 * entry (made an Entry_Args record here) or the last CallArgument written
 * after one (@arg_end). Then one CallArgument record is appended.
 */
notrace int fdr_thread_log_arg(struct fdr_thread *t, uint64_t value)
{
	struct fdrtrace_md_call_argument m;
	uint8_t *pos;
	uint32_t word;

	if (t->state != FDR_T_ACTIVE || !t->buf || t->ignored)
		return -ENOENT;
	pos = atomic_load_explicit(&t->pos, memory_order_relaxed);
	if (pos + sizeof(m) > slow_cap_end(t->buf))
		return -ENOBUFS;	/* the entry is in a full buffer: nowhere to put it */
	if (pos != t->arg_end) {
		/* the first argument: the last record must be a plain entry, not metadata */
		if (pos - FDRTRACE_FUNC_RECORD_SIZE < t->rewind_floor)
			return -ENOENT;
		memcpy(&word, pos - FDRTRACE_FUNC_RECORD_SIZE, sizeof(word));
		if ((word & 1) || fdrtrace_func_word_action(word) != FDRTRACE_FN_ENTRY)
			return -ENOENT;
		word = fdrtrace_func_word(FDRTRACE_FN_ENTRY_ARGS, fdrtrace_func_word_id(word));
		memcpy(pos - FDRTRACE_FUNC_RECORD_SIZE, &word, sizeof(word));
	}
	memset(&m, 0, sizeof(m));
	m.type = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_CALL_ARGUMENT);
	m.arg = value;
	memcpy(pos, &m, sizeof(m));
	pos += sizeof(m);
	t->buf->meta += sizeof(m);
	t->rewind_floor = pos;	/* arguments are never erased */
	t->arg_end = pos;
	/* release: the records before @pos; pairs with fdr_snapshot_thread()'s acquire load */
	atomic_store_explicit(&t->pos, pos, memory_order_release);
	return 0;
}

/* fdrtrace_thread_ignore(): hand the buffer over; the hooks stop at the slow path. */
notrace void fdr_thread_set_ignored(struct fdr_thread *t)
{
	t->ignored = true;
	if (t->state == FDR_T_ACTIVE && t->buf)
		fdr_thread_handover(t);
	atomic_store_explicit(&t->end, NULL, memory_order_relaxed);
}
