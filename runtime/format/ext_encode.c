// SPDX-License-Identifier: MIT
/*
 * runtime/format/ext_encode.c - encode fdrtrace extension payloads.
 *
 * Contract: pure functions of their arguments, async-signal-safe: no libc
 * at all (own byte copies and string lengths), no allocation, no locks.
 * Called from any thread, including the fatal-signal path. (The compiler
 * may turn a copy loop into a memcpy() call; memcpy is async-signal-safe.)
 * A string is cut to what the u16 body_len leaves room for; the config
 * payload, whose pairs cannot be cut sensibly, returns 0 when it is too big. Each encoder
 * first computes the payload's exact length, returns 0 without touching
 * @buf when it does not fit in @cap (or would not fit the u16 body_len),
 * then writes the 8-byte header and the body in order.
 */
#include <stddef.h>
#include <stdint.h>

#include <fdrtrace/format.h>

#include "compiler.h"
#include "ext_encode.h"

#define EXT_HDR_LEN sizeof(struct fdrtrace_ext_header)
#define EXT_STR_MAX 0xffffu
#define EXT_BODY_MAX 0xffffu

/* ------------------------------------------------------------------ */
/* Little-endian, unaligned stores into the payload                    */
/* ------------------------------------------------------------------ */

struct ext_out {
	uint8_t *p;
};

static fdr_always_inline notrace void ext_u8(struct ext_out *o, uint8_t v)
{
	*o->p++ = v;
}

static fdr_always_inline notrace void ext_u16(struct ext_out *o, uint16_t v)
{
	ext_u8(o, (uint8_t)v);
	ext_u8(o, (uint8_t)(v >> 8));
}

static fdr_always_inline notrace void ext_u32(struct ext_out *o, uint32_t v)
{
	ext_u16(o, (uint16_t)v);
	ext_u16(o, (uint16_t)(v >> 16));
}

static fdr_always_inline notrace void ext_u64(struct ext_out *o, uint64_t v)
{
	ext_u32(o, (uint32_t)v);
	ext_u32(o, (uint32_t)(v >> 32));
}

static notrace void ext_bytes(struct ext_out *o, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		o->p[i] = s[i];
	o->p += n;
}

/*
 * strlen() capped at @max (a string is cut to what the body still has room
 * for, and never beyond EXT_STR_MAX); NULL counts as "".
 */
static notrace size_t ext_strlen(const char *s, size_t max)
{
	size_t n = 0;

	if (!s)
		return 0;
	if (max > EXT_STR_MAX)
		max = EXT_STR_MAX;
	while (n < max && s[n])
		n++;
	return n;
}

static notrace void ext_str(struct ext_out *o, const char *s, size_t n)
{
	ext_u16(o, (uint16_t)n);
	ext_bytes(o, (const uint8_t *)s, n);
}

/*
 * Check the size and write the header. Return: the writer positioned at the
 * body, or one with p == NULL when the payload does not fit.
 */
static notrace struct ext_out ext_begin(uint8_t *buf, size_t cap, enum fdrtrace_ext_kind kind,
					size_t body_len)
{
	struct ext_out o = { NULL };

	if (!buf || body_len > EXT_BODY_MAX || cap < EXT_HDR_LEN || cap - EXT_HDR_LEN < body_len)
		return o;
	o.p = buf;
	ext_bytes(&o, (const uint8_t *)FDRTRACE_EXT_MAGIC, FDRTRACE_EXT_MAGIC_LEN);
	ext_u8(&o, FDRTRACE_EXT_VERSION);
	ext_u8(&o, (uint8_t)kind);
	ext_u16(&o, (uint16_t)body_len);
	return o;
}

/* ------------------------------------------------------------------ */
/* One encoder per kind, in format.h's order                           */
/* ------------------------------------------------------------------ */

notrace size_t fdr_ext_process(uint8_t *buf, size_t cap, const struct fdr_ext_process_info *pi)
{
	size_t fixed = 4 + 4 + 8 + 1 + 1 + 2 + 8 + 4 + 2;
	size_t pl = ext_strlen(pi->program, EXT_BODY_MAX - fixed);
	size_t al = pi->args ? pi->args_len : 0;
	size_t body;
	struct ext_out o;

	if (al > EXT_BODY_MAX - fixed - pl)
		al = EXT_BODY_MAX - fixed - pl;	/* cut: fewer NULs than argc say so */
	body = fixed + pl + al;
	o = ext_begin(buf, cap, FDRTRACE_EXT_PROCESS, body);
	if (!o.p)
		return 0;
	ext_u32(&o, pi->pid);
	ext_u32(&o, pi->ppid);
	ext_u64(&o, pi->start_realtime_ns);
	ext_u8(&o, pi->clock);
	ext_u8(&o, pi->freq_source);
	ext_str(&o, pi->program, pl);
	ext_u64(&o, pi->start_tsc);
	ext_u32(&o, pi->argc);
	ext_u16(&o, (uint16_t)al);
	ext_bytes(&o, (const uint8_t *)pi->args, al);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_config(uint8_t *buf, size_t cap, uint16_t pairs, const char *const *keys,
			      const char *const *values)
{
	size_t body = 2, i;
	struct ext_out o;

	for (i = 0; i < pairs; i++) {
		body += 2 + ext_strlen(keys[i], EXT_STR_MAX) + 2 +
			ext_strlen(values[i], EXT_STR_MAX);
		if (body > EXT_BODY_MAX)
			return 0;
	}
	o = ext_begin(buf, cap, FDRTRACE_EXT_CONFIG, body);
	if (!o.p)
		return 0;
	ext_u16(&o, pairs);
	for (i = 0; i < pairs; i++) {
		ext_str(&o, keys[i], ext_strlen(keys[i], EXT_STR_MAX));
		ext_str(&o, values[i], ext_strlen(values[i], EXT_STR_MAX));
	}
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_module_map(uint8_t *buf, size_t cap, uint32_t module_id,
				  uint64_t load_base, uint64_t size, const uint8_t *build_id,
				  uint8_t build_id_len, const char *path)
{
	size_t bl = build_id ? build_id_len : 0;
	size_t pl = ext_strlen(path, EXT_BODY_MAX - (4 + 8 + 8 + 1 + bl + 2));
	size_t body = 4 + 8 + 8 + 1 + bl + 2 + pl;
	struct ext_out o = ext_begin(buf, cap, FDRTRACE_EXT_MODULE_MAP, body);

	if (!o.p)
		return 0;
	ext_u32(&o, module_id);
	ext_u64(&o, load_base);
	ext_u64(&o, size);
	ext_u8(&o, (uint8_t)bl);
	ext_bytes(&o, build_id, bl);
	ext_str(&o, path, pl);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_module_unmap(uint8_t *buf, size_t cap, uint32_t module_id,
				    uint64_t load_base, uint64_t size)
{
	size_t body = 4 + 8 + 8;
	struct ext_out o = ext_begin(buf, cap, FDRTRACE_EXT_MODULE_UNMAP, body);

	if (!o.p)
		return 0;
	ext_u32(&o, module_id);
	ext_u64(&o, load_base);
	ext_u64(&o, size);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_func(uint8_t *buf, size_t cap, uint32_t func_id, uint64_t address,
			    uint32_t module_id, const char *name)
{
	size_t nl = ext_strlen(name, EXT_BODY_MAX - (4 + 8 + 4 + 2));
	size_t body = 4 + 8 + 4 + 2 + nl;
	struct ext_out o = ext_begin(buf, cap, FDRTRACE_EXT_FUNC, body);

	if (!o.p)
		return 0;
	ext_u32(&o, func_id);
	ext_u64(&o, address);
	ext_u32(&o, module_id);
	ext_str(&o, name, nl);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_thread_name(uint8_t *buf, size_t cap, uint32_t tid, const char *name)
{
	size_t nl = ext_strlen(name, EXT_BODY_MAX - (4 + 2));
	size_t body = 4 + 2 + nl;
	struct ext_out o = ext_begin(buf, cap, FDRTRACE_EXT_THREAD_NAME, body);

	if (!o.p)
		return 0;
	ext_u32(&o, tid);
	ext_str(&o, name, nl);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_drop(uint8_t *buf, size_t cap, uint32_t tid, uint8_t reason,
			    uint64_t records, uint64_t buffers)
{
	size_t body = 4 + 1 + 8 + 8;
	struct ext_out o = ext_begin(buf, cap, FDRTRACE_EXT_DROP, body);

	if (!o.p)
		return 0;
	ext_u32(&o, tid);
	ext_u8(&o, reason);
	ext_u64(&o, records);
	ext_u64(&o, buffers);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_gap(uint8_t *buf, size_t cap, uint32_t tid, uint8_t reason,
			   uint64_t records, uint64_t buffers, uint64_t first_tsc, uint64_t last_tsc,
			   uint32_t exited, uint32_t depth, const uint32_t *ids)
{
	size_t body, i;
	struct ext_out o;

	if (depth > (EXT_BODY_MAX - 45) / 4 || (depth && !ids))
		return 0;
	body = 4 + 1 + 8 + 8 + 8 + 8 + 4 + 4 + (size_t)depth * 4;
	o = ext_begin(buf, cap, FDRTRACE_EXT_DROP, body);
	if (!o.p)
		return 0;
	ext_u32(&o, tid);
	ext_u8(&o, reason);
	ext_u64(&o, records);
	ext_u64(&o, buffers);
	ext_u64(&o, first_tsc);
	ext_u64(&o, last_tsc);
	ext_u32(&o, exited);
	ext_u32(&o, depth);
	for (i = 0; i < depth; i++)
		ext_u32(&o, ids[i]);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_wait(uint8_t *buf, size_t cap, uint32_t tid, uint64_t first_tsc,
			    uint64_t last_tsc)
{
	size_t body = 4 + 8 + 8;
	struct ext_out o = ext_begin(buf, cap, FDRTRACE_EXT_WAIT, body);

	if (!o.p)
		return 0;
	ext_u32(&o, tid);
	ext_u64(&o, first_tsc);
	ext_u64(&o, last_tsc);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_fork(uint8_t *buf, size_t cap, uint32_t parent_pid, uint32_t child_pid,
			    uint32_t parent_tid, uint64_t tsc, uint32_t serial)
{
	size_t body = 4 + 4 + 4 + 8 + 4;
	struct ext_out o = ext_begin(buf, cap, FDRTRACE_EXT_FORK, body);

	if (!o.p)
		return 0;
	ext_u32(&o, parent_pid);
	ext_u32(&o, child_pid);
	ext_u32(&o, parent_tid);
	ext_u64(&o, tsc);
	ext_u32(&o, serial);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_exec(uint8_t *buf, size_t cap, uint32_t pid, const char *path, uint32_t tid,
			    uint64_t tsc)
{
	size_t pl = ext_strlen(path, EXT_BODY_MAX - (4 + 2 + 4 + 8));
	size_t body = 4 + 2 + pl + 4 + 8;
	struct ext_out o = ext_begin(buf, cap, FDRTRACE_EXT_EXEC, body);

	if (!o.p)
		return 0;
	ext_u32(&o, pid);
	ext_str(&o, path, pl);
	ext_u32(&o, tid);
	ext_u64(&o, tsc);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_close(uint8_t *buf, size_t cap, const struct fdr_ext_close_info *c)
{
	size_t body = 1 + 8 + 8 + 8 + 8 + 4 + 8 + 8 + 8 + 4 + 1 + 4;
	struct ext_out o = ext_begin(buf, cap, FDRTRACE_EXT_CLOSE, body);

	if (!o.p)
		return 0;
	ext_u8(&o, c->how);
	ext_u64(&o, c->records);
	ext_u64(&o, c->records_dropped);
	ext_u64(&o, c->buffers);
	ext_u64(&o, c->buffers_dropped);
	ext_u32(&o, c->threads);
	ext_u64(&o, c->cycle_frequency);
	ext_u64(&o, c->end_realtime_ns);
	ext_u64(&o, c->records_left_out);
	ext_u32(&o, c->error);
	ext_u8(&o, c->end);
	ext_u32(&o, c->end_value);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_stack(uint8_t *buf, size_t cap, uint32_t tid, uint32_t depth,
			     const uint32_t *ids, const struct fdr_ext_bufpos *pos)
{
	size_t body, i;
	struct ext_out o;

	if (depth > (EXT_BODY_MAX - 8 - 20) / 4 || (depth && !ids))
		return 0;
	body = 4 + 4 + (size_t)depth * 4 + (pos ? 20 : 0);
	o = ext_begin(buf, cap, FDRTRACE_EXT_STACK, body);
	if (!o.p)
		return 0;
	ext_u32(&o, tid);
	ext_u32(&o, depth);
	for (i = 0; i < depth; i++)
		ext_u32(&o, ids[i]);
	if (pos) {
		ext_u64(&o, pos->buffer_no);
		ext_u64(&o, pos->records_before);
		ext_u32(&o, pos->skipped);
	}
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_native_stack(uint8_t *buf, size_t cap, uint32_t tid, uint8_t why,
				    uint8_t signal, uint64_t fault_address, uint32_t depth,
				    const uint64_t *addrs, const uint32_t *modules)
{
	size_t body, i;
	struct ext_out o;

	if (depth > (EXT_BODY_MAX - FDRTRACE_NATIVE_HEAD_SIZE) / FDRTRACE_NATIVE_FRAME_SIZE ||
	    (depth && (!addrs || !modules)))
		return 0;
	body = FDRTRACE_NATIVE_HEAD_SIZE + (size_t)depth * FDRTRACE_NATIVE_FRAME_SIZE;
	o = ext_begin(buf, cap, FDRTRACE_EXT_NATIVE_STACK, body);
	if (!o.p)
		return 0;
	ext_u32(&o, tid);
	ext_u8(&o, why);
	ext_u8(&o, signal);
	ext_u64(&o, fault_address);
	ext_u32(&o, depth);
	for (i = 0; i < depth; i++) {
		ext_u64(&o, addrs[i]);
		ext_u32(&o, modules[i]);
	}
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_spawn(uint8_t *buf, size_t cap, uint32_t tid, uint64_t tsc, uint32_t serial,
			     uint32_t child_pid)
{
	size_t body = 4 + 8 + 4 + 4;
	struct ext_out o = ext_begin(buf, cap, FDRTRACE_EXT_SPAWN, body);

	if (!o.p)
		return 0;
	ext_u32(&o, tid);
	ext_u64(&o, tsc);
	ext_u32(&o, serial);
	ext_u32(&o, child_pid);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_excluded(uint8_t *buf, size_t cap, uint32_t func_id, uint64_t tsc,
				uint32_t calls, uint64_t sum_ticks, uint64_t threshold_ticks,
				uint32_t after, bool undone)
{
	size_t body = 4 + 8 + 4 + 8 + 8 + 4 + 1;
	struct ext_out o = ext_begin(buf, cap, FDRTRACE_EXT_EXCLUDED, body);

	if (!o.p)
		return 0;
	ext_u32(&o, func_id);
	ext_u64(&o, tsc);
	ext_u32(&o, calls);
	ext_u64(&o, sum_ticks);
	ext_u64(&o, threshold_ticks);
	ext_u32(&o, after);
	ext_u8(&o, undone);
	return EXT_HDR_LEN + body;
}

notrace size_t fdr_ext_counted(uint8_t *buf, size_t cap, uint32_t tid, uint64_t lost,
			       uint32_t count, const uint32_t *ids, const uint64_t *calls)
{
	size_t body = 4 + 8 + 4 + (size_t)count * 12;
	struct ext_out o;

	if (body > EXT_BODY_MAX)
		return 0;
	o = ext_begin(buf, cap, FDRTRACE_EXT_COUNTED, body);
	if (!o.p)
		return 0;
	ext_u32(&o, tid);
	ext_u64(&o, lost);
	ext_u32(&o, count);
	for (uint32_t i = 0; i < count; i++) {
		ext_u32(&o, ids[i]);
		ext_u64(&o, calls[i]);
	}
	return EXT_HDR_LEN + body;
}
