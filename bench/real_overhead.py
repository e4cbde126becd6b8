#!/usr/bin/env python3
"""bench/real_overhead.py - what tracing costs on real programs (Lua, zstd).

usage: bench/real_overhead.py BUILDDIR [--rounds R] [--lua-scale S] [--zstd-mib M]
                               [--only lua|zstd|bash] [--no-uftrace] [--gcc-only]

Fetches and builds the Lua 5.4 interpreter and zstd from Debian's source
packages exactly as the 'real' test suite does (tests/real/real.py, sharing
its cache in BUILDDIR/tests/real/cache), then runs each program's workload
(tests/real/workload.lua; zstd -3 -T2 compressing then decompressing M MiB)
under every configuration, interleaved (A B C ... A B C ...) for R rounds:

  plain gcc / plain clang   no instrumentation (gcc -O2 / clang -O2)
  gcc, recording off        -finstrument-functions, libfdrtrace linked,
                            FDRTRACE_MODE unset: the hooks' floor
  fdrtrace linked, gcc      -finstrument-functions, libfdrtrace linked
  ... auto_exclude          the same with auto_exclude (real.EXCL_OPTIONS)
  fdrtrace record, gcc      the same objects unlinked, `fdrtrace record`
                            (LD_PRELOAD)
  fdrtrace linked, clang    -finstrument-functions-after-inlining
  ... on_full=wait          the same two with on_full=wait, when the
                            runtime has it
  uftrace record, gcc       the unlinked gcc build (where uftrace is installed)
  XRay FDR, clang           -fxray-instrument -fxray-instruction-threshold=1,
                            every call kept (tests/real/xray_shim.c)

--gcc-only keeps the gcc rows (plain, off, linked, auto_exclude); bash
(workload.bash, built by its configure) is benchmarked only with --only
bash, and always gcc only. Prints, per program, a Markdown table: median wall time of the whole
run (process start to exit, trace writing included), the median of the
per-round ratios to the plain build of the same compiler, trace size,
records and records lost (the most of any round). Traces are deleted after
each run.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "real"))
import real  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builddir")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lua-scale", type=float, default=2)
    ap.add_argument("--zstd-mib", type=int, default=8)
    ap.add_argument("--only", choices=["lua", "zstd", "bash"])
    ap.add_argument("--gcc-only", action="store_true",
                    help="only the gcc rows: plain, recording off, linked, auto_exclude")
    ap.add_argument("--bash-scale", type=float, default=1)
    ap.add_argument("--no-uftrace", action="store_true",
                    help="leave uftrace out (it takes minutes per round on zstd)")
    ap.add_argument("--tmp", default=None, help="where traces go (default: a temporary directory)")
    a = ap.parse_args()
    bd = os.path.abspath(a.builddir)
    ns = argparse.Namespace(
        fdrtrace=os.path.join(bd, "tools", "fdrtrace", "fdrtrace"),
        lib=os.path.join(bd, "runtime", "libfdrtrace.so"),
        cache=os.path.join(bd, "tests", "real", "cache"),
        srcroot=os.path.join(HERE, ".."),
        clang=shutil.which("clang") or "", llvm_xray=shutil.which("llvm-xray") or "")
    env = real.Env(ns)
    tmp = tempfile.mkdtemp(prefix="real-bench-", dir=a.tmp)
    try:
        for name in ("lua", "zstd", "bash"):
            if (a.only and a.only != name) or (not a.only and name == "bash"):
                continue
            scale = {"lua": a.lua_scale, "zstd": a.zstd_mib, "bash": a.bash_scale}[name]
            try:
                bench(env, real.PROGRAMS[name], scale, a.rounds, tmp, not a.no_uftrace,
                      a.gcc_only or name == "bash")
            except real.Skip as e:
                print("\n### %s: skipped, %s" % (name, e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def configurations(env, prog, src, uftrace, gcc_only=False):
    """[(label, binary, baseline label, mode, options, extra env)]"""
    b = lambda v: real.build(env, prog, src, v)  # noqa: E731
    cfgs = [("plain gcc -O2", b("plain"), None, None, "", None)]
    if gcc_only:
        return cfgs + [
            ("gcc -finstrument-functions, recording off", b("gcc"), "plain gcc -O2", None, "",
             None),
            ("fdrtrace linked, gcc -finstrument-functions", b("gcc"), "plain gcc -O2", "link",
             "", None),
        ] + [("fdrtrace linked, gcc, " + o, b("gcc"), "plain gcc -O2", "link", o, None)
             for o in [real.EXCL_OPTIONS, real.EXCL_OPTIONS + ";patch=off"] +
             real.EXCL_OPTIONS_ALSO]
    if env.clang:
        cfgs.append(("plain clang -O2", b("plain-clang"), None, None, "", None))
    cfgs += [
        ("fdrtrace linked, gcc -finstrument-functions", b("gcc"), "plain gcc -O2", "link", "", None),
        ("fdrtrace record (preload), gcc", b("gcc-preload"), "plain gcc -O2", "record", "", None),
    ]
    if env.clang:
        cfgs.append(("fdrtrace linked, clang -finstrument-functions-after-inlining",
                     b("clang"), "plain clang -O2", "link", "", None))
    if real.runtime_knows(env, "on_full"):
        cfgs.append(("fdrtrace linked, gcc, on_full=wait", b("gcc"), "plain gcc -O2", "link",
                     "on_full=wait", None))
        if env.clang:
            cfgs.append(("fdrtrace linked, clang, on_full=wait", b("clang"), "plain clang -O2",
                         "link", "on_full=wait", None))
    cfgs.append(("fdrtrace linked, gcc, " + real.EXCL_OPTIONS, b("gcc"), "plain gcc -O2",
                 "link", real.EXCL_OPTIONS, None))
    if not uftrace:
        pass
    elif shutil.which("uftrace"):
        cfgs.append(("uftrace record, gcc -finstrument-functions", b("gcc-preload"),
                     "plain gcc -O2", "uftrace", "", None))
    else:
        print("note: uftrace is not installed (apt-get install uftrace): no uftrace row")
    if env.clang:
        cfgs.append(("LLVM XRay FDR, clang -fxray-instrument (every call)", b("xray"),
                     "plain clang -O2", "xray", "", None))
    return cfgs


def run_once(env, prog, wl, cfg, tmp):
    """Wall seconds of one workload run, trace bytes, records, lost."""
    label, binary, _, mode, options, _ = cfg
    td = os.path.join(tmp, "traces")
    wd = os.path.join(tmp, "wd")
    shutil.rmtree(td, ignore_errors=True)
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(td)
    os.makedirs(wd)
    e = dict(os.environ)
    for k in ("FDRTRACE_MODE", "FDRTRACE_OPTIONS", "LD_PRELOAD", "XRAY_OPTIONS"):
        e.pop(k, None)
    if mode == "link":
        e["FDRTRACE_MODE"] = "fdr"
        e["FDRTRACE_OPTIONS"] = ("logfile_base=%s/ %s %s" % (td, prog.trace_options,
                                                              options)).strip()
    if mode == "xray":
        e["XRAY_OPTIONS"] = ("patch_premain=false xray_mode=xray-fdr verbosity=0 "
                             "xray_logfile_base=%s/xray-" % td)
        # Every call kept (as fdrtrace does); XRay holds its pool in memory.
        e["REAL_XRAY_FDR_OPTIONS"] = "buffer_size=1048576:buffer_max=2048:func_duration_threshold_us=0"
    records = lost = 0
    t0 = time.monotonic()
    for cmd in wl.commands(binary):
        if mode == "record":
            cmd = [env.fdrtrace, "record", "--lib", env.lib, "-d", td, "--"] + cmd
        elif mode == "uftrace":
            cmd = ["uftrace", "record", "--no-libcall", "-d",
                   os.path.join(td, "uftrace.data.%d" % len(os.listdir(td)))] + cmd
        p = subprocess.run(cmd, cwd=wd, env=e, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0 and not prog.full_output:
            raise SystemExit("%s: %s exited %d: %s" % (label, cmd[0], p.returncode, p.stderr[-2000:]))
        for line in p.stderr.splitlines():
            m = real.EXIT_LINE.match(line)
            if m:
                records += int(m.group(2))
                lost += int(m.group(3))
    secs = time.monotonic() - t0
    size = 0
    for root, _, files in os.walk(td):
        for f in files:
            path = os.path.join(root, f)
            size += os.path.getsize(path)
            if mode == "link" and prog.trace_options and f.endswith(".fdr"):
                # quiet runs (bash: verbosity=0) print no exit line: the close's totals
                info = subprocess.run([env.fdrtrace, "info", path], stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True).stdout
                m = re.search(r"^closed:\s+yes, \w+: (\d+) (?:function )?records \((\d+) "
                              r"dropped\)", info, re.M)
                if m:
                    records += int(m.group(1))
                    lost += int(m.group(2))
    return secs, size, records, lost


def bench(env, prog, scale, rounds, tmp, uftrace, gcc_only=False):
    src = real.fetch(env, prog)
    wl = real.Workload(env, prog, scale)
    cfgs = configurations(env, prog, src, uftrace, gcc_only)
    times = {c[0]: [] for c in cfgs}
    ratios = {c[0]: [] for c in cfgs}
    extra = {c[0]: (0, 0, 0) for c in cfgs}
    recs_of = {c[0]: [] for c in cfgs}
    for r in range(rounds):
        this = {}
        for c in cfgs:
            secs, size, recs, lost = run_once(env, prog, wl, c, tmp)
            this[c[0]] = secs
            times[c[0]].append(secs)
            s0, r0, l0 = extra[c[0]]
            extra[c[0]] = (max(s0, size), max(r0, recs), max(l0, lost))
            recs_of[c[0]].append(recs)
        for c in cfgs:
            base = c[2] or c[0]
            ratios[c[0]].append(this[c[0]] / this[base])
        print("round %d/%d done" % (r + 1, rounds), file=sys.stderr)
    what = ("workload.lua %g" % scale if prog.name == "lua"
            else "workload.bash %g" % scale if prog.name == "bash"
            else "zstd -3 -T2 -B512KiB then -d -T2, %d MiB" % scale)
    print("\n### %s (%s), %d rounds\n" % (prog.name, what, rounds))
    print("| configuration | median s | × plain (same compiler) | trace MB | records | lost |")
    print("|---|---:|---:|---:|---:|---:|")
    for c in cfgs:
        size, recs, lost = extra[c[0]]
        print("| %s | %.3f | %.2f | %s | %s | %s |" % (
            c[0], statistics.median(times[c[0]]), statistics.median(ratios[c[0]]),
            "%.1f" % (size / 1e6) if size else "",
            "{:,}".format(recs).replace(",", " ") if recs else "",
            "{:,}".format(lost).replace(",", " ") if c[3] in ("link", "record") else ""))
    excl_ratios(cfgs, ratios, recs_of)
    sys.stdout.flush()


def excl_ratios(cfgs, ratios, recs_of):
    """Issue 34's measure, per round: (auto_exclude - 1) / (full - 1), both x plain.

    Which functions auto_exclude counts depends on timing (a function whose
    calls average near the threshold goes either way), and with it how many
    calls are still recorded: each round's ratio is printed with its records,
    so that a median over rounds of different decisions is seen as such.
    """
    full = next((c[0] for c in cfgs if c[3] == "link" and not c[4]
                 and c[0].startswith("fdrtrace linked, gcc")), None)
    if not full:
        return
    for c in cfgs:
        if c[3] != "link" or not c[4].startswith("auto_exclude="):
            continue
        per = [((a - 1) / (f - 1), n) for a, f, n in
               zip(ratios[c[0]], ratios[full], recs_of[c[0]]) if f > 1]
        if not per:
            continue
        print("\n(%s - 1) / (full - 1): median %.2f; per round: %s" % (
            c[4], statistics.median(p for p, _ in per),
            ", ".join("%.2f (%.2f M records)" % (p, n / 1e6) for p, n in per)))


if __name__ == "__main__":
    main()
