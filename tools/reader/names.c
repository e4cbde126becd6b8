// SPDX-License-Identifier: MIT
/*
 * names.c - printable names for the reader's enums (fdrtrace/reader.h).
 *
 * Contract: pure functions over constant tables; any thread, no state.
 * Unknown values get "unknown", never NULL.
 */
#include <fdrtrace/reader.h>

#include "fdrx_schema.h"
#include "reader_internal.h"

static const char *const state_names[] = {
	[FDRTRACE_OK] = "OK",
	[FDRTRACE_EOF] = "EOF",
	[FDRTRACE_ERROR] = "ERROR",
	[FDRTRACE_REQUIRE_DATA] = "REQUIRE_DATA",
};

static const char *const event_names[FDRTRACE_EV_TYPE_COUNT] = {
	[FDRTRACE_EV_HEADER] = "header",
	[FDRTRACE_EV_FUNCTION] = "function",
	[FDRTRACE_EV_NEW_BUFFER] = "new_buffer",
	[FDRTRACE_EV_END_OF_BUFFER] = "end_of_buffer",
	[FDRTRACE_EV_NEW_CPU_ID] = "new_cpu_id",
	[FDRTRACE_EV_TSC_WRAP] = "tsc_wrap",
	[FDRTRACE_EV_WALLTIME] = "walltime",
	[FDRTRACE_EV_CUSTOM_EVENT] = "custom_event",
	[FDRTRACE_EV_CALL_ARGUMENT] = "call_argument",
	[FDRTRACE_EV_BUFFER_EXTENTS] = "buffer_extents",
	[FDRTRACE_EV_TYPED_EVENT] = "typed_event",
	[FDRTRACE_EV_PID] = "pid",
	[FDRTRACE_EV_PADDING] = "padding",
};

static const char *const error_names[FDRTRACE_E_COUNT] = {
	[FDRTRACE_E_NONE] = "none",
	[FDRTRACE_E_IO] = "I/O error",
	[FDRTRACE_E_NOMEM] = "out of memory",
	[FDRTRACE_E_TRUNCATED] = "truncated",
	[FDRTRACE_E_BAD_HEADER] = "bad header",
	[FDRTRACE_E_UNSUPPORTED] = "unsupported",
	[FDRTRACE_E_GRAMMAR] = "grammar violation",
	[FDRTRACE_E_BAD_KIND] = "unknown record kind",
	[FDRTRACE_E_BAD_SIZE] = "bad size",
	[FDRTRACE_E_OVERRUN] = "buffer overrun",
	[FDRTRACE_E_USAGE] = "API misuse",
};

static const char *const drop_names[FDRTRACE_DROP_REASON_COUNT] = {
	[FDRTRACE_DROP_POOL_EMPTY] = "pool_empty",
	[FDRTRACE_DROP_REENTRY] = "reentry",
	[FDRTRACE_DROP_BEFORE_INIT] = "before_init",
	[FDRTRACE_DROP_AFTER_FINI] = "after_fini",
	[FDRTRACE_DROP_OVERWRITTEN] = "overwritten",
	[FDRTRACE_DROP_IO_ERROR] = "io_error",
	[FDRTRACE_DROP_FILTERED] = "filtered",
};

static const char *const close_names[] = {
	[FDRTRACE_CLOSE_EXIT] = "exit",
	[FDRTRACE_CLOSE_SIGNAL] = "signal",
	[FDRTRACE_CLOSE_SNAPSHOT] = "snapshot",
	[FDRTRACE_CLOSE_STOPPED] = "stopped",
};

static const char *const end_names[] = {
	[FDRTRACE_END_UNKNOWN] = "unknown",
	[FDRTRACE_END_EXITED] = "exited",
	[FDRTRACE_END_SIGNALED] = "signaled",
	[FDRTRACE_END_EXECED] = "execed",
};

static const char *const why_names[] = {
	[FDRTRACE_NATIVE_SIGNAL] = "signal",
	[FDRTRACE_NATIVE_START] = "start",
	[FDRTRACE_NATIVE_SENT] = "sent",
};

static const char *pick(const char *const *names, size_t count, unsigned v)
{
	return v < count && names[v] ? names[v] : "unknown";
}

rd_export const char *fdrtrace_state_name(enum fdrtrace_state s)
{
	return pick(state_names, RD_ARRAY_SIZE(state_names), (unsigned)s);
}

rd_export const char *fdrtrace_event_type_name(enum fdrtrace_event_type t)
{
	return pick(event_names, RD_ARRAY_SIZE(event_names), (unsigned)t);
}

rd_export const char *fdrtrace_error_name(enum fdrtrace_error e)
{
	return pick(error_names, RD_ARRAY_SIZE(error_names), (unsigned)e);
}

rd_export const char *fdrtrace_ext_kind_name(unsigned kind)
{
	/* the names of common/fdrx.def, the schema of the bodies */
	if (kind >= FDRTRACE_EXT_KIND_COUNT || !fdrx_kinds[kind].name)
		return "unknown";
	return fdrx_kinds[kind].name;
}

rd_export const char *fdrtrace_drop_reason_name(unsigned reason)
{
	return pick(drop_names, RD_ARRAY_SIZE(drop_names), reason);
}

rd_export const char *fdrtrace_end_name(unsigned end)
{
	return pick(end_names, RD_ARRAY_SIZE(end_names), end);
}

rd_export const char *fdrtrace_close_how_name(unsigned how)
{
	return pick(close_names, RD_ARRAY_SIZE(close_names), how);
}

rd_export const char *fdrtrace_native_why_name(unsigned why)
{
	return pick(why_names, RD_ARRAY_SIZE(why_names), why);
}
