// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_ext_writer.c - every extension payload, byte by byte.
 *
 * Decoded by hand here (not with the reader library) from the layouts in
 * include/fdrtrace/format.h: "FDRx", version 1, kind, u16 body_len, then the
 * little-endian packed body; strings are u16 length + bytes.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include <fdrtrace/format.h>

#include "ext_encode.h"

#define GUARD 0xa5
static uint8_t buf[70000 + 64];

static uint64_t rd(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void fill(void)
{
	memset(buf, GUARD, sizeof(buf));
}

TestSuite(ext_writer, .init = fill);

/* Check the header; return the body length. */
static size_t header(size_t len, enum fdrtrace_ext_kind kind)
{
	cr_assert_geq(len, 8);
	cr_assert_eq(memcmp(buf, "FDRx", 4), 0);
	cr_assert_eq(buf[4], 1, "version");
	cr_assert_eq(buf[5], kind, "kind");
	cr_assert_eq(rd(buf + 6, 2), len - 8, "body_len");
	cr_assert_eq(buf[len], GUARD, "nothing written past the payload");
	return len - 8;
}

static void str_at(size_t off, const char *want)
{
	size_t n = strlen(want);

	cr_assert_eq(rd(buf + off, 2), n, "string length at %zu", off);
	cr_assert_eq(memcmp(buf + off + 2, want, n), 0, "string bytes at %zu", off);
}

/*
 * Every encoder: too small a buffer by one byte returns 0 and leaves the
 * buffer alone; the exact size works.
 */
#define CHECK_CAPACITY(call_with_cap)						\
	do {									\
		size_t full_, r_;						\
		size_t cap = sizeof(buf);					\
		fill();								\
		full_ = (call_with_cap);					\
		cr_assert_gt(full_, 8);						\
		for (size_t c_ = 0; c_ < full_; c_ += (c_ < 16 ? 1 : 7)) {	\
			fill();							\
			cap = c_;						\
			r_ = (call_with_cap);					\
			cr_assert_eq(r_, 0, "cap %zu of %zu", c_, full_);	\
			for (size_t i_ = 0; i_ < full_ + 8; i_++)		\
				cr_assert_eq(buf[i_], GUARD, "byte %zu written", i_); \
		}								\
		fill();								\
		cap = full_ - 1;						\
		cr_assert_eq((call_with_cap), 0);				\
		cr_assert_eq(buf[0], GUARD);					\
		cap = full_;							\
		cr_assert_eq((call_with_cap), full_);				\
	} while (0)

Test(ext_writer, process)
{
	static const char args[] = "prog\0-x\0";	/* two arguments, each NUL-ended */
	const struct fdr_ext_process_info pi = {
		.pid = 0x01020304, .ppid = 0x0a0b0c0d, .start_realtime_ns = 0x1122334455667788ull,
		.clock = FDRTRACE_CLOCK_RDTSC, .freq_source = FDRTRACE_FREQ_CALIBRATED,
		.program = "/bin/prog", .start_tsc = 0x0102030405060708ull, .argc = 2,
		.args = args, .args_len = sizeof(args) - 1,
	};
	size_t len = fdr_ext_process(buf, sizeof(buf), &pi);

	cr_assert_eq(header(len, FDRTRACE_EXT_PROCESS), 4 + 4 + 8 + 1 + 1 + 2 + 9 + 8 + 4 + 2 + 8);
	cr_assert_eq(buf[8], 0x04, "pid little-endian");
	cr_assert_eq(rd(buf + 8, 4), 0x01020304);
	cr_assert_eq(rd(buf + 12, 4), 0x0a0b0c0d);
	cr_assert_eq(buf[16], 0x88);
	cr_assert_eq(rd(buf + 16, 8), 0x1122334455667788ull);
	cr_assert_eq(buf[24], FDRTRACE_CLOCK_RDTSC);
	cr_assert_eq(buf[25], FDRTRACE_FREQ_CALIBRATED);
	str_at(26, "/bin/prog");
	cr_assert_eq(rd(buf + 37, 8), 0x0102030405060708ull, "start tsc");
	cr_assert_eq(rd(buf + 45, 4), 2, "argc");
	cr_assert_eq(rd(buf + 49, 2), 8, "args length");
	cr_assert_eq(memcmp(buf + 51, args, 8), 0, "args with their NULs");
	CHECK_CAPACITY(fdr_ext_process(buf, cap, &pi));
}

Test(ext_writer, config)
{
	const char *keys[] = { "buffer_size", "clock", "" };
	const char *vals[] = { "65536", "rdtsc", "x" };
	size_t len = fdr_ext_config(buf, sizeof(buf), 3, keys, vals);
	size_t off = 10;

	cr_assert_eq(header(len, FDRTRACE_EXT_CONFIG), 2 + (2 + 11 + 2 + 5) + (2 + 5 + 2 + 5) + (2 + 0 + 2 + 1));
	cr_assert_eq(rd(buf + 8, 2), 3, "pairs");
	for (int i = 0; i < 3; i++) {
		str_at(off, keys[i]);
		off += 2 + strlen(keys[i]);
		str_at(off, vals[i]);
		off += 2 + strlen(vals[i]);
	}
	cr_assert_eq(off, len);
	CHECK_CAPACITY(fdr_ext_config(buf, cap, 3, keys, vals));

	fill();
	cr_assert_eq(fdr_ext_config(buf, sizeof(buf), 0, NULL, NULL), 10);
	cr_assert_eq(rd(buf + 8, 2), 0);
}

Test(ext_writer, module_map)
{
	const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
				  7, 8, 9, 10, 11, 12, 13, 14, 15, 0xff };
	size_t len = fdr_ext_module_map(buf, sizeof(buf), 7, 0x7f0000001000ull, 0x21000, bid, 20,
					"/usr/lib/libz.so.1");

	cr_assert_eq(header(len, FDRTRACE_EXT_MODULE_MAP), 4 + 8 + 8 + 1 + 20 + 2 + 18);
	cr_assert_eq(rd(buf + 8, 4), 7);
	cr_assert_eq(rd(buf + 12, 8), 0x7f0000001000ull);
	cr_assert_eq(rd(buf + 20, 8), 0x21000);
	cr_assert_eq(buf[28], 20);
	cr_assert_eq(memcmp(buf + 29, bid, 20), 0);
	str_at(49, "/usr/lib/libz.so.1");
	CHECK_CAPACITY(fdr_ext_module_map(buf, cap, 7, 1, 2, bid, 20, "/usr/lib/libz.so.1"));

	/* No build-id. */
	fill();
	len = fdr_ext_module_map(buf, sizeof(buf), 1, 0, 4096, NULL, 0, "a");
	cr_assert_eq(header(len, FDRTRACE_EXT_MODULE_MAP), 4 + 8 + 8 + 1 + 2 + 1);
	cr_assert_eq(buf[28], 0);
	str_at(29, "a");
}

Test(ext_writer, module_unmap)
{
	size_t len = fdr_ext_module_unmap(buf, sizeof(buf), 0xfffffffe, 0x555555554000ull,
					  0x123456789abcull);

	cr_assert_eq(header(len, FDRTRACE_EXT_MODULE_UNMAP), 20);
	cr_assert_eq(rd(buf + 8, 4), 0xfffffffe);
	cr_assert_eq(rd(buf + 12, 8), 0x555555554000ull);
	cr_assert_eq(rd(buf + 20, 8), 0x123456789abcull);
	CHECK_CAPACITY(fdr_ext_module_unmap(buf, cap, 1, 2, 3));
}

Test(ext_writer, func)
{
	size_t len = fdr_ext_func(buf, sizeof(buf), 0x0fffffff, 0x401136, 0xffffffff, "_Z3fooi");

	cr_assert_eq(header(len, FDRTRACE_EXT_FUNC), 4 + 8 + 4 + 2 + 7);
	cr_assert_eq(rd(buf + 8, 4), 0x0fffffff);
	cr_assert_eq(rd(buf + 12, 8), 0x401136);
	cr_assert_eq(rd(buf + 20, 4), 0xffffffff);
	str_at(24, "_Z3fooi");
	CHECK_CAPACITY(fdr_ext_func(buf, cap, 1, 2, 3, "_Z3fooi"));

	/* NULL and "" are the empty string. */
	fill();
	len = fdr_ext_func(buf, sizeof(buf), 1, 2, 3, NULL);
	cr_assert_eq(header(len, FDRTRACE_EXT_FUNC), 18);
	cr_assert_eq(rd(buf + 24, 2), 0);
}

Test(ext_writer, thread_name)
{
	size_t len = fdr_ext_thread_name(buf, sizeof(buf), 4242, "worker-1");

	cr_assert_eq(header(len, FDRTRACE_EXT_THREAD_NAME), 4 + 2 + 8);
	cr_assert_eq(rd(buf + 8, 4), 4242);
	str_at(12, "worker-1");
	CHECK_CAPACITY(fdr_ext_thread_name(buf, cap, 1, "worker-1"));
}

Test(ext_writer, drop)
{
	size_t len = fdr_ext_drop(buf, sizeof(buf), 0, FDRTRACE_DROP_POOL_EMPTY, 0x100000001ull,
				  0xffffffffffffffffull);

	cr_assert_eq(header(len, FDRTRACE_EXT_DROP), 4 + 1 + 8 + 8);
	cr_assert_eq(rd(buf + 8, 4), 0);
	cr_assert_eq(buf[12], FDRTRACE_DROP_POOL_EMPTY);
	cr_assert_eq(rd(buf + 13, 8), 0x100000001ull);
	cr_assert_eq(rd(buf + 21, 8), 0xffffffffffffffffull);
	CHECK_CAPACITY(fdr_ext_drop(buf, cap, 1, 2, 3, 4));
}

Test(ext_writer, fork)
{
	size_t len = fdr_ext_fork(buf, sizeof(buf), 100, 200, 101, 0x1122334455667788ull, 3);

	cr_assert_eq(header(len, FDRTRACE_EXT_FORK), 4 + 4 + 4 + 8 + 4);
	cr_assert_eq(rd(buf + 8, 4), 100);
	cr_assert_eq(rd(buf + 12, 4), 200);
	cr_assert_eq(rd(buf + 16, 4), 101, "parent tid");
	cr_assert_eq(rd(buf + 20, 8), 0x1122334455667788ull, "fork tsc");
	cr_assert_eq(rd(buf + 28, 4), 3, "serial");
	CHECK_CAPACITY(fdr_ext_fork(buf, cap, 1, 2, 3, 4, 5));
}

Test(ext_writer, exec)
{
	size_t len = fdr_ext_exec(buf, sizeof(buf), 77, "/usr/bin/env", 78, 0x99);

	cr_assert_eq(header(len, FDRTRACE_EXT_EXEC), 4 + 2 + 12 + 4 + 8);
	cr_assert_eq(rd(buf + 8, 4), 77);
	str_at(12, "/usr/bin/env");
	cr_assert_eq(rd(buf + 26, 4), 78, "tid");
	cr_assert_eq(rd(buf + 30, 8), 0x99, "tsc");
	CHECK_CAPACITY(fdr_ext_exec(buf, cap, 77, "/usr/bin/env", 78, 0x99));
}

Test(ext_writer, spawn)
{
	size_t len = fdr_ext_spawn(buf, sizeof(buf), 5, 0x1122334455667788ull, 2, 4242);

	cr_assert_eq(header(len, FDRTRACE_EXT_SPAWN), 4 + 8 + 4 + 4);
	cr_assert_eq(rd(buf + 8, 4), 5);
	cr_assert_eq(rd(buf + 12, 8), 0x1122334455667788ull);
	cr_assert_eq(rd(buf + 20, 4), 2);
	cr_assert_eq(rd(buf + 24, 4), 4242);
	CHECK_CAPACITY(fdr_ext_spawn(buf, cap, 1, 2, 3, 4));
}

Test(ext_writer, close)
{
	const struct fdr_ext_close_info c = {
		.how = FDRTRACE_CLOSE_STOPPED, .records = 1, .records_dropped = 2, .buffers = 3,
		.buffers_dropped = 4, .threads = 5, .cycle_frequency = 2096032123,
		.end_realtime_ns = 0x0102030405060708ull, .records_left_out = 9, .error = 27,
		.end = FDRTRACE_END_SIGNALED, .end_value = 15,
	};
	size_t len = fdr_ext_close(buf, sizeof(buf), &c);

	cr_assert_eq(header(len, FDRTRACE_EXT_CLOSE), 1 + 8 * 4 + 4 + 8 + 8 + 8 + 4 + 1 + 4);
	cr_assert_eq(buf[8], FDRTRACE_CLOSE_STOPPED);
	cr_assert_eq(rd(buf + 9, 8), 1);
	cr_assert_eq(rd(buf + 17, 8), 2);
	cr_assert_eq(rd(buf + 25, 8), 3);
	cr_assert_eq(rd(buf + 33, 8), 4);
	cr_assert_eq(rd(buf + 41, 4), 5);
	cr_assert_eq(rd(buf + 45, 8), 2096032123);
	cr_assert_eq(rd(buf + 53, 8), 0x0102030405060708ull);
	cr_assert_eq(rd(buf + 61, 8), 9);
	cr_assert_eq(rd(buf + 69, 4), 27);
	cr_assert_eq(buf[73], FDRTRACE_END_SIGNALED);
	cr_assert_eq(rd(buf + 74, 4), 15);
	CHECK_CAPACITY(fdr_ext_close(buf, cap, &c));
}

Test(ext_writer, stack)
{
	const uint32_t ids[] = { 1, 0x0abcdef0, 3 };
	size_t len = fdr_ext_stack(buf, sizeof(buf), 9, 3, ids, NULL);

	cr_assert_eq(header(len, FDRTRACE_EXT_STACK), 4 + 4 + 12);
	cr_assert_eq(rd(buf + 8, 4), 9);
	cr_assert_eq(rd(buf + 12, 4), 3);
	cr_assert_eq(rd(buf + 16, 4), 1);
	cr_assert_eq(rd(buf + 20, 4), 0x0abcdef0);
	cr_assert_eq(rd(buf + 24, 4), 3);
	CHECK_CAPACITY(fdr_ext_stack(buf, cap, 9, 3, ids, NULL));

	fill();
	len = fdr_ext_stack(buf, sizeof(buf), 9, 0, NULL, NULL);
	cr_assert_eq(header(len, FDRTRACE_EXT_STACK), 8);
	cr_assert_eq(rd(buf + 12, 4), 0);
}

Test(ext_writer, stack_with_the_buffer_position_appends_it)
{
	const uint32_t ids[] = { 4, 5 };
	const struct fdr_ext_bufpos pos = { .buffer_no = 7, .records_before = 0x123456789ull,
					    .skipped = 3 };
	size_t len = fdr_ext_stack(buf, sizeof(buf), 9, 2, ids, &pos);

	cr_assert_eq(header(len, FDRTRACE_EXT_STACK), 4 + 4 + 8 + 8 + 8 + 4);
	cr_assert_eq(rd(buf + 12, 4), 2);
	cr_assert_eq(rd(buf + 20, 4), 5);
	cr_assert_eq(rd(buf + 24, 8), 7);
	cr_assert_eq(rd(buf + 32, 8), 0x123456789ull);
	cr_assert_eq(rd(buf + 40, 4), 3);
	CHECK_CAPACITY(fdr_ext_stack(buf, cap, 9, 2, ids, &pos));
}

Test(ext_writer, stack_too_deep_for_body_len_returns_0)
{
	static uint32_t ids[20000];

	fill();
	cr_assert_eq(fdr_ext_stack(buf, sizeof(buf), 1, 20000, ids, NULL), 0);
	cr_assert_eq(buf[0], GUARD);
	/* The deepest that fits with the position fields: (65535 - 28) / 4. */
	cr_assert_eq(fdr_ext_stack(buf, sizeof(buf), 1, 16376, ids, NULL), 8 + 8 + 16376 * 4);
}

Test(ext_writer, native_stack)
{
	const uint64_t addrs[] = { 0x7f0011223344ull, 0x55aa00001234ull };
	const uint32_t mods[] = { 4, 0 };
	size_t len = fdr_ext_native_stack(buf, sizeof(buf), 77, FDRTRACE_NATIVE_SIGNAL, 11,
					  0xdeadbeefull, 2, addrs, mods);

	cr_assert_eq(header(len, FDRTRACE_EXT_NATIVE_STACK), FDRTRACE_NATIVE_HEAD_SIZE + 2 * 12);
	cr_assert_eq(rd(buf + 8, 4), 77);
	cr_assert_eq(rd(buf + 12, 1), FDRTRACE_NATIVE_SIGNAL);
	cr_assert_eq(rd(buf + 13, 1), 11);
	cr_assert_eq(rd(buf + 14, 8), 0xdeadbeefull);
	cr_assert_eq(rd(buf + 22, 4), 2);
	cr_assert_eq(rd(buf + 26, 8), 0x7f0011223344ull);
	cr_assert_eq(rd(buf + 34, 4), 4);
	cr_assert_eq(rd(buf + 38, 8), 0x55aa00001234ull);
	cr_assert_eq(rd(buf + 46, 4), 0);
	CHECK_CAPACITY(fdr_ext_native_stack(buf, cap, 77, FDRTRACE_NATIVE_SIGNAL, 11, 0xdeadbeefull,
					    2, addrs, mods));
}

Test(ext_writer, native_stack_too_deep_for_body_len_returns_0)
{
	static uint64_t addrs[6000];
	static uint32_t mods[6000];

	cr_assert_eq(fdr_ext_native_stack(buf, sizeof(buf), 1, FDRTRACE_NATIVE_START, 0, 0, 6000,
					  addrs, mods), 0);
	cr_assert_neq(fdr_ext_native_stack(buf, sizeof(buf), 1, FDRTRACE_NATIVE_START, 0, 0, 5000,
					   addrs, mods), 0);
}

Test(ext_writer, long_strings_are_cut_to_fit_body_len)
{
	static char name[70000];
	size_t len;

	memset(name, 'n', sizeof(name) - 1);
	fill();
	len = fdr_ext_func(buf, sizeof(buf), 1, 2, 3, name);
	cr_assert_eq(len, 8 + 65535, "the body fills body_len exactly");
	cr_assert_eq(rd(buf + 6, 2), 65535);
	cr_assert_eq(rd(buf + 24, 2), 65535 - 18);
	cr_assert_eq(buf[len], GUARD);

	fill();
	len = fdr_ext_thread_name(buf, sizeof(buf), 1, name);
	cr_assert_eq(len, 8 + 65535);
	cr_assert_eq(rd(buf + 12, 2), 65535 - 6);
}

Test(ext_writer, config_too_big_returns_0)
{
	static char big[40000];
	const char *keys[] = { "a", "b" };
	const char *vals[] = { big, big };

	memset(big, 'v', sizeof(big) - 1);
	fill();
	cr_assert_eq(fdr_ext_config(buf, sizeof(buf), 2, keys, vals), 0);
	cr_assert_eq(buf[0], GUARD);
}

Test(ext_writer, null_buffer_returns_0)
{
	cr_assert_eq(fdr_ext_fork(NULL, 100, 1, 2, 3, 4, 5), 0);
}
