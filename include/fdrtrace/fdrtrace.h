/* SPDX-License-Identifier: MIT */
/*
 * fdrtrace/fdrtrace.h - the control API of libfdrtrace.
 *
 * A program built with -finstrument-functions and linked with libfdrtrace
 * (or run with LD_PRELOAD=libfdrtrace.so) is traced when FDRTRACE_MODE=fdr;
 * it needs none of this header for that. These functions let it steer the
 * recording a little. Every function is safe to call from any thread, at
 * any time: before the runtime has started, when recording is off, and
 * after it finished (they return an error then and do nothing else). None
 * may be called from a signal handler.
 */
#ifndef FDRTRACE_FDRTRACE_H
#define FDRTRACE_FDRTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define FDRTRACE_EXPORT __attribute__((visibility("default")))
#define FDRTRACE_NOTRACE __attribute__((no_instrument_function))
#else
#define FDRTRACE_EXPORT
#define FDRTRACE_NOTRACE
#endif

/**
 * fdrtrace_flush - write what is buffered now
 *
 * Hands the calling thread's partial buffer to the flush thread, asks
 * every other thread to hand over its partial buffer at its next traced
 * call, and waits (at most 5 s) until everything handed over so far is in
 * the file.
 *
 * Context: any thread; not from a signal handler.
 * Return: 0 on success; -EAGAIN before the runtime has started; -ENODEV
 * when recording is off (FDRTRACE_MODE unset, setuid program, no trace
 * file) or has finished; -EBUSY when called from inside a hook (a signal
 * handler that interrupted one); -EIO when the trace file could not be
 * written; -ETIMEDOUT when the file did not catch up within 5 s.
 */
FDRTRACE_EXPORT int fdrtrace_flush(void);

/**
 * fdrtrace_thread_name - name the calling thread in the trace
 * @name: a NUL-terminated name; the first 255 bytes are kept
 *
 * Records an FDRTRACE_EXT_THREAD_NAME extension (the thread's id and
 * @name) in the calling thread's buffer; readers show the name for every
 * record of the thread.
 *
 * Context: any thread; not from a signal handler.
 * Return: 0 on success; -EINVAL when @name is NULL; -EAGAIN before the
 * runtime has started; -ENODEV when recording is off or has finished;
 * -EBUSY when called from inside a hook; -ENOBUFS when no buffer was free
 * (the pool is exhausted: the name is lost).
 */
FDRTRACE_EXPORT int fdrtrace_thread_name(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* FDRTRACE_FDRTRACE_H */
