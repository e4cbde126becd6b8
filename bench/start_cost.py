#!/usr/bin/env python3
"""bench/start_cost.py - what libfdrtrace adds to a process's start and exit.

usage: bench/start_cost.py BUILDDIR [--runs N] [--lib LIBFDRTRACE.so]... [--json]

Two workloads, each run N times (default 200) per configuration, the
configurations interleaved run by run (A B C A B C ...) so that a drift of
the machine's speed touches them all alike; each run is timed whole, from
posix_spawn to its reaping (time.perf_counter_ns):

  (a) /bin/true, an uninstrumented program: plain; with the library
      preloaded and FDRTRACE_MODE unset ("off"); preloaded with
      FDRTRACE_MODE=fdr ("fdr"). Nothing instrumented runs, so the runtime
      should cost no more than loading it.
  (b) BUILDDIR/bench/start_tiny (main calling one function 100 times,
      -finstrument-functions, not linked with the library): untraced
      (glibc's no-op hooks); preloaded, off; preloaded, FDRTRACE_MODE=fdr
      (a trace written).

--lib may be given more than once (say, a build of the previous commit and
this one): each library is one more pair of "off"/"fdr" configurations,
run interleaved with the others. Every run writes its trace (if any) to a
temporary directory, removed after each run; verbosity=0.

Printed: per configuration, the median wall time, its 10th and 90th
percentile (ms) and the ratio of medians to the plain/untraced run of the
same workload; for a traced ("fdr") run, also the ratio to the same
library's "off" run ("x off"): the program as built for fdrtrace (linked
with the library, or under `fdrtrace record`, which preloads it) run
without tracing, the baseline a user who turns tracing on compares with; then the median CPU time (user + system of the process and
its threads, from wait4) and its ratio, which a busy machine disturbs far
less than the wall time (a traced run hands work to its flush thread and
waits for it: on a loaded machine each hand-over waits for a CPU).
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time


def one_run(argv, env, cwd):
    """Wall ms and CPU ms (user + system of the child, its threads included)."""
    t0 = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, env)
    _, st, ru = os.wait4(pid, 0)
    t1 = time.perf_counter_ns()
    if not os.WIFEXITED(st) or os.WEXITSTATUS(st) != 0:
        sys.exit(f"{argv[0]}: status {st} (env {sorted(k for k in env if 'FDR' in k)})")
    return (t1 - t0) / 1e6, (ru.ru_utime + ru.ru_stime) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--lib", action="append", default=[])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--dir", help="where the traces go (default: the temp dir, TMPDIR)")
    a = ap.parse_args()
    libs = a.lib or [os.path.join(a.build, "runtime", "libfdrtrace.so")]
    libs = [os.path.abspath(l) for l in libs]
    tiny = os.path.abspath(os.path.join(a.build, "bench", "start_tiny"))
    base = {k: v for k, v in os.environ.items() if not k.startswith("FDRTRACE_")
            and k != "LD_PRELOAD"}
    work = tempfile.mkdtemp(prefix="fdrtrace-startcost-", dir=a.dir)
    base["FDRTRACE_OPTIONS"] = f"logfile_base={work}/ verbosity=0"
    workloads = {"(a) /bin/true": ["/bin/true"], "(b) tiny instrumented": [tiny]}
    configs = [("plain", {})]
    for i, lib in enumerate(libs):
        tag = f" [{i + 1}]" if len(libs) > 1 else ""
        configs.append((f"preloaded, off{tag}", {"LD_PRELOAD": lib}))
        configs.append((f"preloaded, fdr{tag}", {"LD_PRELOAD": lib, "FDRTRACE_MODE": "fdr"}))
    times = {(w, c): [] for w in workloads for c, _ in configs}
    cpus = {(w, c): [] for w in workloads for c, _ in configs}
    try:
        for w, argv in workloads.items():
            for c, extra in configs:	# warm-up: page cache, ccache of the loader
                one_run(argv, {**base, **extra}, work)
            for _ in range(a.runs):
                for c, extra in configs:
                    wall, cpu = one_run(argv, {**base, **extra}, work)
                    times[(w, c)].append(wall)
                    cpus[(w, c)].append(cpu)
                    for f in os.listdir(work):
                        os.unlink(os.path.join(work, f))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = {}
    if len(libs) > 1:
        for i, lib in enumerate(libs):
            print(f"[{i + 1}] {lib}")
    print(f"{a.runs} runs per configuration, interleaved; wall ms per run")
    print(f"{'workload':24}{'configuration':22}{'wall':>9}{'p10':>9}{'p90':>9}{'ratio':>8}"
          f"{'cpu':>9}{'ratio':>8}{'x off':>8}{'cpu x off':>10}")
    for w in workloads:
        ref = statistics.median(times[(w, 'plain')])
        cref = statistics.median(cpus[(w, 'plain')])
        for c, _ in configs:
            t = sorted(times[(w, c)])
            med = statistics.median(t)
            cmed = statistics.median(cpus[(w, c)])
            p10, p90 = t[len(t) // 10], t[len(t) * 9 // 10]
            off = c.replace("preloaded, fdr", "preloaded, off")
            vs_off = ""
            row = {"median_ms": med, "ratio": med / ref, "cpu_ms": cmed,
                   "cpu_ratio": cmed / cref if cref else None}
            if off != c:
                omed = statistics.median(times[(w, off)])
                ocpu = statistics.median(cpus[(w, off)])
                row["ratio_off"] = med / omed
                row["cpu_ratio_off"] = cmed / ocpu if ocpu else None
                vs_off = f"{med / omed:7.2f}x{(cmed / ocpu if ocpu else 0):9.2f}x"
            out[f"{w}: {c}"] = row
            print(f"{w:24}{c:22}{med:9.3f}{p10:9.3f}{p90:9.3f}{med / ref:7.2f}x"
                  f"{cmed:9.3f}{(cmed / cref if cref else 0):7.2f}x{vs_off}")
    if a.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    sys.exit(main())
