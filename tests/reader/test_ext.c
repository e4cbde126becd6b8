// SPDX-License-Identifier: MIT
/*
 * test_ext.c - decoding of fdrtrace's extension payloads ("FDRx" custom
 * events) and the printable names: every kind decodes its fields, short
 * or mis-sized bodies are -EBADMSG, foreign payloads -ENOENT, newer
 * versions -ENOTSUP, config pairs walk in order.
 */
#include <errno.h>

#include <criterion/criterion.h>

#include "builder.h"

#include <fdrtrace/reader.h>

static void put(struct tb *b, const void *p, size_t n) { tb_bytes(b, p, n); }
static void u8(struct tb *b, uint8_t v) { put(b, &v, 1); }
static void u16(struct tb *b, uint16_t v) { put(b, &v, 2); }
static void u32(struct tb *b, uint32_t v) { put(b, &v, 4); }
static void u64(struct tb *b, uint64_t v) { put(b, &v, 8); }

static void str(struct tb *b, const char *s)
{
	u16(b, (uint16_t)strlen(s));
	put(b, s, strlen(s));
}

/* Start a payload: the 8-byte header with body_len fixed up by ext_end(). */
static void ext_begin(struct tb *b, uint8_t version, uint8_t kind)
{
	memset(b, 0, sizeof(*b));
	put(b, FDRTRACE_EXT_MAGIC, 4);
	u8(b, version);
	u8(b, kind);
	u16(b, 0);
}

static void ext_end(struct tb *b)
{
	uint16_t len = (uint16_t)(b->len - 8);

	memcpy(b->data + 6, &len, 2);
}

static bool str_is(struct fdrtrace_str s, const char *want)
{
	return s.len == strlen(want) && memcmp(s.ptr, want, s.len) == 0;
}

static int decode(struct tb *b, struct fdrtrace_ext *ext)
{
	return fdrtrace_ext_decode(b->data, b->len, ext);
}

Test(ext, process_decodes_every_field)
{
	struct tb b;
	struct fdrtrace_ext e;

	ext_begin(&b, 1, FDRTRACE_EXT_PROCESS);
	u32(&b, 100);
	u32(&b, 1);
	u64(&b, 123456789);
	u8(&b, FDRTRACE_CLOCK_RDTSCP);
	u8(&b, FDRTRACE_FREQ_CPUID);
	str(&b, "/bin/prog");
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.kind, FDRTRACE_EXT_PROCESS);
	cr_expect_eq(e.version, 1);
	cr_expect_eq(e.body_len, b.len - 8);
	cr_expect_eq(e.u.process.pid, 100);
	cr_expect_eq(e.u.process.ppid, 1);
	cr_expect_eq(e.u.process.start_realtime_ns, 123456789);
	cr_expect_eq(e.u.process.clock, FDRTRACE_CLOCK_RDTSCP);
	cr_expect_eq(e.u.process.freq_source, FDRTRACE_FREQ_CPUID);
	cr_expect(str_is(e.u.process.program, "/bin/prog"));
	/* one byte short of the string: malformed */
	b.len--;
	ext_end(&b);
	cr_expect_eq(decode(&b, &e), -EBADMSG);
	tb_free(&b);
}

Test(ext, config_pairs_walk_in_order)
{
	struct tb b;
	struct fdrtrace_ext e;
	struct fdrtrace_str k, v;
	size_t pos = 0;

	ext_begin(&b, 1, FDRTRACE_EXT_CONFIG);
	u16(&b, 2);
	str(&b, "mode");
	str(&b, "fdr");
	str(&b, "buffer_size");
	str(&b, "4096");
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.config.pairs, 2);
	cr_assert_eq(fdrtrace_ext_config_pair(&e, &pos, &k, &v), 1);
	cr_expect(str_is(k, "mode") && str_is(v, "fdr"));
	cr_assert_eq(fdrtrace_ext_config_pair(&e, &pos, &k, &v), 1);
	cr_expect(str_is(k, "buffer_size") && str_is(v, "4096"));
	cr_expect_eq(fdrtrace_ext_config_pair(&e, &pos, &k, &v), 0);
	/* a cursor in the middle of a pair is malformed */
	pos = 1;
	cr_expect_eq(fdrtrace_ext_config_pair(&e, &pos, &k, &v), -EBADMSG);
	/* more pairs announced than present */
	b.data[8] = 3;
	cr_expect_eq(decode(&b, &e), -EBADMSG);
	tb_free(&b);
}

Test(ext, module_map_and_unmap)
{
	struct tb b;
	struct fdrtrace_ext e;

	ext_begin(&b, 1, FDRTRACE_EXT_MODULE_MAP);
	u32(&b, 3);
	u64(&b, 0x400000);
	u64(&b, 0x1000);
	u8(&b, 4);
	put(&b, "\xde\xad\xbe\xef", 4);
	str(&b, "/lib/libx.so");
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.module_map.module_id, 3);
	cr_expect_eq(e.u.module_map.load_base, 0x400000);
	cr_expect_eq(e.u.module_map.size, 0x1000);
	cr_expect_eq(e.u.module_map.build_id_len, 4);
	cr_expect(memcmp(e.u.module_map.build_id, "\xde\xad\xbe\xef", 4) == 0);
	cr_expect(str_is(e.u.module_map.path, "/lib/libx.so"));
	/* build id longer than the body */
	b.data[8 + 20] = 200;
	cr_expect_eq(decode(&b, &e), -EBADMSG);
	tb_free(&b);

	ext_begin(&b, 1, FDRTRACE_EXT_MODULE_UNMAP);
	u32(&b, 3);
	u64(&b, 0x400000);
	u64(&b, 0x1000);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.module_unmap.module_id, 3);
	cr_expect_eq(e.u.module_unmap.size, 0x1000);
	tb_free(&b);
}

Test(ext, func_thread_name_drop_fork_exec)
{
	struct tb b;
	struct fdrtrace_ext e;

	ext_begin(&b, 1, FDRTRACE_EXT_FUNC);
	u32(&b, 17);
	u64(&b, 0xabc);
	u32(&b, 0xffffffff);
	str(&b, "main");
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.func.func_id, 17);
	cr_expect_eq(e.u.func.address, 0xabc);
	cr_expect_eq(e.u.func.module_id, 0xffffffff);
	cr_expect(str_is(e.u.func.name, "main"));
	tb_free(&b);

	ext_begin(&b, 1, FDRTRACE_EXT_THREAD_NAME);
	u32(&b, 55);
	str(&b, "worker");
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.thread_name.tid, 55);
	cr_expect(str_is(e.u.thread_name.name, "worker"));
	tb_free(&b);

	ext_begin(&b, 1, FDRTRACE_EXT_DROP);
	u32(&b, 0);
	u8(&b, FDRTRACE_DROP_POOL_EMPTY);
	u64(&b, 1000);
	u64(&b, 2);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.drop.reason, FDRTRACE_DROP_POOL_EMPTY);
	cr_expect_eq(e.u.drop.records, 1000);
	cr_expect_eq(e.u.drop.buffers, 2);
	tb_free(&b);

	ext_begin(&b, 1, FDRTRACE_EXT_FORK);
	u32(&b, 10);
	u32(&b, 11);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.fork.parent_pid, 10);
	cr_expect_eq(e.u.fork.child_pid, 11);
	tb_free(&b);

	ext_begin(&b, 1, FDRTRACE_EXT_EXEC);
	u32(&b, 11);
	str(&b, "/bin/true");
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.exec.pid, 11);
	cr_expect(str_is(e.u.exec.path, "/bin/true"));
	tb_free(&b);
}

Test(ext, close_and_stack)
{
	struct tb b;
	struct fdrtrace_ext e;

	ext_begin(&b, 1, FDRTRACE_EXT_CLOSE);
	u8(&b, FDRTRACE_CLOSE_SIGNAL);
	u64(&b, 1);
	u64(&b, 2);
	u64(&b, 3);
	u64(&b, 4);
	u32(&b, 5);
	u64(&b, 6);
	u64(&b, 7);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.close.how, FDRTRACE_CLOSE_SIGNAL);
	cr_expect_eq(e.u.close.records, 1);
	cr_expect_eq(e.u.close.records_dropped, 2);
	cr_expect_eq(e.u.close.buffers, 3);
	cr_expect_eq(e.u.close.buffers_dropped, 4);
	cr_expect_eq(e.u.close.threads, 5);
	cr_expect_eq(e.u.close.cycle_frequency, 6);
	cr_expect_eq(e.u.close.end_realtime_ns, 7);
	cr_expect_not(e.u.close.has_left_out, "an older writer's close says nothing of it");
	tb_free(&b);

	/* a writer since 2026-11-26 appends the records left out on purpose */
	ext_begin(&b, 1, FDRTRACE_EXT_CLOSE);
	u8(&b, FDRTRACE_CLOSE_EXIT);
	for (int i = 1; i <= 4; i++)
		u64(&b, (uint64_t)i);
	u32(&b, 5);
	u64(&b, 6);
	u64(&b, 7);
	u64(&b, 2);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.close.end_realtime_ns, 7);
	cr_expect(e.u.close.has_left_out);
	cr_expect_eq(e.u.close.records_left_out, 2);
	tb_free(&b);

	ext_begin(&b, 1, FDRTRACE_EXT_STACK);
	u32(&b, 9);
	u32(&b, 2);
	u32(&b, 100);
	u32(&b, 200);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.stack.tid, 9);
	cr_expect_eq(e.u.stack.depth, 2);
	cr_expect(memcmp(e.u.stack.ids, "\x64\0\0\0\xc8\0\0\0", 8) == 0);
	cr_expect(!e.u.stack.numbered);
	/* a depth the body cannot hold */
	memcpy(b.data + 12, &(uint32_t){ 0xffffffffu }, 4);
	cr_expect_eq(decode(&b, &e), -EBADMSG);
	tb_free(&b);

	/* ring policy: the buffer's place in its thread's records */
	ext_begin(&b, 1, FDRTRACE_EXT_STACK);
	u32(&b, 9);
	u32(&b, 1);
	u32(&b, 100);
	u64(&b, 7);
	u64(&b, 0x123456789ull);
	u32(&b, 2);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.stack.depth, 1);
	cr_expect(e.u.stack.numbered);
	cr_expect_eq(e.u.stack.buffer_no, 7);
	cr_expect_eq(e.u.stack.records_before, 0x123456789ull);
	cr_expect_eq(e.u.stack.skipped, 2);
	tb_free(&b);

	/* fewer bytes than the position takes: the stack alone */
	ext_begin(&b, 1, FDRTRACE_EXT_STACK);
	u32(&b, 9);
	u32(&b, 0);
	u64(&b, 7);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.stack.depth, 0);
	cr_expect(!e.u.stack.numbered);
	tb_free(&b);
}

Test(ext, native_stack_decodes_frames_innermost_first)
{
	struct tb b;
	struct fdrtrace_ext e;
	uint64_t addr;
	uint32_t mod;

	ext_begin(&b, 1, FDRTRACE_EXT_NATIVE_STACK);
	u32(&b, 42);
	u8(&b, FDRTRACE_NATIVE_SIGNAL);
	u8(&b, 11);
	u64(&b, 0x10);
	u32(&b, 2);
	u64(&b, 0x7f0000001234ull);
	u32(&b, 3);
	u64(&b, 0x555500000abcull);
	u32(&b, 0xffffffffu);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.native_stack.tid, 42);
	cr_expect_eq(e.u.native_stack.why, FDRTRACE_NATIVE_SIGNAL);
	cr_expect_eq(e.u.native_stack.signal, 11);
	cr_expect_eq(e.u.native_stack.fault_address, 0x10);
	cr_expect_eq(e.u.native_stack.depth, 2);
	cr_assert_eq(fdrtrace_ext_native_frame(&e, 0, &addr, &mod), 0);
	cr_expect_eq(addr, 0x7f0000001234ull);
	cr_expect_eq(mod, 3);
	cr_assert_eq(fdrtrace_ext_native_frame(&e, 1, &addr, &mod), 0);
	cr_expect_eq(addr, 0x555500000abcull);
	cr_expect_eq(mod, 0xffffffffu);
	cr_expect_eq(fdrtrace_ext_native_frame(&e, 2, &addr, &mod), -EINVAL);
	cr_expect_str_eq(fdrtrace_ext_kind_name(FDRTRACE_EXT_NATIVE_STACK), "native_stack");
	cr_expect_str_eq(fdrtrace_native_why_name(FDRTRACE_NATIVE_SIGNAL), "signal");
	cr_expect_str_eq(fdrtrace_native_why_name(FDRTRACE_NATIVE_START), "start");
	cr_expect_str_eq(fdrtrace_native_why_name(9), "unknown");
	/* a depth the body cannot hold */
	memcpy(b.data + 8 + 14, &(uint32_t){ 3 }, 4);
	cr_expect_eq(decode(&b, &e), -EBADMSG);
	cr_expect_eq(fdrtrace_ext_native_frame(&e, 0, &addr, &mod), -EINVAL);
	tb_free(&b);
}

Test(ext, excluded_and_counted_decode_every_field)
{
	struct tb b;
	struct fdrtrace_ext e;
	uint32_t id;
	uint64_t calls;

	ext_begin(&b, 1, FDRTRACE_EXT_EXCLUDED);
	u32(&b, 7);
	u64(&b, 123456789);
	u32(&b, 2048);
	u64(&b, 51200);
	u64(&b, 2600);
	u32(&b, 2048);
	u8(&b, 1);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.excluded.func_id, 7);
	cr_expect_eq(e.u.excluded.tsc, 123456789);
	cr_expect_eq(e.u.excluded.calls, 2048);
	cr_expect_eq(e.u.excluded.sum_ticks, 51200);
	cr_expect_eq(e.u.excluded.threshold_ticks, 2600);
	cr_expect_eq(e.u.excluded.after, 2048);
	cr_expect_eq(e.u.excluded.undone, 1);
	cr_expect_str_eq(fdrtrace_ext_kind_name(FDRTRACE_EXT_EXCLUDED), "excluded");
	/* a body one byte short */
	b.len--;
	ext_end(&b);
	cr_expect_eq(decode(&b, &e), -EBADMSG);
	tb_free(&b);

	ext_begin(&b, 1, FDRTRACE_EXT_COUNTED);
	u32(&b, 4242);
	u64(&b, 3);
	u32(&b, 2);
	u32(&b, 5);
	u64(&b, 1000000);
	u32(&b, 9);
	u64(&b, 1);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.counted.tid, 4242);
	cr_expect_eq(e.u.counted.lost, 3);
	cr_expect_eq(e.u.counted.count, 2);
	cr_assert_eq(fdrtrace_ext_counted_pair(&e, 0, &id, &calls), 0);
	cr_expect_eq(id, 5);
	cr_expect_eq(calls, 1000000);
	cr_assert_eq(fdrtrace_ext_counted_pair(&e, 1, &id, &calls), 0);
	cr_expect_eq(id, 9);
	cr_expect_eq(calls, 1);
	cr_expect_eq(fdrtrace_ext_counted_pair(&e, 2, &id, &calls), -EINVAL);
	cr_expect_str_eq(fdrtrace_ext_kind_name(FDRTRACE_EXT_COUNTED), "counted");
	/* a count the body cannot hold */
	memcpy(b.data + 8 + 12, &(uint32_t){ 3 }, 4);
	cr_expect_eq(decode(&b, &e), -EBADMSG);
	cr_expect_eq(fdrtrace_ext_counted_pair(&e, 0, &id, &calls), -EINVAL);
	tb_free(&b);
	/* not a counted record */
	ext_begin(&b, 1, FDRTRACE_EXT_WAIT);
	u32(&b, 1);
	u64(&b, 2);
	u64(&b, 3);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(fdrtrace_ext_counted_pair(&e, 0, &id, &calls), -EINVAL);
	tb_free(&b);
}

Test(ext, newer_fields_appended_to_a_body_are_ignored)
{
	struct tb b;
	struct fdrtrace_ext e;

	ext_begin(&b, 1, FDRTRACE_EXT_FORK);
	u32(&b, 10);
	u32(&b, 11);
	u64(&b, 0xfeed);	/* a field a later writer added */
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.u.fork.child_pid, 11);
	tb_free(&b);
}

Test(ext, foreign_short_missized_and_newer_payloads)
{
	struct tb b;
	struct fdrtrace_ext e;

	cr_expect_eq(fdrtrace_ext_decode("hello, world", 12, &e), -ENOENT);
	cr_expect_eq(fdrtrace_ext_decode("FDRx", 4, &e), -ENOENT);
	cr_expect_eq(fdrtrace_ext_decode(NULL, 0, &e), -ENOENT);

	ext_begin(&b, 1, FDRTRACE_EXT_FORK);
	u32(&b, 10);
	ext_end(&b);
	cr_expect_eq(decode(&b, &e), -EBADMSG);	/* body too short for its kind */
	u32(&b, 11);
	cr_expect_eq(decode(&b, &e), -EBADMSG);	/* body_len disagrees with the payload */
	ext_end(&b);
	cr_expect_eq(decode(&b, &e), 0);
	b.data[4] = 0;
	cr_expect_eq(decode(&b, &e), -EBADMSG);	/* version 0 does not exist */
	b.data[4] = FDRTRACE_EXT_VERSION + 1;
	cr_expect_eq(decode(&b, &e), -ENOTSUP);
	cr_expect_eq(e.kind, FDRTRACE_EXT_FORK);
	cr_expect_eq(e.version, FDRTRACE_EXT_VERSION + 1);
	cr_expect_eq(e.body_len, 8);
	tb_free(&b);
}

Test(ext, unknown_kind_keeps_the_raw_body)
{
	struct tb b;
	struct fdrtrace_ext e;

	ext_begin(&b, 1, 200);
	u32(&b, 0x01020304);
	ext_end(&b);
	cr_assert_eq(decode(&b, &e), 0);
	cr_expect_eq(e.kind, 200);
	cr_expect_eq(e.body_len, 4);
	cr_expect_eq(e.body[0], 0x04);
	tb_free(&b);
}

Test(names, every_enum_has_a_name_and_unknown_values_are_safe)
{
	cr_expect_str_eq(fdrtrace_state_name(FDRTRACE_OK), "OK");
	cr_expect_str_eq(fdrtrace_state_name((enum fdrtrace_state)99), "unknown");
	cr_expect_str_eq(fdrtrace_event_type_name(FDRTRACE_EV_NEW_BUFFER), "new_buffer");
	cr_expect_str_eq(fdrtrace_error_name(FDRTRACE_E_TRUNCATED), "truncated");
	for (int i = 0; i < FDRTRACE_EV_TYPE_COUNT; i++)
		cr_expect_str_neq(fdrtrace_event_type_name((enum fdrtrace_event_type)i), "unknown");
	for (int i = 0; i < FDRTRACE_E_COUNT; i++)
		cr_expect_str_neq(fdrtrace_error_name((enum fdrtrace_error)i), "unknown");
	for (unsigned i = 1; i < FDRTRACE_EXT_KIND_COUNT; i++)
		cr_expect_str_neq(fdrtrace_ext_kind_name(i), "unknown");
	for (unsigned i = 1; i < FDRTRACE_DROP_REASON_COUNT; i++)
		cr_expect_str_neq(fdrtrace_drop_reason_name(i), "unknown");
	cr_expect_str_eq(fdrtrace_ext_kind_name(0), "unknown");
	cr_expect_str_eq(fdrtrace_ext_kind_name(FDRTRACE_EXT_CONFIG), "config");
	cr_expect_str_eq(fdrtrace_drop_reason_name(0), "unknown");
	cr_expect_str_eq(fdrtrace_close_how_name(FDRTRACE_CLOSE_SNAPSHOT), "snapshot");
	cr_expect_str_eq(fdrtrace_close_how_name(77), "unknown");
}
