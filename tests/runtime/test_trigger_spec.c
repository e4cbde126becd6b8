// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_trigger_spec.c - the trigger option (runtime/record/trigger.c):
 * which specs are taken, what a bad one is told, and that what was parsed
 * (the glob, the duration in ticks, several triggers) is what fires.
 *
 * trigger.c is compiled alone; what it calls in the rest of the runtime is
 * replaced below: fdr_say() keeps the message, the flush thread's request (drain.h)
 * counts the snapshots asked for, and the clock runs at 1 GHz, so that a
 * tick is a nanosecond.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "drain.h"
#include "funcid_map.h"
#include "modules.h"
#include "say.h"
#include "state.h"
#include "trigger.h"

/* ---- the rest of the runtime, as trigger.c sees it ---- */

struct fdr_config fdr_cfg;
struct fdr_clock_info fdr_clock;
static char said[1024];
static unsigned says;
static unsigned requests;

void fdr_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(said, sizeof(said), fmt, ap);
	va_end(ap);
	says++;
}

/* the flush thread's side, as the record layer reaches it (drain.h) */
static void request_trigger(void)
{
	requests++;
}

static const struct fdr_drain test_drain = { .trigger = request_trigger };

uintptr_t fdr_funcid_addr(uint32_t id)
{
	(void)id;
	return 0;	/* no address: the description names the id */
}

int fdr_symbol_lookup(uintptr_t addr, char *name, size_t name_len, uint32_t *module_id)
{
	(void)addr, (void)name, (void)name_len, (void)module_id;
	return -1;
}

/* ---- helpers ---- */

#define MS 1000000ull	/* ticks at 1 GHz */

static void setup(const char *spec)
{
	memset(&fdr_cfg, 0, sizeof(fdr_cfg));
	fdr_cfg.policy = FDR_POLICY_RING;
	fdr_cfg.trigger_max = 1000;
	fdr_cfg.trigger_holdoff_ms = 0;
	snprintf(fdr_cfg.trigger, sizeof(fdr_cfg.trigger), "%s", spec);
	fdr_clock.freq = 1000000000u;
	said[0] = '\0';
	says = 0;
	requests = 0;
	fdr_drain_connect(&test_drain);
	fdr_trigger_reset_child();	/* no snapshot claimed, no call open */
	fdr_trigger_init();
}

/* One call of @id from @t0 to @t1, its function a candidate. */
static void call(uint32_t id, uint64_t t0, uint64_t t1)
{
	fdr_trigger_call(id, FDRTRACE_FN_ENTRY, t0, true, true);
	fdr_trigger_call(id, FDRTRACE_FN_EXIT, t1, true, true);
}

/* The spec is refused: one message, naming the spec and @why; triggers off. */
static void refused(const char *spec, const char *why)
{
	setup(spec);
	cr_assert_not(fdr_triggering, "'%s' was taken", spec);
	cr_assert_eq(says, 1, "'%s': %u messages", spec, says);
	cr_assert(strstr(said, why), "'%s': the message does not say '%s': %s", spec, why, said);
	cr_assert(strstr(said, "trigger='"), "the message names the option: %s", said);
	cr_assert(strstr(said, "triggers off"), "the message says what follows: %s", said);
}

/* ---- valid specs ---- */

Test(trigger_spec, no_spec_no_triggers_and_no_message)
{
	setup("");
	cr_assert_not(fdr_triggering);
	cr_assert_eq(says, 0);
}

Test(trigger_spec, a_glob_and_a_duration_fire_on_a_longer_call_of_a_matching_function)
{
	char line[256];

	setup("parse*>5ms");
	cr_assert(fdr_triggering, "refused: %s", said);
	cr_assert_eq(says, 0, "%s", said);

	fdr_trigger_decide(1, "parse_header");
	fdr_trigger_decide(2, "main");
	cr_assert(fdr_trigger_uncached(1), "a matching function stays out of the id cache");
	cr_assert_not(fdr_trigger_uncached(2), "a function that does not match is cached");
	cr_assert(fdr_trigger_uncached(3), "an undecided one is not cached yet");

	call(1, 1000, 1000 + 5 * MS);
	cr_assert_eq(requests, 0, "exactly the duration is not more than it");
	call(2, 1000, 1000 + 50 * MS);
	cr_assert_eq(requests, 0, "main does not match parse*");
	call(1, 1000, 1000 + 5 * MS + 1);
	cr_assert_eq(requests, 1, "a tick more fires");

	fdr_trigger_describe(line, sizeof(line));
	cr_assert(strstr(line, "trigger parse*>5ms: a call of function #1 took 5.000 ms"), "%s",
		  line);
}

Test(trigger_spec, every_unit_is_read)
{
	static const struct { const char *spec; uint64_t ticks; } t[] = {
		{ "f>750ns", 750 }, { "f>200us", 200000 }, { "f>3ms", 3 * MS },
		{ "f>2s", 2000 * MS }, { "f>0ns", 0 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		setup(t[i].spec);
		cr_assert(fdr_triggering, "%s refused: %s", t[i].spec, said);
		fdr_trigger_decide(7, "f");
		call(7, 100, 100 + t[i].ticks);
		cr_assert_eq(requests, 0, "%s: a call of exactly that fired", t[i].spec);
		call(7, 100, 100 + t[i].ticks + 1);
		cr_assert_eq(requests, 1, "%s: a call a tick longer did not fire", t[i].spec);
	}
}

Test(trigger_spec, several_triggers_by_semicolon_or_comma_each_with_its_duration)
{
	setup(" alpha>1ms; beta*>2ms,gamma>3ms;");
	cr_assert(fdr_triggering, "refused: %s", said);
	fdr_trigger_decide(1, "alpha");
	fdr_trigger_decide(2, "beta_x");
	fdr_trigger_decide(3, "gamma");
	fdr_trigger_decide(4, "delta");
	cr_assert_not(fdr_trigger_uncached(4));

	call(2, 0, 1 * MS + 1);	/* beta's 2 ms, not alpha's 1 ms */
	cr_assert_eq(requests, 0);
	call(2, 0, 2 * MS + 1);
	cr_assert_eq(requests, 1);
	call(3, 0, 3 * MS);
	cr_assert_eq(requests, 1);
	call(3, 0, 3 * MS + 1);
	cr_assert_eq(requests, 2);
	call(1, 0, 1 * MS + 1);
	cr_assert_eq(requests, 3);
}

Test(trigger_spec, sixteen_triggers_are_taken)
{
	char spec[1024] = "";

	for (int i = 0; i < 16; i++)
		snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), "f%d>1ms;", i);
	setup(spec);
	cr_assert(fdr_triggering, "refused: %s", said);
}

Test(trigger_spec, trigger_max_and_the_holdoff_bound_the_snapshots)
{
	setup("f>1us");
	fdr_cfg.trigger_max = 2;
	fdr_trigger_decide(1, "f");
	for (int i = 1; i <= 5; i++)
		call(1, (uint64_t)i * 1000 * MS, (uint64_t)i * 1000 * MS + 2000);
	cr_assert_eq(requests, 2, "trigger_max=2: %u snapshots", requests);

	setup("f>1us");
	fdr_cfg.trigger_holdoff_ms = 10;
	fdr_trigger_init();	/* the hold-off in ticks is fixed at init */
	fdr_trigger_decide(1, "f");
	call(1, 1000 * MS, 1000 * MS + 2000);
	call(1, 1001 * MS, 1001 * MS + 2000);	/* within 10 ms of the first */
	cr_assert_eq(requests, 1);
	call(1, 1020 * MS, 1020 * MS + 2000);
	cr_assert_eq(requests, 2);
}

/* ---- invalid specs: refused whole, with a message that names the problem ---- */

Test(trigger_spec, stream_policy_is_refused)
{
	memset(&fdr_cfg, 0, sizeof(fdr_cfg));
	setup("f>1ms");
	fdr_cfg.policy = FDR_POLICY_STREAM;
	says = 0;
	fdr_trigger_init();
	cr_assert_not(fdr_triggering);
	cr_assert_eq(says, 1);
	cr_assert(strstr(said, "needs policy=ring"), "%s", said);
	cr_assert(strstr(said, "trigger='f>1ms'"), "%s", said);
}

Test(trigger_spec, a_spec_without_glob_or_duration_is_refused)
{
	refused("parse", "expected GLOB>DURATION in parse");
	refused(">5ms", "expected GLOB>DURATION in >5ms");
	refused("ok>1ms;bad", "expected GLOB>DURATION in bad");
}

Test(trigger_spec, a_bad_duration_is_refused)
{
	refused("f>5", "not a duration");
	refused("f>5min", "not a duration (a whole number and ns, us, ms or s) in f>5min");
	refused("f>ms", "not a duration");
	refused("f>1.5ms", "not a duration");
	refused("f>-1ms", "not a duration");
	refused("f>", "not a duration");
	refused("f>5 ms", "not a duration");
	/* the number overflows, or its ticks do */
	refused("f>99999999999999999999ns", "not a duration");
	refused("f>18446744073709551s", "not a duration");
}

Test(trigger_spec, more_than_sixteen_triggers_are_refused)
{
	char spec[1024] = "";

	for (int i = 0; i < 17; i++)
		snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), "f%d>1ms;", i);
	refused(spec, "more than 16 triggers");
}

Test(trigger_spec, separators_alone_are_refused)
{
	refused(";", "no trigger in it");
	refused(" ; , ", "no trigger in it");
}

Test(trigger_spec, a_glob_too_long_is_refused)
{
	char spec[400];

	memset(spec, 'a', 300);
	strcpy(spec + 300, ">1ms");
	refused(spec, "expected GLOB>DURATION");
}
