#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
tests/reliability/check_signal_safety.py - the fatal-signal path of
libfdrtrace calls only async-signal-safe functions.

usage: check_signal_safety.py OBJDUMP LIBFDRTRACE.so [ROOT...]

Disassembles the library, walks every function reachable from the signal
handlers (ROOT, default lc_fatal) through direct calls, tail jumps and
function addresses taken (lea/mov of a function: callbacks such as the
per-thread snapshot), and fails when it reaches a library function (PLT)
outside the allow-list below, which holds only functions POSIX lists as
async-signal-safe (signal-safety(7)) plus pure memory/string helpers, and
three calls of libunwind's local unwinder, each with its reason (LIBUNWIND).
A reached function that makes an indirect call through a pointer not taken
on this path is reported too, so a new callback cannot slip in unseen.
Prints the reached functions and PLT calls; exit 0 when safe, 1 when not.
"""
import re
import subprocess
import sys

ALLOWED = {
    # signal-safety(7)
    "write", "writev", "pwrite", "pwrite64", "pwritev", "lseek", "lseek64", "fsync",
    "fdatasync", "close", "dup2", "open", "open64", "fstat", "fstat64", "ftruncate", "linkat",
    "sigaction", "sigprocmask", "pthread_sigmask", "raise", "kill", "getpid",
    "gettid", "clock_gettime", "_exit", "abort", "sched_yield", "syscall",
    "nanosleep", "poll", "ftruncate64", "fcntl", "fcntl64", "access", "stat", "stat64",
    "sigemptyset", "sigaddset", "sigismember", "sigpending",
    # sigaction under the name libc's own callers use (runtime/signals/sigview.c)
    "__sigaction",
    # read(2)'s system call at an offset, as pwrite is write(2)'s
    "pread", "pread64",
    # the glibc manual marks these AS-Safe
    "sched_getcpu",
    # a constant table look-up (glibc 2.32+), unlike strerror
    "strerrordesc_np",
    # pure helpers, no locks or allocation
    "__errno_location", "memcpy", "memset", "memmove", "memcmp", "strlen",
    "strnlen", "strcmp", "__stack_chk_fail", "__memcpy_chk", "__memset_chk",
    "__memmove_chk",
}

# libunwind's local unwinder (runtime/unwind/native_stack.c: the faulting thread's
# stack). Not in signal-safety(7); each is documented safe in a signal handler
# for local unwinding by its man page (unw_init_local(3), unw_get_reg(3),
# unw_step(3)), and in libunwind 1.6 (Debian 12): no malloc (its pools
# mmap), its locks are taken with every signal blocked (our handler never
# interrupts a holder on its own thread), dl_iterate_phdr's loader lock is
# recursive, and its one-time set-up, done at the first stack (maybe this
# one), takes the same lock with every signal blocked, maps its pools and
# opens its pipe with system calls (mmap, pipe2, mincore) and nothing else.
# The reasons are spelled out in native_stack.c.
LIBUNWIND = {
    "_ULx86_64_init_local2": "unw_init_local2(3): from the signal's ucontext, UNW_INIT_SIGNAL_FRAME",
    "_ULx86_64_get_reg": "unw_get_reg(3): a frame's instruction pointer, from the cursor",
    "_ULx86_64_step": "unw_step(3): one frame outwards, local address space",
}
ALLOWED |= set(LIBUNWIND)

# Functions the handler's callees reach only on a branch the handler never
# takes; each with the reason. Keep this short and exact.
NOT_ON_PATH = {
    # fdr_flush_emit_funcs(rb, names): lc_dump and lc_sig_snap pass false,
    # and only the names branch scans modules and looks up symbols
    "fdr_modules_scan": "fdr_flush_emit_funcs(..., false) in the handler",
    "fdr_symbol_lookup": "fdr_flush_emit_funcs(..., false) in the handler",
}

FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
REF = re.compile(r"<([^>+]+)(\+0x[0-9a-f]+)?>")


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    objdump, lib = sys.argv[1], sys.argv[2]
    roots = sys.argv[3:] or ["lc_fatal"]
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", lib], check=True,
                         capture_output=True, text=True).stdout
    body = {}
    cur = None
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            cur = m.group(2)
            body[cur] = []
            continue
        if cur is not None and line.strip():
            body[cur].append(line)
    for r in roots:
        if r not in body:
            print(f"check_signal_safety: {lib}: no function {r} (renamed? update the roots)")
            return 1
    seen, plt, todo, indirect = set(), {}, list(roots), []
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        for line in body.get(f, []):
            ins = line.split("\t")
            text = ins[-1] if ins else line
            if re.search(r"\bcall\s+\*", text) or re.search(r"\bjmp\s+\*%", text):
                indirect.append(f)
            for m in REF.finditer(text):
                name = m.group(1)
                if name.endswith("@plt"):
                    plt.setdefault(name[:-4], set()).add(f)
                elif name in body and name != f and name not in NOT_ON_PATH:
                    todo.append(name)
    bad = {k: v for k, v in plt.items() if k not in ALLOWED}
    print("not followed: " + ", ".join(f"{k} ({v})" for k, v in NOT_ON_PATH.items()))
    for k in sorted(set(LIBUNWIND) & set(plt)):
        print(f"libunwind, allowed: {k}: {LIBUNWIND[k]}")
    print(f"reached {len(seen)} functions from {', '.join(roots)}:")
    print("  " + " ".join(sorted(seen)))
    print("library calls: " + " ".join(sorted(plt)))
    # indirect calls are fine only through pointers taken on the path itself
    if indirect:
        print("indirect calls in: " + " ".join(sorted(set(indirect))))
    if bad:
        for k, v in sorted(bad.items()):
            print(f"NOT async-signal-safe: {k} (called from {', '.join(sorted(v))})")
        return 1
    print("ok: every library call on the fatal-signal path is async-signal-safe")
    return 0


if __name__ == "__main__":
    sys.exit(main())
