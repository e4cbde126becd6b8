// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_ext_schema.c - the runtime's encoder (runtime/format/ext_encode.c)
 * against the table the tools decode with (common/fdrx.def).
 *
 * Every kind of the table is encoded by the runtime, with each of its
 * optional groups there, decoded by the reader (fdrtrace_ext_decode(),
 * which walks the table) and compared field by field with what was
 * encoded: every field the table lists must have an expected value here,
 * and the body must be exactly as long as the table says. A field added to
 * the table and not to the encoder (or the reverse) fails here.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include <fdrtrace/format.h>
#include <fdrtrace/reader.h>

#include "ext_encode.h"
#include "fdrx_schema.h"

/* What a field must decode to: a number, or a string, or an array's bytes. */
struct want {
	const char *key;
	uint64_t v;
	const void *bytes;	/* a string's or an array's */
	size_t len;		/* of @bytes */
};

#define W_END { NULL, 0, NULL, 0 }
#define W_NUM(k, x) { (k), (x), NULL, 0 }
#define W_STR(k, s) { (k), 0, (s), sizeof(s) - 1 }
#define W_ARR(k, n, p, sz) { (k), (n), (p), (n) * (sz) }

static const struct want *want_of(const struct want *w, const char *key)
{
	for (; w->key; w++)
		if (strcmp(w->key, key) == 0)
			return w;
	cr_assert_fail("the table has a field '%s' that the test does not expect: encode it in "
		 "the runtime and add it here", key);
	return NULL;
}

/* Groups (optional fields) of each kind that some case had: all must be covered. */
static unsigned groups_seen[FDRTRACE_EXT_KIND_COUNT];
static bool kinds_seen[FDRTRACE_EXT_KIND_COUNT];

/*
 * Decode @buf (@len bytes, as the runtime wrote it) and compare every field
 * the table lists with @w. Return: the groups that were there (bit i: the
 * kind's i-th group).
 */
static unsigned check_payload(const uint8_t *buf, size_t len, unsigned kind, const struct want *w)
{
	const struct fdrx_field *f = fdrx_fields(kind);
	struct fdrtrace_ext x;
	unsigned groups = 0, g = 0;
	size_t n = 0;
	int rc;

	cr_assert_gt(len, 0, "the encoder wrote kind %u", kind);
	rc = fdrtrace_ext_decode(buf, len, &x);
	cr_assert_eq(rc, 0, "kind %u decodes (%d)", kind, rc);
	cr_assert_eq(x.kind, kind);
	cr_assert_not_null(f, "kind %u is in the table", kind);
	cr_assert_eq(fdrx_body_len(&x), x.body_len,
		     "kind %s: the table's fields take %zu bytes, the encoder wrote %u",
		     fdrx_kinds[kind].name, fdrx_body_len(&x), x.body_len);
	for (; f->type != FDRX_T_END; n += fdrx_field_len(&x, f), f++) {
		const struct want *e;
		struct fdrtrace_str s;
		const uint8_t *data;

		switch (f->type) {
		case FDRX_T_SINCE:
		case FDRX_T_VARIANT:
			if (!fdrx_group_there(&x, f, n))
				goto done;
			groups |= 1u << g++;
			continue;
		case FDRX_T_PAIRS:
			e = want_of(w, "pairs");
			cr_assert_eq(fdrx_get(&x, f->off, 2), e->v, "config pairs");
			continue;
		default:
			break;
		}
		e = want_of(w, f->key);
		switch (f->type) {
		case FDRX_T_STR:
			memcpy(&s, (const uint8_t *)&x + f->off, sizeof(s));
			cr_assert_eq(s.len, e->len, "%s length", f->key);
			cr_assert_eq(memcmp(s.ptr, e->bytes, e->len), 0, "%s bytes", f->key);
			break;
		case FDRX_T_BYTES8:
		case FDRX_T_ARRAY:
			memcpy(&data, (const uint8_t *)&x + f->data, sizeof(data));
			cr_assert_eq(fdrx_get(&x, f->off, f->type == FDRX_T_ARRAY ? 4 : 1), e->v,
				     "%s count", f->key);
			cr_assert_eq(memcmp(data, e->bytes, e->len), 0, "%s elements", f->key);
			break;
		default:
			cr_assert_eq(fdrx_get(&x, f->off, fdrx_width(f->type)), e->v,
				     "%s.%s", fdrx_kinds[kind].name, f->key);
			break;
		}
	}
done:
	kinds_seen[kind] = true;
	groups_seen[kind] |= groups;
	return groups;
}

static uint8_t buf[4096];

static void case_process(void)
{
	static const char args[] = "prog\0-x\0";
	struct fdr_ext_process_info pi = {
		.pid = 11, .ppid = 12, .start_realtime_ns = 13, .clock = 2, .freq_source = 3,
		.program = "/bin/prog", .start_tsc = 14, .argc = 2, .args = args,
		.args_len = sizeof(args) - 1,
	};
	const struct want w[] = {
		W_NUM("pid", 11), W_NUM("ppid", 12), W_NUM("start_realtime_ns", 13),
		W_NUM("clock", 2), W_NUM("freq_source", 3), W_STR("program", "/bin/prog"),
		W_NUM("start_tsc", 14), W_NUM("argc", 2), W_STR("args", "prog\0-x\0"), W_END,
	};

	cr_assert_eq(check_payload(buf, fdr_ext_process(buf, sizeof(buf), &pi),
				   FDRTRACE_EXT_PROCESS, w), 1u);
}

static void case_config(void)
{
	static const char *const keys[] = { "policy", "buffer_size" };
	static const char *const values[] = { "ring", "65536" };
	const struct want w[] = { W_NUM("pairs", 2), W_END };
	size_t len = fdr_ext_config(buf, sizeof(buf), 2, keys, values);
	struct fdrtrace_ext x;
	struct fdrtrace_str k, v;
	size_t pos = 0;

	check_payload(buf, len, FDRTRACE_EXT_CONFIG, w);
	cr_assert_eq(fdrtrace_ext_decode(buf, len, &x), 0);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(fdrtrace_ext_config_pair(&x, &pos, &k, &v), 1);
		cr_assert_eq(k.len, strlen(keys[i]));
		cr_assert_eq(memcmp(k.ptr, keys[i], k.len), 0);
		cr_assert_eq(v.len, strlen(values[i]));
		cr_assert_eq(memcmp(v.ptr, values[i], v.len), 0);
	}
	cr_assert_eq(fdrtrace_ext_config_pair(&x, &pos, &k, &v), 0);
}

static void case_module_map_and_unmap(void)
{
	static const uint8_t id[] = { 0xde, 0xad, 0xbe, 0xef };
	const struct want w[] = {
		W_NUM("module_id", 21), W_NUM("load_base", 0x7f0000001000), W_NUM("size", 22),
		W_ARR("build_id", 4, id, 1), W_STR("path", "/lib/libm.so"), W_END,
	};

	check_payload(buf, fdr_ext_module_map(buf, sizeof(buf), 21, 0x7f0000001000, 22, id, 4,
					      "/lib/libm.so"), FDRTRACE_EXT_MODULE_MAP, w);
	check_payload(buf, fdr_ext_module_unmap(buf, sizeof(buf), 21, 0x7f0000001000, 22),
		      FDRTRACE_EXT_MODULE_UNMAP, w);
}

static void case_func_and_thread_name(void)
{
	const struct want w[] = {
		W_NUM("func_id", 31), W_NUM("address", 0x401180), W_NUM("module_id", 0xffffffff),
		W_STR("name", "_Z3foov"), W_NUM("tid", 32), W_END,
	};

	check_payload(buf, fdr_ext_func(buf, sizeof(buf), 31, 0x401180, 0xffffffff, "_Z3foov"),
		      FDRTRACE_EXT_FUNC, w);
	check_payload(buf, fdr_ext_thread_name(buf, sizeof(buf), 32, "_Z3foov"),
		      FDRTRACE_EXT_THREAD_NAME, w);
}

static void case_drop_plain_and_gap(void)
{
	static const uint32_t ids[] = { 5, 6, 7 };
	const struct want w[] = {
		W_NUM("tid", 41), W_NUM("reason", 2), W_NUM("records", 42), W_NUM("buffers", 43),
		W_NUM("first_tsc", 44), W_NUM("last_tsc", 45), W_NUM("exited", 46),
		W_ARR("ids", 3, ids, 4), W_END,
	};

	cr_assert_eq(check_payload(buf, fdr_ext_drop(buf, sizeof(buf), 41, 2, 42, 43),
				   FDRTRACE_EXT_DROP, w), 0u);
	cr_assert_eq(check_payload(buf, fdr_ext_gap(buf, sizeof(buf), 41, 2, 42, 43, 44, 45, 46,
						    3, ids), FDRTRACE_EXT_DROP, w), 1u);
}

static void case_fork_exec_spawn_wait(void)
{
	const struct want w[] = {
		W_NUM("parent_pid", 51), W_NUM("child_pid", 52), W_NUM("parent_tid", 53),
		W_NUM("tsc", 54), W_NUM("serial", 55), W_NUM("pid", 56), W_STR("path", "/bin/sh"),
		W_NUM("tid", 53), W_NUM("first_tsc", 57), W_NUM("last_tsc", 58), W_END,
	};

	cr_assert_eq(check_payload(buf, fdr_ext_fork(buf, sizeof(buf), 51, 52, 53, 54, 55),
				   FDRTRACE_EXT_FORK, w), 1u);
	cr_assert_eq(check_payload(buf, fdr_ext_exec(buf, sizeof(buf), 56, "/bin/sh", 53, 54),
				   FDRTRACE_EXT_EXEC, w), 1u);
	check_payload(buf, fdr_ext_spawn(buf, sizeof(buf), 53, 54, 55, 52), FDRTRACE_EXT_SPAWN,
		      w);
	check_payload(buf, fdr_ext_wait(buf, sizeof(buf), 53, 57, 58), FDRTRACE_EXT_WAIT, w);
}

static void case_close_has_every_later_group(void)
{
	const struct fdr_ext_close_info c = {
		.how = 4, .records = 61, .records_dropped = 62, .buffers = 63,
		.buffers_dropped = 64, .threads = 65, .cycle_frequency = 66,
		.end_realtime_ns = 67, .records_left_out = 68, .error = 28, .end = 2,
		.end_value = 9,
	};
	const struct want w[] = {
		W_NUM("how", 4), W_NUM("records", 61), W_NUM("records_dropped", 62),
		W_NUM("buffers", 63), W_NUM("buffers_dropped", 64), W_NUM("threads", 65),
		W_NUM("cycle_frequency", 66), W_NUM("end_realtime_ns", 67),
		W_NUM("records_left_out", 68), W_NUM("error", 28), W_NUM("end", 2),
		W_NUM("end_value", 9), W_END,
	};

	cr_assert_eq(check_payload(buf, fdr_ext_close(buf, sizeof(buf), &c), FDRTRACE_EXT_CLOSE,
				   w), 7u);
}

static void case_stack_plain_and_numbered(void)
{
	static const uint32_t ids[] = { 71, 72 };
	const struct fdr_ext_bufpos pos = { .buffer_no = 73, .records_before = 74, .skipped = 75 };
	const struct want w[] = {
		W_NUM("tid", 70), W_ARR("ids", 2, ids, 4), W_NUM("buffer_no", 73),
		W_NUM("records_before", 74), W_NUM("skipped", 75), W_END,
	};

	cr_assert_eq(check_payload(buf, fdr_ext_stack(buf, sizeof(buf), 70, 2, ids, NULL),
				   FDRTRACE_EXT_STACK, w), 0u);
	cr_assert_eq(check_payload(buf, fdr_ext_stack(buf, sizeof(buf), 70, 2, ids, &pos),
				   FDRTRACE_EXT_STACK, w), 1u);
}

static void case_native_stack(void)
{
	static const uint64_t addrs[] = { 0x401000, 0x7f0000002000 };
	static const uint32_t mods[] = { 1, 0xffffffff };
	uint8_t frames[2 * FDRTRACE_NATIVE_FRAME_SIZE];
	const struct want w[] = {
		W_NUM("tid", 81), W_NUM("why", 1), W_NUM("signal", 11),
		W_NUM("fault_address", 0xdead), W_ARR("frames", 2, frames, FDRTRACE_NATIVE_FRAME_SIZE),
		W_END,
	};

	for (int i = 0; i < 2; i++) {
		memcpy(frames + i * FDRTRACE_NATIVE_FRAME_SIZE, &addrs[i], 8);
		memcpy(frames + i * FDRTRACE_NATIVE_FRAME_SIZE + 8, &mods[i], 4);
	}
	check_payload(buf, fdr_ext_native_stack(buf, sizeof(buf), 81, 1, 11, 0xdead, 2, addrs,
						mods), FDRTRACE_EXT_NATIVE_STACK, w);
}

static void case_excluded_and_counted(void)
{
	static const uint32_t ids[] = { 91, 92 };
	static const uint64_t calls[] = { 93, 94 };
	uint8_t pairs[2 * 12];
	const struct want w[] = {
		W_NUM("func_id", 95), W_NUM("tsc", 96), W_NUM("calls", 97), W_NUM("sum_ticks", 98),
		W_NUM("threshold_ticks", 99), W_NUM("after", 100), W_NUM("undone", 1),
		W_NUM("tid", 101), W_NUM("lost", 102), W_ARR("counts", 2, pairs, 12), W_END,
	};

	for (int i = 0; i < 2; i++) {
		memcpy(pairs + i * 12, &ids[i], 4);
		memcpy(pairs + i * 12 + 4, &calls[i], 8);
	}
	check_payload(buf, fdr_ext_excluded(buf, sizeof(buf), 95, 96, 97, 98, 99, 100, true),
		      FDRTRACE_EXT_EXCLUDED, w);
	check_payload(buf, fdr_ext_counted(buf, sizeof(buf), 101, 102, 2, ids, calls),
		      FDRTRACE_EXT_COUNTED, w);
}

Test(ext_schema, process)
{
	case_process();
}

Test(ext_schema, config)
{
	case_config();
}

Test(ext_schema, module_map_and_unmap)
{
	case_module_map_and_unmap();
}

Test(ext_schema, func_and_thread_name)
{
	case_func_and_thread_name();
}

Test(ext_schema, drop_plain_and_gap)
{
	case_drop_plain_and_gap();
}

Test(ext_schema, fork_exec_spawn_wait)
{
	case_fork_exec_spawn_wait();
}

Test(ext_schema, close_has_every_later_group)
{
	case_close_has_every_later_group();
}

Test(ext_schema, stack_plain_and_numbered)
{
	case_stack_plain_and_numbered();
}

Test(ext_schema, native_stack)
{
	case_native_stack();
}

Test(ext_schema, excluded_and_counted)
{
	case_excluded_and_counted();
}

/* Every case: the coverage test runs them all in its own process. */
static void (*const cases[])(void) = {
	case_process,
	case_config,
	case_module_map_and_unmap,
	case_func_and_thread_name,
	case_drop_plain_and_gap,
	case_fork_exec_spawn_wait,
	case_close_has_every_later_group,
	case_stack_plain_and_numbered,
	case_native_stack,
	case_excluded_and_counted,
};

Test(ext_schema, every_kind_and_every_group_of_the_table_is_covered)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cases[i]();
	for (unsigned k = 0; k < FDRTRACE_EXT_KIND_COUNT; k++) {
		const struct fdrx_field *f = fdrx_fields(k);
		unsigned groups = 0;

		if (!f)
			continue;
		cr_expect(kinds_seen[k], "kind %s: no case encodes it", fdrx_kinds[k].name);
		for (; f->type != FDRX_T_END; f++)
			if (f->type == FDRX_T_SINCE || f->type == FDRX_T_VARIANT)
				groups = groups << 1 | 1;
		cr_expect_eq(groups_seen[k] & groups, groups,
			     "kind %s: a case must have each of its optional groups", fdrx_kinds[k].name);
	}
}

/*
 * A later writer's group is there when its fixed bytes are left: its
 * minimum in the table must be exactly those bytes, or an older body could
 * be taken for a newer one (a variant may need less: a drop's gap).
 */
Test(ext_schema, a_later_group_needs_exactly_its_fixed_size)
{
	for (unsigned k = 0; k < FDRTRACE_EXT_KIND_COUNT; k++) {
		const struct fdrx_field *f = fdrx_fields(k);

		for (; f && f->type != FDRX_T_END; f++) {
			const struct fdrx_field *g;
			unsigned fixed = 0;

			if (f->type != FDRX_T_SINCE)
				continue;
			for (g = f + 1; g->type != FDRX_T_END && g->type != FDRX_T_SINCE &&
					g->type != FDRX_T_VARIANT; g++)
				fixed += g->type == FDRX_T_STR || g->type == FDRX_T_PAIRS ? 2 :
					 g->type == FDRX_T_ARRAY ? 4 :
					 g->type == FDRX_T_BYTES8 ? 1 : fdrx_width(g->type);
			cr_expect_eq(f->min, fixed, "kind %s: a group of %u fixed bytes has min %u",
				     fdrx_kinds[k].name, fixed, f->min);
		}
	}
}
