// SPDX-License-Identifier: MIT
/*
 * tests/runtime/test_config.c - FDRTRACE_MODE / FDRTRACE_OPTIONS parsing.
 *
 * Diagnostics go to a pipe so the tests can check every line exactly.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "malloc_count.h"

struct parsed {
	struct fdr_config cfg;
	int bad;
	char err[8192];
};

/* Parse with diagnostics captured. */
static void parse(struct parsed *p, const char *mode, const char *options)
{
	int fds[2];
	ssize_t n;

	cr_assert_eq(pipe(fds), 0);
	memset(p, 0, sizeof(*p));
	p->bad = fdr_config_parse(&p->cfg, mode, options, fds[1]);
	close(fds[1]);
	n = read(fds[0], p->err, sizeof(p->err) - 1);
	cr_assert_geq(n, 0);
	p->err[n] = '\0';
	close(fds[0]);
}

static struct parsed P;

Test(config, defaults_when_mode_unset_and_options_not_read)
{
	parse(&P, NULL, "buffer_size=8192 bogus");
	cr_assert_eq(P.bad, 0);
	cr_assert_not(P.cfg.enabled);
	cr_assert_eq(P.cfg.buffer_size, 65536);
	cr_assert_eq(P.cfg.buffer_max, 128);
	cr_assert_eq(P.cfg.func_duration_threshold_us, 0);
	cr_assert_str_eq(P.cfg.logfile_base, "fdrtrace.");
	cr_assert_eq(P.cfg.verbosity, 1);
	cr_assert_eq(P.cfg.format_version, 5);
	cr_assert_eq(P.cfg.clock, FDR_CLOCK_AUTO);
	cr_assert_eq(P.cfg.flush_interval_ms, 0);
	cr_assert_str_empty(P.err);
}

Test(config, empty_and_off_modes_keep_recording_off_silently)
{
	parse(&P, "", "buffer_size=1");
	cr_assert_not(P.cfg.enabled);
	cr_assert_str_empty(P.err);
	parse(&P, "off", "buffer_size=1");
	cr_assert_not(P.cfg.enabled);
	cr_assert_eq(P.bad, 0);
	cr_assert_str_empty(P.err);
}

Test(config, mode_fdr_enables_recording)
{
	parse(&P, "fdr", NULL);
	cr_assert(P.cfg.enabled);
	cr_assert_eq(P.bad, 0);
	cr_assert_str_empty(P.err);
}

Test(config, unknown_mode_says_one_line_and_stays_off)
{
	parse(&P, "xray-basic", "buffer_size=8192");
	cr_assert_not(P.cfg.enabled);
	cr_assert_eq(P.bad, 1);
	cr_assert_eq(P.cfg.buffer_size, 65536);
	cr_assert_str_eq(P.err,
			 "fdrtrace: FDRTRACE_MODE='xray-basic' is not 'fdr' or 'off'; recording is off\n");
}

Test(config, accepts_every_separator)
{
	parse(&P, "fdr",
	      "  buffer_size=8192:buffer_max=4,verbosity=2\tflush_interval_ms=10\nclock=rdtsc "
	      "func_duration_threshold_us=5::,, format_version=1  ");
	cr_assert_eq(P.bad, 0, "%s", P.err);
	cr_assert_str_empty(P.err);
	cr_assert_eq(P.cfg.buffer_size, 8192);
	cr_assert_eq(P.cfg.buffer_max, 4);
	cr_assert_eq(P.cfg.verbosity, 2);
	cr_assert_eq(P.cfg.flush_interval_ms, 10);
	cr_assert_eq(P.cfg.clock, FDR_CLOCK_CHOICE_RDTSC);
	cr_assert_eq(P.cfg.func_duration_threshold_us, 5);
	cr_assert_eq(P.cfg.format_version, 1);
}

Test(config, size_suffixes_are_powers_of_1024)
{
	parse(&P, "fdr", "buffer_size=64K");
	cr_assert_eq(P.cfg.buffer_size, 64 * 1024);
	parse(&P, "fdr", "buffer_size=8k");
	cr_assert_eq(P.cfg.buffer_size, 8 * 1024);
	parse(&P, "fdr", "buffer_size=2M");
	cr_assert_eq(P.cfg.buffer_size, 2 * 1024 * 1024);
	parse(&P, "fdr", "buffer_size=256m");
	cr_assert_eq(P.cfg.buffer_size, 256 * 1024 * 1024);
	cr_assert_eq(P.bad, 0);
	parse(&P, "fdr", "buffer_size=1G");
	cr_assert_eq(P.bad, 1);
	cr_assert_eq(P.cfg.buffer_size, 65536);
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: buffer_size='1G' is out of range "
				"4096..268435456; using 65536\n");
}

Test(config, sizes_read_alike_with_or_without_b_and_ib)
{
	static const char *const one_mib[] = { "1M", "1MB", "1MiB", "1m", "1mb", "1mib", "1Mb" };

	for (size_t i = 0; i < sizeof(one_mib) / sizeof(one_mib[0]); i++) {
		char opt[64];

		snprintf(opt, sizeof(opt), "buffer_size=%s", one_mib[i]);
		parse(&P, "fdr", opt);
		cr_assert_eq(P.bad, 0, "%s: %s", opt, P.err);
		cr_assert_eq(P.cfg.buffer_size, 1u << 20, "%s", opt);
	}
	parse(&P, "fdr", "buffer_size=64KB");
	cr_assert_eq(P.cfg.buffer_size, 64 * 1024);
	parse(&P, "fdr", "buffer_size=64KiB");
	cr_assert_eq(P.cfg.buffer_size, 64 * 1024);
	parse(&P, "fdr", "buffer_size=8192B");
	cr_assert_eq(P.cfg.buffer_size, 8192);
	cr_assert_eq(P.bad, 0, "%s", P.err);
	/* not a size option: no unit of any spelling */
	parse(&P, "fdr", "buffer_max=4KiB");
	cr_assert_eq(P.bad, 1);
}

Test(config, suffix_only_on_size_options)
{
	parse(&P, "fdr", "buffer_max=4K");
	cr_assert_eq(P.bad, 1);
	cr_assert_eq(P.cfg.buffer_max, 128);
	cr_assert_str_eq(P.err,
			 "fdrtrace: FDRTRACE_OPTIONS: buffer_max='4K' is not a number; using 128\n");
}

Test(config, trailing_junk_is_not_a_size)
{
	parse(&P, "fdr", "buffer_size=12x");
	cr_assert_eq(P.bad, 1);
	cr_assert_eq(P.cfg.buffer_size, 65536);
	cr_assert_str_eq(P.err,
			 "fdrtrace: FDRTRACE_OPTIONS: buffer_size='12x' is not a size; using 65536\n");
	parse(&P, "fdr", "buffer_size=8KX");
	cr_assert_eq(P.bad, 1);
	parse(&P, "fdr", "buffer_size=8KiBs");
	cr_assert_eq(P.bad, 1);
	parse(&P, "fdr", "buffer_size=8iB");
	cr_assert_eq(P.bad, 1);
	parse(&P, "fdr", "buffer_size=8192BB");
	cr_assert_eq(P.bad, 1);
	parse(&P, "fdr", "buffer_size= 8192");
	cr_assert_eq(P.bad, 2, "empty value, then a stray token: %s", P.err);
}

Test(config, negatives_signs_and_empty_values_are_rejected)
{
	parse(&P, "fdr", "verbosity=-1");
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: verbosity='-1' is not a number; using 1\n");
	parse(&P, "fdr", "verbosity=+2");
	cr_assert_eq(P.bad, 1);
	parse(&P, "fdr", "verbosity=");
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: verbosity='' is not a number; using 1\n");
	parse(&P, "fdr", "verbosity=0x1");
	cr_assert_eq(P.bad, 1);
	cr_assert_eq(P.cfg.verbosity, 1);
}

Test(config, overflow_is_out_of_range)
{
	parse(&P, "fdr", "buffer_max=99999999999999999999999");
	cr_assert_eq(P.bad, 1);
	cr_assert_eq(P.cfg.buffer_max, 128);
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: buffer_max='99999999999999999999999' "
				"is out of range 2..1048576; using 128\n");
	/* Fits 64 bits, the suffix does not. */
	parse(&P, "fdr", "buffer_size=17179869184G");
	cr_assert_eq(P.bad, 1);
	cr_assert(strstr(P.err, "is out of range"), "%s", P.err);
	/* 2^64 exactly, and 2^64 - 1 (fits, but too big for the option). */
	parse(&P, "fdr", "flush_interval_ms=18446744073709551616");
	cr_assert(strstr(P.err, "is out of range 0..3600000"), "%s", P.err);
	parse(&P, "fdr", "flush_interval_ms=18446744073709551615");
	cr_assert(strstr(P.err, "is out of range 0..3600000"), "%s", P.err);
}

Test(config, bounds_are_inclusive)
{
	parse(&P, "fdr", "buffer_size=4096 buffer_max=2 verbosity=3 flush_interval_ms=3600000");
	cr_assert_eq(P.bad, 0, "%s", P.err);
	cr_assert_eq(P.cfg.buffer_size, 4096);
	cr_assert_eq(P.cfg.buffer_max, 2);
	cr_assert_eq(P.cfg.verbosity, 3);
	cr_assert_eq(P.cfg.flush_interval_ms, 3600000);
	parse(&P, "fdr", "buffer_size=268435456 buffer_max=1048576 verbosity=0");
	cr_assert_eq(P.bad, 0, "%s", P.err);
	cr_assert_eq(P.cfg.buffer_size, 268435456);
	cr_assert_eq(P.cfg.buffer_max, 1048576);
	parse(&P, "fdr", "buffer_size=4088 buffer_max=1 verbosity=4 flush_interval_ms=3600001");
	cr_assert_eq(P.bad, 4, "%s", P.err);
}

Test(config, buffer_size_must_be_a_multiple_of_8)
{
	parse(&P, "fdr", "buffer_size=4100");
	cr_assert_eq(P.bad, 1);
	cr_assert_eq(P.cfg.buffer_size, 65536);
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: buffer_size='4100' is not a multiple "
				"of 8; using 65536\n");
}

Test(config, format_version_is_1_or_5)
{
	parse(&P, "fdr", "format_version=1");
	cr_assert_eq(P.cfg.format_version, 1);
	parse(&P, "fdr", "format_version=5");
	cr_assert_eq(P.cfg.format_version, 5);
	parse(&P, "fdr", "format_version=3");
	cr_assert_eq(P.bad, 1);
	cr_assert_eq(P.cfg.format_version, 5);
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: format_version='3' is not one of 1, 5; "
				"using 5\n");
}

Test(config, clock_names)
{
	parse(&P, "fdr", "clock=rdtscp");
	cr_assert_eq(P.cfg.clock, FDR_CLOCK_CHOICE_RDTSCP);
	parse(&P, "fdr", "clock=monotonic");
	cr_assert_eq(P.cfg.clock, FDR_CLOCK_CHOICE_MONOTONIC);
	parse(&P, "fdr", "clock=auto");
	cr_assert_eq(P.cfg.clock, FDR_CLOCK_AUTO);
	parse(&P, "fdr", "clock=realtime");
	cr_assert_eq(P.cfg.clock, FDR_CLOCK_AUTO);
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: clock='realtime' is not one of auto, "
				"rdtscp, rdtsc, monotonic; using auto\n");
	parse(&P, "fdr", "clock=RDTSC");
	cr_assert_eq(P.bad, 1, "names are case-sensitive");
}

Test(config, quoted_value_keeps_spaces_separators_and_escapes)
{
	parse(&P, "fdr", "verbosity=0 logfile_base=\"/tmp/my dir/a\\\"b:c,\\\\\" buffer_max=9");
	cr_assert_eq(P.bad, 0, "%s", P.err);
	cr_assert_str_eq(P.cfg.logfile_base, "/tmp/my dir/a\"b:c,\\");
	cr_assert_eq(P.cfg.verbosity, 0);
	cr_assert_eq(P.cfg.buffer_max, 9);
	parse(&P, "fdr", "logfile_base=\"\"");
	cr_assert_eq(P.bad, 0);
	cr_assert_str_empty(P.cfg.logfile_base);
	parse(&P, "fdr", "logfile_base=/var/tmp/x.");
	cr_assert_str_eq(P.cfg.logfile_base, "/var/tmp/x.");
}

Test(config, quoted_numbers_are_numbers)
{
	parse(&P, "fdr", "buffer_max=\"16\"");
	cr_assert_eq(P.bad, 0, "%s", P.err);
	cr_assert_eq(P.cfg.buffer_max, 16);
}

Test(config, unterminated_quote_stops_parsing)
{
	parse(&P, "fdr", "buffer_max=4 logfile_base=\"/tmp/x buffer_size=8192");
	cr_assert_eq(P.bad, 1);
	cr_assert_eq(P.cfg.buffer_max, 4);
	cr_assert_eq(P.cfg.buffer_size, 65536, "the rest is inside the quote");
	cr_assert_str_eq(P.cfg.logfile_base, "fdrtrace.");
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: logfile_base='\"/tmp/x "
				"buffer_size=8192' has no closing '\"'; ignored\n");
}

Test(config, text_after_closing_quote_is_rejected)
{
	parse(&P, "fdr", "logfile_base=\"a\"b buffer_max=3");
	cr_assert_eq(P.bad, 1);
	cr_assert_str_eq(P.cfg.logfile_base, "fdrtrace.");
	cr_assert_eq(P.cfg.buffer_max, 3);
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: text after a closing quote: 'b'; "
				"setting ignored\n");
}

Test(config, too_long_string_keeps_the_default)
{
	static char opt[6000];
	size_t n = strlen("logfile_base=");

	memcpy(opt, "logfile_base=", n);
	memset(opt + n, 'a', 4096);
	parse(&P, "fdr", opt);
	cr_assert_eq(P.bad, 1);
	cr_assert_str_eq(P.cfg.logfile_base, "fdrtrace.");
	cr_assert(strstr(P.err, "' ... is too long") == NULL);
	cr_assert(strstr(P.err, "...") != NULL, "value is cut: %s", P.err);
	cr_assert(strstr(P.err, "is too long (at most 4095 bytes); using 'fdrtrace.'\n"), "%s",
		  P.err);
	cr_assert_lt(strlen(P.err), 200);

	/* 4095 bytes fit exactly, quoted or not. */
	opt[n + 4095] = '\0';
	parse(&P, "fdr", opt);
	cr_assert_eq(P.bad, 0, "%s", P.err);
	cr_assert_eq(strlen(P.cfg.logfile_base), 4095);

	/* A quoted value longer than any option. */
	opt[n] = '"';
	memset(opt + n + 1, 'b', 5000);
	opt[n + 5001] = '"';
	opt[n + 5002] = '\0';
	parse(&P, "fdr", opt);
	cr_assert_eq(P.bad, 1);
	cr_assert_str_eq(P.cfg.logfile_base, "fdrtrace.");
	cr_assert(strstr(P.err, "is too long"), "%s", P.err);
}

Test(config, unknown_option_is_named_and_ignored)
{
	parse(&P, "fdr", "buffer_sizes=8192 buffer_max=7");
	cr_assert_eq(P.bad, 1);
	cr_assert_eq(P.cfg.buffer_max, 7);
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: unknown option 'buffer_sizes' "
				"(did you mean buffer_size?); ignored\n");
}

Test(config, unknown_option_suggests_the_nearest_known_one)
{
	static const char *const cases[][2] = {
		{ "bufer_size=8192", "buffer_size" },
		{ "buffer_mx=8", "buffer_max" },
		{ "verbose=2", "verbosity" },
		{ "logfile=x", "logfile_base" },
		{ "depth=3", "max_depth" },
		{ "threshold=5", "func_duration_threshold_us" },
		{ "polcy=ring", "policy" },
		{ "Clock=rdtsc", "clock" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[128];

		parse(&P, "fdr", cases[i][0]);
		cr_assert_eq(P.bad, 1);
		snprintf(want, sizeof(want), "(did you mean %s?); ignored\n", cases[i][1]);
		cr_assert(strstr(P.err, want), "%s: %s", cases[i][0], P.err);
	}
	/* nothing close: no guess */
	parse(&P, "fdr", "zzz=1 frobnicate=2");
	cr_assert_eq(P.bad, 2);
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: unknown option 'zzz'; ignored\n"
				"fdrtrace: FDRTRACE_OPTIONS: unknown option 'frobnicate'; ignored\n");
}

Test(config, token_without_equals_is_reported)
{
	parse(&P, "fdr", "verbose buffer_max=7 =5");
	cr_assert_eq(P.bad, 2);
	cr_assert_eq(P.cfg.buffer_max, 7);
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: 'verbose' is not key=value; ignored\n"
				"fdrtrace: FDRTRACE_OPTIONS: unknown option ''; ignored\n");
}

Test(config, diagnostics_escape_and_cut_the_value)
{
	char opt[256];
	const char *nl;

	snprintf(opt, sizeof(opt), "clock=a\x01\x7f'\\%s", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
	parse(&P, "fdr", opt);
	cr_assert_eq(P.bad, 1);
	{
		static const char want[] = "fdrtrace: FDRTRACE_OPTIONS: clock='a\\x01\\x7f\\'\\\\bbbb";

		cr_assert(strncmp(P.err, want, strlen(want)) == 0, "%s", P.err);
	}
	cr_assert(strstr(P.err, "b'... is not one of"), "%s", P.err);
	/* One line: exactly one newline, at the end. */
	nl = strchr(P.err, '\n');
	cr_assert_not_null(nl);
	cr_assert_eq(nl[1], '\0');
	/* 64 input bytes repeated: a, \x01, \x7f, ', \, then 59 b's. */
	{
		const char *q = strstr(P.err, "bbbb");
		size_t bs = strspn(q, "b");

		cr_assert_eq(bs, 59);
	}
}

Test(config, later_setting_wins_and_bad_one_keeps_previous)
{
	parse(&P, "fdr", "buffer_size=8192 buffer_size=16384");
	cr_assert_eq(P.cfg.buffer_size, 16384);
	parse(&P, "fdr", "buffer_size=8192 buffer_size=zz");
	cr_assert_eq(P.bad, 1);
	cr_assert_eq(P.cfg.buffer_size, 8192);
	cr_assert_str_eq(P.err,
			 "fdrtrace: FDRTRACE_OPTIONS: buffer_size='zz' is not a size; using 8192\n");
}

Test(config, counts_every_bad_setting)
{
	parse(&P, "fdr", "a=1 b=2 buffer_size=x clock=y verbosity=1");
	cr_assert_eq(P.bad, 4);
	cr_assert_eq(P.cfg.verbosity, 1);
}

Test(config, empty_options_are_fine)
{
	parse(&P, "fdr", "");
	cr_assert_eq(P.bad, 0);
	parse(&P, "fdr", " \t:,\n ");
	cr_assert_eq(P.bad, 0);
	cr_assert_str_empty(P.err);
}

Test(config, no_output_with_errfd_minus_one)
{
	struct fdr_config c;

	cr_assert_eq(fdr_config_parse(&c, "fdr", "buffer_size=zz", -1), 1);
	cr_assert_eq(c.buffer_size, 65536);
}

struct seen {
	int n;
	char names[32][64];
	char values[32][64];
};

static void collect(const char *name, const char *value, void *arg)
{
	struct seen *s = arg;

	cr_assert_lt(s->n, 32);
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
	snprintf(s->values[s->n], sizeof(s->values[0]), "%s", value);
	s->n++;
}

static const char *lookup(const struct seen *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->names[i], name) == 0)
			return s->values[i];
	return NULL;
}

Test(config, foreach_visits_every_option_as_text)
{
	struct seen s = { 0 };

	parse(&P, "fdr", "buffer_size=1M clock=monotonic logfile_base=/tmp/t. format_version=1");
	fdr_config_foreach(&P.cfg, collect, &s);
	cr_assert_eq(s.n, 21);
	cr_assert_str_eq(s.names[0], "buffer_size", "table order");
	cr_assert_str_eq(lookup(&s, "on_full"), "drop");
	cr_assert_str_eq(lookup(&s, "direct_io"), "auto");
	cr_assert_str_eq(lookup(&s, "policy"), "stream");
	cr_assert_str_eq(lookup(&s, "trigger"), "");
	cr_assert_str_eq(lookup(&s, "trigger_max"), "1");
	cr_assert_str_eq(lookup(&s, "trigger_holdoff_ms"), "1000");
	cr_assert_str_eq(lookup(&s, "dump_signal"), "none");
	cr_assert_str_eq(lookup(&s, "auto_exclude"), "", "off unless given");
	cr_assert_str_eq(lookup(&s, "buffer_size"), "1048576");
	cr_assert_str_eq(lookup(&s, "buffer_max"), "128");
	cr_assert_str_eq(lookup(&s, "max_size"), "0");
	cr_assert_str_eq(lookup(&s, "pool_max"), "0");
	cr_assert_str_eq(lookup(&s, "func_duration_threshold_us"), "0");
	cr_assert_str_eq(lookup(&s, "logfile_base"), "/tmp/t.");
	cr_assert_str_eq(lookup(&s, "verbosity"), "1");
	cr_assert_str_eq(lookup(&s, "format_version"), "1");
	cr_assert_str_eq(lookup(&s, "clock"), "monotonic");
	cr_assert_str_eq(lookup(&s, "flush_interval_ms"), "0");
}

Test(config, direct_io_takes_its_three_values_and_refuses_others)
{
	parse(&P, "fdr", "direct_io=always");
	cr_assert_eq(P.cfg.direct_io, FDR_DIO_ALWAYS);
	parse(&P, "fdr", "direct_io=off");
	cr_assert_eq(P.cfg.direct_io, FDR_DIO_OFF);
	parse(&P, "fdr", "direct_io=yes");
	cr_assert_eq(P.cfg.direct_io, FDR_DIO_AUTO, "a bad value keeps the default");
	cr_assert_str_eq(P.err, "fdrtrace: FDRTRACE_OPTIONS: direct_io='yes' is not one of auto, "
				"always, off; using auto\n");
}

Test(config, foreach_output_parses_back_to_the_same_config)
{
	struct seen s = { 0 };
	char opts[1024] = "";
	struct parsed *q = malloc(sizeof(*q));

	parse(&P, "fdr", "buffer_size=24K buffer_max=3 clock=rdtsc verbosity=2 "
			 "logfile_base=\"/tmp/a b/\" flush_interval_ms=250");
	fdr_config_foreach(&P.cfg, collect, &s);
	for (int i = 0; i < s.n; i++) {
		strcat(opts, s.names[i]);
		strcat(opts, "=\"");
		strcat(opts, s.values[i]);
		strcat(opts, "\" ");
	}
	parse(q, "fdr", opts);
	cr_assert_eq(q->bad, 0, "%s", q->err);
	/* every option was given in the round trip; the values are what must agree */
	q->cfg.set_mask = P.cfg.set_mask;
	cr_assert_eq(memcmp(&q->cfg, &P.cfg, sizeof(P.cfg)), 0);
	free(q);
}

Test(config, options_given_are_told_from_defaults)
{
	/* the runtime fixes the pool when buffer_max is given and pool_max is not */
	parse(&P, "fdr", "buffer_max=128 pool_max=1G verbosity=x policy=nope");
	cr_assert(fdr_config_was_set(&P.cfg, "buffer_max"), "given, even at its default value");
	cr_assert(fdr_config_was_set(&P.cfg, "pool_max"));
	cr_assert_eq(P.cfg.pool_max, 1ull << 30);
	cr_assert_not(fdr_config_was_set(&P.cfg, "buffer_size"), "left at its default");
	cr_assert_not(fdr_config_was_set(&P.cfg, "verbosity"), "a bad value keeps the default");
	cr_assert_not(fdr_config_was_set(&P.cfg, "policy"), "a bad value keeps the default");
	cr_assert_not(fdr_config_was_set(&P.cfg, "no_such_option"));
	parse(&P, "fdr", "");
	cr_assert_not(fdr_config_was_set(&P.cfg, "buffer_max"));
	cr_assert_not(fdr_config_was_set(&P.cfg, "pool_max"));
}

Test(config, load_reads_the_environment)
{
	struct fdr_config c;

	setenv("FDRTRACE_MODE", "fdr", 1);
	setenv("FDRTRACE_OPTIONS", "buffer_max=5 clock=rdtsc", 1);
	cr_assert_eq(fdr_config_load(&c), 0);
	cr_assert(c.enabled);
	cr_assert_eq(c.buffer_max, 5);
	cr_assert_eq(c.clock, FDR_CLOCK_CHOICE_RDTSC);
	unsetenv("FDRTRACE_MODE");
	cr_assert_eq(fdr_config_load(&c), 0);
	cr_assert_not(c.enabled);
	cr_assert_eq(c.buffer_max, 128);
	unsetenv("FDRTRACE_OPTIONS");
}

Test(config, parsing_never_allocates)
{
	struct fdr_config c;
	unsigned long before = malloc_count;

	fdr_config_parse(&c, "fdr",
			 "buffer_size=8K logfile_base=\"/tmp/a b\" clock=bogus x=1 format_version=1",
			 -1);
	setenv("FDRTRACE_MODE", "fdr", 1);
	setenv("FDRTRACE_OPTIONS", "buffer_max=zz verbosity=0", 1);
	before = malloc_count;	/* setenv may allocate; fdr_config_load may not */
	fdr_config_parse(&c, "fdr", "buffer_size=8K logfile_base=\"/tmp/a b\" clock=bogus x=1", -1);
	cr_assert_eq(fdr_config_load(&c), 1);
	cr_assert_eq(malloc_count, before, "the parser allocated");
	/* The counter works: this file's own malloc goes through it. */
	{
		void *volatile p = malloc(1);	/* volatile: not optimised away */

		free(p);
	}
	cr_assert_eq(malloc_count, before + 1);
	unsetenv("FDRTRACE_MODE");
	unsetenv("FDRTRACE_OPTIONS");
}
