#!/usr/bin/env python3
"""bench/overhead.py - cost per instrumented call, every configuration in one run.

usage: bench/overhead.py BUILDDIR [--iters N] [--rounds R] [--threads 1,2] [--callgrind]
                         [--only fdrtrace-rdtsc,fdrtrace-wait,...] [--base OLD_BUILDDIR]
                         [--config NAME=OPTIONS ...]

Builds bench/overhead/workload.c once per configuration (plain; empty hooks,
the floor; the minimal reference hooks with rdtsc and with rdtscp; fdrtrace
linked from BUILDDIR; LLVM XRay FDR), then runs the configurations
interleaved (A B C ... A B C ...) for R rounds and prints, per thread count,
the median ns per call (fdrtrace-ring-trigger-*: latency triggers, one on a
function the workload never calls, one on leaf_c, with the difference to
fdrtrace-ring per matching hook), the median of the per-round ratios to the floor, to
the reference and to XRay, the whole process's CPU time (user + system,
start-up and exit included) per call and its ratio to the reference's,
trace bytes per call, peak RSS, minor page faults of the whole process and
records dropped (the most of any round). uftrace
and LTTng-UST's cyg-profile-fast are measured where installed, each on the
same workload built with -finstrument-functions and no hooks of its own. Timing comes from the workload's own clock around its loop, so
process start-up and the final flush are excluded for every configuration.
With --callgrind it also counts instructions per call under valgrind for the
configurations valgrind can run (not rdtscp). With --base, every fdrtrace-*
configuration runs a second time as base:fdrtrace-*, linked with the
libfdrtrace of OLD_BUILDDIR (another checkout's build), interleaved with the
rest: before and after in one run. Each --config NAME=OPTIONS adds a
configuration fdrtrace-NAME, the fdrtrace build run with
FDRTRACE_OPTIONS="clock=rdtsc OPTIONS" (for instance --config
fixed128=buffer_max=128). Every fdrtrace configuration but -rdtscp and
-monotonic records with clock=rdtsc, so that its ratio to reference-rdtsc
compares like with like whatever clock=auto would take on the CPU.
"""
import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "overhead")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def build(build_dir, work, base_dir=None, extra=()):
    """Compile every configuration; return {name: (argv0, env, kind)}."""
    wl = os.path.join(SRC, "workload.c")
    rt = os.path.join(build_dir, "runtime")
    cfgs = {}
    cc = ["gcc", "-O2", "-pthread"]
    sh(cc + [wl, "-o", f"{work}/plain"])
    cfgs["plain"] = (f"{work}/plain", {}, "plain")
    sh(["gcc", "-O2", "-c", os.path.join(SRC, "hooks_empty.c"), "-o", f"{work}/hooks_empty.o"])
    sh(cc + ["-finstrument-functions", wl, f"{work}/hooks_empty.o", "-o", f"{work}/empty"])
    cfgs["empty-hooks"] = (f"{work}/empty", {}, "floor")
    for clock, flag in (("rdtsc", []), ("rdtscp", ["-DREF_RDTSCP"])):
        sh(["gcc", "-O2", "-c"] + flag + [os.path.join(SRC, "hooks_ref.c"), "-o", f"{work}/ref_{clock}.o"])
        sh(cc + ["-finstrument-functions", wl, f"{work}/ref_{clock}.o", "-o", f"{work}/ref_{clock}"])
        cfgs[f"reference-{clock}"] = (f"{work}/ref_{clock}", {}, "ref")
    sh(cc + ["-finstrument-functions", wl, "-I", os.path.join(HERE, "..", "include"),
             f"-L{rt}", f"-Wl,-rpath,{rt}", "-lfdrtrace", "-o", f"{work}/fdrtrace"])
    base = f"{work}/trace/fdrtrace."
    cfgs["fdrtrace-off"] = (f"{work}/fdrtrace", {}, "fdrtrace")
    for clock in ("rdtsc", "rdtscp", "monotonic"):
        env = {"FDRTRACE_MODE": "fdr", "FDRTRACE_OPTIONS": f"clock={clock} logfile_base={base}"}
        cfgs[f"fdrtrace-{clock}"] = (f"{work}/fdrtrace", env, "fdrtrace")
    # clock=rdtsc wherever the clock is not what is measured: "auto" takes
    # rdtscp on a CPU that has it, and every ratio here is to reference-rdtsc
    env = {"FDRTRACE_MODE": "fdr", "FDRTRACE_OPTIONS": f"clock=rdtsc policy=ring logfile_base={base}"}
    cfgs["fdrtrace-ring"] = (f"{work}/fdrtrace", env, "fdrtrace")
    # latency triggers: one on a function the workload never calls (every
    # hook keeps the fast path), one on leaf_c (2 of the 36 hooks of an
    # iteration take the slow path; it never fires: no call lasts 1 s)
    for name, glob in (("other", "no_such_function"), ("leaf_c", "leaf_c")):
        env = {"FDRTRACE_MODE": "fdr",
               "FDRTRACE_OPTIONS": f"clock=rdtsc policy=ring trigger={glob}>1s "
                                   f"logfile_base={base}"}
        cfgs[f"fdrtrace-ring-trigger-{name}"] = (f"{work}/fdrtrace", env, "fdrtrace")
    env = {"FDRTRACE_MODE": "fdr", "FDRTRACE_OPTIONS": f"clock=rdtsc on_full=wait logfile_base={base}"}
    cfgs["fdrtrace-wait"] = (f"{work}/fdrtrace", env, "fdrtrace")
    for spec in extra:
        name, _, opts = spec.partition("=")
        env = {"FDRTRACE_MODE": "fdr",
               "FDRTRACE_OPTIONS": f"clock=rdtsc {opts} logfile_base={base}"}
        cfgs[f"fdrtrace-{name}"] = (f"{work}/fdrtrace", env, "fdrtrace")
    if base_dir:
        brt = os.path.join(base_dir, "runtime")
        sh(cc + ["-finstrument-functions", wl, "-I", os.path.join(HERE, "..", "include"),
                 f"-L{brt}", f"-Wl,-rpath,{brt}", "-lfdrtrace", "-o", f"{work}/fdrtrace-base"])
        for name in [n for n in cfgs if n.startswith("fdrtrace-")]:
            cfgs["base:" + name] = (f"{work}/fdrtrace-base", cfgs[name][1], "fdrtrace")
    # peers that preload their own hooks need a build whose hooks are libc's no-op stubs
    sh(cc + ["-finstrument-functions", wl, "-o", f"{work}/nohooks"])
    if shutil.which("uftrace"):
        cfgs["uftrace"] = (f"{work}/nohooks", {"UFTRACE": "1"}, "peer")
    else:
        print("note: uftrace not installed (apt-get install uftrace), skipped")
    lttng_lib = next((p for p in ("/usr/lib/x86_64-linux-gnu/liblttng-ust-cyg-profile-fast.so.1",
                                  "/usr/lib/x86_64-linux-gnu/liblttng-ust-cyg-profile-fast.so")
                      if os.path.exists(p)), None)
    if lttng_lib and shutil.which("lttng") and shutil.which("lttng-sessiond"):
        # a session daemon of our own; "already running" is fine
        subprocess.run(["lttng-sessiond", "--daemonize"], capture_output=True)
        cfgs["lttng-ust-cyg-fast"] = (f"{work}/nohooks", {"LD_PRELOAD": lttng_lib, "LTTNG": "1"},
                                      "peer")
    else:
        print("note: LTTng-UST cyg-profile-fast or lttng-tools not installed "
              "(apt-get install liblttng-ust-dev lttng-tools), skipped")
    if shutil.which("clang"):
        sh(["clang", "-O2", "-pthread", "-fxray-instrument", "-fxray-instruction-threshold=1",
            "-fxray-modes=xray-fdr", "-DUSE_XRAY", wl, "-o", f"{work}/xray"])
        env = {"XRAY_OPTIONS": f"patch_premain=false xray_mode=xray-fdr verbosity=0 "
                               f"xray_logfile_base={work}/trace/xray-"}
        cfgs["xray-fdr"] = (f"{work}/xray", env, "xray")
    else:
        print("note: clang not found, XRay FDR skipped")
    return cfgs


def run_one(argv0, env, iters, threads, work):
    tdir = f"{work}/trace"
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(tdir)
    full = dict(os.environ)
    full.pop("FDRTRACE_MODE", None)
    full.pop("FDRTRACE_OPTIONS", None)
    full.update(env)
    if "XRAY_OPTIONS" in env:
        # enough buffer space that XRay drops nothing
        calls = iters * 36 * threads
        nbuf = max(16, (calls * 16) // (1 << 20) + 8 * threads)
        full["WORKLOAD_XRAY_CFG"] = f"buffer_size=1048576:buffer_max={nbuf}:func_duration_threshold_us=0"
    argv = ["/usr/bin/time", "-f", "RSS_KB=%M FAULTS=%R", argv0, str(iters), str(threads)]
    if full.pop("UFTRACE", None):
        argv = argv[:3] + ["uftrace", "record", "--no-pager", "-d", f"{tdir}/uftrace.data"] + argv[3:]
    lttng = full.pop("LTTNG", None)
    if lttng:
        lt = ["lttng", "--quiet"]
        subprocess.run(lt + ["create", "bench", f"--output={tdir}/lttng"], check=True)
        subprocess.run(lt + ["enable-event", "--userspace", "lttng_ust_cyg_profile_fast:*"],
                       check=True)
        subprocess.run(lt + ["start"], check=True)
    try:
        # the child's CPU time (its own waited-for children included), microseconds apart
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(argv, env=full, capture_output=True, text=True, cwd=work)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        if lttng:
            subprocess.run(["lttng", "--quiet", "destroy", "bench"], check=False)
    if p.returncode != 0:
        raise RuntimeError(f"{argv0} failed: {p.stderr}")
    ns = float(re.search(r"ns_per_call=([0-9.]+)", p.stdout).group(1))
    calls = int(re.search(r"calls_per_thread=(\d+)", p.stdout).group(1)) * threads
    rss = int(re.search(r"RSS_KB=(\d+)", p.stderr).group(1))
    faults = int(re.search(r"FAULTS=(\d+)", p.stderr).group(1))
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tdir) for f in fs)
    m = re.search(r"(\d+) (?:dropped|lost)", p.stderr)
    dropped = int(m.group(1)) if m else None
    cpu = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1e9 / calls
    return ns, size / calls if size else 0.0, rss, dropped, faults, cpu


def callgrind(cfgs, work):
    print("\ncallgrind instructions per call (iterations=20000, 1 thread):")
    res = {}
    for name, (argv0, env, kind) in cfgs.items():
        if "rdtscp" in name or kind in ("xray", "peer"):
            continue
        full = dict(os.environ)
        full.update(env)
        out = f"{work}/cg.out"
        counts = []
        for iters in (10000, 20000):  # the difference removes start-up and exit
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            argv0, str(iters), "1"], env=full, capture_output=True, cwd=work)
            txt = open(out).read()
            counts.append(int(re.search(r"^summary:\s*(\d+)", txt, re.M).group(1)))
            os.unlink(out)
        res[name] = (counts[1] - counts[0]) / (10000 * 36)
    base = res.get("plain", 0)
    for name, v in res.items():
        print(f"  {name:28s} {v:8.1f} instr/call   (+{v - base:.1f} over plain)")
    if "fdrtrace-ring-trigger-leaf_c" in res and "fdrtrace-ring" in res:
        for name in ("fdrtrace-ring-trigger-other", "fdrtrace-ring-trigger-leaf_c"):
            d = (res[name] - res["fdrtrace-ring"]) * 36
            print(f"  {name}: {d:+.1f} instr per iteration over fdrtrace-ring "
                  f"({d / 2:+.1f} per leaf_c hook)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--iters", type=int, default=300000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--base", default=None,
                    help="another build directory: its libfdrtrace runs as base:fdrtrace-*")
    ap.add_argument("--config", action="append", default=[], metavar="NAME=OPTIONS",
                    help="an extra configuration fdrtrace-NAME: the fdrtrace build with "
                         "FDRTRACE_OPTIONS=\"clock=rdtsc OPTIONS\" (repeatable)")
    ap.add_argument("--only", default="",
                    help="comma-separated configurations to run (the floor, the references "
                         "and --config ones are always run)")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="fdrtrace-overhead.")
    try:
        cfgs = build(os.path.abspath(a.build), work, a.base and os.path.abspath(a.base),
                     a.config)
        if a.only:
            keep = set(a.only.split(",")) | {"empty-hooks", "reference-rdtsc", "reference-rdtscp"}
            keep |= {"fdrtrace-" + c.partition("=")[0] for c in a.config}
            keep |= {"base:" + n for n in keep}
            cfgs = {n: c for n, c in cfgs.items() if n in keep}
        for threads in [int(t) for t in a.threads.split(",")]:
            results = {n: [] for n in cfgs}
            for _ in range(a.rounds):
                for name, (argv0, env, _) in cfgs.items():
                    results[name].append(run_one(argv0, env, a.iters, threads, work))
            print(f"\nthreads={threads} iterations={a.iters} calls/thread={a.iters * 36} "
                  f"rounds={a.rounds} (medians; ratios are medians of per-round ratios)")
            print(f"{'configuration':27s} {'ns/call':>8s} {'x floor':>8s} {'x ref':>8s} "
                  f"{'x xray':>8s} {'cpu ns':>7s} {'cpu/ref':>7s} {'B/call':>7s} {'RSS MB':>7s} "
                  f"{'faults':>7s} {'dropped':>8s}")
            for name, rows in results.items():
                def ratio(other, col=0):
                    if other not in results:
                        return float("nan")
                    return statistics.median(r[col] / o[col] for r, o in zip(rows, results[other]))
                ref = "reference-rdtscp" if "rdtscp" in name else "reference-rdtsc"
                drops = [r[3] for r in rows if r[3] is not None]
                print(f"{name:27s} {statistics.median(r[0] for r in rows):8.2f} "
                      f"{ratio('empty-hooks'):8.2f} {ratio(ref):8.2f} {ratio('xray-fdr'):8.2f} "
                      f"{statistics.median(r[5] for r in rows):7.2f} {ratio(ref, 5):7.2f} "
                      f"{statistics.median(r[1] for r in rows):7.2f} "
                      f"{statistics.median(r[2] for r in rows) / 1024:7.1f} "
                      f"{statistics.median(r[4] for r in rows):7.0f} "
                      f"{(max(drops) if drops else '-')!s:>8s}")
            if "fdrtrace-ring-trigger-leaf_c" in results:
                # 2 of an iteration's 36 hooks (leaf_c's entry and exit) take the slow path
                ring = results["fdrtrace-ring"]
                for name in ("fdrtrace-ring-trigger-other", "fdrtrace-ring-trigger-leaf_c"):
                    d = statistics.median((r[0] - o[0]) * 36 for r, o in
                                          zip(results[name], ring))
                    print(f"{name}: {d:+.1f} ns per iteration over fdrtrace-ring "
                          f"(leaf_c only: {d / 2:+.1f} ns per matching hook)")
        if a.callgrind and shutil.which("valgrind"):
            callgrind(cfgs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
