/* SPDX-License-Identifier: MIT */
/*
 * fdrtrace/fdrtrace.h - the control API of libfdrtrace.
 *
 * A program built with -finstrument-functions and linked with libfdrtrace
 * (or run with LD_PRELOAD=libfdrtrace.so) is traced when FDRTRACE_MODE=fdr;
 * it needs none of this header for that. These functions let it steer the
 * recording: on and off, flush or snapshot, its own events and arguments,
 * thread names (fdrtrace-api(3), docs/recording.md). Every function is safe to call from any thread, at
 * any time: before the runtime has started, when recording is off, and
 * after it finished (they return an error then and do nothing else). None
 * may be called from a signal handler.
 *
 * The runtime starts lazily: loading the library only arms it, and the
 * first instrumented call, or the first call of one of these functions,
 * starts recording (creates the trace, starts the flush thread). A process
 * that runs neither leaves no trace. "Before the runtime has started"
 * below means before the library's constructor ran (another constructor
 * calling in early), not before the first hook.
 */
#ifndef FDRTRACE_FDRTRACE_H
#define FDRTRACE_FDRTRACE_H

#include <stddef.h>
#include <stdint.h>

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
 * Stream policy: hands the calling thread's partial buffer to the flush
 * thread, asks every other thread to hand over its partial buffer at its
 * next traced call, and waits (at most 5 s) until everything handed over
 * so far is in the file.
 *
 * Ring policy: writes a snapshot - the ring's buffers and every thread's
 * partial buffer - as a complete trace of its own,
 * <logfile_base><program>.<pid>.snap<N>.fdr, and waits (at most 5 s) for
 * it; the buffers stay in memory for the final trace.
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

/**
 * fdrtrace_start - turn recording (back) on
 *
 * Undoes fdrtrace_stop(). Recording starts on when FDRTRACE_MODE=fdr, so
 * a program calls this only after a stop. Calls that were open when
 * recording stopped may have their exits recorded without their entries
 * (readers show those as calls entered before the trace).
 *
 * Context: any thread; not from a signal handler.
 * Return: 0 on success (also when recording was on); -EAGAIN before the
 * runtime has started; -ENODEV when recording is off for good (mode unset,
 * finished, stopped on an error); -EIO after a write error.
 */
FDRTRACE_EXPORT int fdrtrace_start(void);

/**
 * fdrtrace_stop - turn recording off, for every thread, until fdrtrace_start()
 *
 * The hooks stay in place and cost about as much as empty hooks (one load
 * and a branch). The API's events are still recorded while stopped; the
 * trace is still written at exit.
 *
 * Context: any thread; not from a signal handler.
 * Return: 0 on success (also when already stopped); -EAGAIN before the
 * runtime has started; -ENODEV when recording is off or has finished.
 */
FDRTRACE_EXPORT int fdrtrace_stop(void);

/**
 * fdrtrace_custom_event - put the application's bytes in the trace
 * @data: the event's bytes (may be NULL when @len is 0)
 * @len: how many; at most buffer_size / 2 - 16
 *
 * Writes a CustomEventMarker and @data in the calling thread's buffer,
 * with the time of the thread's last record. The event is never split
 * across buffers and never erased by func_duration_threshold_us.
 *
 * Context: any thread; not from a signal handler.
 * Return: 0 on success; -EINVAL when @data is NULL with a nonzero @len, or
 * starts with "FDRx" (the magic of fdrtrace's own events); -EMSGSIZE when
 * @len is larger than half a buffer less 16 bytes; -EPERM on a thread
 * that called fdrtrace_thread_ignore(); -EAGAIN, -ENODEV, -EIO, -EBUSY as
 * for fdrtrace_flush(); -ENOBUFS when no buffer was free.
 */
FDRTRACE_EXPORT int fdrtrace_custom_event(const void *data, size_t len);

/**
 * fdrtrace_typed_event - put the application's bytes in the trace, with a type
 * @type: the application's event type, shown by the readers
 * @data: the event's bytes (may be NULL when @len is 0)
 * @len: how many; at most buffer_size / 2 - 16
 *
 * Like fdrtrace_custom_event(), as a TypedEventMarker. Format version 5
 * only: version 1 has no typed events.
 *
 * Context: any thread; not from a signal handler.
 * Return: as fdrtrace_custom_event(), and -EOPNOTSUPP with format_version=1.
 */
FDRTRACE_EXPORT int fdrtrace_typed_event(uint16_t type, const void *data, size_t len);

/**
 * fdrtrace_log_arg - record an argument of the calling function
 * @value: the argument (any 64-bit value)
 *
 * Turns the function's Entry record into an Entry_Args record and appends
 * a CallArgument record with @value. Call it at the start of the function,
 * before it calls any traced function; call it again for more arguments.
 * Arguments are never erased by func_duration_threshold_us.
 *
 * Context: any thread; not from a signal handler.
 * Return: 0 on success; -ENOENT when the thread's last record is not the
 * entry of a function (or an argument after one): another traced call
 * came in between, the entry was not recorded (stopped, filtered, no
 * buffer), or the function is not instrumented; -ENODEV when recording is
 * stopped, off or finished; -ENOBUFS when the buffer is full; -EAGAIN,
 * -EIO, -EBUSY as for fdrtrace_flush().
 */
FDRTRACE_EXPORT int fdrtrace_log_arg(uint64_t value);

/**
 * fdrtrace_thread_ignore - record nothing more on the calling thread
 *
 * Hands the thread's partial buffer over and makes its hooks return
 * without recording (they cost one call more than when recording). For
 * the rest of the thread's life; other threads are not affected.
 *
 * Context: any thread; not from a signal handler.
 * Return: 0 on success; -EAGAIN, -ENODEV, -EIO, -EBUSY as for
 * fdrtrace_flush().
 */
FDRTRACE_EXPORT int fdrtrace_thread_ignore(void);

#ifdef __cplusplus
}
#endif

#endif /* FDRTRACE_FDRTRACE_H */
