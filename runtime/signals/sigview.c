// SPDX-License-Identifier: MIT
/*
 * runtime/signals/sigview.c - the signals the runtime handles, as the
 * program sees them.
 *
 * The runtime handles the fatal signals and those whose default action
 * ends the process (process/fatal.c, lc_install_signals()), so that the trace
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
 * (fdr_sig_take(); fdr_sig_watch() for one ignored or handled at start,
 * whose disposition stays installed until the program sets the default),
 * each keeps the program's view, the disposition the program last set,
 * and returns it as the old one:
 *   - setting SIG_DFL installs (or keeps) the runtime's handler, which
 *     dumps, then ends the process by the signal with the real default
 *     (fdr_sig_die());
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
 * (it would have to be exported, and glibc marks it obsolete) and the
 * rt_sigaction system call made directly.
 *
 * The guarantee: a signal delivered while the program's disposition is the
 * default ends the process by that signal (status, core dump), with the
 * trace dumped first, at every moment, whatever call the program is in.
 * It rests on one invariant, which needs no view to be read consistently:
 *
 *   The runtime's handler is installed only where the program asked for
 *   the default (SIG_DFL set, the one-shot reset done), or at
 *   fdr_sig_take() for the disposition found then (SV_PRE).
 *
 * So the handler (fdr_sig_course()) takes the default whenever the view is
 * not SV_PRE, even if it says otherwise (a call cut by a signal halfway;
 * only a handler of the program's that another thread installed since the
 * delivery runs instead, as if the signal had come after), and ends the process itself (fdr_sig_die(): the real default installed,
 * the signal sent to its thread and unblocked), never by raising it back
 * into whatever is installed: a view read late once sent it back into
 * itself for ever (issue 30: a shell resetting SIGTERM to the default
 * while it came spun at 100% CPU). The order of every change keeps the
 * invariant at each step:
 *   - to the default (or a one-shot): view, then state (release), then
 *     the handler (the system call): until it is installed, what was
 *     installed runs, as if the signal had come before the call;
 *   - to anything else: the system call, then the state: until the state
 *     says so, the new disposition runs and the view is stale, which only
 *     the old disposition returned shows (as if asked just before);
 *   - a look sees the state first (acquire), then the view it names.
 * A view the handler finds installed against the state (a call cut by a
 * signal whose handler changed the same disposition) heals at the next
 * call: the state of the last system call stands for the program's last
 * request. The one-shot's reset is a compare-and-swap of the state, so of
 * two deliveries racing on two threads one runs the program's handler and
 * the other the default, as with the kernel's reset.
 *
 * Concurrency: one signal's state is written by whoever calls sigaction
 * for it, as the real disposition is; calls racing on one signal get one
 * of the outcomes, as they would from libc. A fork while another thread is
 * in one of these calls leaves the child the state as it was cut:
 * fdr_sig_after_fork() reads those dispositions back. Async-signal-safe
 * (sigaction may be called from a handler): no locks, no allocation.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compiler.h"
#include "libc_next.h"
#include "sigview.h"

/* libc's sigaction under the name its own callers use (exported by glibc). */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* libc's, interposed below; not declared by <signal.h> in every mode */
__sighandler_t bsd_signal(int sig, __sighandler_t handler);
__sighandler_t sysv_signal(int sig, __sighandler_t handler);
extern __sighandler_t __sysv_signal(int sig, __sighandler_t handler);

/* What a taken signal's view is, and so which handler stands for it. */
enum sv_state {
	SV_PROG,	/* the program's disposition is installed: the view is the real one */
	SV_DFL,		/* the runtime's handler, for the program's default (sv_dfl) */
	SV_PRE,		/* the runtime's handler, for what fdr_sig_take() found (sv_pre) */
	SV_ONCE,	/* sv_oneshot(), for the program's SA_RESETHAND handler (sv_once) */
};

static _Atomic bool sv_taken[NSIG];	/* fdr_sig_take()n: sv_handler and sv_state set */
static _Atomic int sv_state[NSIG];	/* enum sv_state: the view's kind, published last */
/* the process (pid: not a fork or vfork child) whose handler let the signal end it */
static _Atomic pid_t sv_dying[NSIG];
static _Atomic int sv_busy[NSIG];	/* changes under way, read by a fork child */
/*
 * sv_oneshot()'s target: the program's handler, with SV_INFO for its
 * SA_SIGINFO and SV_NODEFER for its SA_NODEFER (user addresses are below
 * bit 47, or bit 56 with five-level page tables).
 */
static _Atomic uintptr_t sv_target[NSIG];
#define SV_INFO ((uintptr_t)1 << 63)
#define SV_NODEFER ((uintptr_t)1 << 62)
#define SV_FLAGS (SV_INFO | SV_NODEFER)
/*
 * The views, written before sv_state names them (release) and read after
 * it was loaded (acquire): a look cut by a change on its own thread may
 * read a view half written, which only the old disposition returned shows.
 */
static struct sigaction sv_handler[NSIG];	/* the runtime's: written once, before sv_taken */
static struct sigaction sv_dfl[NSIG];	/* SV_DFL: the program's SIG_DFL, its flags and mask */
static struct sigaction sv_pre[NSIG];	/* SV_PRE: the disposition before the runtime's */
static struct sigaction sv_once[NSIG];	/* SV_ONCE: the program's SA_RESETHAND disposition */

notrace int fdr_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return __sigaction(sig, act, old);
}

static notrace bool sv_is_taken(int sig)
{
	/* acquire: pairs with the release in fdr_sig_take(): sv_handler and sv_state are set */
	return sig > 0 && sig < NSIG && atomic_load_explicit(&sv_taken[sig], memory_order_acquire);
}

/* SIG_DFL is a null handler, whichever member of the union was set */
static notrace bool sv_is_dfl(const struct sigaction *sa)
{
	return sa->sa_handler == SIG_DFL;
}

static notrace bool sv_is_ours(int sig, const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == sv_handler[sig].sa_sigaction;
}

static void sv_oneshot(int sig, siginfo_t *info, void *uc);

static notrace bool sv_is_oneshot(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == sv_oneshot;
}

/* The default as the program sees it, when it never set one itself. */
static notrace void sv_set_plain_dfl(struct sigaction *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_handler = SIG_DFL;
}

notrace int fdr_sig_take(int sig, const struct sigaction *ours, const struct sigaction *prev)
{
	if (sig <= 0 || sig >= NSIG)
		return -EINVAL;
	sv_handler[sig] = *ours;
	if (sv_is_dfl(prev)) {
		sv_dfl[sig] = *prev;
		atomic_store_explicit(&sv_state[sig], SV_DFL, memory_order_relaxed);
	} else {
		sv_pre[sig] = *prev;
		atomic_store_explicit(&sv_state[sig], SV_PRE, memory_order_relaxed);
	}
	/* release: pairs with sv_is_taken(); the view before the handler, as any change */
	atomic_store_explicit(&sv_taken[sig], true, memory_order_release);
	if (__sigaction(sig, ours, NULL) < 0)
		return -errno;
	return 0;
}

notrace int fdr_sig_watch(int sig, const struct sigaction *ours)
{
	if (sig <= 0 || sig >= NSIG)
		return -EINVAL;
	sv_handler[sig] = *ours;
	atomic_store_explicit(&sv_state[sig], SV_PROG, memory_order_relaxed);
	/* release: pairs with sv_is_taken(): sv_handler and sv_state are set */
	atomic_store_explicit(&sv_taken[sig], true, memory_order_release);
	return 0;
}

/* A handler of the program's is installed (not the runtime's, the one-shot's or a default) */
static notrace bool sv_real_is_program(int sig)
{
	struct sigaction cur;

	return __sigaction(sig, NULL, &cur) == 0 && !sv_is_ours(sig, &cur) &&
	       !sv_is_oneshot(&cur) && !sv_is_dfl(&cur) && cur.sa_handler != SIG_IGN;
}

/*
 * The runtime's handler is running: whatever the view says, it is
 * installed only for the default or for SV_PRE (the invariant above).
 * One exception, across threads only: the state says SV_PROG and a
 * handler of the program's is installed (given back by another thread's
 * fdr_sig_give_back(), or set by another thread since this delivery),
 * which then runs next. On this thread, the handler can only have cut a
 * change before its state was stored.
 */
notrace int fdr_sig_course(int sig)
{
	pid_t pid;
	int state;

	if (sig <= 0 || sig >= NSIG)
		return FDR_SIG_DEFAULT;
	/* acquire: pairs with the releases that change the state */
	state = atomic_load_explicit(&sv_state[sig], memory_order_acquire);
	if (state == SV_PRE || (state == SV_PROG && sv_real_is_program(sig)))
		return FDR_SIG_PROGRAM;
	/* this process installed the real default already, yet its signal came back here */
	pid = (pid_t)syscall(SYS_getpid);
	if (atomic_exchange_explicit(&sv_dying[sig], pid, memory_order_relaxed) == pid)
		return FDR_SIG_AGAIN;
	return FDR_SIG_DEFAULT;
}

notrace bool fdr_sig_give_back(int sig)
{
	int expect = SV_PRE;

	if (sig <= 0 || sig >= NSIG)
		return false;
	/*
	 * Once only (another thread's fault may be here too), and not over a
	 * change the program made meanwhile. The disposition, then the
	 * state: until then a look still sees sv_pre, which it is.
	 */
	/* acquire: pairs with the release of the change that set the state (its view written) */
	if (atomic_load_explicit(&sv_state[sig], memory_order_acquire) == SV_PRE) {
		__sigaction(sig, &sv_pre[sig], NULL);
		/* acq_rel: publishes SV_PROG to a look (acquire); sees a racing change's release */
		atomic_compare_exchange_strong_explicit(&sv_state[sig], &expect, SV_PROG,
							memory_order_acq_rel, memory_order_acquire);
	}
	/* given back here or by another thread; the runtime's handler again: the default */
	return sv_real_is_program(sig);
}

notrace void fdr_sig_default(int sig)
{
	struct sigaction dfl;
	pid_t pid = (pid_t)syscall(SYS_getpid);

	sv_set_plain_dfl(&dfl);
	if (sig > 0 && sig < NSIG)
		atomic_store_explicit(&sv_dying[sig], pid, memory_order_relaxed);
	__sigaction(sig, &dfl, NULL);
}

/*
 * The real default installed, then the signal sent to this thread (blocked
 * in the handler: pending) and unblocked: delivered by the default, it
 * ends the process there. Around again if another thread installed
 * something in between (that handler ran first; the runtime's, run again,
 * ends here too). Never by raising it and returning, into whatever is
 * installed by then.
 */
notrace void fdr_sig_die(int sig)
{
	sigset_t only;

	sigemptyset(&only);
	sigaddset(&only, sig);
	for (;;) {
		fdr_sig_default(sig);
		syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), sig);
		sigprocmask(SIG_UNBLOCK, &only, NULL);
	}
}

/*
 * What a program's SA_RESETHAND handler is installed as, for a signal the
 * runtime took: the kernel would reset the disposition to the real
 * default at delivery, past the runtime (a handler that logs and returns,
 * so that the fault comes again and kills: the trace cut). Installed
 * without SA_RESETHAND and SA_NODEFER (so that the signal stays blocked
 * until the reset is done), this does the reset as the program sees it:
 * the state first, by a compare-and-swap that one delivery wins, then the
 * runtime's handler for the default; then it calls the program's.
 */
static notrace void sv_oneshot(int sig, siginfo_t *info, void *uc)
{
	struct sigaction cur;
	int expect = SV_ONCE;
	uintptr_t target;

	/* acq_rel: a call under way; pairs with fdr_sig_after_fork()'s acquire load */
	atomic_fetch_add_explicit(&sv_busy[sig], 1, memory_order_acq_rel);
	sv_set_plain_dfl(&sv_dfl[sig]);
	/* acq_rel: publishes sv_dfl (pairs with the acquire of a look) and sees sv_target */
	while (!atomic_compare_exchange_strong_explicit(&sv_state[sig], &expect, SV_DFL,
							memory_order_acq_rel,
							memory_order_acquire)) {
		if (expect == SV_PROG && __sigaction(sig, NULL, &cur) == 0 && sv_is_oneshot(&cur))
			continue;	/* still installed: a change cut halfway, ours stands */
		/* acq_rel: the call is done (see the increment) */
		atomic_fetch_sub_explicit(&sv_busy[sig], 1, memory_order_acq_rel);
		if (expect != SV_PROG) {
			/* reset already, by another delivery or the program: the default */
			sv_handler[sig].sa_sigaction(sig, info, uc);
			return;
		}
		/* came before the program's change: its handler, the reset overtaken */
		goto call;
	}
	__sigaction(sig, &sv_handler[sig], NULL);
	/* acq_rel: the call is done; pairs as the increment's does */
	atomic_fetch_sub_explicit(&sv_busy[sig], 1, memory_order_acq_rel);
call:
	target = atomic_load_explicit(&sv_target[sig], memory_order_relaxed);
	if (target & SV_NODEFER) {
		sigset_t only;

		sigemptyset(&only);
		sigaddset(&only, sig);
		sigprocmask(SIG_UNBLOCK, &only, NULL);
	}
	if (target & SV_INFO)
		((void (*)(int, siginfo_t *, void *))(target & ~SV_FLAGS))(sig, info, uc);
	else
		((void (*)(int))(target & ~SV_FLAGS))(sig);
}

/* The view of a taken signal in @state; SV_PROG: of the real disposition @real. */
static notrace void sv_view(int sig, int state, const struct sigaction *real, struct sigaction *v)
{
	switch (state) {
	case SV_DFL:
		*v = sv_dfl[sig];
		break;
	case SV_PRE:
		*v = sv_pre[sig];
		break;
	case SV_ONCE:
		*v = sv_once[sig];
		break;
	default:
		/* installed against the state (a change cut halfway): what it stands for */
		if (sv_is_ours(sig, real))
			sv_set_plain_dfl(v);
		else if (sv_is_oneshot(real))
			*v = sv_once[sig];
		else
			*v = *real;
		break;
	}
}

/* Set @act, the default: the view, then the state, then the runtime's handler. */
static notrace int sv_set_default(int sig, const struct sigaction *act, struct sigaction *real)
{
	sv_dfl[sig] = *act;
	/* release: pairs with the acquire of a look (sv_dfl written) and of fdr_sig_course() */
	atomic_store_explicit(&sv_state[sig], SV_DFL, memory_order_release);
	return __sigaction(sig, &sv_handler[sig], real);
}

/* Set @act, a one-shot handler: the view and sv_oneshot()'s target, then the state, then it. */
static notrace int sv_set_oneshot(int sig, const struct sigaction *act, struct sigaction *real)
{
	struct sigaction tramp = *act;
	uintptr_t target = (uintptr_t)act->sa_handler;

	tramp.sa_flags = (act->sa_flags & ~(SA_RESETHAND | SA_NODEFER)) | SA_SIGINFO;
	tramp.sa_sigaction = sv_oneshot;
	sv_once[sig] = *act;
	target |= act->sa_flags & SA_SIGINFO ? SV_INFO : 0;
	target |= act->sa_flags & SA_NODEFER ? SV_NODEFER : 0;
	atomic_store_explicit(&sv_target[sig], target, memory_order_relaxed);
	/* release: pairs with the acquire in sv_oneshot() (sv_target) and of a look (sv_once) */
	atomic_store_explicit(&sv_state[sig], SV_ONCE, memory_order_release);
	return __sigaction(sig, &tramp, real);
}

fdr_export notrace int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev, real;
	int was, r;

	if (!sv_is_taken(sig))
		return __sigaction(sig, act, old);
	/* acq_rel: a call under way; pairs with fdr_sig_after_fork()'s acquire load */
	atomic_fetch_add_explicit(&sv_busy[sig], 1, memory_order_acq_rel);
	/* acquire: pairs with the release of the change that set it (its view written) */
	was = atomic_load_explicit(&sv_state[sig], memory_order_acquire);
	if (was != SV_PROG)
		sv_view(sig, was, NULL, &prev);
	if (!act) {
		r = was == SV_PROG ? __sigaction(sig, NULL, &real) : 0;
	} else if (sv_is_dfl(act)) {
		r = sv_set_default(sig, act, &real);
	} else if (act->sa_handler != SIG_IGN && (act->sa_flags & SA_RESETHAND)) {
		r = sv_set_oneshot(sig, act, &real);
	} else {
		/* the program's own, installed first; then the state says so (release: a look) */
		r = __sigaction(sig, act, &real);
		if (r == 0)
			atomic_store_explicit(&sv_state[sig], SV_PROG, memory_order_release);
	}
	/* acq_rel: the call is done; pairs as the increment's does */
	atomic_fetch_sub_explicit(&sv_busy[sig], 1, memory_order_acq_rel);
	if (r < 0)
		return -1;
	if (was == SV_PROG)
		sv_view(sig, was, &real, &prev);
	if (old)
		*old = prev;
	return 0;
}

notrace void fdr_sig_after_fork(void)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction cur;
		int state;

		/* acquire: pairs with the acq_rel count of the call the fork cut (its writes seen) */
		if (!sv_is_taken(sig) ||
		    !atomic_load_explicit(&sv_busy[sig], memory_order_acquire) ||
		    __sigaction(sig, NULL, &cur) < 0)
			continue;
		/* the thread that was changing it is not here: the last system call stands */
		state = atomic_load_explicit(&sv_state[sig], memory_order_relaxed);
		if (sv_is_ours(sig, &cur)) {
			if (state != SV_DFL && state != SV_PRE) {
				sv_set_plain_dfl(&sv_dfl[sig]);
				state = SV_DFL;
			}
		} else {
			state = sv_is_oneshot(&cur) ? SV_ONCE : SV_PROG;
		}
		/* release: pairs with the acquire of a look, as every change's does (sv_dfl written) */
		atomic_store_explicit(&sv_state[sig], state, memory_order_release);
		atomic_store_explicit(&sv_busy[sig], 0, memory_order_relaxed);
	}
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
	bool taken = sv_is_taken(sig);
	struct sigaction view, real;
	__sighandler_t r;
	int was = SV_PROG;

	*done = libc_fn && (!taken || handler != SIG_DFL);
	if (!*done)
		return 0;
	if (taken) {
		/* acq_rel: a call under way; pairs with fdr_sig_after_fork()'s acquire load */
	atomic_fetch_add_explicit(&sv_busy[sig], 1, memory_order_acq_rel);
		/* acquire: pairs with the release of the change that set it (its view written) */
		was = atomic_load_explicit(&sv_state[sig], memory_order_acquire);
		if (was != SV_PROG)
			sv_view(sig, was, NULL, &view);
	}
	r = libc_fn(sig, handler);
	if (!taken)
		return r;
	/* the program's own, installed; then the state says so (release: pairs with a look) */
	if (r != SIG_ERR)
		atomic_store_explicit(&sv_state[sig], SV_PROG, memory_order_release);
	/* acq_rel: the call is done; pairs as the increment's does */
	atomic_fetch_sub_explicit(&sv_busy[sig], 1, memory_order_acq_rel);
	if (r == SIG_ERR)
		return r;
	if (was == SV_PROG) {
		/* installed against the state: what it stood for */
		memset(&real, 0, sizeof(real));
		real.sa_handler = r;
		real.sa_flags = (uintptr_t)r == (uintptr_t)sv_handler[sig].sa_sigaction ||
				(uintptr_t)r == (uintptr_t)sv_oneshot ? SA_SIGINFO : 0;
		sv_view(sig, was, &real, &view);
	}
	return view.sa_handler;
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
