// SPDX-License-Identifier: MIT
/*
 * ext.c - decoding of fdrtrace's extension records (format.h), the custom
 * event payloads that start with FDRTRACE_EXT_MAGIC.
 *
 * Contract: pure functions over the caller's bytes; any thread, no state,
 * no allocation. Every field read is bounds-checked against the body; the
 * decoded strings and arrays point into the caller's payload.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <fdrtrace/reader.h>

#include "reader_internal.h"

/* A bounds-checked cursor over an extension body. */
struct ext_cursor {
	const uint8_t *p;
	size_t len;
	size_t pos;
	bool bad;	/* a read went past the end */
};

static const uint8_t *cur_take(struct ext_cursor *c, size_t n)
{
	const uint8_t *p;

	if (c->bad || n > c->len - c->pos) {
		c->bad = true;
		return NULL;
	}
	p = c->p + c->pos;
	c->pos += n;
	return p;
}

static uint8_t cur_u8(struct ext_cursor *c)
{
	const uint8_t *p = cur_take(c, 1);

	return p ? p[0] : 0;
}

static uint16_t cur_u16(struct ext_cursor *c)
{
	const uint8_t *p = cur_take(c, 2);

	return p ? rd_le16(p) : 0;
}

static uint32_t cur_u32(struct ext_cursor *c)
{
	const uint8_t *p = cur_take(c, 4);

	return p ? rd_le32(p) : 0;
}

static uint64_t cur_u64(struct ext_cursor *c)
{
	const uint8_t *p = cur_take(c, 8);

	return p ? rd_le64(p) : 0;
}

static struct fdrtrace_str cur_str(struct ext_cursor *c)
{
	struct fdrtrace_str s = { .ptr = "", .len = 0 };
	uint16_t len = cur_u16(c);
	const uint8_t *p = cur_take(c, len);

	if (p) {
		s.ptr = (const char *)p;
		s.len = len;
	}
	return s;
}

static int ext_decode_body(struct fdrtrace_ext *ext, struct ext_cursor *c)
{
	switch (ext->kind) {
	case FDRTRACE_EXT_PROCESS:
		ext->u.process.pid = cur_u32(c);
		ext->u.process.ppid = cur_u32(c);
		ext->u.process.start_realtime_ns = cur_u64(c);
		ext->u.process.clock = cur_u8(c);
		ext->u.process.freq_source = cur_u8(c);
		ext->u.process.program = cur_str(c);
		if (c->bad || c->len - c->pos < 8 + 4 + 2)
			break;	/* a writer before 2026-12-01 */
		ext->u.process.has_cmdline = true;
		ext->u.process.start_tsc = cur_u64(c);
		ext->u.process.argc = cur_u32(c);
		ext->u.process.args = cur_str(c);
		break;
	case FDRTRACE_EXT_CONFIG: {
		size_t start;

		ext->u.config.pairs = cur_u16(c);
		start = c->pos;
		for (unsigned i = 0; i < ext->u.config.pairs && !c->bad; i++) {
			cur_str(c);
			cur_str(c);
		}
		if (c->bad)
			break;
		ext->u.config.data = c->p + start;
		ext->u.config.data_len = (uint16_t)(c->pos - start);
		break;
	}
	case FDRTRACE_EXT_MODULE_MAP:
		ext->u.module_map.module_id = cur_u32(c);
		ext->u.module_map.load_base = cur_u64(c);
		ext->u.module_map.size = cur_u64(c);
		ext->u.module_map.build_id_len = cur_u8(c);
		ext->u.module_map.build_id = cur_take(c, ext->u.module_map.build_id_len);
		ext->u.module_map.path = cur_str(c);
		break;
	case FDRTRACE_EXT_MODULE_UNMAP:
		ext->u.module_unmap.module_id = cur_u32(c);
		ext->u.module_unmap.load_base = cur_u64(c);
		ext->u.module_unmap.size = cur_u64(c);
		break;
	case FDRTRACE_EXT_FUNC:
		ext->u.func.func_id = cur_u32(c);
		ext->u.func.address = cur_u64(c);
		ext->u.func.module_id = cur_u32(c);
		ext->u.func.name = cur_str(c);
		break;
	case FDRTRACE_EXT_THREAD_NAME:
		ext->u.thread_name.tid = cur_u32(c);
		ext->u.thread_name.name = cur_str(c);
		break;
	case FDRTRACE_EXT_DROP:
		ext->u.drop.tid = cur_u32(c);
		ext->u.drop.reason = cur_u8(c);
		ext->u.drop.records = cur_u64(c);
		ext->u.drop.buffers = cur_u64(c);
		if (c->bad || c->pos == c->len)
			break;	/* a plain drop count */
		ext->u.drop.gap = true;
		ext->u.drop.first_tsc = cur_u64(c);
		ext->u.drop.last_tsc = cur_u64(c);
		ext->u.drop.exited = cur_u32(c);
		ext->u.drop.depth = cur_u32(c);
		ext->u.drop.ids = cur_take(c, (size_t)ext->u.drop.depth * 4);
		break;
	case FDRTRACE_EXT_FORK:
		ext->u.fork.parent_pid = cur_u32(c);
		ext->u.fork.child_pid = cur_u32(c);
		if (c->bad || c->len - c->pos < 4 + 8 + 4)
			break;	/* a writer before 2026-12-01 */
		ext->u.fork.has_point = true;
		ext->u.fork.parent_tid = cur_u32(c);
		ext->u.fork.tsc = cur_u64(c);
		ext->u.fork.serial = cur_u32(c);
		break;
	case FDRTRACE_EXT_EXEC:
		ext->u.exec.pid = cur_u32(c);
		ext->u.exec.path = cur_str(c);
		if (c->bad || c->len - c->pos < 4 + 8)
			break;	/* a writer before 2026-12-01 */
		ext->u.exec.has_point = true;
		ext->u.exec.tid = cur_u32(c);
		ext->u.exec.tsc = cur_u64(c);
		break;
	case FDRTRACE_EXT_CLOSE:
		ext->u.close.how = cur_u8(c);
		ext->u.close.records = cur_u64(c);
		ext->u.close.records_dropped = cur_u64(c);
		ext->u.close.buffers = cur_u64(c);
		ext->u.close.buffers_dropped = cur_u64(c);
		ext->u.close.threads = cur_u32(c);
		ext->u.close.cycle_frequency = cur_u64(c);
		ext->u.close.end_realtime_ns = cur_u64(c);
		if (c->bad || c->len - c->pos < 8)
			break;	/* an older writer */
		ext->u.close.has_left_out = true;
		ext->u.close.records_left_out = cur_u64(c);
		if (c->bad || c->len - c->pos < 4)
			break;	/* a writer before 2026-11-27 */
		ext->u.close.error = cur_u32(c);
		if (c->bad || c->len - c->pos < 1 + 4)
			break;	/* a writer before 2026-12-01 */
		ext->u.close.has_end = true;
		ext->u.close.end = cur_u8(c);
		ext->u.close.end_value = cur_u32(c);
		break;
	case FDRTRACE_EXT_STACK:
		ext->u.stack.tid = cur_u32(c);
		ext->u.stack.depth = cur_u32(c);
		/* depth <= 0xffffffff: depth * 4 fits in size_t on 64-bit hosts */
		ext->u.stack.ids = cur_take(c, (size_t)ext->u.stack.depth * 4);
		if (c->bad || c->len - c->pos < 20)
			break;	/* no position: not ring policy, or an older writer */
		ext->u.stack.numbered = true;
		ext->u.stack.buffer_no = cur_u64(c);
		ext->u.stack.records_before = cur_u64(c);
		ext->u.stack.skipped = cur_u32(c);
		break;
	case FDRTRACE_EXT_NATIVE_STACK:
		ext->u.native_stack.tid = cur_u32(c);
		ext->u.native_stack.why = cur_u8(c);
		ext->u.native_stack.signal = cur_u8(c);
		ext->u.native_stack.fault_address = cur_u64(c);
		ext->u.native_stack.depth = cur_u32(c);
		ext->u.native_stack.frames =
			cur_take(c, (size_t)ext->u.native_stack.depth * FDRTRACE_NATIVE_FRAME_SIZE);
		break;
	case FDRTRACE_EXT_WAIT:
		ext->u.wait.tid = cur_u32(c);
		ext->u.wait.first_tsc = cur_u64(c);
		ext->u.wait.last_tsc = cur_u64(c);
		break;
	case FDRTRACE_EXT_SPAWN:
		ext->u.spawn.tid = cur_u32(c);
		ext->u.spawn.tsc = cur_u64(c);
		ext->u.spawn.serial = cur_u32(c);
		ext->u.spawn.child_pid = cur_u32(c);
		break;
	case FDRTRACE_EXT_EXCLUDED:
		ext->u.excluded.func_id = cur_u32(c);
		ext->u.excluded.tsc = cur_u64(c);
		ext->u.excluded.calls = cur_u32(c);
		ext->u.excluded.sum_ticks = cur_u64(c);
		ext->u.excluded.threshold_ticks = cur_u64(c);
		ext->u.excluded.after = cur_u32(c);
		ext->u.excluded.undone = cur_u8(c);
		break;
	case FDRTRACE_EXT_COUNTED:
		ext->u.counted.tid = cur_u32(c);
		ext->u.counted.lost = cur_u64(c);
		ext->u.counted.count = cur_u32(c);
		ext->u.counted.pairs = cur_take(c, (size_t)ext->u.counted.count * 12);
		break;
	default:
		/* A kind this reader does not know: the raw body is all there is. */
		break;
	}
	return c->bad ? -EBADMSG : 0;
}

/**
 * fdrtrace_ext_decode - decode a custom-event payload written by fdrtrace
 * (documented in fdrtrace/reader.h)
 */
rd_export int fdrtrace_ext_decode(const void *data, size_t len, struct fdrtrace_ext *ext)
{
	const uint8_t *p = data;
	struct ext_cursor c;
	struct fdrtrace_ext_header h;

	memset(ext, 0, sizeof(*ext));
	if (!p || len < sizeof(h) || memcmp(p, FDRTRACE_EXT_MAGIC, FDRTRACE_EXT_MAGIC_LEN) != 0)
		return -ENOENT;
	memcpy(&h, p, sizeof(h));
	ext->kind = h.kind;
	ext->version = h.version;
	ext->body = p + sizeof(h);
	/* The payload is exactly the header and the body it announces. */
	if ((size_t)h.body_len != len - sizeof(h) || h.version == 0)
		return -EBADMSG;
	ext->body_len = h.body_len;
	if (h.version > FDRTRACE_EXT_VERSION)
		return -ENOTSUP;

	c = (struct ext_cursor){ .p = ext->body, .len = ext->body_len };
	return ext_decode_body(ext, &c);
}

/**
 * fdrtrace_ext_config_pair - walk the pairs of an FDRTRACE_EXT_CONFIG body
 * (documented in fdrtrace/reader.h)
 */
rd_export int fdrtrace_ext_config_pair(const struct fdrtrace_ext *ext, size_t *pos,
				       struct fdrtrace_str *key, struct fdrtrace_str *value)
{
	struct ext_cursor c;

	if (ext->kind != FDRTRACE_EXT_CONFIG || !ext->u.config.data)
		return ext->kind == FDRTRACE_EXT_CONFIG && ext->u.config.pairs == 0 ? 0 : -EBADMSG;
	if (*pos >= ext->u.config.data_len)
		return *pos == ext->u.config.data_len ? 0 : -EBADMSG;
	c = (struct ext_cursor){ .p = ext->u.config.data, .len = ext->u.config.data_len, .pos = *pos };
	*key = cur_str(&c);
	*value = cur_str(&c);
	if (c.bad)
		return -EBADMSG;
	*pos = c.pos;
	return 1;
}

/**
 * fdrtrace_ext_native_frame - one frame of a native stack
 * (documented in fdrtrace/reader.h)
 */
rd_export int fdrtrace_ext_native_frame(const struct fdrtrace_ext *ext, uint32_t i,
					uint64_t *address, uint32_t *module_id)
{
	const uint8_t *f;

	if (ext->kind != FDRTRACE_EXT_NATIVE_STACK || !ext->u.native_stack.frames ||
	    i >= ext->u.native_stack.depth)
		return -EINVAL;
	f = ext->u.native_stack.frames + (size_t)i * FDRTRACE_NATIVE_FRAME_SIZE;
	*address = rd_le64(f);
	*module_id = rd_le32(f + 8);
	return 0;
}

/**
 * fdrtrace_ext_counted_pair - one pair of a counted record
 * (documented in fdrtrace/reader.h)
 */
rd_export int fdrtrace_ext_counted_pair(const struct fdrtrace_ext *ext, uint32_t i,
					uint32_t *func_id, uint64_t *calls)
{
	const uint8_t *f;

	if (ext->kind != FDRTRACE_EXT_COUNTED || !ext->u.counted.pairs || i >= ext->u.counted.count)
		return -EINVAL;
	f = ext->u.counted.pairs + (size_t)i * 12;
	*func_id = rd_le32(f);
	*calls = rd_le64(f + 4);
	return 0;
}
