// SPDX-License-Identifier: MIT
/*
 * runtime/interpose/exec.c - the exec family, so that a trace is closed
 * before an exec.
 *
 * exec replaces the process image without running atexit handlers: a
 * traced program that execs would leave its trace without its last
 * buffers and without a close marker. libfdrtrace therefore defines
 * execve, execv, execvp, execvpe, execl, execlp, execle, fexecve and
 * execveat (exported: they interpose on libc's, whether the library is
 * linked or preloaded). Each finishes the trace as an exit does
 * (fdr_before_exec(): every buffer written, an FDRTRACE_EXT_EXEC record
 * naming the file, the close marker, the file closed), then calls the next definition (libc's, through
 * dlsym(RTLD_NEXT)); a program without one (fully static) gets the execve
 * system call, with the PATH search done here for the "p" variants.
 *
 * Contract: called by the program, on any thread. fdr_before_exec() does
 * nothing in a child that shares our memory without being us (vfork,
 * posix_spawn: its pid is not ours) or when recording is not on; execve
 * and execv leave the trace open for a path that does not exist or is not
 * executable (a shell's own PATH search tries several). Like
 * exit(), it is not async-signal-safe: an exec from a signal handler of a
 * traced program is not supported. When the exec fails, the trace stays
 * closed: the rest of the process is not recorded (said on stderr at
 * verbosity 1 and above). The new image, if it loads libfdrtrace (linked,
 * or LD_PRELOAD inherited), starts a trace of its own.
 */
#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "libc_next.h"
#include "lifecycle.h"
#include "say.h"
#include "state.h"

typedef int (*ex_execve_fn)(const char *, char *const[], char *const[]);
typedef int (*ex_execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*ex_fexecve_fn)(int, char *const[], char *const[]);
typedef int (*ex_execveat_fn)(int, const char *, char *const[], char *const[], int);

extern char **environ;

/* Say that the trace was closed for an exec that did not happen. */
static notrace int ex_failed(bool finished, int ret)
{
	int saved_errno = errno;

	if (finished && fdr_cfg.verbosity >= 1)
		fdr_say("fdrtrace: exec failed (%s): the trace was closed before it; "
			"the rest of this process is not recorded\n", strerrordesc_np(saved_errno));
	errno = saved_errno;
	return ret;
}

static notrace int ex_execve(const char *path, char *const argv[], char *const envp[])
{
	ex_execve_fn real;

	FDR_NEXT("execve", &real);
	if (real)
		return real(path, argv, envp);
	return (int)syscall(SYS_execve, path, argv, envp);
}

/* execvpe without libc's: the PATH search of execvp(3), ENOEXEC not retried with sh. */
static notrace int ex_search(const char *file, char *const argv[], char *const envp[])
{
	const char *path = getenv("PATH"), *p, *end;
	size_t flen = strlen(file);
	int err = ENOENT;

	if (!*file) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(file, '/'))
		return ex_execve(file, argv, envp);
	for (p = path ? path : "/bin:/usr/bin"; ; p = end + 1) {
		char buf[4096];
		size_t dlen;

		end = strchrnul(p, ':');
		dlen = (size_t)(end - p);
		if (dlen + flen + 2 <= sizeof(buf)) {
			memcpy(buf, dlen ? p : ".", dlen ? dlen : 1);
			dlen = dlen ? dlen : 1;
			buf[dlen] = '/';
			memcpy(buf + dlen + 1, file, flen + 1);
			ex_execve(buf, argv, envp);
			if (errno == EACCES)
				err = EACCES;	/* reported if no directory has it */
			else if (errno != ENOENT && errno != ENOTDIR)
				return -1;
		}
		if (!*end)
			break;
	}
	errno = err;
	return -1;
}

/*
 * A program that searches PATH itself (a shell) calls execve once per
 * directory: an attempt on a file that is not there, or that we may not
 * execute, fails without the trace being closed for it.
 */
static notrace bool ex_worth_closing(const char *path)
{
	return path && access(path, X_OK) == 0;
}

fdr_export notrace int execve(const char *path, char *const argv[], char *const envp[])
{
	bool finished = ex_worth_closing(path) && fdr_before_exec(path);

	return ex_failed(finished, ex_execve(path, argv, envp));
}

fdr_export notrace int execv(const char *path, char *const argv[])
{
	bool finished = ex_worth_closing(path) && fdr_before_exec(path);

	return ex_failed(finished, ex_execve(path, argv, environ));
}

fdr_export notrace int execvpe(const char *file, char *const argv[], char *const envp[])
{
	bool finished = fdr_before_exec(file);
	ex_execvpe_fn real;

	FDR_NEXT("execvpe", &real);
	if (real)
		return ex_failed(finished, real(file, argv, envp));
	return ex_failed(finished, ex_search(file, argv, envp));
}

fdr_export notrace int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

fdr_export notrace int fexecve(int fd, char *const argv[], char *const envp[])
{
	bool finished = fdr_before_exec("");
	ex_fexecve_fn real;

	FDR_NEXT("fexecve", &real);
	if (real)
		return ex_failed(finished, real(fd, argv, envp));
	return ex_failed(finished, (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH));
}

fdr_export notrace int execveat(int dirfd, const char *path, char *const argv[],
				char *const envp[], int flags)
{
	bool finished = fdr_before_exec(path);
	ex_execveat_fn real;

	FDR_NEXT("execveat", &real);
	if (real)
		return ex_failed(finished, real(dirfd, path, argv, envp, flags));
	return ex_failed(finished, (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags));
}

/*
 * The list forms: the arguments into an array on the stack (no malloc: a
 * vfork child may call these), then the vector forms above. EX_LIST_ARGV
 * declares @argv in the caller's frame (alloca) and reads the list from
 * @ap up to and including its NULL, so that @ap is then at what follows
 * it (execle's envp).
 */
#define EX_LIST_ARGV(argv, arg, ap)						\
	size_t n_ = 1;								\
	va_list c_;								\
										\
	va_copy(c_, ap);							\
	while (va_arg(c_, char *))						\
		n_++;								\
	va_end(c_);								\
	char **argv = alloca((n_ + 1) * sizeof(*argv));				\
										\
	argv[0] = (char *)(arg);						\
	for (size_t i_ = 1; i_ <= n_; i_++)					\
		argv[i_] = va_arg(ap, char *)

fdr_export notrace int execl(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	EX_LIST_ARGV(argv, arg, ap);
	va_end(ap);
	return execv(path, argv);
}

fdr_export notrace int execlp(const char *file, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	EX_LIST_ARGV(argv, arg, ap);
	va_end(ap);
	return execvp(file, argv);
}

fdr_export notrace int execle(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	EX_LIST_ARGV(argv, arg, ap);
	char *const *envp = va_arg(ap, char *const *);

	va_end(ap);
	return execve(path, argv, envp);
}
