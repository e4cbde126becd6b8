#!/usr/bin/env python3
"""bench/firstcall.py - what the first call of a function costs, traced vs untraced.

usage: bench/firstcall.py BUILDDIR [--rounds R] [--funcs N] [--callgrind]

Runs BUILDDIR/bench/firstcall (5,000 distinct instrumented functions, each
called once in pass 1 - a new function id per call - and once more in pass 2)
untraced and with FDRTRACE_MODE=fdr, interleaved for R rounds, and prints the
medians over the rounds of:

  extra ns per new function  ((pass1 - pass2) traced - (pass1 - pass2) untraced) / N,
                             each pass the sum of its fastest 99% of calls (on a
                             shared 2-core machine the slowest 1% is preemption;
                             calls of 5 us or more are counted in their own rows):
                             what a first call costs more than a later one, beyond
                             what it costs without tracing (cold code)
  first-call median/p99/max  per-call times of pass 1 (ns, the clock's cost included)
  known-call median/p99/max  the same for pass 2
  pass-1 page faults         minor faults of the calling thread during pass 1
  peak RSS growth            VmHWM after pass 2 (and an fdrtrace_flush(), so that the
                             names are looked up) - VmHWM before pass 1, with N and
                             with N/2 functions; the difference over N/2 is the
                             memory per function, without the fixed costs (the
                             module's symbol index is read whole, whatever is called)

With --callgrind it also counts instructions (valgrind --tool=callgrind,
inclusive cost of first_pass() and second_pass()): instructions per new
function beyond a known one, traced minus untraced. Timing-free, so it is
the number to trust when the machine is busy.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile


def clean_env(env):
    full = dict(os.environ)
    full.pop("FDRTRACE_MODE", None)
    full.pop("FDRTRACE_OPTIONS", None)
    full.update(env)
    return full


def clean_dir(work):
    for f in os.listdir(work):
        if f.endswith(".fdr") or f.startswith("cg."):
            os.unlink(os.path.join(work, f))


def run(exe, env, funcs, work):
    p = subprocess.run([exe, str(funcs)], env=clean_env(env), capture_output=True, text=True,
                       cwd=work, check=True)
    clean_dir(work)
    return {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", p.stdout)}


def callgrind(exe, env, funcs, work):
    """Inclusive instructions of first_pass() and second_pass()."""
    out = os.path.join(work, "cg.out")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", exe,
                    str(funcs)], env=clean_env(env), capture_output=True, check=True, cwd=work)
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], capture_output=True,
                         text=True, check=True).stdout
    clean_dir(work)
    ir = {}
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+)\s.*\b(first_pass|second_pass)\b", line)
        if m and m.group(2) not in ir:
            ir[m.group(2)] = int(m.group(1).replace(",", ""))
    return ir


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--funcs", type=int, default=5000)
    ap.add_argument("--callgrind", action="store_true")
    a = ap.parse_args()
    exe = os.path.abspath(os.path.join(a.build, "bench", "firstcall"))
    res = {"untraced": [], "traced": []}
    envs = {"untraced": {}, "traced": {"FDRTRACE_MODE": "fdr"}}
    half = {"untraced": [], "traced": []}
    with tempfile.TemporaryDirectory(prefix="fdrtrace-firstcall-") as work:
        for _ in range(a.rounds):
            for name, env in envs.items():
                res[name].append(run(exe, env, a.funcs, work))
                half[name].append(run(exe, env, a.funcs // 2, work))
        cg = {name: callgrind(exe, env, a.funcs, work) for name, env in envs.items()} \
            if a.callgrind else None
    n = res["traced"][0]["funcs"]

    def med(name, key):
        return statistics.median(r[key] for r in res[name])

    def trimmed(r, p):
        return r[f"pass{p}_trim_ns"]

    extra = statistics.median(
        ((trimmed(t, 1) - trimmed(t, 2)) - (trimmed(u, 1) - trimmed(u, 2))) / n
        for t, u in zip(res["traced"], res["untraced"]))
    print(f"{n} functions, {a.rounds} rounds, medians over rounds")
    print(f"{'':34}{'untraced':>12}{'traced':>12}")
    rows = [("pass 1 total (us)", "pass1_ns", 1e-3), ("pass 2 total (us)", "pass2_ns", 1e-3),
            ("pass 1 calls >= 5 us", "pass1_slow", 1), ("pass 2 calls >= 5 us", "pass2_slow", 1),
            ("first call median (ns)", "pass1_median", 1), ("first call p99 (ns)", "pass1_p99", 1),
            ("first call max (ns)", "pass1_max", 1), ("known call median (ns)", "pass2_median", 1),
            ("known call p99 (ns)", "pass2_p99", 1), ("known call max (ns)", "pass2_max", 1),
            ("pass 1 page faults (this thread)", "pass1_faults", 1),
            ("pass 2 page faults (this thread)", "pass2_faults", 1)]
    for label, key, scale in rows:
        print(f"{label:34}{med('untraced', key) * scale:12.0f}{med('traced', key) * scale:12.0f}")
    print(f"{'peak RSS growth, N funcs (KiB)':34}{med('untraced', 'hwm_delta_kb'):12.0f}"
          f"{med('traced', 'hwm_delta_kb'):12.0f}")
    hmed = {k: statistics.median(r["hwm_delta_kb"] for r in v) for k, v in half.items()}
    print(f"{'peak RSS growth, N/2 funcs (KiB)':34}{hmed['untraced']:12.0f}{hmed['traced']:12.0f}")
    slope = {k: (med(k, "hwm_delta_kb") - hmed[k]) * 1024 / (n - n // 2) for k in envs}
    print(f"{'RSS per function, N vs N/2 (B)':34}{slope['untraced']:12.1f}{slope['traced']:12.1f}")
    print(f"extra ns per new function (beyond a known one and beyond untraced, fastest 99% "
          f"of calls): {extra:.0f}")
    if cg:
        per = {k: (v["first_pass"] - v["second_pass"]) / n for k, v in cg.items()}
        print(f"callgrind: instructions per call, first pass - second pass: untraced "
              f"{per['untraced']:.1f}, traced {per['traced']:.1f}; a new function costs "
              f"{per['traced'] - per['untraced']:.1f} instructions more than a known one")


if __name__ == "__main__":
    sys.exit(main())
