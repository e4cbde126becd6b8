// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_ring.c - the ring policy (runtime/record/ring.c) over the
 * real pool (buffer_queue.c): the oldest buffer handed over is the one
 * taken back, what a dump then writes (the newest, oldest first), and the
 * records counted as overwritten, so that kept + dropped = made.
 *
 * The test plays the part of a recording thread: it fills buffers with
 * function records (and an FDRx drop record where a test needs one),
 * walks them as a handover does (fdr_ring_stack_advance()) and hands them
 * over. The file layer is replaced by a list of what was written.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "buffer_queue.h"
#include "config.h"
#include "ext_encode.h"
#include "records.h"
#include "ring.h"
#include "state.h"

/* ---- the rest of the runtime, as ring.c sees it ---- */

struct fdr_config fdr_cfg;
_Atomic uint64_t fdr_orphan_rec[FDRTRACE_DROP_REASON_COUNT];
_Atomic uint64_t fdr_orphan_buf[FDRTRACE_DROP_REASON_COUNT];

#define MAX_WRITES 64
static const uint8_t *written[MAX_WRITES];
static uint64_t written_len[MAX_WRITES];
static unsigned writes;

static int file_write(const uint8_t *data, uint64_t len)
{
	cr_assert_lt(writes, MAX_WRITES);
	written[writes] = data;
	written_len[writes++] = len;
	return 0;
}

size_t fdr_custom_event_md(uint8_t *p, uint32_t size, uint64_t tsc)
{
	(void)tsc;
	memset(p, 0, FDRTRACE_METADATA_RECORD_SIZE);
	p[0] = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_CUSTOM_EVENT);
	memcpy(p + 1, &size, sizeof(size));
	return FDRTRACE_METADATA_RECORD_SIZE;
}

/* ---- a recording thread ---- */

#define SIZE 4096u
#define COUNT 4u

static void setup(void)
{
	memset(&fdr_cfg, 0, sizeof(fdr_cfg));
	fdr_cfg.policy = FDR_POLICY_RING;
	fdr_cfg.buffer_size = SIZE;
	fdr_cfg.buffer_max = COUNT;
	cr_assert_eq(fdr_pool_init(SIZE, COUNT, COUNT), 0);
}

/* A buffer: from the pool, or, the pool empty, the oldest handed over. */
static struct fdr_buffer *claim(void)
{
	struct fdr_buffer *b = fdr_pool_get();

	return b ? b : fdr_ring_take_oldest();
}

/*
 * Fill @b with @records function records of function @tag (entries and
 * exits in turn), after an FDRx drop record of @drop_rec records lost for
 * @reason when @drop_rec is not 0; walk it and hand it over.
 */
static void fill_and_put(struct fdr_buffer *b, uint32_t tag, unsigned records,
			 uint8_t reason, uint64_t drop_rec, uint64_t drop_bufs)
{
	uint8_t *p = b->data;

	if (drop_rec) {
		uint8_t *payload = p + FDRTRACE_METADATA_RECORD_SIZE;
		size_t n = fdr_ext_drop(payload, SIZE / 2, 1234, reason, drop_rec, drop_bufs);

		cr_assert_gt(n, 0);
		p += fdr_custom_event_md(p, (uint32_t)n, 0) + n;
	}
	for (unsigned i = 0; i < records; i++) {
		struct fdrtrace_func_record r = {
			.word = fdrtrace_func_word(i & 1 ? FDRTRACE_FN_EXIT : FDRTRACE_FN_ENTRY, tag),
			.tsc_delta = 1,
		};

		memcpy(p, &r, sizeof(r));
		p += sizeof(r);
	}
	b->len = (uint64_t)(p - b->data);
	fdr_ring_stack_advance(b, p);
	cr_assert_eq(b->ring_records, records, "the handover counts the function records");
	fdr_ring_put(b);
}

/* The function id of the last record of a buffer written (the tag it was filled with). */
static uint32_t tag_of(unsigned w)
{
	uint32_t word;

	memcpy(&word, written[w] + written_len[w] - FDRTRACE_FUNC_RECORD_SIZE, sizeof(word));
	return fdrtrace_func_word_id(word);
}

Test(ring, nothing_handed_over_nothing_to_take_back)
{
	setup();
	cr_assert_eq(fdr_ring_newest(), 0);
	cr_assert_null(fdr_ring_take_oldest());
	fdr_ring_write(true, UINT64_MAX, file_write);
	cr_assert_eq(writes, 0);
	cr_assert_eq(fdr_orphan_rec[FDRTRACE_DROP_OVERWRITTEN], 0);
}

Test(ring, keeps_the_newest_buffers_and_counts_the_records_overwritten)
{
	uint64_t made = 0, kept = 0;

	setup();
	/* ten buffers through a pool of four: i records in the i-th */
	for (unsigned i = 1; i <= 10; i++) {
		struct fdr_buffer *b = claim();

		cr_assert_not_null(b, "buffer %u: the ring always has one to overwrite", i);
		fill_and_put(b, i, 2 * i, 0, 0, 0);
		made += 2 * i;
		cr_assert_eq(fdr_ring_newest(), i);
		/* once the pool is used up, each buffer costs the oldest one */
		cr_assert_eq(fdr_orphan_buf[FDRTRACE_DROP_OVERWRITTEN], i > COUNT ? i - COUNT : 0);
	}
	/* overwritten: buffers 1 to 6, 2 + 4 + ... + 12 records */
	cr_assert_eq(fdr_orphan_rec[FDRTRACE_DROP_OVERWRITTEN], 42);
	cr_assert_eq(fdr_orphan_buf[FDRTRACE_DROP_OVERWRITTEN], 6);
	for (unsigned r = 1; r < FDRTRACE_DROP_REASON_COUNT; r++)
		if (r != FDRTRACE_DROP_OVERWRITTEN)
			cr_assert_eq(fdr_orphan_rec[r], 0, "reason %u", r);

	/* a dump writes what is kept, buffers 7 to 10, oldest first */
	fdr_ring_write(true, UINT64_MAX, file_write);
	cr_assert_eq(writes, COUNT);
	for (unsigned w = 0; w < writes; w++) {
		cr_assert_eq(tag_of(w), 7 + w, "write %u holds buffer %u", w, tag_of(w));
		kept += written_len[w] / FDRTRACE_FUNC_RECORD_SIZE;
	}
	cr_assert_eq(kept + fdr_orphan_rec[FDRTRACE_DROP_OVERWRITTEN], made,
		     "kept %llu + overwritten %llu != made %llu", (unsigned long long)kept,
		     (unsigned long long)fdr_orphan_rec[FDRTRACE_DROP_OVERWRITTEN],
		     (unsigned long long)made);
}

Test(ring, the_drops_an_overwritten_buffer_reported_are_counted_under_their_reason)
{
	struct fdr_buffer *b;

	setup();
	for (unsigned i = 0; i < COUNT; i++)
		fill_and_put(claim(), 1 + i, 3, FDRTRACE_DROP_POOL_EMPTY, i == 0 ? 5 : 0,
			     i == 0 ? 1 : 0);
	cr_assert_eq(fdr_pool_buffer(0)->drops[FDRTRACE_DROP_POOL_EMPTY], 5);
	b = fdr_ring_take_oldest();
	cr_assert_eq(b, fdr_pool_buffer(0), "the oldest: the first handed over");
	cr_assert_eq(fdr_orphan_rec[FDRTRACE_DROP_OVERWRITTEN], 3);
	cr_assert_eq(fdr_orphan_buf[FDRTRACE_DROP_OVERWRITTEN], 1);
	cr_assert_eq(fdr_orphan_rec[FDRTRACE_DROP_POOL_EMPTY], 5);
	cr_assert_eq(fdr_orphan_buf[FDRTRACE_DROP_POOL_EMPTY], 1);
	/* the next one reported none */
	cr_assert_not_null(fdr_ring_take_oldest());
	cr_assert_eq(fdr_orphan_rec[FDRTRACE_DROP_OVERWRITTEN], 6);
	cr_assert_eq(fdr_orphan_rec[FDRTRACE_DROP_POOL_EMPTY], 5);
}

Test(ring, a_dump_writes_up_to_its_bound_and_skips_a_buffer_being_written)
{
	setup();
	for (unsigned i = 1; i <= 3; i++)
		fill_and_put(claim(), i, 2, 0, 0, 0);
	cr_assert_eq(fdr_ring_newest(), 3);
	fill_and_put(claim(), 4, 2, 0, 0, 0);	/* handed over after the bound was read */

	fdr_ring_write(true, 3, file_write);
	cr_assert_eq(writes, 3);
	for (unsigned w = 0; w < 3; w++)
		cr_assert_eq(tag_of(w), 1 + w);
	/* a snapshot keeps them: they can be written again, or taken back */
	for (unsigned i = 0; i < COUNT; i++)
		cr_assert_eq(fdr_pool_buffer(i)->ring_state, FDR_RING_FULL);

	/* buffer 1 being written elsewhere: neither taken back nor written */
	atomic_store(&fdr_pool_buffer(0)->ring_state, FDR_RING_BUSY);
	cr_assert_eq(fdr_ring_take_oldest(), fdr_pool_buffer(1), "the oldest not busy");
	writes = 0;
	fdr_ring_write(false, UINT64_MAX, file_write);
	cr_assert_eq(writes, 2);
	cr_assert_eq(tag_of(0), 3);
	cr_assert_eq(tag_of(1), 4);
	/* a final dump leaves them busy: nothing left to take back */
	cr_assert_null(fdr_ring_take_oldest());
	cr_assert_eq(fdr_orphan_buf[FDRTRACE_DROP_OVERWRITTEN], 1);
}
