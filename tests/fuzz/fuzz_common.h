/* SPDX-License-Identifier: MIT */
/*
 * fuzz_common.h - shared pieces of the reader's libFuzzer targets: drain a
 * reader (skipping damaged buffers, decoding extension payloads on the
 * way), and a compact digest of the events so two runs can be compared.
 *
 * Contract: fuzz targets only. abort() marks a reader bug for libFuzzer.
 */
#ifndef FDR_FUZZ_COMMON_H
#define FDR_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fdrtrace/reader.h>

struct digest {
	uint64_t events;
	uint64_t hash;
	enum fdrtrace_state final;
	enum fdrtrace_error err;
	uint64_t err_offset;
	int skips;
};

static inline uint64_t fz_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* Fold one OK event into the digest and check what must always hold. */
static inline void fz_event(struct digest *d, const struct fdrtrace_event *ev, uint64_t *next)
{
	struct fdrtrace_ext ext;
	size_t pos = 0;
	struct fdrtrace_str k, v;

	if (ev->state != FDRTRACE_OK || ev->type >= FDRTRACE_EV_TYPE_COUNT ||
	    ev->raw_len != ev->size || (ev->size && !ev->raw) || ev->serial != d->events)
		abort();
	/* Events tile the stream, except where a damaged buffer was skipped. */
	if (ev->offset < *next || (!d->skips && ev->offset != *next))
		abort();
	*next = ev->offset + ev->size;
	d->events++;
	d->hash = fz_mix(d->hash, ev->offset);
	d->hash = fz_mix(d->hash, ev->type);
	d->hash = fz_mix(d->hash, ev->tsc);
	d->hash = fz_mix(d->hash, ev->wall_ns);
	d->hash = fz_mix(d->hash, ((uint64_t)(uint32_t)ev->tid << 32) | (uint32_t)ev->pid);
	d->hash = fz_mix(d->hash, ev->cpu);
	for (size_t i = 0; i < ev->raw_len; i++)
		d->hash = fz_mix(d->hash, ev->raw[i]);
	if (ev->type == FDRTRACE_EV_CUSTOM_EVENT || ev->type == FDRTRACE_EV_TYPED_EVENT) {
		if (ev->u.event.data != ev->raw + 16 || ev->u.event.size + 16u != ev->size)
			abort();
		if (fdrtrace_ext_decode(ev->u.event.data, ev->u.event.size, &ext) == 0 &&
		    ext.kind == FDRTRACE_EXT_CONFIG)
			while (fdrtrace_ext_config_pair(&ext, &pos, &k, &v) == 1)
				;
	}
}

/*
 * A run from fdrtrace_reader_read_functions(), folded in as the events the
 * per-record path gives for its records (each record's time from
 * fdrtrace_reader_wall_ns()), after checking its contract (reader.h).
 */
static inline void fz_run(struct digest *d, struct fdrtrace_reader *r,
			  const struct fdrtrace_func_run *run, uint64_t *next)
{
	uint64_t tsc = run->tsc_before, prev_wall = 0;
	size_t zeros = 0;

	if (!run->count)
		abort();
	for (size_t i = 0; i < run->count; i++) {
		const uint8_t *p = run->records + i * FDRTRACE_FUNC_RECORD_SIZE;
		struct fdrtrace_event ev;
		uint32_t word, delta;

		memcpy(&word, p, 4);
		memcpy(&delta, p + 4, 4);
		if ((word & 1) || fdrtrace_func_word_action(word) > FDRTRACE_FN_TAIL_EXIT ||
		    tsc + delta < tsc)
			abort();
		tsc += delta;
		memset(&ev, 0, sizeof(ev));
		ev.state = FDRTRACE_OK;
		ev.offset = run->offset + i * FDRTRACE_FUNC_RECORD_SIZE;
		ev.serial = run->serial + i;
		ev.size = FDRTRACE_FUNC_RECORD_SIZE;
		ev.type = FDRTRACE_EV_FUNCTION;
		ev.tsc = tsc;
		ev.wall_ns = fdrtrace_reader_wall_ns(r, tsc);
		ev.tid = run->tid;
		ev.pid = run->pid;
		ev.cpu = run->cpu;
		ev.raw = p;
		ev.raw_len = FDRTRACE_FUNC_RECORD_SIZE;
		if ((i == 0 && ev.wall_ns != run->first_wall_ns) || ev.wall_ns < prev_wall ||
		    (i + 1 == run->count && ev.wall_ns != run->last_wall_ns))
			abort();
		prev_wall = ev.wall_ns;
		zeros += ev.wall_ns == 0;
		fz_event(d, &ev, next);
	}
	if (tsc != run->tsc || (zeros && zeros != run->count))
		abort();
}

/* Note how a run stopped; true when it should go on after skipping a buffer. */
static inline int fz_stop(struct digest *d, struct fdrtrace_reader *r, enum fdrtrace_state s)
{
	d->final = s;
	d->err = fdrtrace_reader_error(r, &d->err_offset);
	if (s == FDRTRACE_ERROR && (d->err == FDRTRACE_E_NONE || d->err >= FDRTRACE_E_COUNT ||
				    !fdrtrace_reader_errmsg(r)[0]))
		abort();
	if (s == FDRTRACE_ERROR && d->skips < 8 && fdrtrace_reader_skip_buffer(r) == 0) {
		d->skips++;
		return 1;
	}
	return 0;
}

#endif /* FDR_FUZZ_COMMON_H */
