// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_autoexclude_opt.c - the auto_exclude option's text
 * (runtime/record/autoexclude_opt.c): DURATION[;after=N], off, and what is refused.
 */
#include <criterion/criterion.h>
#include <errno.h>

#include "autoexclude.h"

static bool last_patch;

static int parse(const char *text, uint64_t *ns, uint32_t *after)
{
	*ns = 12345;
	*after = 777;
	last_patch = !last_patch;
	return fdr_ax_parse(text, ns, after, &last_patch);
}

Test(auto_exclude_option, empty_and_off_turn_it_off)
{
	uint64_t ns;
	uint32_t after;

	cr_expect_eq(parse("", &ns, &after), 0);
	cr_expect_eq(ns, 0);
	cr_expect_eq(parse("off", &ns, &after), 0);
	cr_expect_eq(after, FDR_AX_AFTER_DEFAULT);
}

Test(auto_exclude_option, a_duration_alone_takes_the_default_count)
{
	uint64_t ns;
	uint32_t after;

	cr_expect_eq(parse("300ns", &ns, &after), 1);
	cr_expect_eq(ns, 300);
	cr_expect_eq(after, FDR_AX_AFTER_DEFAULT);
	cr_expect_eq(parse("2us", &ns, &after), 1);
	cr_expect_eq(ns, 2000);
	cr_expect_eq(parse("1ms", &ns, &after), 1);
	cr_expect_eq(ns, 1000000);
}

Test(auto_exclude_option, after_is_given_with_a_semicolon_or_a_comma)
{
	uint64_t ns;
	uint32_t after;

	cr_expect_eq(parse("500ns;after=4096", &ns, &after), 1);
	cr_expect_eq(ns, 500);
	cr_expect_eq(after, 4096);
	cr_expect_eq(parse("1us,after=16", &ns, &after), 1);
	cr_expect_eq(ns, 1000);
	cr_expect_eq(after, 16);
	cr_expect_eq(parse("1us;after=16777216", &ns, &after), 1, "the largest N");
	cr_expect_eq(after, 16777216);
}

Test(auto_exclude_option, anything_else_is_refused_and_leaves_the_outputs_alone)
{
	static const char *const bad[] = {
		"on", "300", "ns", "0ns", "-5us", "5 us", "5s", "5us;", "5us;after=",
		"5us;after=15", "5us;after=16777217", "5us;after=99999999999999999999",
		"5us;count=100", "5us;after=100x", "3600000000001ns", "99999999999999999999ns",
		"5usx",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t ns;
		uint32_t after;

		cr_expect_eq(parse(bad[i], &ns, &after), -EINVAL, "'%s' accepted", bad[i]);
		cr_expect_eq(ns, 12345, "'%s' changed the duration", bad[i]);
		cr_expect_eq(after, 777, "'%s' changed the count", bad[i]);
	}
}

Test(auto_exclude_option, patch_is_on_unless_said_off_in_any_order)
{
	uint64_t ns;
	uint32_t after;

	last_patch = true;	/* parse() flips it first: a result that is not set shows */
	cr_expect_eq(parse("1us", &ns, &after), 1);
	cr_expect(last_patch);
	cr_expect_eq(parse("1us;patch=off", &ns, &after), 1);
	cr_expect(!last_patch);
	cr_expect_eq(parse("1us,patch=off;after=64", &ns, &after), 1);
	cr_expect(!last_patch);
	cr_expect_eq(after, 64);
	cr_expect_eq(parse("1us;after=64;patch=on", &ns, &after), 1);
	cr_expect(last_patch);
	cr_expect_eq(parse("off", &ns, &after), 0);
	cr_expect(!last_patch);
}

Test(auto_exclude_option, patch_refuses_other_values_and_repeats)
{
	uint64_t ns;
	uint32_t after;

	cr_expect_eq(parse("1us;patch=yes", &ns, &after), -EINVAL);
	cr_expect_eq(parse("1us;patch=offf", &ns, &after), -EINVAL);
	cr_expect_eq(parse("1us;patch=onx", &ns, &after), -EINVAL);
	cr_expect_eq(parse("1us;patch=off;patch=on", &ns, &after), -EINVAL);
	cr_expect_eq(parse("1us;after=64;after=64", &ns, &after), -EINVAL);
	cr_expect_eq(parse("1us;patch=", &ns, &after), -EINVAL);
}
