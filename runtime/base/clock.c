// SPDX-License-Identifier: MIT
/*
 * runtime/base/clock.c - choose the trace clock and measure its frequency.
 *
 * Contract: fdr_clock_begin() and fdr_clock_finish() (or fdr_clock_init(),
 * both) run once during initialisation, on one thread, before any hook
 * records; they write fdr_clock, which is read-only from then on (the
 * hooks read it without synchronisation: the runtime publishes "ready"
 * with a release store after init, and the hooks' acquire load of that
 * flag orders these plain writes before their reads).
 * fdr_clock_refine() and fdr_clock_pair() may run on any thread later.
 * No allocation, no stdio; the one possible warning goes out with write(2)
 * (fdr_say_raw(): only to the standard error the runtime started with).
 *
 * Rules (docs/environment.md repeats them):
 *   - constant_tsc = CPUID 0x80000007 EDX[8] (invariant TSC) or the kernel's
 *     "constant_tsc" flag in /proc/cpuinfo; nonstop_tsc = the same CPUID bit
 *     or the kernel's "nonstop_tsc" flag. The kernel knows about CPUs whose
 *     TSC is constant without the invariant bit, and hypervisors that hide
 *     the bit while the kernel trusts the TSC, so either source counts.
 *   - clock=auto: rdtsc with the CPU from the thread's rseq area when
 *     constant_tsc and glibc registered rseq (its cpu_id readable here);
 *     else rdtscp when CPUID 0x80000001 EDX[27] says so; else rdtsc when
 *     constant_tsc; else CLOCK_MONOTONIC_RAW (1 GHz). rdtsc plus one load
 *     costs what rdtscp does on Intel and much less on AMD (Zen 3 here:
 *     about 25 cycles against 56, docs/performance.md). The TSC and the
 *     CPU are then two reads, not one: a migration between them gives one
 *     record the next CPU's number, which an invariant TSC makes harmless.
 *   - rdtscp is used only when CPUID reports it AND a trial execution does
 *     not fault: valgrind reports the CPUID bit but raises SIGILL on the
 *     instruction. The trial runs once, at init, under a temporary SIGILL
 *     handler (the previous disposition is restored right after).
 *   - clock=rdtscp where rdtscp is not usable (valgrind, some VMs): what
 *     auto would pick without rdtscp, with one line on stderr.
 *   - Frequency, first that works: CPUID 0x15 when all three values are
 *     present (exact by definition); the hypervisor's TSC leaf 0x40000010
 *     (kHz); sysfs tsc_freq_khz; calibration against CLOCK_MONOTONIC_RAW
 *     from the constructor's start pair (fdr_clock_anchor()) to the start:
 *     at least 1 ms (CLK_CAL_NS) when the start comes that late, else a
 *     provisional estimate over at least 25 us (CLK_EST_NS); CPUID 0x16's
 *     base MHz (a nominal value, MHz-rounded, not the TSC rate on every
 *     CPU) only when the calibration fails. The calibrated, provisional and
 *     0x16 values are refined over the run by fdr_clock_refine(): in the
 *     header as the run goes, at the end, and in a crash's dump.
 */
#include <cpuid.h>
#include <sys/platform/x86.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "compiler.h"
#include "config.h"
#include "say.h"

struct fdr_clock_info fdr_clock fdr_hidden;

/* The start pair, taken by fdr_clock_begin(); read by refine. */
static uint64_t clk_tsc0, clk_ns0;
static bool clk_started;
/* The frequency came from a source that the run's pairs can improve on. */
static bool clk_refinable;
/* A calibration is under way: fdr_clock_finish() ends it (CPUID 0x16's value: the fallback). */
static bool clk_cal_pending;
/*
 * The start pair was taken by fdr_clock_anchor() (the constructor: a TSC
 * read, not yet knowing the source) and is kept by fdr_clock_begin() for a
 * TSC source.
 */
static bool clk_anchored;
/*
 * The frequency is provisional (measured over less than CLK_CAL_NS, or
 * CPUID 0x16's nominal value): fdr_clock_refine() measures again over any
 * interval at least clk_prov_min_ns long.
 */
static bool clk_provisional;
static uint64_t clk_prov_min_ns;

/* 128-bit arithmetic for the frequency (a GCC/clang extension). */
__extension__ typedef unsigned __int128 clk_u128;

#define CLK_NS_PER_S 1000000000ull
/*
 * Calibration: one interval between two (TSC, CLOCK_MONOTONIC_RAW) pairs,
 * from fdr_clock_begin() to fdr_clock_finish(), at least CLK_CAL_NS long.
 * The rest of initialisation runs in between (about 1 ms here), so the
 * calibration costs start-up only what that leaves of the 1 ms. A pair's
 * error is a few tens of ns (the best of five bracketed reads), so 1 ms is
 * within 10 ppm: 40 trials here, idle and beside two CPU hogs, against
 * 10.8 ppm for the five rounds of 0.5 ms (2.5 ms of every start-up) used
 * until 2026-11-26, and 1 ppm for the 20 ms before that.
 * fdr_clock_refine() measures again over the run, and the flush thread
 * writes it into the header as the run goes (flush_thread.c).
 */
#define CLK_CAL_NS 1000000ull	/* 1 ms */
/*
 * The start is lazy (the first hook), and the calibration's start pair is
 * the constructor's (fdr_clock_anchor()): when the first hook comes less
 * than CLK_CAL_NS after it, the start waits only until the interval is
 * CLK_EST_NS long (a provisional frequency, 0.1% at worst), which the
 * run's pairs refine (in the header by the flush thread, at the close).
 */
#define CLK_EST_NS 25000ull	/* 25 us */
#define CLK_REFINE_MIN_NS 4000000ull	/* 4 ms: four calibrations */

/* ------------------------------------------------------------------ */
/* Reads                                                               */
/* ------------------------------------------------------------------ */

notrace uint64_t fdr_clock_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * CLK_NS_PER_S + (uint64_t)ts.tv_nsec;
}

notrace uint64_t fdr_clock_read_monotonic(void)
{
	return fdr_clock_raw_ns();
}

notrace unsigned fdr_clock_cpu_slow(void)
{
	int c = sched_getcpu();

	return c < 0 ? 0 : (unsigned)c;
}

notrace void fdr_clock_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best_gap = UINT64_MAX;
	unsigned cpu;
	int i;

	*tsc = 0;
	*ns = 0;
	for (i = 0; i < 5; i++) {
		uint64_t a = fdr_clock_raw_ns();
		uint64_t t = fdr_clock_read(&cpu);
		uint64_t b = fdr_clock_raw_ns();

		if (b < a || b - a >= best_gap)
			continue;
		best_gap = b - a;
		*tsc = t;
		*ns = a + (b - a) / 2;
	}
}

notrace uint64_t fdr_clock_freq_from_pairs(uint64_t tsc0, uint64_t ns0, uint64_t tsc1,
					   uint64_t ns1)
{
	clk_u128 num;
	uint64_t dns;

	if (tsc1 <= tsc0 || ns1 <= ns0)
		return 0;
	dns = ns1 - ns0;
	num = (clk_u128)(tsc1 - tsc0) * CLK_NS_PER_S + dns / 2;
	num /= dns;
	return num > UINT64_MAX ? UINT64_MAX : (uint64_t)num;
}

/* ------------------------------------------------------------------ */
/* What the CPU says                                                   */
/* ------------------------------------------------------------------ */

struct clk_cpu {
	bool rdtscp;
	bool invariant;
	bool hypervisor;
	bool flag_constant;
	bool flag_nonstop;
	uint64_t freq_0x15;	/* Hz, 0 when incomplete */
	uint64_t freq_hv;	/* Hz from 0x40000010, 0 when absent */
};

/*
 * One CPUID leaf. The __cpuid_count macro, not <cpuid.h>'s inline
 * functions: those lack notrace, and GCC instruments inline functions even
 * where they are inlined.
 */
static notrace void clk_cpuid_leaf(unsigned leaf, unsigned sub, unsigned r[4])
{
	__cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}

/*
 * What CPUID says. In a VM every CPUID is a trap to the hypervisor (6 us
 * each on the 2-core KVM guest of docs/performance.md: eight of them were a
 * tenth of a short process's start), so leaves 1, 0x80000001 and
 * 0x80000007 are taken from glibc, which executed them at start-up
 * (<sys/platform/x86.h>; zero where the CPU lacks the leaf, as below), and
 * only the frequency's leaves are executed here. CPUID 0x16 (a nominal
 * value) is read only when the calibration fails (clk_cpuid_0x16()).
 */
static notrace void clk_cpuid(struct clk_cpu *c)
{
	const struct cpuid_feature *f;
	unsigned r[4], max_basic;

	memset(c, 0, sizeof(*c));
	f = __x86_get_cpuid_feature_leaf(CPUID_INDEX_1);
	c->hypervisor = (f->cpuid_array[2] >> 31) & 1;		/* ECX */
	f = __x86_get_cpuid_feature_leaf(CPUID_INDEX_80000001);
	c->rdtscp = (f->cpuid_array[3] >> 27) & 1;		/* EDX */
	f = __x86_get_cpuid_feature_leaf(CPUID_INDEX_80000007);
	c->invariant = (f->cpuid_array[3] >> 8) & 1;		/* EDX */
	clk_cpuid_leaf(0, 0, r);
	max_basic = r[0];
	if (max_basic >= 0x15) {
		/* EAX denominator, EBX numerator, ECX crystal Hz: all or nothing. */
		clk_cpuid_leaf(0x15, 0, r);
		if (r[0] && r[1] && r[2])
			c->freq_0x15 = (uint64_t)r[2] * r[1] / r[0];
	}
	if (c->hypervisor && !c->freq_0x15) {
		/* 0x40000000 EAX: the highest hypervisor leaf. */
		clk_cpuid_leaf(0x40000000u, 0, r);
		if (r[0] >= 0x40000010u && r[0] < 0x40000100u) {
			clk_cpuid_leaf(0x40000010u, 0, r);
			c->freq_hv = (uint64_t)r[0] * 1000u;
		}
	}
}

/* CPUID 0x16's base frequency (Hz, a nominal MHz value), 0 when absent. */
static notrace uint64_t clk_cpuid_0x16(void)
{
	unsigned r[4];

	clk_cpuid_leaf(0, 0, r);
	if (r[0] < 0x16)
		return 0;
	clk_cpuid_leaf(0x16, 0, r);
	return (uint64_t)(r[0] & 0xffff) * 1000000u;
}

/*
 * Read at most @cap - 1 bytes of @path into @buf, NUL-terminated.
 * Return: bytes read, or a negative errno.
 */
static notrace ssize_t clk_read_file(const char *path, char *buf, size_t cap)
{
	size_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (off < cap - 1) {
		ssize_t r = read(fd, buf + off, cap - 1 - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	close(fd);
	buf[off] = '\0';
	return (ssize_t)off;
}

static notrace bool clk_has_word(const char *line, size_t len, const char *word)
{
	size_t wl = strlen(word), i = 0;

	while (i < len) {
		size_t j;

		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		j = i;
		while (j < len && line[j] != ' ' && line[j] != '\t')
			j++;
		if (j - i == wl && memcmp(line + i, word, wl) == 0)
			return true;
		i = j;
	}
	return false;
}

/* The kernel's view: the first "flags" line of /proc/cpuinfo. */
static notrace void clk_cpuinfo_flags(struct clk_cpu *c)
{
	static char buf[16384];
	const char *p, *eol;

	if (clk_read_file("/proc/cpuinfo", buf, sizeof(buf)) <= 0)
		return;
	for (p = buf; *p; p = eol + 1) {
		const char *colon;

		eol = strchr(p, '\n');
		if (!eol)
			break;	/* a cut line: do not trust it */
		if (strncmp(p, "flags", 5) != 0 || (p[5] != ' ' && p[5] != '\t'))
			continue;
		colon = memchr(p, ':', (size_t)(eol - p));
		if (!colon)
			return;
		colon++;
		c->flag_constant = clk_has_word(colon, (size_t)(eol - colon), "constant_tsc");
		c->flag_nonstop = clk_has_word(colon, (size_t)(eol - colon), "nonstop_tsc");
		return;
	}
}

static notrace uint64_t clk_sysfs_khz(void)
{
	char buf[64];
	uint64_t v = 0;
	size_t i;

	if (clk_read_file("/sys/devices/system/cpu/cpu0/tsc_freq_khz", buf, sizeof(buf)) <= 0)
		return 0;
	for (i = 0; buf[i] >= '0' && buf[i] <= '9'; i++) {
		if (v > UINT64_MAX / 10 - 10)
			return 0;
		v = v * 10 + (uint64_t)(buf[i] - '0');
	}
	if (buf[i] != '\n' && buf[i] != '\0')
		return 0;
	return v;
}

/* ------------------------------------------------------------------ */
/* Calibration                                                         */
/* ------------------------------------------------------------------ */

/* The start pair of the calibration (and of the run); false when the clock cannot be read. */
static notrace bool clk_start_pair(void)
{
	fdr_clock_pair(&clk_tsc0, &clk_ns0);
	clk_started = clk_ns0 != 0;
	return clk_started;
}

/*
 * End the calibration begun by fdr_clock_begin(): the frequency over the
 * interval from its start pair, once that is CLK_CAL_NS long.
 * Return: Hz, 0 when the TSC did not move forward or the clock failed.
 */
static notrace uint64_t clk_calibrate_end(uint64_t min_ns)
{
	uint64_t t1, n1;

	if (!clk_started)
		return 0;
	do
		n1 = fdr_clock_raw_ns();
	while (n1 && n1 - clk_ns0 < min_ns);
	fdr_clock_pair(&t1, &n1);
	return fdr_clock_freq_from_pairs(clk_tsc0, clk_ns0, t1, n1);
}

/* ------------------------------------------------------------------ */
/* Does rdtscp execute?                                                */
/* ------------------------------------------------------------------ */

static sigjmp_buf clk_probe_env;

static notrace void clk_probe_sigill(int sig)
{
	(void)sig;
	siglongjmp(clk_probe_env, 1);
}

/*
 * Execute rdtscp once with SIGILL caught. SIGILL from the instruction is
 * synchronous, so only this thread can take the temporary handler.
 */
static notrace bool clk_rdtscp_executes(void)
{
	struct sigaction sa, old;
	volatile bool ok = false;
	uint32_t lo, hi, aux;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = clk_probe_sigill;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGILL, &sa, &old))
		return false;
	if (sigsetjmp(clk_probe_env, 1) == 0) {
		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
		ok = true;
	}
	sigaction(SIGILL, &old, NULL);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                        */
/* ------------------------------------------------------------------ */

/* on the standard error the runtime started with (say.c), as every message */
static notrace void clk_warn(const char *msg)
{
	fdr_say_raw(msg, strlen(msg));
}

static notrace bool clk_rseq_usable(void)
{
#if FDR_HAVE_RSEQ
	return __rseq_size != 0 && fdr_rseq_cpu_id() >= 0;
#else
	return false;
#endif
}

/*
 * The constructor's start pair: (TSC, CLOCK_MONOTONIC_RAW), the best of
 * five reads, no system call (the vDSO). Whatever the source chosen later,
 * rdtsc reads the counter rdtscp reads; a monotonic source takes its own
 * start pair in fdr_clock_begin().
 */
notrace void fdr_clock_anchor(void)
{
	uint64_t best_gap = UINT64_MAX;

	clk_tsc0 = 0;
	clk_ns0 = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t a = fdr_clock_raw_ns(), t, b;
		uint32_t lo, hi;

		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		t = ((uint64_t)hi << 32) | lo;
		b = fdr_clock_raw_ns();
		if (b < a || b - a >= best_gap)
			continue;
		best_gap = b - a;
		clk_tsc0 = t;
		clk_ns0 = a + (b - a) / 2;
	}
	clk_started = clk_ns0 != 0;
	clk_anchored = clk_started;
}

notrace int fdr_clock_begin(enum fdr_clock_choice choice)
{
	struct clk_cpu c;
	struct fdr_clock_info ci;
	enum fdrtrace_clock_source no_rdtscp;
	bool rseq, rseq_tsc;

	clk_cpuid(&c);
	if (!c.invariant)
		clk_cpuinfo_flags(&c);	/* the kernel may know better than CPUID says */

	memset(&ci, 0, sizeof(ci));
	ci.cpuid_rdtscp = c.rdtscp;
	ci.constant_tsc = c.invariant || c.flag_constant;
	ci.nonstop_tsc = c.invariant || c.flag_nonstop;
	rseq = clk_rseq_usable();
	rseq_tsc = ci.constant_tsc && rseq;
	/* the trial (a SIGILL handler set and reset) only where rdtscp may be taken */
	if (c.rdtscp && ((choice == FDR_CLOCK_AUTO && !rseq_tsc) ||
			 choice == FDR_CLOCK_CHOICE_RDTSCP))
		c.rdtscp = clk_rdtscp_executes();
	no_rdtscp = ci.constant_tsc ? FDRTRACE_CLOCK_RDTSC : FDRTRACE_CLOCK_MONOTONIC;

	switch (choice) {
	case FDR_CLOCK_CHOICE_RDTSCP:
		if (c.rdtscp) {
			ci.source = FDRTRACE_CLOCK_RDTSCP;
		} else {
			ci.source = no_rdtscp;
			clk_warn(no_rdtscp == FDRTRACE_CLOCK_RDTSC ?
				 "fdrtrace: clock=rdtscp: this CPU cannot execute rdtscp; using rdtsc\n" :
				 "fdrtrace: clock=rdtscp: this CPU cannot execute rdtscp; using monotonic\n");
		}
		break;
	case FDR_CLOCK_CHOICE_RDTSC:
		ci.source = FDRTRACE_CLOCK_RDTSC;
		break;
	case FDR_CLOCK_CHOICE_MONOTONIC:
		ci.source = FDRTRACE_CLOCK_MONOTONIC;
		break;
	case FDR_CLOCK_AUTO:
	default:
		ci.source = rseq_tsc ? FDRTRACE_CLOCK_RDTSC
			  : c.rdtscp ? FDRTRACE_CLOCK_RDTSCP : no_rdtscp;
		break;
	}
	if (ci.source != FDRTRACE_CLOCK_RDTSCP)
		ci.cpu_from_rseq = rseq;
	if (ci.source == FDRTRACE_CLOCK_MONOTONIC) {
		ci.constant_tsc = true;
		ci.nonstop_tsc = true;
	}

	/* The reads below (calibration, the start pair) use the chosen source. */
	fdr_clock = ci;
	clk_refinable = false;
	clk_cal_pending = false;
	clk_provisional = false;
	if (ci.source == FDRTRACE_CLOCK_MONOTONIC)
		clk_anchored = false;	/* the anchor is in TSC ticks */
	if (ci.source == FDRTRACE_CLOCK_MONOTONIC) {
		fdr_clock.freq = CLK_NS_PER_S;
		fdr_clock.freq_source = FDRTRACE_FREQ_FIXED;
	} else if (c.freq_0x15) {
		fdr_clock.freq = c.freq_0x15;
		fdr_clock.freq_source = FDRTRACE_FREQ_CPUID;
	} else if (c.freq_hv) {
		fdr_clock.freq = c.freq_hv;
		fdr_clock.freq_source = FDRTRACE_FREQ_CPUID;
	} else {
		uint64_t khz = clk_sysfs_khz();

		if (khz) {
			fdr_clock.freq = khz * 1000u;
			fdr_clock.freq_source = FDRTRACE_FREQ_SYSFS;
		} else {
			/* measured by fdr_clock_finish(), over what initialisation does meanwhile */
			clk_cal_pending = true;
			if (!clk_anchored)
				clk_start_pair();
			clk_anchored = false;	/* used: a later begin takes its own pair */
			return 0;
		}
	}
	if (!clk_anchored)
		clk_start_pair();
	clk_anchored = false;
	return 0;
}

notrace void fdr_clock_finish(void)
{
	uint64_t cal, age;

	if (!clk_cal_pending)
		return;
	clk_cal_pending = false;
	age = clk_started ? fdr_clock_raw_ns() - clk_ns0 : 0;
	if ((cal = clk_calibrate_end(age < CLK_CAL_NS ? CLK_EST_NS : 0)) != 0) {
		fdr_clock.freq = cal;
		fdr_clock.freq_source = FDRTRACE_FREQ_CALIBRATED;
		clk_refinable = true;
		/*
		 * An estimate over less than 1 ms: a pair's error is fixed, so
		 * an interval twice as long from the same start pair halves it
		 * (a short process's close, 0.5 ms or more after the load, has one).
		 */
		clk_provisional = age < CLK_CAL_NS;
		clk_prov_min_ns = 2 * (age > CLK_EST_NS ? age : CLK_EST_NS);
	} else if ((cal = clk_cpuid_0x16()) != 0) {
		fdr_clock.freq = cal;
		fdr_clock.freq_source = FDRTRACE_FREQ_CPUID;
		clk_refinable = true;
	} else {
		/* The TSC does not move as it should: use the kernel's clock. */
		clk_warn("fdrtrace: the TSC could not be measured; using monotonic\n");
		fdr_clock.source = FDRTRACE_CLOCK_MONOTONIC;
		fdr_clock.cpu_from_rseq = clk_rseq_usable();
		fdr_clock.constant_tsc = true;
		fdr_clock.nonstop_tsc = true;
		fdr_clock.freq = CLK_NS_PER_S;
		fdr_clock.freq_source = FDRTRACE_FREQ_FIXED;
		clk_start_pair();	/* the run's start, in the new clock */
	}
}

notrace int fdr_clock_init(enum fdr_clock_choice choice)
{
	int err = fdr_clock_begin(choice);

	fdr_clock_finish();
	return err;
}


notrace bool fdr_clock_refinable(void)
{
	return clk_started && clk_refinable;
}

notrace uint64_t fdr_clock_run_ns(void)
{
	uint64_t n = clk_started ? fdr_clock_raw_ns() : 0;

	return n > clk_ns0 ? n - clk_ns0 : 0;
}

notrace uint64_t fdr_clock_refine(void)
{
	uint64_t t1, n1, f;

	if (!clk_started || !clk_refinable)
		return fdr_clock.freq;
	fdr_clock_pair(&t1, &n1);
	if (n1 < clk_ns0 ||
	    n1 - clk_ns0 < (clk_provisional && clk_prov_min_ns < CLK_REFINE_MIN_NS ?
			    clk_prov_min_ns : CLK_REFINE_MIN_NS))
		return fdr_clock.freq;
	f = fdr_clock_freq_from_pairs(clk_tsc0, clk_ns0, t1, n1);
	return f ? f : fdr_clock.freq;
}
