/* SPDX-License-Identifier: MIT */
/*
 * runtime/signals/sigview.h - the signals the runtime handles, as the
 * program sees them (sigview.c).
 */
#ifndef FDR_SIGVIEW_H
#define FDR_SIGVIEW_H

#include <stdbool.h>

#include "compiler.h"

struct sigaction;
/* libc's sigaction, past the program's view (async-signal-safe) */
int fdr_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old) fdr_hidden;
/*
 * Handle @sig with @ours from now on; the disposition it had, @prev (the
 * caller has just read it: fdr_real_sigaction()), stays the program's
 * view, which sigaction() and signal() report, and setting the default
 * puts @ours back. Initialisation only. Return: 0 or -errno.
 */
int fdr_sig_take(int sig, const struct sigaction *ours, const struct sigaction *prev) fdr_hidden;
/*
 * The same for @sig ignored or handled at start: that stays installed;
 * @ours stands for the default once the program sets it. Initialisation
 * only. Return: 0 or -EINVAL.
 */
int fdr_sig_watch(int sig, const struct sigaction *ours) fdr_hidden;
/* What the runtime's handler for @sig does after its dump (fdr_sig_course()) */
enum fdr_sig_course {
	FDR_SIG_DEFAULT,	/* the program's disposition is the default: it ends the process */
	FDR_SIG_PROGRAM,	/* a handler of the program's (one before fdr_sig_take()) runs next */
	FDR_SIG_AGAIN,		/* back here after installing the default: die now */
};
/*
 * In the runtime's handler for @sig, first thing: what the program's
 * disposition asks for. The runtime's handler is installed only where the
 * program's disposition is the default, so that is the answer whatever
 * the program's view says at that moment, save for the disposition found
 * at fdr_sig_take(). Async-signal-safe. Return: an enum fdr_sig_course.
 */
int fdr_sig_course(int sig) fdr_hidden;
/*
 * In @sig's handler, for FDR_SIG_PROGRAM: install the disposition found at
 * fdr_sig_take() (once). Async-signal-safe. Return: whether a handler of
 * the program's is installed now; false when the program set the default
 * meanwhile (then: fdr_sig_die()).
 */
bool fdr_sig_give_back(int sig) fdr_hidden;
/* In @sig's handler: install the real default (a fault then comes again and kills). */
void fdr_sig_default(int sig) fdr_hidden;
/* In @sig's handler: end the process by @sig, with the default action. */
void fdr_sig_die(int sig) fdr_hidden __attribute__((noreturn));
/* In a fork child: the dispositions a thread of the parent was changing, as they are. */
void fdr_sig_after_fork(void) fdr_hidden;

#endif /* FDR_SIGVIEW_H */
