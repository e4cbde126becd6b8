// SPDX-License-Identifier: MIT
/*
 * runtime/interpose/creds.c - name the trace before the process gives up
 * the right to.
 *
 * The trace file is created unnamed in its directory (O_TMPFILE) and
 * linked at its path when the first records are written (trace_file.c),
 * so that a process that records nothing leaves no file. A daemon that
 * starts as root and then becomes another user (nginx's workers: setgid,
 * initgroups, setuid to nobody) can no longer link a root-owned file into
 * a directory only root may write (EPERM, or EACCES), nor create one there
 * by name: its whole trace was lost, in 5 of 10 nginx runs one worker's or
 * both, the message going to nginx's error.log.
 *
 * So libfdrtrace defines the calls that change the process's identity or
 * its view of the file system (setuid, setgid, seteuid, setegid, setreuid,
 * setregid, setresuid, setresgid, setgroups, initgroups, chroot; exported,
 * as the exec family is): each first names the trace while the process
 * still may (fdr_file_create() under the file lock, as the flush thread
 * does), then calls libc's, found once at load (dlsym(RTLD_NEXT)). The
 * trace is named even when nothing is recorded yet: such a process then
 * leaves a trace with its start records and no calls.
 *
 * Only in the shared library: a fully static program has no libc
 * definition to call next, and libc's own set*id must apply to every
 * thread of the process (glibc's setxid broadcast), which a system call
 * made here would not. libfdrtrace.a in a static program leaves these
 * to libc (runtime/meson.build).
 *
 * Contract: called by the program, on any thread; setuid and setgid are
 * async-signal-safe, and so is what is done here (no allocation; the
 * file lock is taken with a bounded spin, and skipped by a thread that
 * already holds it).
 */
#include <errno.h>
#include <grp.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

#include "compiler.h"
#include "libc_next.h"
#include "lifecycle.h"

/* The next definitions of the calls below (libc's), looked up at load. */
static struct {
	int (*setuid)(uid_t);
	int (*setgid)(gid_t);
	int (*seteuid)(uid_t);
	int (*setegid)(gid_t);
	int (*setreuid)(uid_t, uid_t);
	int (*setregid)(gid_t, gid_t);
	int (*setresuid)(uid_t, uid_t, uid_t);
	int (*setresgid)(gid_t, gid_t, gid_t);
	int (*setgroups)(size_t, const gid_t *);
	int (*initgroups)(const char *, gid_t);
	int (*chroot)(const char *);
} cr_next;

__attribute__((constructor(101))) static notrace void cr_init(void)
{
	FDR_NEXT("setuid", &cr_next.setuid);
	FDR_NEXT("setgid", &cr_next.setgid);
	FDR_NEXT("seteuid", &cr_next.seteuid);
	FDR_NEXT("setegid", &cr_next.setegid);
	FDR_NEXT("setreuid", &cr_next.setreuid);
	FDR_NEXT("setregid", &cr_next.setregid);
	FDR_NEXT("setresuid", &cr_next.setresuid);
	FDR_NEXT("setresgid", &cr_next.setresgid);
	FDR_NEXT("setgroups", &cr_next.setgroups);
	FDR_NEXT("initgroups", &cr_next.initgroups);
	FDR_NEXT("chroot", &cr_next.chroot);
}

/* libc's @fn missing (not expected in a dynamically linked process): fail as libc would not. */
static notrace int cr_missing(void)
{
	errno = ENOSYS;
	return -1;
}

#define CR_CALL(fn, ...)                                                   \
	do {                                                               \
		fdr_before_identity_change();                              \
		return cr_next.fn ? cr_next.fn(__VA_ARGS__) : cr_missing(); \
	} while (0)

fdr_export notrace int setuid(uid_t uid)
{
	CR_CALL(setuid, uid);
}

fdr_export notrace int setgid(gid_t gid)
{
	CR_CALL(setgid, gid);
}

fdr_export notrace int seteuid(uid_t uid)
{
	CR_CALL(seteuid, uid);
}

fdr_export notrace int setegid(gid_t gid)
{
	CR_CALL(setegid, gid);
}

fdr_export notrace int setreuid(uid_t r, uid_t e)
{
	CR_CALL(setreuid, r, e);
}

fdr_export notrace int setregid(gid_t r, gid_t e)
{
	CR_CALL(setregid, r, e);
}

fdr_export notrace int setresuid(uid_t r, uid_t e, uid_t s)
{
	CR_CALL(setresuid, r, e, s);
}

fdr_export notrace int setresgid(gid_t r, gid_t e, gid_t s)
{
	CR_CALL(setresgid, r, e, s);
}

fdr_export notrace int setgroups(size_t n, const gid_t *list)
{
	CR_CALL(setgroups, n, list);
}

fdr_export notrace int initgroups(const char *user, gid_t group)
{
	CR_CALL(initgroups, user, group);
}

fdr_export notrace int chroot(const char *path)
{
	CR_CALL(chroot, path);
}
