#!/usr/bin/env python3
"""bench/reader_bench.py - reader throughput and peak memory, fdrtrace against
llvm-xray, on the same large trace written by LLVM XRay's own FDR runtime.

usage: bench/reader_bench.py BUILDDIR [--iters N] [--rounds R]

Builds bench/xray_workload.c with clang -fxray-instrument, runs it once to
write the trace (one thread, at most 16 buffers: llvm-xray 14 mis-sorts more),
then runs every reader R times, interleaved (A B C ... A B C ...), and prints
the median wall time, MB/s of input and peak RSS of each, and the ratio of
each llvm-xray command's median time to its fdrtrace counterpart's.
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

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(argv):
    p = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M"] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.findall(r"^TIME ([0-9.]+) (\d+)$", p.stderr, re.M)
    if p.returncode != 0 or not m:
        tail = p.stderr.strip().splitlines()[-3:]
        return None, None, f"exit {p.returncode}: {' | '.join(tail)}"
    return float(m[-1][0]), int(m[-1][1]), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    for p in ("clang", "llvm-xray", "/usr/bin/time"):
        if not shutil.which(p):
            print(f"reader_bench: {p} not found", file=sys.stderr)
            return 2
    build = os.path.abspath(a.build)
    fdr = os.path.join(build, "tools/fdrtrace/fdrtrace")
    work = tempfile.mkdtemp(prefix="fdrtrace-readerbench.")
    try:
        wl = os.path.join(work, "workload")
        subprocess.run(["clang", "-O2", "-fxray-instrument", "-fxray-instruction-threshold=1",
                        "-fxray-modes=xray-fdr", os.path.join(HERE, "xray_workload.c"), "-o", wl],
                       check=True)
        env = dict(os.environ, XRAY_OPTIONS=f"patch_premain=false xray_mode=xray-fdr "
                                             f"xray_logfile_base={work}/xr- verbosity=0")
        subprocess.run([wl, str(a.iters)], env=env, check=True, cwd=work,
                       stderr=subprocess.DEVNULL)
        trace = glob.glob(f"{work}/xr-workload.*")[0]
        size = os.path.getsize(trace)
        print(f"trace: {size} bytes, {a.iters} iterations, written by LLVM XRay FDR; "
              f"{a.rounds} rounds, interleaved")
        cmds = {
            "fdrtrace-reader (count)": [os.path.join(build, "bench/reader_count"), trace],
            "fdrtrace verify": [fdr, "verify", trace],
            "fdrtrace account": [fdr, "account", trace],
            "fdrtrace stack": [fdr, "stack", trace],
            "fdrtrace convert": [fdr, "convert", "--format", "chrome", trace, "-o", "/dev/null"],
            "llvm-xray fdr-dump": ["llvm-xray", "fdr-dump", trace],
            "llvm-xray account": ["llvm-xray", "account", f"-instr_map={wl}", trace],
            "llvm-xray stack": ["llvm-xray", "stack", f"-instr_map={wl}", trace],
            "llvm-xray convert": ["llvm-xray", "convert", f"-instr_map={wl}",
                                  "-output-format=trace_event", trace],
        }
        res = {n: [] for n in cmds}
        for _ in range(a.rounds):
            for name, argv in cmds.items():
                t, rss, err = timed(argv)
                if err:
                    print(f"  {name}: failed ({err})")
                else:
                    res[name].append((t, rss))
        print(f"{'reader':26s} {'median s':>9s} {'MB/s':>9s} {'peak RSS MB':>12s}")
        med = {}
        for name, rows in res.items():
            if not rows:
                print(f"{name:26s} {'failed':>9s}")
                continue
            t = statistics.median(r[0] for r in rows)
            m = statistics.median(r[1] for r in rows) / 1024
            med[name] = t
            mbps = size / 1e6 / t if t > 0 else float("inf")
            print(f"{name:26s} {t:9.3f} {mbps:9.1f} {m:12.1f}")
        print("\nllvm-xray time / fdrtrace time (medians; 0.01 s is GNU time's resolution):")
        for ours, theirs in (("fdrtrace verify", "llvm-xray fdr-dump"),
                             ("fdrtrace account", "llvm-xray account"),
                             ("fdrtrace stack", "llvm-xray stack"),
                             ("fdrtrace convert", "llvm-xray convert")):
            if ours in med and theirs in med:
                print(f"  {theirs:20s} / {ours:18s} = {med[theirs] / max(med[ours], 0.01):7.1f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
