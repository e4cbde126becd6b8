#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""real.py - fdrtrace on real programs nobody here wrote (suite 'real').

Usage: real.py [paths...] PROGRAM CHECK

PROGRAM is lua (the Lua 5.4 interpreter running workload.lua), zstd
(compressing and decompressing a few MiB with two worker threads) or bash
(GNU bash running workload.bash: subshells, pipelines, descriptors, traps,
jobs, a coproc, exec, recursion, set -e; gcc builds only). Their sources
come from Debian's source packages (fetch.sh, apt-get source, which applies
Debian's patches); when they cannot be had, every check says why and exits
77 (meson's skip).

Builds (cached under --cache, so reruns only run the checks); lua's and
zstd's compiled here from a list of files, bash's by its configure (once)
and make -j2 (build_configured()):
  plain        gcc, no instrumentation: the reference output
  gcc          gcc -finstrument-functions, linked with libfdrtrace
  gcc-preload  the same objects, not linked (fdrtrace record preloads)
  clang        clang -finstrument-functions-after-inlining, linked
  clang+xray   both clang instrumentations, linked, + xray_shim.c
  xray         clang -fxray-instrument + xray_shim.c (for bench/)
  plain-clang  clang, no instrumentation (for bench/)

CHECK:
  gcc    the gcc build, linked and preloaded: output identical to the plain
         build's; every trace verifies and is closed (fdrtrace info); with
         on_full=wait (when the runtime has the option) nothing is lost,
         also written direct (direct_io=always, where the file system can)
         (bash: stdout, stderr and exit status identical, every run
         traced with verbosity=0 so that no line of the tracer's is in
         them; at least one trace per process that ran shell code; no
         exit without its entry in any trace: each fork child names the
         calls open at its fork)
  clang  the same for the clang build
  xray   one run of a build with both clang instrumentations, recorded by
         fdrtrace and by LLVM XRay FDR at once: per-function call counts of
         fdrtrace account equal llvm-xray's (functions matched by name)
  tree   the whole process tree under fdrtrace record (the gcc build,
         preloaded; bash runs workload.bash, lua and zstd two runs each
         under the system's make -j2, not instrumented): output and status
         identical to an untraced run; a trace per process that ran instrumented code, none for
         uninstrumented programs once the runtime starts lazily (reported
         until then); fdrtrace info DIR's tree as the processes' parents;
         the summary's counts the sum of the traces'
  excl   auto_exclude's per-function call counts (counted calls included)
         equal a full lossless trace's, for every function: lua (hash seed
         fixed) and zstd (-T1), ASLR off, two full runs first shown to make
         the same calls (see check_excl())
  loss   the loss invariant (lua, zstd, bash): from a starved pool, no
         function's count, total or self time is greater than in the
         lossless runs of the same workload, beyond their spread (counts:
         exactly, for the fixed-seed Lua) and, for times, a stated margin
         (stream and ring policy; every starved run must lose; see
         check_loss())
"""
import argparse
import concurrent.futures
import contextlib
import difflib
import fcntl
import filecmp
import glob
import hashlib
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def log(*a):
    print(*a, flush=True)


def run(cmd, **kw):
    """Run cmd; raise Fail with its output when it fails."""
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    p = subprocess.run(cmd, **kw)
    if p.returncode != 0:
        out = (p.stdout or b"")[-3000:] + (p.stderr or b"")[-3000:]
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        raise Fail("%s: exit %d\n%s" % (" ".join(map(str, cmd)), p.returncode, out))
    return p


@contextlib.contextmanager
def locked(path):
    """An exclusive lock on path: tests that share a build take turns."""
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


# ---------------------------------------------------------------- programs

class Program:
    """How to build one real program from its Debian source tree."""
    name = ""
    package = ""

    def sources(self, src):
        raise NotImplementedError

    def cflags(self, src, objdir):
        raise NotImplementedError

    libs = []
    # configure arguments, for a program built by its configure and make
    # (build_configured()) rather than from sources() (build())
    configure = None
    # FDRTRACE_OPTIONS every traced run of it starts with
    trace_options = ""
    # the least number of traces a traced run must leave
    min_traces = 1
    # its stderr and exit status are output too (a status other than 0 is
    # not a failure); else only stdout is, and it must exit 0
    full_output = False
    # the loss check runs it on one CPU (see check_loss())
    loss_one_cpu = True
    # the loss check's lossless runs for the ring policy's starved ones
    # (None: the stream policy's)
    loss_ring_lossless = None

    def prepare(self, src, objdir):
        pass


class Lua(Program):
    name, package = "lua", "lua5.4"
    libs = ["-lm", "-ldl"]

    def sources(self, src):
        return sorted(f for f in glob.glob(os.path.join(src, "src", "*.c"))
                      if os.path.basename(f) != "luac.c")

    def cflags(self, src, objdir):
        # As upstream's "make linux" (Debian's patch adds a libtool build
        # and a generated multiarch header, which prepare() writes), with
        # the string hash seed fixed: Lua seeds it from the time and the
        # addresses of a heap and a stack variable, so two runs hash alike
        # only with it fixed and the addresses too (setarch -R, as the loss
        # check runs it). Lua 5.4.4 calls luai_makeseed(L).
        return ["-std=gnu99", "-O2", "-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX",
                "-Dluai_makeseed(L)=0u", "-I" + objdir]

    def prepare(self, src, objdir):
        with open(os.path.join(objdir, "lua5.4-deb-multiarch.h"), "w") as f:
            f.write('#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n')


class Zstd(Program):
    name, package = "zstd", "zstd"
    libs = ["-pthread"]

    def sources(self, src):
        files = sorted(glob.glob(os.path.join(src, "programs", "*.c")))
        for d in ("common", "compress", "decompress", "dictBuilder"):
            files += sorted(glob.glob(os.path.join(src, "lib", d, "*.c")))
        files += glob.glob(os.path.join(src, "lib", "decompress", "*.S"))
        return files

    def cflags(self, src, objdir):
        # As upstream's programs/Makefile for the zstd binary, without the
        # optional zlib/lzma/lz4 formats and the legacy decoders.
        return ["-O3", "-DXXH_NAMESPACE=ZSTD_", "-DZSTD_MULTITHREAD",
                "-DZSTD_LEGACY_SUPPORT=0", "-pthread",
                "-I" + os.path.join(src, "lib"),
                "-I" + os.path.join(src, "lib", "common"),
                "-I" + os.path.join(src, "programs")]


class Bash(Program):
    """GNU bash, built by its own configure and make (not from a list of
    files): one configure, then each build in the same directory, the
    instrumentation and libfdrtrace given to make (see build_configured())."""
    name, package = "bash", "bash"
    # No bash malloc (the system's, as Debian's), no gettext, and no
    # readline, history or help text: the workload is not interactive, and
    # each of them is only more to configure and compile.
    configure = ["--without-bash-malloc", "--disable-nls", "--disable-readline",
                 "--disable-history", "--disable-help-builtin", "CFLAGS=-O2"]
    # stdout, stderr and the exit status are the output; a line of the
    # tracer's on stderr would change it, so every traced run is quiet
    trace_options = "verbosity=0"
    full_output = True
    # the least number of traces a traced run leaves: the processes of
    # workload.bash that run shell code and exit (it counts them)
    min_traces = 109
    # Not on one CPU in the loss check: there each fork child runs on the
    # CPU its parent waits for, inside whatever call of the parent's is
    # open (add_unwind_protect, after make_child), and a child with a
    # starved pool runs longer: the parent's call took 20 ms and more in
    # every one of six starved runs against 7 ms at most in six lossless
    # ones (then with a growing pool), with nothing lost inside it. On two
    # CPUs the pool still starves (48-80% lost in the runs seen).
    loss_one_cpu = False
    # Ring runs are slower than stream ones in bash's fork children, where
    # nothing is lost: in the ring runs, echo_builtin took 0.028-0.061 s in
    # all (four buffers, a child's trace whole) and 0.024-0.046 s (1024
    # buffers, nothing lost in any process) against 0.012 s in a stream
    # lossless run. So the ring runs are held to ring runs with a pool
    # that overwrites nothing (64 MiB: bash's shell writes some 20 MB;
    # 256 buffers lost 1.35 M records).
    loss_ring_lossless = "policy=ring buffer_max=1024"

    def make_vars(self, v, fdr_link):
        """make's variables for build v: ADDON_CFLAGS, the compiler flags
        of bash's own code and libraries (not of the generators it builds
        and runs), and LOCAL_LIBS, libraries linked after its objects."""
        inst = ["ADDON_CFLAGS=-finstrument-functions"]
        return {"plain": [], "gcc": inst + ["LOCAL_LIBS=" + fdr_link],
                "gcc-preload": inst + ["LOCAL_LIBS="]}[v]

    def relink(self, name):
        """make's arguments linking the objects as name (make variables do
        not make it recompile)."""
        return ["Program=" + name, name]


PROGRAMS = {"lua": Lua(), "zstd": Zstd(), "bash": Bash()}


# ---------------------------------------------------------------- builds

class Env:
    def __init__(self, a):
        self.a = a
        self.fdrtrace = os.path.abspath(a.fdrtrace)
        self.libdir = os.path.dirname(os.path.abspath(a.lib))
        self.lib = os.path.abspath(a.lib)
        self.cache = os.path.abspath(a.cache)
        self.clang = a.clang if a.clang and os.access(a.clang, os.X_OK) else ""
        self.xray = a.llvm_xray if a.llvm_xray and os.access(a.llvm_xray, os.X_OK) else ""
        os.makedirs(self.cache, exist_ok=True)


def variant_flags(env, v):
    """(compiler, compile flags, link flags) of build variant v."""
    fdr_link = ["-L" + env.libdir, "-lfdrtrace", "-Wl,-rpath," + env.libdir]
    if v == "plain":
        return "gcc", [], []
    if v == "plain-clang":
        return env.clang, [], []
    if v == "gcc":
        return "gcc", ["-finstrument-functions"], fdr_link
    if v == "gcc-preload":
        return "gcc", ["-finstrument-functions"], []
    if v == "clang":
        return env.clang, ["-finstrument-functions-after-inlining"], fdr_link
    x = ["-fxray-instrument", "-fxray-instruction-threshold=1"]
    if v == "xray":
        return env.clang, x, x
    if v == "clang+xray":
        # Both at once: one run, recorded by fdrtrace and by XRay.
        return env.clang, ["-finstrument-functions-after-inlining"] + x, x + fdr_link
    raise ValueError(v)


def build(env, prog, src, v):
    """Build variant v of prog (cached); return the binary's path."""
    if prog.configure is not None:
        return build_configured(env, prog, src, v)
    if v in ("plain-clang", "clang", "xray", "clang+xray") and not env.clang:
        raise Skip("clang is not installed")
    cc, cflags, ldflags = variant_flags(env, v)
    objkey = "gcc" if v == "gcc-preload" else v
    objdir = os.path.join(env.cache, "build", prog.name, objkey)
    os.makedirs(objdir, exist_ok=True)
    binary = os.path.join(env.cache, "build", prog.name, v, prog.name)
    os.makedirs(os.path.dirname(binary), exist_ok=True)
    flags = prog.cflags(src, objdir) + cflags
    with locked(objdir + ".lock"):
        prog.prepare(src, objdir)
        objs = []
        jobs = []
        for f in prog.sources(src):
            o = os.path.join(objdir, os.path.basename(f).rsplit(".", 1)[0] + ".o")
            cmd = [cc] + flags + ["-c", f, "-o", o]
            objs.append(o)
            stamp = o + ".cmd"
            key = " ".join(cmd)
            if os.path.exists(o) and os.path.exists(stamp) and open(stamp).read() == key:
                continue
            jobs.append((cmd, stamp, key))
        if jobs:
            log("building %s/%s: %d files with %s" % (prog.name, v, len(jobs), " ".join(cflags) or "no instrumentation"))

        def compile_one(job):
            cmd, stamp, key = job
            run(cmd)
            with open(stamp, "w") as s:
                s.write(key)
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
            for fut in [ex.submit(compile_one, j) for j in jobs]:
                fut.result()
        extra = []
        if "xray" in v:
            shim = os.path.join(objdir, "xray_shim.o")
            run([cc, "-O2", "-c", os.path.join(HERE, "xray_shim.c"), "-o", shim])
            extra = [shim]
        # libfdrtrace after the objects: before them, the linker binds the
        # hooks to glibc's no-op __cyg_profile_func_* instead.
        link = [cc] + objs + extra + ldflags + prog.libs + ["-o", binary + ".tmp"]
        key = " ".join(link)
        if extra:
            key += " shim:" + hashlib.sha256(open(os.path.join(HERE, "xray_shim.c"), "rb").read()).hexdigest()
        stamp = binary + ".cmd"
        if not (jobs or not os.path.exists(binary) or not os.path.exists(stamp)
                or open(stamp).read() != key):
            return binary
        run(link)
        os.replace(binary + ".tmp", binary)
        with open(stamp, "w") as s:
            s.write(key)
    return binary


def build_configured(env, prog, src, v):
    """Build variant v (plain, gcc or gcc-preload) of a program built by
    its configure and make (cached); return the binary's path.

    configure runs once, in one build directory outside the sources (for
    bash, 33 s of the 80 a cold build took on two idle cores), with the
    plain build's flags; each variant is then made in that directory with
    the make variables prog.make_vars() gives. plain and gcc recompile
    everything (make clean between them); gcc-preload relinks gcc's objects
    without libfdrtrace."""
    if v not in ("plain", "gcc", "gcc-preload"):
        raise Skip("%s is built with gcc only (%s build asked)" % (prog.name, v))
    fdr_link = "-L%s -lfdrtrace -Wl,-rpath,%s" % (env.libdir, env.libdir)
    make_vars = {k: prog.make_vars(k, fdr_link) for k in ("plain", "gcc", "gcc-preload")}
    base = os.path.join(env.cache, "build", prog.name)
    objdir = os.path.join(base, "obj")
    binary = os.path.join(base, v, prog.name)
    os.makedirs(os.path.dirname(binary), exist_ok=True)
    conf = [os.path.join(src, "configure"), "-q"] + prog.configure
    key = " ".join(conf) + " | make " + " ".join(make_vars[v])
    stamp = binary + ".cmd"

    def cached(path, k):
        return os.path.exists(path) and os.path.exists(path + ".cmd") and \
            open(path + ".cmd").read() == k

    with locked(base + ".lock"):
        if cached(binary, key):
            return binary
        conf_key = " ".join(conf)
        if not cached(os.path.join(objdir, "config.status"), conf_key):
            log("configuring %s: %s" % (prog.name, " ".join(prog.configure)))
            shutil.rmtree(objdir, ignore_errors=True)
            os.makedirs(objdir)
            t0 = time.monotonic()
            run(conf, cwd=objdir)
            log("configured %s in %.0f s" % (prog.name, time.monotonic() - t0))
            with open(os.path.join(objdir, "config.status.cmd"), "w") as f:
                f.write(conf_key)
        made = os.path.join(objdir, ".made-variant")
        objkey = "gcc" if v == "gcc-preload" else v
        objs_key = " ".join(conf) + " | make " + " ".join(make_vars[objkey])
        if not (os.path.exists(made) and open(made).read() == objs_key):
            log("building %s/%s: configure's make -j2 with %s"
                % (prog.name, objkey, " ".join(make_vars[objkey]) or "no instrumentation"))
            with contextlib.suppress(OSError):
                os.remove(made)
            t0 = time.monotonic()
            run(["make", "-s", "clean"], cwd=objdir)
            run(["make", "-s", "-j2"] + make_vars[objkey], cwd=objdir)
            log("built %s/%s in %.0f s" % (prog.name, objkey, time.monotonic() - t0))
            with open(made, "w") as f:
                f.write(objs_key)
        if v == "gcc-preload":
            # the same objects, linked under another name without libfdrtrace
            run(["make", "-s"] + prog.relink(prog.name + "-unlinked") + make_vars[v], cwd=objdir)
            built = os.path.join(objdir, prog.name + "-unlinked")
        else:
            built = os.path.join(objdir, prog.name)
        shutil.copy2(built, binary + ".tmp")
        os.replace(binary + ".tmp", binary)
        with open(stamp, "w") as f:
            f.write(key)
    return binary


def fetch(env, prog):
    p = subprocess.run(["bash", os.path.join(HERE, "fetch.sh"), env.cache, prog.package],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(p.stderr)
    if p.returncode == SKIP:
        raise Skip(re.sub(r"^SKIP: ", "", p.stdout.strip()))	# main() says SKIP
    if p.returncode != 0:
        raise Fail("fetch.sh %s failed (%d): %s" % (prog.package, p.returncode, p.stdout))
    return p.stdout.strip().splitlines()[-1]


# ---------------------------------------------------------------- workloads

def zstd_input(env, mib):
    """A deterministic, compressible input of mib MiB (cached)."""
    path = os.path.join(env.cache, "zstd-input-%d.bin" % mib)
    if os.path.exists(path):
        return path
    # Text-like data: words drawn from a fixed vocabulary by a fixed LCG,
    # with runs of binary noise, so every zstd stage has work.
    vocab = [("%x" % (i * 2654435761 % 99991)).encode() * (1 + i % 3) for i in range(4000)]
    out = bytearray()
    x = 1
    while len(out) < mib << 20:
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        r = x >> 33
        if r % 17 == 0:
            out += hashlib.sha256(out[-64:]).digest()
        else:
            out += vocab[r % len(vocab)] + (b"\n" if r % 11 == 0 else b" ")
    with open(path + ".tmp", "wb") as f:
        f.write(out[:mib << 20])
    os.replace(path + ".tmp", path)
    return path


class Workload:
    """One run of a real program: commands to run in a fresh directory and
    the files whose contents are its output."""

    def __init__(self, env, prog, scale, wrap=()):
        """wrap: a command each of the program's runs is run under (e.g.
        setarch -R)."""
        self.env, self.prog, self.scale, self.wrap = env, prog, scale, list(wrap)

    def commands(self, binary):
        if self.prog.name == "lua":
            return [[binary, os.path.join(HERE, "workload.lua"), str(self.scale)]]
        if self.prog.name == "bash":
            return [[binary, os.path.join(HERE, "workload.bash"), str(int(self.scale))]]
        data = zstd_input(self.env, int(self.scale))
        # -B: 512 KiB jobs (the least), so both workers of -T2 get several.
        return [[binary, "-q", "-f", "-3", "-T2", "-B512KiB", data, "-o", "out.zst"],
                [binary, "-q", "-f", "-d", "-T2", "out.zst", "-o", "out.dec"]]

    def output(self, wd, stdouts):
        """What must not change: stdout (bash's: stdout, stderr and exit
        status), and zstd's files (as digests)."""
        res = list(stdouts)
        if self.prog.name == "zstd":
            if not filecmp.cmp(os.path.join(wd, "out.dec"), zstd_input(self.env, int(self.scale)),
                               shallow=False):
                raise Fail("zstd's decompressed output is not its input")
            for f in ("out.zst", "out.dec"):
                with open(os.path.join(wd, f), "rb") as fh:
                    res.append(f + " " + hashlib.sha256(fh.read()).hexdigest())
        return res


EXIT_LINE = re.compile(r"^fdrtrace: (.*?): (\d+) records, (\d+) (?:dropped|lost)")


RECORD_LINE = re.compile(r"^fdrtrace record: ")
# bash 5.2's own race: a child reaped by the SIGCHLD handler before the
# wait that looks for it. Seen in 2 of 25 runs of the plain build beside two
# busy loops (no fdrtrace in the process), so it is left out of every run's
# stderr, traced or not, before the comparison.
BASH_WAIT_RACE = re.compile(r"^.*: wait_for: No record of process \d+$")


def run_workload(wl, binary, wd, tracing=None, options="", record=False, env_extra=None,
                 fsize=None):
    """Run wl's commands with binary in a new directory wd. tracing: None
    (no FDRTRACE_MODE), or a trace directory; fsize: a file size limit
    (ulimit -f, bytes) for the commands. Returns (output, exit lines,
    stderr text). A program whose stderr and status are output
    (full_output) is traced with its trace_options (verbosity=0: no exit
    lines, which are then None; so under fdrtrace record, which runs them
    quiet), and fdrtrace record's own lines, which follow the program's
    stderr, are not part of it. With record, each command is recorded into
    a run directory of its own, tracing/runK."""
    if tracing is not None and wl.prog.trace_options:
        options = (wl.prog.trace_options + " " + options).strip()
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    env = dict(os.environ)
    for k in ("FDRTRACE_MODE", "FDRTRACE_OPTIONS", "LD_PRELOAD", "XRAY_OPTIONS"):
        env.pop(k, None)
    if env_extra:
        env.update(env_extra)
    stdouts, exits, errs = [], [], ""
    for k, cmd in enumerate(wl.commands(binary)):
        cmd = wl.wrap + cmd
        if tracing is not None:
            os.makedirs(tracing, exist_ok=True)
            if record:
                # a run directory per command (record moves an earlier run aside)
                cmd = [wl.env.fdrtrace, "record", "--lib", wl.env.lib,
                       "-d", os.path.join(tracing, "run%d" % k)] + \
                      sum((["-O", o] for o in options.split()), []) + ["--"] + cmd
            else:
                env["FDRTRACE_MODE"] = "fdr"
                env["FDRTRACE_OPTIONS"] = ("logfile_base=%s/ %s" % (tracing, options)).strip()
        limit = None
        if fsize:
            def limit():
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        p = subprocess.run(cmd, cwd=wd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, preexec_fn=limit)
        if wl.prog.full_output:
            own = "".join(l for l in p.stderr.splitlines(True)
                          if not (record and RECORD_LINE.match(l)) and
                          not BASH_WAIT_RACE.match(l.rstrip("\n")))
            stdouts.append("%sstderr:\n%sexit status %d\n" % (p.stdout, own, p.returncode))
        elif p.returncode != 0:
            raise Fail("%s exited %d:\n%s" % (" ".join(cmd), p.returncode, p.stderr[-3000:]))
        else:
            stdouts.append(p.stdout)
        errs += p.stderr
        for line in p.stderr.splitlines():
            m = EXIT_LINE.match(line)
            if m:
                exits.append((m.group(1), int(m.group(2)), int(m.group(3)), line))
    verbosity = [o for o in options.split() if o.startswith("verbosity=")][-1:]
    # fdrtrace record runs the processes quiet (verbosity=0) unless told
    if verbosity == ["verbosity=0"] or (record and not verbosity):
        exits = None
    return wl.output(wd, stdouts), exits, errs


# ---------------------------------------------------------------- trace checks

def runtime_knows(env, option):
    """Does the runtime being tested have this option? (It warns about
    unknown options, so a suite run against an older runtime says what it
    could not check.)"""
    cfg = os.path.join(env.a.srcroot, "runtime", "config.def")
    try:
        return re.search(r"\b%s\b" % option, open(cfg).read()) is not None
    except OSError:
        return False


def check_traces(env, tracedir, exits, want_lossless=False, what="", min_traces=1):
    """Every trace in tracedir verifies and is closed, and there are at
    least min_traces; each process printed an exit line naming it (exits
    None: the run was quiet, verbosity=0, and the totals are the close
    markers'). want_lossless: nothing dropped, of any reason. Returns
    (records, dropped, traces)."""
    traces = sorted(glob.glob(os.path.join(tracedir, "**", "*.fdr"), recursive=True))
    if not traces:
        raise Fail("%s: no trace written in %s" % (what, tracedir))
    if len(traces) < min_traces:
        raise Fail("%s: %d traces, fewer than the %d processes that ran instrumented code"
                   % (what, len(traces), min_traces))
    if exits is not None and len(exits) != len(traces):
        raise Fail("%s: %d traces but %d exit lines" % (what, len(traces), len(exits)))
    records = dropped = 0
    for t in traces:
        run([env.fdrtrace, "verify", t])
        info = run([env.fdrtrace, "info", t], text=True).stdout
        closed = re.search(r"^closed:\s+(.*)$", info, re.M)
        if not closed or not closed.group(1).startswith("yes"):
            raise Fail("%s: %s is not closed cleanly:\n%s" % (what, t, info))
        drops = re.search(r"^drops:\s+(.*)$", info, re.M)
        if want_lossless and (not drops or not drops.group(1).startswith("none")):
            raise Fail("%s: %s lost records with on_full=wait:\n%s" % (what, t, info))
        if exits is None:
            m = re.match(r"yes, \w+: (\d+) (?:function )?records \((\d+) dropped\)", closed.group(1))
            if not m:
                raise Fail("%s: %s: cannot read its close marker: %s" % (what, t, closed.group(1)))
            records += int(m.group(1))
            dropped += int(m.group(2))
    for path, recs, drop, line in exits or []:
        if os.path.abspath(path) not in map(os.path.abspath, traces):
            raise Fail("%s: exit line names %s, not a trace of this run: %s" % (what, path, line))
        records += recs
        dropped += drop
    if want_lossless and dropped:
        raise Fail("%s: %d records lost with on_full=wait" % (what, dropped))
    return records, dropped, traces


def check_fork_stacks(env, traces, what):
    """Each of bash's fork children names the calls open at its fork (a
    stack record at its trace's start), so that no exit in any trace lacks
    its entry: before, each subshell's trace began with the exits of
    make_child and its callers, 132 in a run of workload.bash."""
    unmatched = 0
    for t in traces:
        err = run([env.fdrtrace, "account", t], text=True).stderr
        m = re.search(r"unmatched: (\d+) exits without entry", err)
        if not m:
            raise Fail("%s: %s: account printed no unmatched counts:\n%s" % (what, t, err))
        unmatched += int(m.group(1))
    if unmatched:
        raise Fail("%s: %d exits without entry in %d traces: a fork child's calls open at "
                   "the fork are not all named" % (what, unmatched, len(traces)))
    log("%-28s every exit has its entry: the fork children name the calls open at the fork"
        % what)


def trace_bytes(traces):
    return sum(os.path.getsize(t) for t in traces)


def output_diff(ref, out):
    """A unified diff of two runs' outputs (lists of texts)."""
    lines = list(difflib.unified_diff("".join(ref).splitlines(True), "".join(out).splitlines(True),
                                      "untraced", "traced"))
    text = "".join(lines[:80])
    return text if lines else "%r\n%r" % (ref, out)


def check_build(env, prog, src, variant, scale):
    """CHECK gcc or clang: output unchanged, traces valid and closed, and
    nothing lost with on_full=wait."""
    wl = Workload(env, prog, scale)
    work = os.path.join(env.cache, "work", prog.name + "-" + variant)
    ref_bin = build(env, prog, src, "plain")
    binary = build(env, prog, src, variant)
    ref, _, _ = run_workload(wl, ref_bin, work + "/ref")
    if prog.full_output:
        log("reference output (plain gcc build): %d lines, %s"
            % (sum(x.count("\n") for x in ref), ref[-1].strip().splitlines()[-1]))
    else:
        log("reference output (plain gcc build): %s"
            % " | ".join(x.strip().replace("\n", "; ") for x in ref))

    def traced(label, b, options="", record=False, lossless=False):
        slug = re.sub(r"[^a-z0-9]+", "-", label)
        td = work + "/traces-" + slug
        shutil.rmtree(td, ignore_errors=True)
        out, exits, errs = run_workload(wl, b, work + "/run-" + slug, tracing=td,
                                        options=options, record=record)
        if out != ref:
            raise Fail("%s: output differs from the untraced build's:\n%s"
                       % (label, output_diff(ref, out)))
        recs, drops, traces = check_traces(env, td, exits, lossless, label, prog.min_traces)
        log("%-28s output identical; %d trace(s), verified and closed: %d records, %d lost, %.1f MB"
            % (label, len(traces), recs, drops, trace_bytes(traces) / 1e6))
        if prog.name == "bash" and label.endswith("linked, defaults"):
            check_fork_stacks(env, traces, label)
        shutil.rmtree(td, ignore_errors=True)
        return recs, drops, errs

    traced(variant + " linked, defaults", binary)
    if variant == "gcc":
        pre = build(env, prog, src, "gcc-preload")
        out, _, _ = run_workload(wl, pre, work + "/run-untraced")
        if out != ref:
            raise Fail("the instrumented, unlinked build differs untraced:\n%s"
                       % output_diff(ref, out))
        traced("gcc fdrtrace record (preload)", pre, record=True)
    if runtime_knows(env, "on_full"):
        traced(variant + " linked, on_full=wait", binary, options="on_full=wait", lossless=True)
        log("on_full=wait: checked, nothing lost")
    else:
        log("on_full=wait: NOT CHECKED, the runtime has no on_full option yet")
    if variant == "gcc":
        check_file_size_limit(env, wl, binary, work, ref)
    if variant == "gcc" and runtime_knows(env, "direct_io"):
        # the whole trace written direct (what direct_io=auto ends with on a
        # big trace): output unchanged, traces whole and closed, nothing lost
        if prog.full_output:
            # the runtime's messages (verbosity=2 says whether it wrote
            # direct) would be in the output: a quiet run, and whether the
            # file system takes direct writes asked of it here
            traced("gcc linked, direct_io=always", binary,
                   options="on_full=wait direct_io=always", lossless=True)
            if takes_direct_writes(work):
                log("direct_io=always: checked, nothing lost (the file system takes "
                    "direct writes; that the runtime made them is not shown at verbosity=0)")
            else:
                log("direct_io=always: NOT CHECKED, %s's file system takes no direct writes "
                    "(the traces were written through the page cache)" % work)
            shutil.rmtree(work, ignore_errors=True)
            return
        _, _, errs = traced("gcc linked, direct_io=always", binary,
                            options="on_full=wait direct_io=always verbosity=2", lossless=True)
        if "written direct (O_DIRECT)" in errs:
            log("direct_io=always: checked, written direct, nothing lost")
        else:
            log("direct_io=always: NOT CHECKED, %s's file system takes no direct writes "
                "(the traces were written through the page cache)" % work)
    shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------- process trees

RECORD_SUMMARY = re.compile(r"^fdrtrace record: (\d+) process(?:es)? traced, (\d+) records, (\d+) lost",
                            re.M)


def runtime_starts_lazily(env):
    """Does the runtime leave no trace for a process that runs no
    instrumented code (lazy start)? Asked of the library itself: an
    uninstrumented program run with it preloaded."""
    with tempfile.TemporaryDirectory() as d:
        e = dict(os.environ, FDRTRACE_MODE="fdr", LD_PRELOAD=env.lib,
                 FDRTRACE_OPTIONS="logfile_base=%s/ verbosity=0" % d)
        subprocess.run(["/bin/true"], env=e)
        return not glob.glob(os.path.join(d, "*.fdr"))


def read_index(rundir):
    """The rows of a run directory's index: dicts by the header's names."""
    with open(os.path.join(rundir, "index")) as f:
        lines = [l.rstrip("\n") for l in f if not l.startswith("#")]
    head = lines[0].split("\t")
    return [dict(zip(head, l.split("\t"))) for l in lines[1:]]


def tree_depths(rows):
    """Each trace's depth in the process tree, from the index's pids and
    ppids as fdrtrace info DIR builds it: a trace's parent is the latest
    trace of its ppid begun before it; a later image of the same pid (an
    exec) is its earlier image's sibling."""
    rows = sorted(rows, key=lambda r: (int(r["start_ns"]), int(r["pid"]), r["trace"]))
    depth = {}
    # several top-level processes sit under a line for their untraced parent
    tops = sum(1 for i, r in enumerate(rows)
               if not any(q["pid"] in (r["pid"], r["ppid"]) for q in rows[:i]))
    top = 1 if tops > 1 else 0
    for i, r in enumerate(rows):
        def latest(pid):
            c = [q for q in rows[:i] if q["pid"] == pid]
            return c[-1] if c else None
        prev = latest(r["pid"])
        if prev is not None and prev["ended"].startswith("exec'd"):
            depth[r["trace"]] = depth[prev["trace"]]
            continue
        parent = latest(r["ppid"])
        depth[r["trace"]] = depth[parent["trace"]] + 1 if parent is not None else \
            top if r["ppid"] != "0" else 0
    return depth


def info_depths(text):
    """The depth of each trace in fdrtrace info DIR's tree (its indent)."""
    depth = {}
    for line in text.splitlines():
        m = re.match(r"^ *\d+ .{69}( *)(?:exec: )?.*  \[([^]]+)\]$", line)
        if m:
            depth[m.group(2)] = len(m.group(1)) // 2
    return depth


class MakeWorkload(Workload):
    """The workload's runs driven by GNU make -j2 (the system's, not
    instrumented): each command a target writing its own output file,
    printed in order at the end."""

    def commands(self, binary):
        runs = Workload.commands(self, binary)
        if self.prog.name == "lua":	# two interpreters at once, smaller
            runs = [[binary, os.path.join(HERE, "workload.lua"), str(self.scale * k)]
                    for k in (0.5, 1)]
        mk = ["all: " + " ".join("out%d.txt" % k for k in range(len(runs))),
              "\tcat " + " ".join("out%d.txt" % k for k in range(len(runs)))]
        for k, cmd in enumerate(runs):
            # zstd's second command reads the first's file
            dep = " out%d.txt" % (k - 1) if self.prog.name == "zstd" and k else ""
            mk += ["out%d.txt:%s" % (k, dep), "\t%s >out%d.txt" % (" ".join(cmd), k)]
        path = os.path.join(self.env.cache, "work", self.prog.name + "-tree.mk")
        with open(path, "w") as f:
            f.write("\n".join(mk) + "\n")
        return [["make", "-s", "-j2", "-f", path]]


def check_tree(env, prog, src, scale):
    """CHECK tree: the workload recorded whole by fdrtrace record (the
    instrumented build, preloaded): output and exit status identical to an
    untraced run; one run directory holding a trace per process that ran
    instrumented code and, with a lazy-start runtime, none for the programs
    it ran that are not instrumented (before, their empty traces are
    counted and reported); fdrtrace info DIR's tree matches the processes'
    parents; the summary's counts are the sum of the traces' own."""
    wl = Workload(env, prog, scale) if prog.name == "bash" else MakeWorkload(env, prog, scale)
    if prog.name != "bash" and not shutil.which("make"):
        raise Skip("no make to drive %s" % prog.name)
    work = os.path.join(env.cache, "work", prog.name + "-tree")
    os.makedirs(work, exist_ok=True)
    ref_bin = build(env, prog, src, "plain")
    pre = build(env, prog, src, "gcc-preload")
    ref, _, _ = run_workload(wl, ref_bin, work + "/ref")
    td = work + "/traces"
    shutil.rmtree(td, ignore_errors=True)
    t0 = time.monotonic()
    out, _, errs = run_workload(wl, pre, work + "/run", tracing=td, record=True)
    took = time.monotonic() - t0
    if out != ref:
        raise Fail("fdrtrace record: output differs from the untraced build's:\n%s"
                   % output_diff(ref, out))
    if re.search(r"^fdrtrace(?! record: )", errs, re.M):
        raise Fail("a line of the tracer's in the program's stderr:\n%s" % errs[-3000:])
    rundir = os.path.join(td, "run0")
    summary = RECORD_SUMMARY.findall(errs)
    if len(summary) != 1:
        raise Fail("fdrtrace record printed %d summaries, not 1:\n%s" % (len(summary), errs[-3000:]))
    procs, records, lost = map(int, summary[0])
    rows = read_index(rundir)
    files = sorted(os.path.basename(t) for t in glob.glob(os.path.join(rundir, "*.fdr")))
    if sorted(r["trace"] for r in rows) != files:
        raise Fail("the index names %d traces, the directory holds %d" % (len(rows), len(files)))
    # the counts over the run: the sum of each trace's close record (info FILE)
    closed_sum = 0
    for f in files:
        info = run([env.fdrtrace, "info", os.path.join(rundir, f)], text=True).stdout
        m = re.search(r"^closed:\s+yes, \w+: (\d+) (?:function )?records", info, re.M)
        if not m:
            raise Fail("%s is not closed:\n%s" % (f, info))
        closed_sum += int(m.group(1))
    if closed_sum != records or sum(int(r["records"]) for r in rows) != records:
        raise Fail("the summary says %d records; the traces hold %d, the index %d"
                   % (records, closed_sum, sum(int(r["records"]) for r in rows)))
    # which processes: the shell's (its build's path), and the others
    ours = [r for r in rows if os.path.basename(pre) in r["command"].split(" ")[0]
            or r["trace"].startswith("fdrtrace.%s." % os.path.basename(pre))]
    others = [r for r in rows if r not in ours]
    # bash: the processes that ran shell code; lua, zstd: make's two runs
    want_traces = prog.min_traces if prog.name == "bash" else 2
    if len(ours) < want_traces:
        raise Fail("%d traces of %s, fewer than the %d processes that ran its code"
                   % (len(ours), prog.name, want_traces))
    lazy = runtime_starts_lazily(env)
    if others and lazy:
        raise Fail("%d traces of programs that are not instrumented: %s"
                   % (len(others), ", ".join(sorted(set(r["command"].split(" ")[0]
                                                        for r in others)))))
    # the tree: every process but the first has a traced parent, and info
    # DIR indents each trace as its parent's child
    top = [r for r in rows if not any(q["pid"] == r["ppid"] for q in rows)]
    if prog.name == "bash" and len(top) != 1:
        raise Fail("%d processes whose parent is not traced, not 1 (the shell): %s"
                   % (len(top), [(r["pid"], r["ppid"], r["command"][:60]) for r in top]))
    if prog.name != "bash" and len(top) != len(ours):
        raise Fail("%d of %d processes of %s have a traced parent: make's children should not"
                   % (len(ours) - len(top), len(ours), prog.name))
    info = run([env.fdrtrace, "info", rundir], text=True).stdout
    want, got = tree_depths(rows), info_depths(info)
    if want != got:
        bad = sorted(t for t in set(want) | set(got) if want.get(t) != got.get(t))
        raise Fail("info DIR's tree differs from the index's parents for %d traces (%s):\n%s"
                   % (len(bad), ", ".join("%s %s/%s" % (t, want.get(t), got.get(t))
                                          for t in bad[:5]), info[:4000]))
    log("fdrtrace record, whole tree: output identical; %d processes traced (%d traces: "
        "%d of %s, %d of other programs%s), %d records, %d lost; tree %d deep; %.1f s"
        % (procs, len(rows), len(ours), prog.name, len(others),
           "" if lazy or not others else ", empty: the runtime starts eagerly", records, lost,
           max(want.values()) + 1, took))
    shutil.rmtree(work, ignore_errors=True)


def takes_direct_writes(d):
    """Can a file in directory d be opened O_DIRECT?"""
    path = os.path.join(d, ".direct-probe")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600)
        os.close(fd)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)


def check_file_size_limit(env, wl, binary, work, ref):
    """Under a file size limit the program's own files fit in and the
    traces do not: the output is unchanged, every trace verifies, and one
    that hit the limit ends with the close "stopped" naming it (counting
    what the file holds), which account reports."""
    biggest = max([os.path.getsize(os.path.join(d, f))
                   for d, _, fs in os.walk(work + "/ref") for f in fs] + [0])
    limit = max(8 << 20, 2 * biggest)
    td = work + "/traces-fsize"
    shutil.rmtree(td, ignore_errors=True)
    out, _, errs = run_workload(wl, binary, work + "/run-fsize", tracing=td, fsize=limit)
    if out != ref:
        raise Fail("ulimit -f %d: output differs from the untraced build's:\n%s"
                   % (limit, output_diff(ref, out)))
    traces = sorted(glob.glob(os.path.join(td, "*.fdr")))
    stopped = 0
    for t in traces:
        if os.path.getsize(t) > limit:
            raise Fail("ulimit -f %d: %s is past the limit" % (limit, t))
        run([env.fdrtrace, "verify", t])
        info = run([env.fdrtrace, "info", t], text=True).stdout
        closed = re.search(r"^closed:\s+yes, (\w+): (\d+) (?:function )?records", info, re.M)
        funcs = re.search(r"^  function\s+(\d+)", info, re.M)
        if not closed:
            raise Fail("ulimit -f %d: %s has no close marker:\n%s" % (limit, t, info))
        if closed.group(1) != "stopped":
            continue
        if not re.search(r"^stopped by:\s+a write failed \(File too large\)", info, re.M):
            raise Fail("ulimit -f: %s does not say why it stopped:\n%s" % (t, info))
        if not funcs or funcs.group(1) != closed.group(2):
            raise Fail("ulimit -f: %s: the close counts %s records, the file holds %s"
                       % (t, closed.group(2), funcs.group(1) if funcs else "none"))
        acc = run([env.fdrtrace, "account", t], text=True).stderr
        if "recording stopped early, a write failed (File too large)" not in acc:
            raise Fail("ulimit -f: account does not say recording stopped:\n%s" % acc)
        stopped += 1
    if not stopped:
        raise Fail("ulimit -f %d: no trace reached the limit (%d traces): nothing checked"
                   % (limit, len(traces)))
    log("%-28s output identical; %d of %d trace(s) stopped at the limit, closed \"stopped\" "
        "(File too large), verified" % ("gcc linked, ulimit -f %dM" % (limit >> 20), stopped,
                                         len(traces)))
    shutil.rmtree(td, ignore_errors=True)


# ---------------------------------------------------------------- account

def fdr_account(env, trace):
    """{name: (count, total, self)} of a trace: fdrtrace account's text table
    in seconds (its CSV, llvm-xray's columns, has no self time)."""
    out = run([env.fdrtrace, "account", "-q", "--seconds", trace], text=True).stdout
    return parse_account_text(out)


ACCOUNT_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(?:\d+\s+){0,2}\[[^]]*\]\s+(\S+)\s+(\S+)\s+(.*)$")


def seconds(text):
    """A time column of account: '-' (no timed call) is no time; a self time
    marked '*' is that of the calls whose self is known (some calls were
    timed across a loss: their self time is unknown, and left out); one
    marked '+' that of the timed calls (the others were counted only:
    auto_exclude)."""
    text = text.rstrip("*+")
    return 0.0 if text == "-" else float(text)


def parse_account_text(out):
    """fdrtrace account's rows: funcid count [spanning] [unwound] [min, med,
    90p, 99p, max] total self function (the spanning column, calls open across
    a loss, and the unwound one, calls ended by an outer exit, appear when
    there are some). Functions with the same name add up."""
    res = {}
    for line in out.splitlines():
        m = ACCOUNT_ROW.match(line)
        if not m:
            continue
        name = m.group(5).strip()
        a = res.get(name, (0, 0.0, 0.0))
        res[name] = (a[0] + int(m.group(2)), a[1] + seconds(m.group(3)),
                     a[2] + seconds(m.group(4)))
    if not res and "function" not in out:
        raise Fail("fdrtrace account printed no table:\n" + out[:2000])
    return res


def counts_from_csv(text, name_col="function", count_col="count"):
    """{name: count} from llvm-xray account's (or fdrtrace's) CSV; functions
    with the same name (static functions of different files) add up."""
    import csv
    res = {}
    rows = csv.DictReader(text.splitlines())
    for r in rows:
        n = r[name_col]
        res[n] = res.get(n, 0) + int(r[count_col])
    return res


def xray_counts(env, binary, trace, how):
    """{name: calls} of an XRay FDR trace, as llvm-xray reads it.

    A one-thread trace: llvm-xray account's count column (-d: as fdrtrace
    account, an exit deeper in the stack, longjmp, ends the calls above it).
    llvm-xray 14's account cannot read a multi-thread FDR trace (its loader
    orders the records thread by thread, and account stops at the first
    record older than one it has seen), so there: the function-enter
    records of llvm-xray convert, per function (in these programs every
    call returns before the process exits, so entries = calls)."""
    info = run([env.fdrtrace, "info", trace], text=True).stdout
    m = re.search(r"^threads:\s+(\d+)", info, re.M)
    if m and int(m.group(1)) == 1:
        how.add("account")
        out = run([env.xray, "account", "-instr_map=" + binary, "-format=csv",
                   "-deduce-sibling-calls", trace], text=True).stdout
        return counts_from_csv(out)
    how.add("convert (entries)")
    p = subprocess.Popen([env.xray, "convert", "-instr_map=" + binary, "-symbolize",
                          "-output-format=yaml", trace], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    res = {}
    pat = re.compile(r"function: ([^,]+), .* kind: function-enter")
    for line in p.stdout:
        m = pat.search(line)
        if m:
            n = m.group(1).strip("'\"")
            res[n] = res.get(n, 0) + 1
    err = p.stderr.read()
    if p.wait() != 0:
        raise Fail("llvm-xray convert %s failed: %s" % (trace, err[-2000:]))
    return res


def check_xray(env, prog, src, scale):
    """CHECK xray: fdrtrace's per-function counts equal LLVM XRay FDR's.

    One binary carries both instrumentations (clang
    -finstrument-functions-after-inlining for fdrtrace, -fxray-instrument
    for XRay, at the same post-inlining points) and one run is recorded by
    both tracers at once: two runs of Lua or of zstd -T2 do not make the
    same calls (Lua's string hashes and cache depend on addresses, zstd's
    threads on timing), one run does. Both must be lossless."""
    if not env.xray:
        raise Skip("llvm-xray is not installed")
    wl = Workload(env, prog, scale)
    work = os.path.join(env.cache, "work", prog.name + "-xray")
    shutil.rmtree(work, ignore_errors=True)
    binary = build(env, prog, src, "clang+xray")
    ref, _, _ = run_workload(wl, build(env, prog, src, "plain"), work + "/ref")

    # fdrtrace lossless: on_full=wait when there is one, else a pool far
    # larger than the trace (and the run is rejected if anything was lost).
    opts = "on_full=wait" if runtime_knows(env, "on_full") else "buffer_size=1M buffer_max=2048"
    # XRay FDR keeps every buffer in memory until the flush at exit and
    # drops what does not fit: 8 MiB buffers, 16 of them per process (the
    # workloads here write well under that; llvm-xray 14 misreads a thread
    # with more than 16 buffers).
    xd = work + "/xray"
    os.makedirs(xd)
    xenv = {"XRAY_OPTIONS": "patch_premain=false xray_mode=xray-fdr verbosity=0 "
                            "xray_logfile_base=%s/xray-" % xd,
            "REAL_XRAY_FDR_OPTIONS": "buffer_size=8388608:buffer_max=16:func_duration_threshold_us=0"}
    td = work + "/fdrtrace"
    out, exits, errs = run_workload(wl, binary, work + "/run", tracing=td, options=opts,
                                    env_extra=xenv)
    if out != ref:
        raise Fail("clang+xray build: output differs from the untraced build's")
    if "xray_shim" in errs:
        raise Fail("XRay: " + errs)
    recs, drops, traces = check_traces(env, td, exits, False, "clang+xray")
    if drops:
        raise Fail("fdrtrace lost %d records in the comparison run (%s)" % (drops, opts))
    xtraces = sorted(glob.glob(os.path.join(xd, "xray-*")))
    if len(xtraces) != len(traces):
        raise Fail("XRay wrote %d traces, fdrtrace %d" % (len(xtraces), len(traces)))
    xbytes = trace_bytes(xtraces)
    if xbytes > 0.9 * (128 << 20) * len(xtraces):
        raise Fail("XRay's trace filled its pool (%d bytes): it may have dropped calls" % xbytes)

    ours, theirs = {}, {}
    for t in traces:
        csv_ = run([env.fdrtrace, "account", "-q", "-f", "csv", t], text=True).stdout
        for k, v in counts_from_csv(csv_).items():
            ours[k] = ours.get(k, 0) + v
    how = set()
    for t in xtraces:
        for k, v in xray_counts(env, binary, t, how).items():
            theirs[k] = theirs.get(k, 0) + v
    same = [n for n in ours if theirs.get(n) == ours[n]]
    diff = sorted(set(ours) | set(theirs), key=lambda n: -max(ours.get(n, 0), theirs.get(n, 0)))
    diff = [n for n in diff if ours.get(n) != theirs.get(n)]
    log("one run, %d fdrtrace records (%.1f MB), %.1f MB of XRay trace" % (recs, trace_bytes(traces) / 1e6, xbytes / 1e6))
    log("llvm-xray read XRay's traces with: %s" % ", ".join(sorted(how)))
    log("xray: %d functions in fdrtrace's account, %d in llvm-xray's; %d identical counts "
        "(%d calls), %d differ" % (len(ours), len(theirs), len(same),
                                  sum(ours[n] for n in same), len(diff)))
    for n in diff[:40]:
        log("  %-40s fdrtrace %s  llvm-xray %s" % (n, ours.get(n, "-"), theirs.get(n, "-")))
    shutil.rmtree(work, ignore_errors=True)
    if diff:
        raise Fail("%d functions' counts differ from LLVM XRay FDR's" % len(diff))
    if len(same) < 20:
        raise Fail("only %d functions compared: the comparison proves nothing" % len(same))


# ---------------------------------------------------------------- auto_exclude

# What check_excl() and bench/real_overhead.py run with: calls of a
# function whose first 2048 (the default) took under 1 us on average are
# counted, not recorded (docs/performance.md: 300 ns and 1 us measured).
EXCL_OPTIONS = "auto_exclude=1us"
EXCL_OPTIONS_ALSO = ["auto_exclude=300ns"]


def excl_run(env, binary, args, wd, options):
    """One traced run of binary args in a fresh directory wd, with ASLR off
    (setarch -R: the same addresses every run, so that Lua's tables of
    objects iterate in the same order); returns (stdout, [traces])."""
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    e = dict(os.environ)
    for k in ("FDRTRACE_MODE", "FDRTRACE_OPTIONS", "LD_PRELOAD", "XRAY_OPTIONS"):
        e.pop(k, None)
    e["FDRTRACE_MODE"] = "fdr"
    e["FDRTRACE_OPTIONS"] = ("logfile_base=%s/ %s" % (wd, options)).strip()
    p = subprocess.run(["setarch", "-R"] + args(binary), cwd=wd, env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise Fail("%s exited %d:\n%s" % (" ".join(args(binary)), p.returncode, p.stderr[-3000:]))
    traces = sorted(glob.glob(os.path.join(wd, "*.fdr")))
    if not traces:
        raise Fail("no trace in %s:\n%s" % (wd, p.stderr[-2000:]))
    return p.stdout, traces


def excl_counts(env, traces):
    """{name: calls} over the traces (fdrtrace account: counted calls in
    the count), every trace verified and lossless."""
    res = {}
    for t in traces:
        run([env.fdrtrace, "verify", t])
        info = run([env.fdrtrace, "info", t], text=True).stdout
        drops = re.search(r"^drops:\s+(.*)$", info, re.M)
        if not drops or not drops.group(1).startswith("none"):
            raise Fail("%s lost records:\n%s" % (t, info))
        m = re.search(r"^auto_exclude:.*?(\d+) calls? neither recorded nor counted", info, re.M)
        if m:
            raise Fail("%s: %s calls neither recorded nor counted" % (t, m.group(1)))
        for k, v in fdr_account(env, t).items():
            res[k] = res.get(k, 0) + v[0]
    return res


def check_excl(env, prog, src, scale):
    """CHECK excl: auto_exclude's per-function call counts equal those of a
    full lossless trace of the same workload, for every function (counted
    calls included).

    Two runs must make the same calls: the gcc build with Lua's hash seed
    fixed (Lua.cflags), ASLR off (setarch -R), and zstd on one thread and
    with no asynchronous reads (-T1 --no-asyncio:
    with two, the workers' waits depend on timing). Two full runs are
    compared first: if they differ, the program is not deterministic here
    and the comparison would prove nothing (a failure, with the functions
    that differ)."""
    if prog.name == "bash":
        raise Skip("bash's workload runs jobs in parallel: its calls differ run to run")
    if not shutil.which("setarch"):
        raise Skip("setarch is not installed (ASLR cannot be turned off)")
    work = os.path.join(env.cache, "work", prog.name + "-excl")
    shutil.rmtree(work, ignore_errors=True)
    binary = build(env, prog, src, "gcc")	# Lua's hash seed is fixed in every build
    if prog.name == "lua":
        def args(b):
            return [b, os.path.join(HERE, "workload.lua"), str(scale)]
    else:
        data = zstd_input(env, int(scale))

        def args(b):
            return [b, "-q", "-f", "-3", "-T1", "--no-asyncio", data, "-o", "out.zst"]
    lossless = "on_full=wait"
    runs = []
    # The three runs see environments of one size and run in directories
    # of one name length: Lua's calls depend on the layout of its initial
    # stack even with ASLR off (a full run with LD_LIBRARY_PATH set, or
    # with FDRTRACE_OPTIONS 16 bytes shorter, hashed one string more), so
    # the full runs say auto_exclude=off, padded to EXCL_OPTIONS' length.
    off = "auto_exclude=off"
    off += " " * max(0, len(EXCL_OPTIONS) - len(off))
    if len(off) != len(EXCL_OPTIONS):
        raise Fail("EXCL_OPTIONS %r is shorter than %r: pad it" % (EXCL_OPTIONS, off))
    for k, (label, opts) in enumerate((("full 1", lossless + " " + off),
                                       ("auto_exclude", lossless + " " + EXCL_OPTIONS),
                                       ("full 2", lossless + " " + off))):
        wd = os.path.join(work, "run%d" % k)
        out, traces = excl_run(env, binary, args, wd, opts)
        counts = excl_counts(env, traces)
        size = trace_bytes(traces)
        runs.append((label, out, counts, size))
        log("%-13s %d functions, %d calls, %.1f MB of trace" % (label, len(counts),
                                                              sum(counts.values()), size / 1e6))
        shutil.rmtree(wd, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)

    def differ(a, b):
        return sorted((n for n in set(a) | set(b) if a.get(n) != b.get(n)),
                      key=lambda n: -max(a.get(n, 0), b.get(n, 0)))
    full1, excl, full2 = runs[0][2], runs[1][2], runs[2][2]
    d = differ(full1, full2)
    if d or runs[0][1] != runs[2][1]:
        for n in d[:20]:
            log("  %-40s full 1 %s  full 2 %s" % (n, full1.get(n, "-"), full2.get(n, "-")))
        raise Fail("two full runs made different calls (%d functions differ): the comparison "
                   "would prove nothing" % len(d))
    if runs[1][1] != runs[0][1]:
        raise Fail("auto_exclude changed the program's output")
    d = differ(full1, excl)
    for n in d[:40]:
        log("  %-40s full %s  auto_exclude %s" % (n, full1.get(n, "-"), excl.get(n, "-")))
    if d:
        raise Fail("%d functions' counts differ from the full trace's" % len(d))
    # and it did something: the trace much smaller
    log("auto_exclude: every one of %d functions has the full trace's count (%d calls); "
        "trace %.1f MB against %.1f MB" % (len(full1), sum(full1.values()), runs[1][3] / 1e6,
                                         runs[0][3] / 1e6))
    if runs[1][3] > 0.5 * runs[0][3]:
        raise Fail("auto_exclude's trace is not much smaller than the full one: it counted little")


# ---------------------------------------------------------------- loss

# The loss check's margin on times: a starved run's time may exceed the
# greatest of the lossless runs by their spread (greatest - least) plus
# LOSS_REL of the greatest plus LOSS_ABS seconds (see check_loss()).
LOSS_REL = 0.25
LOSS_ABS = 0.002


def no_aslr():
    """The command that runs a program without address space randomization
    (setarch -R), when personality(2) allows it here; else none."""
    if shutil.which("setarch") and subprocess.run(
            ["setarch", "-R", "true"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL).returncode == 0:
        return ["setarch", "-R"]
    return []


def check_loss(env, prog, src, scale):
    """CHECK loss: the loss invariant. The same workload recorded
    losslessly and from a starved pool (stream policy, 2 buffers; ring
    policy, 4 buffers), in rounds of one run of each, interleaved so that
    the machine's load weighs on both sides alike, without address
    randomization (setarch -R) and, unless the program says otherwise
    (loss_one_cpu), on one CPU. Every starved run must have
    lost records (else it tests nothing). Per function (by name, over all
    of a run's processes):

      count  no greater than the greatest count of the lossless runs plus
             their spread. Lua, built with a fixed hash seed and run at
             fixed addresses, makes the same calls in every run: its
             lossless runs must agree exactly, and every starved run's
             count is compared with theirs (no spread). zstd's worker
             threads and bash's children poll and wait as timing has it,
             so there the least count of the starved runs is compared.
      total  the least over the starved runs no greater than the lossless
      self   runs' greatest + their spread + LOSS_REL of the greatest +
             LOSS_ABS: a loss joined into a call's time, or a call
             counted twice, inflates every starved run; a preemption lands
             in one run. A starved run really is slower in places (its
             flush thread sleeps and is woken at every hand-over; on one
             CPU the program waits, inside whatever call is open, while
             that thread or another program runs: a starved stream run of
             Lua took 1.5 s against 0.4 s lossless, its long calls between
             two adjacent records of one buffer): the spread and the
             margin are for that.

    The lossless runs use the stream policy (pools: see below), and for
    the ring policy's starved runs, when the program names one
    (loss_ring_lossless), the ring policy with a pool that overwrites
    nothing: a policy's own costs are then on both sides.

    Three rounds; while a function is above, up to three more rounds of the
    policies concerned (each also adds a lossless run). Any violation left
    fails the test."""
    wrap = no_aslr()
    wl = Workload(env, prog, scale, wrap)
    work = os.path.join(env.cache, "work", prog.name + "-loss")
    shutil.rmtree(work, ignore_errors=True)
    binary = build(env, prog, src, "gcc")
    exact = prog.name == "lua" and bool(wrap)
    log("runs %s; counts compared %s" % (
        "under setarch -R (no address randomization)" if wrap else
        "with addresses randomized (setarch -R is refused here)",
        "exactly (fixed-seed Lua at fixed addresses)" if exact else
        "within the lossless runs' spread"))
    # The lossless runs use the starved stream pool's buffers: each buffer
    # handed over wakes the flush thread, which runs inside whatever calls
    # are open then, so 4 KiB buffers charge each call more of the
    # tracer's own writing than 64 KiB ones do (on Lua's sort comparator,
    # 0.197 s against 0.154 s with 22% lost, every round). A one-thread
    # process (Lua, each of bash's) also gets a pool as small, fixed (four
    # buffers), waiting where the starved run drops: a flush thread that
    # writes a few buffers a wake sleeps and is woken at nearly every
    # hand-over, in the starved runs and now in the lossless ones alike,
    # where a growing pool let it write many a wake (with it, the starved
    # runs of Lua took 1.5 s against 0.4 s lossless, and read_token_word's
    # self in bash 0.0037 s at least in six starved runs against 0.0011 s
    # at most lossless: the hand-over's first record, then 0.9 ms before
    # the next, nothing lost). (With two buffers, bash's SIGCHLD handler
    # found the pool empty and dropped 4 records in one run: a handler
    # never waits.) zstd's threads would take turns waiting for one
    # another's buffers in so small a pool (a run with two did not end in
    # 10 minutes): its pool grows.
    if not runtime_knows(env, "on_full"):
        lossless = "buffer_size=4096 buffer_max=32768"
    elif prog.name == "zstd":
        lossless = "buffer_size=4096 on_full=wait"
    else:
        lossless = "buffer_size=4096 buffer_max=4 on_full=wait"
    # The starved stream pool must lose on any machine: two 4 KiB buffers,
    # and every run of this check on one CPU, so the flush thread shares
    # the program's CPU (on an idle 2-core machine, two 64 KiB buffers kept
    # up with Lua and the check had nothing to test). Lossless and starved
    # runs alike, so their times stay comparable.
    # Each policy's starved runs are held to lossless runs: the ring
    # policy's to ring runs of a pool that overwrites nothing, for a
    # program that names one (prog.loss_ring_lossless), else to the
    # stream runs above.
    policies = (("stream", "buffer_size=4096 buffer_max=2", lossless),
                ("ring", "policy=ring buffer_max=4", prog.loss_ring_lossless or lossless))
    cpus = os.sched_getaffinity(0)
    if prog.loss_one_cpu:
        os.sched_setaffinity(0, {min(cpus)})
    try:
        _check_loss_rounds(env, wl, work, binary, policies, exact)
    finally:
        os.sched_setaffinity(0, cpus)


def _check_loss_rounds(env, wl, work, binary, policies, exact):
    zero = (0, 0.0, 0.0)

    # Every run sees an environment of one size and names directories of
    # one length: a program's calls can depend on the layout of its
    # initial stack even with ASLR off (Lua's: one string hashed more or
    # less with FDRTRACE_OPTIONS 16 bytes longer, check_excl()), which
    # would pass for a loss's effect on counts. The options are padded
    # inside (run_workload() strips their ends) to the longest's length.
    width = max(len(o) for _, starve, ref in policies for o in (starve, ref))
    slots = {}

    def account_of(label, options):
        slot = "%02d" % slots.setdefault(label, len(slots))
        head, _, rest = options.partition(" ")
        padded = head + " " * (1 + width - len(options)) + rest if rest else options
        td = work + "/traces-" + slot
        t0 = time.monotonic()
        _, exits, _ = run_workload(wl, binary, work + "/run-" + slot, tracing=td,
                                   options=padded)
        took = time.monotonic() - t0
        recs, drops, traces = check_traces(env, td, exits, False, label, wl.prog.min_traces)
        log("%-10s %-32s %.2f s, %d trace(s): %d records, %d lost (%.2f%%)"
            % (label, options, took, len(traces), recs, drops,
               100.0 * drops / max(1, recs + drops)))
        # one account of all the run's traces: functions merged by name
        acc = parse_account_text(run([env.fdrtrace, "account", "-q", "--seconds"] + traces,
                                     text=True).stdout)
        shutil.rmtree(td, ignore_errors=True)
        return acc, drops, took

    # the lossless runs' accounts, by their options; the starved runs', by policy
    full = {ref: [] for _, _, ref in policies}
    starved = {label: [] for label, _, _ in policies}
    # A run's wall time: a starved run that really ran slower (the flush
    # thread woken at every hand-over, competing for the CPUs) is slower as
    # a whole, while a loss joined into a call inflates that call alone.
    # So a starved run's time limits are scaled by its slowdown (its wall
    # time, or main's total, over the lossless runs' greatest; never below
    # 1): zstd's starved decompression
    # ran 1.4-1.8 s against 1.1 s lossless, its outer calls 0.327 s
    # against 0.214 s, entry and exit recorded, in every round.
    took_full = {ref: [] for _, _, ref in policies}
    took_starved = {label: [] for label, _, _ in policies}
    ref_of = {label: ref for label, _, ref in policies}
    ref_name = {}
    for label, _, ref in policies:	# "lossless", "lossless-ring"
        ref_name.setdefault(ref, "lossless-" + label if ref_name else "lossless")

    def one_round(k, labels):
        for ref in dict.fromkeys(ref_of[label] for label in labels):
            # on_full=wait never waits in a signal handler (it drops
            # there): a lossless run that lost records is run again,
            # twice at most
            for attempt in range(3):
                acc, drops, took = account_of("%s-%d" % (ref_name[ref], k), ref)
                if not drops:
                    break
                log("the lossless run lost %d records (%s): run again" % (drops, ref))
            if drops:
                raise Fail("the lossless run lost %d records (%s), three times" % (drops, ref))
            full[ref].append(acc)
            took_full[ref].append(took)
        for label, options, _ in policies:
            if label not in labels:
                continue
            acc, drops, took = account_of("%s-%d" % (label, k), options)
            if not drops:
                raise Fail("%s: the starved pool (%s) lost nothing: it tests nothing"
                           % (label, options))
            starved[label].append(acc)
            took_starved[label].append(took)

    def bounds(label, name):
        vals = [r.get(name, zero) for r in full[ref_of[label]]]
        return [max(v[i] for v in vals) for i in range(3)], \
               [min(v[i] for v in vals) for i in range(3)]

    def limit(hi, lo, scale=1.0):
        hi, lo = hi * scale, lo * scale
        return hi + (hi - lo) + LOSS_REL * hi + LOSS_ABS

    def scales(label):
        # the run's wall time, and main's total (its entry and exit are a
        # process's first and last records: never joined across a gap),
        # each over the lossless runs' greatest
        slowest = max(took_full[ref_of[label]])
        main_hi = max(r.get("main", zero)[1] for r in full[ref_of[label]])
        return [max(1.0, t / slowest,
                    r.get("main", zero)[1] / main_hi if main_hi > 0 else 1.0)
                for t, r in zip(took_starved[label], starved[label])]

    def violations():
        for runs in full.values() if exact else ():
            differ = sorted(n for n in set().union(*runs)
                            if len(set(r.get(n, zero)[0] for r in runs)) > 1)
            if differ:
                raise Fail("the lossless runs of fixed-seed Lua at fixed addresses made "
                           "different calls (%d functions: %s): counts cannot be compared "
                           "exactly" % (len(differ), ", ".join(
                               "%s %s" % (n, [r.get(n, zero)[0] for r in runs])
                               for n in differ[:5])))
        counts, times = [], []
        for label, _, _ in policies:
            runs = starved[label]
            for name in sorted(set().union(*runs)):
                vals = [r.get(name, zero) for r in runs]
                hi, lo = bounds(label, name)
                c = max(v[0] for v in vals) if exact else min(v[0] for v in vals)
                if c > hi[0] + (hi[0] - lo[0]):
                    counts.append((label, name, "count %d > %s" % (c, "%d" % hi[0] if exact else
                                   "%d (greatest) + %d (spread)" % (hi[0], hi[0] - lo[0]))))
                bad = []
                for i, what in ((1, "total"), (2, "self")):
                    # the run nearest its own (scaled) limit is the one judged
                    q, t, lim, sc = min((v[i] / limit(hi[i], lo[i], sc), v[i],
                                         limit(hi[i], lo[i], sc), sc)
                                        for v, sc in zip(vals, scales(label)))
                    if q > 1:
                        bad.append("%s %.6f > %.6f (greatest %.6f, least %.6f, run %.2fx "
                                   "the lossless wall time)" % (what, t, lim, hi[i], lo[i], sc))
                if bad:
                    times.append((label, name, ", ".join(bad)))
        return counts, times

    def closest():
        """Per policy, the function whose least starved total came nearest
        its limit (of those with a lossless total over 1 ms): how much the
        margin had to spare."""
        for label, _, _ in policies:
            best = None
            for name in set().union(*starved[label]):
                hi, lo = bounds(label, name)
                if hi[1] < 0.001:
                    continue
                q, t = min((r.get(name, zero)[1] / limit(hi[1], lo[1], sc),
                            r.get(name, zero)[1])
                           for r, sc in zip(starved[label], scales(label)))
                if best is None or q > best[0]:
                    best = (q, name, t, hi[1], lo[1])
            if best:
                log("%s: nearest its limit: %s, total %.6f s against lossless %.6f..%.6f "
                    "(%.0f%% of the limit)" % (label, best[1], best[2], best[4], best[3],
                                               100 * best[0]))

    t0 = time.monotonic()
    for k in range(1, 4):
        one_round(k, [label for label, _, _ in policies])
    counts, times = violations()
    k = 4
    while (counts or times) and k <= 6:
        over = counts + times
        log("%d function(s) above the lossless runs: one more round" % len(over))
        for label, name, what in over[:6]:
            log("  %s: %s: %s" % (label, name, what))
        one_round(k, sorted(set(label for label, _, _ in over)))
        counts, times = violations()
        k += 1
    bad = counts + times
    closest()
    log("%d function(s) read from a starved pool exceed the lossless runs (%d rounds, %.0f s)"
        % (len(bad), k - 1, time.monotonic() - t0))
    for label, name, what in bad[:30]:
        log("  %s: %s: %s" % (label, name, what))
    shutil.rmtree(work, ignore_errors=True)
    if bad:
        raise Fail("%d function(s) inflated by losses" % len(bad))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fdrtrace", required=True)
    ap.add_argument("--lib", required=True, help="libfdrtrace.so")
    ap.add_argument("--cache", required=True)
    ap.add_argument("--srcroot", required=True)
    ap.add_argument("--clang", default="")
    ap.add_argument("--llvm-xray", default="")
    ap.add_argument("--scale", type=float, default=0)
    ap.add_argument("program", choices=sorted(PROGRAMS))
    ap.add_argument("check", choices=["gcc", "clang", "xray", "loss", "tree", "excl"])
    a = ap.parse_args()
    env = Env(a)
    prog = PROGRAMS[a.program]
    try:
        src = fetch(env, prog)
        if a.check in ("gcc", "clang"):
            check_build(env, prog, src, a.check, a.scale or SCALE[prog.name, a.check])
        elif a.check == "tree":
            check_tree(env, prog, src, a.scale or SCALE[prog.name, "tree"])
        elif a.check == "xray":
            check_xray(env, prog, src, a.scale or SCALE[prog.name, "xray"])
        elif a.check == "excl":
            check_excl(env, prog, src, a.scale or SCALE[prog.name, "excl"])
        else:
            check_loss(env, prog, src, a.scale or SCALE[prog.name, "loss"])
    except Skip as e:
        log("SKIP: %s" % e)
        return SKIP
    except Fail as e:
        log("FAIL: %s" % e)
        return 1
    log("ok")
    return 0


# Workload sizes (Lua: workload.lua's SCALE; zstd: MiB of input), chosen
# for runs of a second or two and traces of at most a few hundred MB: gcc's
# instrumentation of inlined functions writes far more than clang's, and
# llvm-xray account reads a whole trace into memory.
SCALE = {
    ("lua", "gcc"): 1, ("lua", "clang"): 2, ("lua", "xray"): 0.2, ("lua", "loss"): 0.5,
    ("zstd", "gcc"): 1, ("zstd", "clang"): 4, ("zstd", "xray"): 1, ("zstd", "loss"): 1,
    ("bash", "gcc"): 1, ("bash", "loss"): 1,
    ("lua", "tree"): 0.2, ("zstd", "tree"): 1, ("bash", "tree"): 1,
    ("lua", "excl"): 0.3, ("zstd", "excl"): 1, ("bash", "excl"): 1,
}

if __name__ == "__main__":
    sys.exit(main())
