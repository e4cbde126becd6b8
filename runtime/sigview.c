// SPDX-License-Identifier: MIT
/*
 * runtime/sigview.c - the signals the runtime handles, as the program sees them.
 *
 * The runtime handles the fatal signals and those whose default action
 * ends the process (lifecycle.c, lc_install_signals()), so that the trace
 * is written and closed before the process ends. Installed with plain
 * sigaction, that showed and lost things:
 *   - a program asking for a signal's disposition (sigaction(sig, NULL,
 *     &old), signal()'s return) got the runtime's handler, where untraced
 *     it gets SIG_DFL;
 *   - a program's handler that cleans up, resets the default and raises
 *     the signal again (GNU make, many GNU tools) ended the process with
 *     the default action, past the runtime: its trace cut, no close marker.
 *
 * So libfdrtrace defines sigaction, signal, bsd_signal and sysv_signal
 * (exported, as the exec family is). For a signal the runtime took
 * (fdr_sig_take()), each keeps the program's view, the disposition the
 * program last set, and returns it as the old one:
 *   - setting SIG_DFL keeps (or puts back) the runtime's handler, which
 *     does what the default would after its dump (fdr_sig_give_back(),
 *     then the signal again);
 *   - setting anything else (a handler, SIG_IGN) installs it, as libc
 *     would: the runtime's handler is gone until the default is set again;
 *   - a one-shot handler (SA_RESETHAND, sysv_signal()) is installed as
 *     sv_oneshot(), which at delivery resets the disposition to the
 *     default as the kernel would, but to the default as the program sees
 *     it (the runtime's handler), then calls the program's: a handler that
 *     logs and returns so that the fault comes again and kills (Redis's)
 *     no longer ends the process past the runtime.
 * Every other signal goes straight to libc (__sigaction, and its signal()
 * and __sysv_signal(), so siginterrupt() keeps its effect). libc's own
 * calls (system(), posix_spawn) do not come here; they save and restore
 * the real disposition, which stays consistent. Not covered: sigset()
 * and the rt_sigaction system call made directly.
 *
 * Concurrency: one signal's state is written by whoever calls sigaction
 * for it, as the real disposition is; calls racing on one signal get one
 * of the outcomes, as they would from libc. Async-signal-safe (sigaction
 * may be called from a handler): no locks, no allocation.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "compiler.h"
#include "runtime.h"

/* libc's sigaction under the name its own callers use (exported by glibc). */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* libc's, interposed below; not declared by <signal.h> in every mode */
__sighandler_t bsd_signal(int sig, __sighandler_t handler);
__sighandler_t sysv_signal(int sig, __sighandler_t handler);
extern __sighandler_t __sysv_signal(int sig, __sighandler_t handler);

static _Atomic bool sv_taken[NSIG];	/* fdr_sig_take()n: SIG_DFL means the runtime's handler */
static _Atomic bool sv_ours[NSIG];	/* the runtime's handler is the installed one */
static _Atomic bool sv_once[NSIG];	/* sv_oneshot() is installed for the program's SA_RESETHAND one */
static struct sigaction sv_handler[NSIG];	/* the runtime's, to put back */
static struct sigaction sv_view[NSIG];	/* the program's disposition while ours or sv_oneshot() is */
static struct sigaction sv_prog[NSIG];	/* the SA_RESETHAND handler sv_oneshot() calls */

notrace int fdr_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return __sigaction(sig, act, old);
}

notrace int fdr_sig_take(int sig, const struct sigaction *ours)
{
	struct sigaction prev;

	if (sig <= 0 || sig >= NSIG)
		return -EINVAL;
	sv_handler[sig] = *ours;
	if (__sigaction(sig, ours, &prev) < 0)
		return -errno;
	sv_view[sig] = prev;
	atomic_store_explicit(&sv_ours[sig], true, memory_order_release);
	atomic_store_explicit(&sv_taken[sig], true, memory_order_release);
	return 0;
}

notrace bool fdr_sig_program_default(int sig)
{
	return sig > 0 && sig < NSIG && atomic_load_explicit(&sv_ours[sig], memory_order_acquire) &&
	       !(sv_view[sig].sa_flags & SA_SIGINFO) && sv_view[sig].sa_handler == SIG_DFL;
}

notrace void fdr_sig_give_back(int sig)
{
	if (sig <= 0 || sig >= NSIG || !atomic_load_explicit(&sv_ours[sig], memory_order_acquire))
		return;
	atomic_store_explicit(&sv_ours[sig], false, memory_order_release);
	__sigaction(sig, &sv_view[sig], NULL);
}

/*
 * What a program's SA_RESETHAND handler is installed as, for a signal the
 * runtime took: the kernel would reset the disposition to the real
 * default at delivery, past the runtime (a handler that logs and returns,
 * so that the fault comes again and kills: the trace cut). Installed
 * without SA_RESETHAND, this does the reset as the program sees it (the
 * default, which is the runtime's handler), then calls the program's.
 */
static notrace void sv_oneshot(int sig, siginfo_t *info, void *uc)
{
	struct sigaction prog = sv_prog[sig];

	memset(&sv_view[sig], 0, sizeof(sv_view[sig]));
	sv_view[sig].sa_handler = SIG_DFL;
	__sigaction(sig, &sv_handler[sig], NULL);
	atomic_store_explicit(&sv_once[sig], false, memory_order_release);
	atomic_store_explicit(&sv_ours[sig], true, memory_order_release);
	if (prog.sa_flags & SA_SIGINFO)
		prog.sa_sigaction(sig, info, uc);
	else
		prog.sa_handler(sig);
}

fdr_export notrace int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev;
	bool was_ours, was_once, viewed;

	if (sig <= 0 || sig >= NSIG || !atomic_load_explicit(&sv_taken[sig], memory_order_acquire))
		return __sigaction(sig, act, old);
	was_ours = atomic_load_explicit(&sv_ours[sig], memory_order_acquire);
	was_once = atomic_load_explicit(&sv_once[sig], memory_order_acquire);
	viewed = was_ours || was_once;
	if (viewed)
		prev = sv_view[sig];
	if (act && act->sa_handler == SIG_DFL) {
		/* the default: the runtime's handler does it, after its dump */
		if (!was_ours && __sigaction(sig, &sv_handler[sig], viewed ? NULL : &prev) < 0)
			return -1;
		sv_view[sig] = *act;
		atomic_store_explicit(&sv_once[sig], false, memory_order_release);
		atomic_store_explicit(&sv_ours[sig], true, memory_order_release);
	} else if (act && act->sa_handler != SIG_IGN && (act->sa_flags & SA_RESETHAND)) {
		/* a one-shot handler: sv_oneshot() in its place, the reset done by it */
		struct sigaction tramp = *act;

		tramp.sa_flags = (act->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
		tramp.sa_sigaction = sv_oneshot;
		sv_prog[sig] = *act;
		if (__sigaction(sig, &tramp, viewed ? NULL : &prev) < 0)
			return -1;
		sv_view[sig] = *act;
		atomic_store_explicit(&sv_ours[sig], false, memory_order_release);
		atomic_store_explicit(&sv_once[sig], true, memory_order_release);
	} else if (act) {
		if (__sigaction(sig, act, viewed ? NULL : &prev) < 0)
			return -1;
		atomic_store_explicit(&sv_ours[sig], false, memory_order_release);
		atomic_store_explicit(&sv_once[sig], false, memory_order_release);
	} else if (!viewed && __sigaction(sig, NULL, &prev) < 0) {
		return -1;
	}
	if (old)
		*old = prev;
	return 0;
}

/*
 * libc's signal() (bsd_signal() is the same function), for signals the
 * runtime did not take: its exact behaviour, siginterrupt() included.
 * Looked up once at load (dlsym is not async-signal-safe; signal() is).
 */
static __sighandler_t (*sv_libc_signal)(int, __sighandler_t);

__attribute__((constructor(101))) static notrace void sv_init(void)
{
	FDR_NEXT("signal", &sv_libc_signal);
}

/*
 * signal(), bsd_signal() and sysv_signal() setting the default of a signal
 * the runtime took (or anything, when libc's could not be found): through
 * sigaction() above, with glibc's flags (BSD: SA_RESTART and the signal
 * blocked in its handler; System V: the handler runs once, the signal not
 * blocked in it). Return: the old handler.
 */
static notrace __sighandler_t sv_signal(int sig, __sighandler_t handler, int flags, bool self_mask)
{
	struct sigaction act, old;

	if (handler == SIG_ERR || sig <= 0 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	sigemptyset(&act.sa_mask);
	if (self_mask)
		sigaddset(&act.sa_mask, sig);
	act.sa_flags = flags;
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

static notrace bool sv_is_taken(int sig)
{
	return sig > 0 && sig < NSIG && atomic_load_explicit(&sv_taken[sig], memory_order_acquire);
}

/*
 * Anything but the default for a taken signal, or any disposition for
 * another, through libc's own @libc_fn (its flags exactly, siginterrupt()
 * included); for a taken signal the runtime's handler is then gone, and
 * the old disposition returned is the program's view. NULL @libc_fn (not
 * found): 0 returned with *@done false.
 */
static notrace __sighandler_t sv_via_libc(int sig, __sighandler_t handler,
					  __sighandler_t (*libc_fn)(int, __sighandler_t), bool *done)
{
	bool taken = sv_is_taken(sig), was_ours;
	__sighandler_t view, r;

	*done = libc_fn && (!taken || handler != SIG_DFL);
	if (!*done)
		return 0;
	was_ours = taken && (atomic_load_explicit(&sv_ours[sig], memory_order_acquire) ||
			     atomic_load_explicit(&sv_once[sig], memory_order_acquire));
	view = was_ours ? sv_view[sig].sa_handler : SIG_DFL;
	r = libc_fn(sig, handler);
	if (r == SIG_ERR || !taken)
		return r;
	atomic_store_explicit(&sv_ours[sig], false, memory_order_release);
	atomic_store_explicit(&sv_once[sig], false, memory_order_release);
	return was_ours ? view : r;
}

fdr_export notrace __sighandler_t signal(int sig, __sighandler_t handler)
{
	bool done;
	__sighandler_t r = sv_via_libc(sig, handler, sv_libc_signal, &done);

	return done ? r : sv_signal(sig, handler, SA_RESTART, true);
}

fdr_export notrace __sighandler_t bsd_signal(int sig, __sighandler_t handler)
{
	return signal(sig, handler);
}

fdr_export notrace __sighandler_t sysv_signal(int sig, __sighandler_t handler)
{
	bool done;
	__sighandler_t r;

	/* its handlers are one-shot (SA_RESETHAND): a taken signal's go through sigaction() */
	if (sv_is_taken(sig) && handler != SIG_IGN && handler != SIG_ERR)
		return sv_signal(sig, handler, SA_RESETHAND | SA_NODEFER, false);
	r = sv_via_libc(sig, handler, __sysv_signal, &done);

	return done ? r : sv_signal(sig, handler, SA_RESETHAND | SA_NODEFER, false);
}
