#!/usr/bin/env python3
"""bench/reader_bench.py - reader throughput and peak memory, fdrtrace against
llvm-xray, on large traces written by LLVM XRay's own FDR runtime.

usage: bench/reader_bench.py BUILDDIR [--iters N] [--rounds R]
                             [--buffer-sizes 64K,32M] [--llvm-rounds L]
                             [--baseline OLD_BUILDDIR]

Builds bench/xray_workload.c with clang -fxray-instrument and, for each
buffer size (default: 64 KiB and 32 MiB), runs it once to write a trace with
buffers of that size (about 5.7 KB per iteration: 12000 iterations make
69 MB). Then runs every reader R times, interleaved (A B C ... A B C ...),
and prints a table per buffer size: the median wall time, MB/s of input,
the median peak RSS, the ratio of llvm-xray's median time to fdrtrace's
counterpart (fdr-dump/verify, account, stack, convert trace_event/convert
chrome), and each command's time over `fdrtrace account`'s. replay and
convert write to a file in the work directory (removed after each run).
llvm-xray commands run L times (default R; they take 100 times longer).

With --baseline, the fdrtrace commands of OLD_BUILDDIR run too, interleaved
with the new ones, and a before/after table follows each buffer size's.

Needs clang, llvm-xray and GNU time (/usr/bin/time).
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(argv, stdout_path=None):
    out = open(stdout_path, "wb") if stdout_path else subprocess.DEVNULL
    try:
        # wall time from here (GNU time's %e has 0.01 s steps: account's
        # 0.03 s was too coarse to take ratios of); peak RSS from GNU time
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M"] + argv,
                           stdout=out, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
    finally:
        if stdout_path:
            out.close()
    m = re.findall(r"^TIME ([0-9.]+) (\d+)$", p.stderr, re.M)
    if p.returncode != 0 or not m:
        tail = p.stderr.strip().splitlines()[-3:]
        return None, None, f"exit {p.returncode}: {' | '.join(tail)}"
    return wall, int(m[-1][1]), None


def parse_size(s):
    m = re.fullmatch(r"(\d+)([KkMm]?)", s.strip())
    if not m:
        raise argparse.ArgumentTypeError(f"bad buffer size '{s}' (e.g. 64K, 32M)")
    return int(m.group(1)) << {"": 0, "k": 10, "m": 20}[m.group(2).lower()]


def size_name(n):
    return f"{n >> 20} MB" if n >= 1 << 20 and not n % (1 << 20) else f"{n >> 10} KB"


def fdr_cmds(fdr, reader_count, trace, out):
    """The fdrtrace commands: name -> (argv, file stdout goes to, file written)."""
    return {
        "fdrtrace-reader (count)": ([reader_count, trace], None, None),
        "fdrtrace verify": ([fdr, "verify", trace], None, None),
        "fdrtrace account": ([fdr, "account", trace], None, None),
        "fdrtrace stack": ([fdr, "stack", trace], None, None),
        "fdrtrace replay > FILE": ([fdr, "replay", trace], out, out),
        "fdrtrace convert chrome": ([fdr, "convert", "--format", "chrome", trace, "-o", out],
                                    None, out),
        "fdrtrace convert perfetto": ([fdr, "convert", "--format", "perfetto", trace, "-o", out],
                                      None, out),
    }


def llvm_cmds(wl, trace):
    return {
        "llvm-xray fdr-dump": (["llvm-xray", "fdr-dump", trace], None, None),
        "llvm-xray account": (["llvm-xray", "account", f"-instr_map={wl}", trace], None, None),
        "llvm-xray stack": (["llvm-xray", "stack", f"-instr_map={wl}", trace], None, None),
        "llvm-xray convert": (["llvm-xray", "convert", f"-instr_map={wl}",
                               "-output-format=trace_event", trace], None, None),
    }


PAIRS = (("fdrtrace verify", "llvm-xray fdr-dump"),
         ("fdrtrace account", "llvm-xray account"),
         ("fdrtrace stack", "llvm-xray stack"),
         ("fdrtrace convert chrome", "llvm-xray convert"))


def run_rounds(cmds, rounds, res):
    for _ in range(rounds):
        for name, (argv, stdout_path, written) in cmds.items():
            t, rss, err = timed(argv, stdout_path)
            if written and os.path.exists(written):
                os.unlink(written)
            if err:
                print(f"  {name}: failed ({err})", flush=True)
            else:
                res.setdefault(name, []).append((t, rss))


def medians(res):
    return {n: (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows) / 1024)
            for n, rows in res.items() if rows}


def bench_size(a, build, wl, work, bs):
    fdr = os.path.join(build, "tools/fdrtrace/fdrtrace")
    # room for the whole trace (the runtime writes the buffers it used)
    bmax = max(4, (400 << 20) // bs)
    env = dict(os.environ,
               XRAY_OPTIONS=f"patch_premain=false xray_mode=xray-fdr "
                            f"xray_logfile_base={work}/xr{bs}- verbosity=0",
               WORKLOAD_XRAY_CFG=f"buffer_size={bs}:buffer_max={bmax}:"
                                 f"func_duration_threshold_us=0")
    subprocess.run([wl, str(a.iters)], env=env, check=True, cwd=work, stderr=subprocess.DEVNULL)
    trace = glob.glob(f"{work}/xr{bs}-workload.*")[0]
    size = os.path.getsize(trace)
    out = os.path.join(work, "out")
    print(f"\n== buffers of {size_name(bs)} ({bs} bytes): trace {size} bytes "
          f"({size / 1e6:.1f} MB), {a.iters} iterations, written by LLVM XRay FDR; "
          f"{a.rounds} rounds, llvm-xray {a.llvm_rounds}, interleaved", flush=True)
    new = fdr_cmds(fdr, os.path.join(build, "bench/reader_count"), trace, out)
    cmds = dict(new)
    if a.baseline:
        old = fdr_cmds(os.path.join(a.baseline, "tools/fdrtrace/fdrtrace"),
                       os.path.join(a.baseline, "bench/reader_count"), trace, out)
        cmds.update({"before: " + n: v for n, v in old.items()})
    res = {}
    run_rounds(cmds, a.rounds, res)
    run_rounds(llvm_cmds(wl, trace), a.llvm_rounds, res)
    med = medians(res)
    acc = med.get("fdrtrace account", (None,))[0]
    print(f"{'reader':28s} {'median s':>9s} {'MB/s':>8s} {'peak RSS MB':>12s} "
          f"{'llvm-xray/this':>15s} {'/account':>9s}")
    theirs = dict(PAIRS)
    for name in list(new) + list(llvm_cmds(wl, trace)):
        if name not in med:
            print(f"{name:28s} {'failed':>9s}")
            continue
        t, m = med[name]
        mbps = size / 1e6 / t if t > 0 else float("inf")
        ratio = ""
        if name in theirs and theirs[name] in med:
            ratio = f"{med[theirs[name]][0] / max(t, 1e-6):.0f}x"
        vs_acc = f"{t / acc:.2f}x" if acc and name.startswith("fdrtrace ") else ""
        print(f"{name:28s} {t:9.3f} {mbps:8.0f} {m:12.1f} {ratio:>15s} {vs_acc:>9s}")
    if a.baseline:
        print(f"\nbefore ({a.baseline}) and after ({build}), medians:")
        print(f"{'reader':28s} {'before s':>9s} {'after s':>8s} {'speedup':>8s} "
              f"{'before RSS':>11s} {'after RSS':>10s}")
        for name in new:
            if name in med and "before: " + name in med:
                (t1, m1), (t0, m0) = med[name], med["before: " + name]
                print(f"{name:28s} {t0:9.3f} {t1:8.3f} {t0 / max(t1, 1e-6):7.1f}x "
                      f"{m0:10.1f} {m1:10.1f}")
    print("(wall time measured around /usr/bin/time, which adds about a millisecond; "
          "RSS in MB of 2^20 bytes)", flush=True)
    os.unlink(trace)


def main():
    ap = argparse.ArgumentParser(description="fdrtrace and llvm-xray reading LLVM-written traces")
    ap.add_argument("build")
    ap.add_argument("--iters", type=int, default=12000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--llvm-rounds", type=int, default=None)
    ap.add_argument("--buffer-sizes", default="64K,32M",
                    help="comma-separated buffer sizes of the traces (default 64K,32M)")
    ap.add_argument("--baseline", help="another build directory to compare with")
    a = ap.parse_args()
    a.llvm_rounds = a.rounds if a.llvm_rounds is None else a.llvm_rounds
    sizes = [parse_size(s) for s in a.buffer_sizes.split(",") if s]
    for p in ("clang", "llvm-xray", "/usr/bin/time"):
        if not shutil.which(p):
            print(f"reader_bench: {p} not found", file=sys.stderr)
            return 2
    build = os.path.abspath(a.build)
    if a.baseline:
        a.baseline = os.path.abspath(a.baseline)
    work = tempfile.mkdtemp(prefix="fdrtrace-readerbench.")
    try:
        wl = os.path.join(work, "workload")
        subprocess.run(["clang", "-O2", "-fxray-instrument", "-fxray-instruction-threshold=1",
                        "-fxray-modes=xray-fdr", os.path.join(HERE, "xray_workload.c"), "-o", wl],
                       check=True)
        with open("/proc/loadavg") as f:
            print(f"load average at the start: {' '.join(f.read().split()[:3])}")
        for bs in sizes:
            bench_size(a, build, wl, work, bs)
        with open("/proc/loadavg") as f:
            print(f"\nload average at the end: {' '.join(f.read().split()[:3])}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
