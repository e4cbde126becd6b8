/* SPDX-License-Identifier: MIT */
/*
 * runtime/process/lifecycle_internal.h - what the files of the process
 * layer share. The files form a stack, each calling only those below it:
 * ending.c (the shared state, the claim and the exit line) < fatal.c
 * (lc_sig_rb, the fatal-signal handlers), fork.c (the fork handlers) <
 * lifecycle.c (start and finish) < control.c (the API). Each group below
 * is owned by the file it names. Nothing outside runtime/process/
 * includes it; the layer's interface is lifecycle.h.
 */
#ifndef FDR_LIFECYCLE_INTERNAL_H
#define FDR_LIFECYCLE_INTERNAL_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <fdrtrace/format.h>

#include "compiler.h"
#include "lifecycle.h"
#include "native_stack.h"
#include "rtbuf.h"

struct fdr_thread;

/*
 * Start state, one word (lc_start_state): IDLE until a thread claims the
 * start (CAS IDLE -> RUNNING), DONE once it has ended (gate ON, or OFF on
 * failure). Release on DONE pairs with the acquire in fdr_start_lazy()'s
 * wait: a thread that saw DONE sees the runtime set up. A fork child of a
 * recording process goes back to IDLE with lc_child_pending set: its
 * start is the child's part only (its file and flush thread).
 */
enum { LC_START_IDLE, LC_START_RUNNING, LC_START_DONE };

/* ending.c */
extern pid_t lc_armed_pid fdr_hidden;
extern bool lc_child_pending fdr_hidden;
extern _Atomic bool lc_dumped fdr_hidden;	/* the dump of _exit (lc_exit_now()) is written */
extern bool lc_quiet fdr_hidden;
extern _Atomic int lc_start_state fdr_hidden;

notrace bool lc_claim(int phase) fdr_hidden;
notrace bool lc_end_unstarted(void) fdr_hidden;
notrace void lc_exit_line(void) fdr_hidden;
notrace void lc_program_name(void) fdr_hidden;
notrace void lc_request_all(struct fdr_thread *t, void *arg) fdr_hidden;
notrace void lc_say_nothing_ran(void) fdr_hidden;
notrace void lc_wait_closing(void) fdr_hidden;

/* fatal.c */
extern struct fdr_rtbuf lc_sig_rb fdr_hidden;

notrace __attribute__((noreturn)) void lc_exit_now(int status) fdr_hidden;
notrace void lc_install_signals(void) fdr_hidden;

/* fork.c */
notrace void lc_postfork_child(void) fdr_hidden;
notrace void lc_postfork_parent(void) fdr_hidden;
notrace void lc_prefork(void) fdr_hidden;

#endif /* FDR_LIFECYCLE_INTERNAL_H */
