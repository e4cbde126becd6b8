// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_fdr_walk.c - common/fdr_walk.h, the record stepper
 * the reader and the runtime's buffer walkers share: sizes, payloads, and
 * a truncated record told apart from a bad size and an unknown kind.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include <fdrtrace/format.h>

#include "fdr_walk.h"

static void marker(uint8_t *p, unsigned kind, int32_t size)
{
	memset(p, 0, FDRTRACE_METADATA_RECORD_SIZE);
	p[0] = FDRTRACE_MD_TYPE_BYTE(kind);
	memcpy(p + 1, &size, sizeof(size));
}

Test(fdr_walk, a_function_record_is_8_bytes_with_its_action)
{
	uint8_t b[8] = { 0 };
	uint32_t w = fdrtrace_func_word(FDRTRACE_FN_TAIL_EXIT, 77);
	struct fdr_walk_rec rec;

	memcpy(b, &w, 4);
	cr_assert_eq(fdr_walk_next(b, sizeof(b), &rec), 8);
	cr_assert_eq(rec.kind, FDR_WALK_FUNCTION);
	cr_assert_eq(rec.action, FDRTRACE_FN_TAIL_EXIT);
	cr_assert_eq(fdr_walk_next(b, 7, &rec), -ENODATA, "7 bytes: truncated");
}

Test(fdr_walk, metadata_is_16_bytes_and_an_event_takes_its_payload)
{
	uint8_t b[16 + 5] = { 0 };
	struct fdr_walk_rec rec;

	marker(b, FDRTRACE_MD_NEW_CPU_ID, 0x7fffffff);	/* bytes 1..4 are no size here */
	cr_assert_eq(fdr_walk_next(b, 16, &rec), 16);
	cr_assert_eq(rec.kind, FDRTRACE_MD_NEW_CPU_ID);
	cr_assert_eq(fdr_walk_next(b, 15, &rec), -ENODATA);

	marker(b, FDRTRACE_MD_CUSTOM_EVENT, 5);
	cr_assert_eq(fdr_walk_next(b, sizeof(b), &rec), 21);
	cr_assert_eq(rec.payload, 5);
	cr_assert_eq(fdr_walk_next(b, 20, &rec), -ENODATA, "payload cut: truncated");
	marker(b, FDRTRACE_MD_TYPED_EVENT, 0);
	cr_assert_eq(fdr_walk_next(b, 16, &rec), 16);
}

Test(fdr_walk, a_negative_size_is_a_bad_size_not_a_truncation)
{
	uint8_t b[16];
	struct fdr_walk_rec rec;

	marker(b, FDRTRACE_MD_CUSTOM_EVENT, -1);
	cr_assert_eq(fdr_walk_next(b, sizeof(b), &rec), -EBADMSG);
	marker(b, FDRTRACE_MD_TYPED_EVENT, INT32_MIN);
	cr_assert_eq(fdr_walk_next(b, sizeof(b), &rec), -EBADMSG);
}

Test(fdr_walk, unknown_kinds_and_actions_cannot_be_sized)
{
	struct fdr_walk_rec rec;
	uint8_t b[16] = { 0 };

	b[0] = FDRTRACE_MD_TYPE_BYTE(FDRTRACE_MD_KIND_COUNT);
	cr_assert_eq(fdr_walk_next(b, sizeof(b), &rec), -EPROTO);
	cr_assert_eq(rec.kind, FDRTRACE_MD_KIND_COUNT, "the kind is still said");
	b[0] = 0x7f;
	cr_assert_eq(fdr_walk_head(b[0], &rec), -EPROTO);
	cr_assert_eq(rec.kind, 0x3f);
	b[0] = 4 << 1;	/* function action 4 */
	cr_assert_eq(fdr_walk_next(b, sizeof(b), &rec), -EPROTO);
	cr_assert_eq(rec.kind, FDR_WALK_FUNCTION);
	cr_assert_eq(rec.action, 4);
}

Test(fdr_walk, walking_a_buffer_visits_every_record)
{
	uint8_t b[8 + 16 + 16 + 3 + 8];
	uint32_t w = fdrtrace_func_word(FDRTRACE_FN_ENTRY, 1);
	struct fdr_walk_rec rec;
	unsigned kinds[8], n = 0;
	size_t pos = 0;

	memset(b, 0, sizeof(b));
	memcpy(b, &w, 4);
	marker(b + 8, FDRTRACE_MD_TSC_WRAP, 0);
	marker(b + 24, FDRTRACE_MD_CUSTOM_EVENT, 3);
	w = fdrtrace_func_word(FDRTRACE_FN_EXIT, 1);
	memcpy(b + 43, &w, 4);
	while (pos < sizeof(b)) {
		long len = fdr_walk_next(b + pos, sizeof(b) - pos, &rec);

		cr_assert_gt(len, 0, "record at %zu", pos);
		kinds[n++] = rec.kind;
		pos += (size_t)len;
	}
	cr_assert_eq(pos, sizeof(b));
	cr_assert_eq(n, 4);
	cr_assert_eq(kinds[0], FDR_WALK_FUNCTION);
	cr_assert_eq(kinds[1], FDRTRACE_MD_TSC_WRAP);
	cr_assert_eq(kinds[2], FDRTRACE_MD_CUSTOM_EVENT);
	cr_assert_eq(kinds[3], FDR_WALK_FUNCTION);
}
