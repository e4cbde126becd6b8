#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""recipes.py - every recipe of docs/real-projects.md, run as printed
(suite 'real', test real-recipes).

Usage: recipes.py --doc FILE --build-root DIR --srcroot DIR --cache DIR

In the markdown:
  ```sh recipe-env        the lines that make a build directory usable
                          without installing; its first line, B=..., is
                          the one line the test changes (to --build-root)
  ```sh recipe=NAME [project=P | in=OTHER] [binary=PATH] [needs=TOOL,...]
                          a recipe: run verbatim by bash -e, after the
                          recipe-env lines, in a scratch directory: a copy
                          of project P (sample: tests/install/sample; a
                          directory under tests/real/recipes/; lua: Debian's
                          lua5.4 source package, from the real suite's
                          cache, fetched by fetch.sh when missing), or the
                          directory an earlier recipe OTHER ran in; with
                          binary=, that program is then run with
                          FDRTRACE_MODE=fdr and must print 385 (the
                          sample's output) and leave a trace that verifies
                          and has sum_squares in its account
  ```text output=NAME     what the doc says recipe NAME prints (stdout and
                          stderr, as one stream): each line must match a
                          line of the output, in order (other lines may
                          come between); in a line, "..." stands for any
                          text; a whole number of one to three digits
                          only for itself, a larger one or a decimal for
                          any number but 0 (counts, pids and times that
                          differ from run to run), a duration (a number and
                          ns, us, ms or s) for any duration, and a run of
                          spaces for any run of spaces
Each recipe must exit 0. A recipe whose tools are missing (needs=) or
whose sources cannot be had is skipped, saying why; when nothing could run
the test exits 77. Any failure, or an output that does not match, fails.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def parse(path):
    """The env block, the recipes (in order) and the outputs of the doc."""
    lines = open(path).read().splitlines()
    env, recipes, outputs = None, [], {}
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w+)\s+(.*)$", lines[i])
        i += 1
        if not m:
            continue
        body = []
        while i < len(lines) and lines[i] != "```":
            body.append(lines[i])
            i += 1
        if i >= len(lines):
            sys.exit("%s: a block that opens with %r has no end" % (path, m.group(0)))
        i += 1
        lang, info = m.group(1), m.group(2).split()
        if lang == "sh" and info == ["recipe-env"]:
            if env is not None:
                sys.exit("%s: two recipe-env blocks" % path)
            env = body
            continue
        attrs = dict(a.split("=", 1) for a in info if "=" in a)
        if lang == "sh" and "recipe" in attrs:
            attrs["text"] = "\n".join(body) + "\n"
            recipes.append(attrs)
        elif lang == "text" and "output" in attrs:
            outputs[attrs["output"]] = body
    return env, recipes, outputs


def line_regex(line):
    """A doc line of output as a regular expression (see the docstring)."""
    out = []
    for tok in re.findall(r"\.\.\.|\s+|\d+(?:\.\d+)?(?:ns|us|ms|s)\b|\d+(?:\.\d+)?|.",
                          line.strip()):
        if tok == "...":
            out.append(".*")
        elif re.fullmatch(r"[\d.]+[a-z]+", tok):
            out.append(r"\d+(?:\.\d+)?(?:ns|us|ms|s)\b")
        elif tok.isspace():
            out.append(r"\s+")
        elif tok.isdigit() and len(tok) <= 3:
            out.append(r"(?<![\d.])%s(?![\d.])" % tok)
        elif tok[0].isdigit():
            out.append(r"(?!0(?![\d.]))\d+(?:\.\d+)?")
        else:
            out.append(re.escape(tok))
    return re.compile("".join(out))


def match_output(expected, text):
    """None when every expected line matches a line of text, in order;
    else what did not."""
    got = [l.strip() for l in text.splitlines()]
    j = 0
    for line in expected:
        rx = line_regex(line)
        while j < len(got) and not rx.fullmatch(got[j]):
            j += 1
        if j == len(got):
            return line
        j += 1
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", required=True)
    ap.add_argument("--build-root", required=True)
    ap.add_argument("--srcroot", required=True)
    ap.add_argument("--cache", required=True)
    a = ap.parse_args()

    env_lines, recipes, outputs = parse(a.doc)
    if env_lines is None or not env_lines or not env_lines[0].startswith("B="):
        print("FAIL: no ```sh recipe-env block starting with B= in %s" % a.doc)
        return 1
    names = [r["recipe"] for r in recipes]
    if len(recipes) < 10 or len(set(names)) != len(names):
        print("FAIL: %d recipes (%d names) in %s: expected at least 10, each named once"
              % (len(recipes), len(set(names)), a.doc))
        return 1
    for name in outputs:
        if name not in names:
            print("FAIL: output=%s names no recipe" % name)
            return 1
    prelude = "\n".join(["B=" + os.path.abspath(a.build_root)] + env_lines[1:]) + "\n"

    # A clean environment: nothing of the test's own tracing settings.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FDRTRACE_") and k not in
           ("LD_PRELOAD", "PKG_CONFIG_PATH", "LIBRARY_PATH", "LD_LIBRARY_PATH", "CC", "CFLAGS",
            "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    work = tempfile.mkdtemp(prefix="fdrtrace-recipes.")
    dirs, ran, skipped, failed = {}, 0, [], []
    try:
        for r in recipes:
            name = r["recipe"]
            missing = [t for t in r.get("needs", "").split(",") if t and not shutil.which(t)]
            if missing:
                skipped.append("%s (no %s)" % (name, ", ".join(missing)))
                continue
            if "in" in r:
                if r["in"] not in dirs:
                    skipped.append("%s (%s did not run)" % (name, r["in"]))
                    continue
                d = dirs[r["in"]]
            else:
                d = os.path.join(work, name)
                why = copy_project(r.get("project", ""), d, a)
                if why:
                    skipped.append("%s (%s)" % (name, why))
                    continue
            dirs[name] = d
            script = os.path.join(work, name + ".sh")
            with open(script, "w") as f:
                f.write(prelude + r["text"])
            print("== %s (in %s)" % (name, os.path.relpath(d, work)), flush=True)
            p = subprocess.run(["bash", "-e", script], cwd=d, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
            out = p.stdout.decode(errors="replace")
            ran += 1
            if p.returncode != 0:
                failed.append(name)
                print("FAIL: %s exited %d; the recipe:\n%s--- its output (end):\n%s"
                      % (name, p.returncode, r["text"], out[-4000:]))
                continue
            if name in outputs:
                bad = match_output(outputs[name], out)
                if bad is not None:
                    failed.append(name)
                    print("FAIL: %s: the doc says it prints\n  %s\nwhich is not in its output "
                          "(in that order):\n%s" % (name, bad, out[-4000:]))
                    continue
            if "binary" in r:
                why = check_binary(os.path.join(d, r["binary"]), os.path.join(work, name + ".run"),
                                   prelude, env)
                if why:
                    failed.append(name)
                    print("FAIL: %s: %s" % (name, why))
                    continue
            print("ok   %s%s" % (name, " (output as printed)" if name in outputs else ""))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for s in skipped:
        print("skip %s" % s)
    print("%d recipes: %d ran, %d failed, %d skipped" % (len(recipes), ran, len(failed), len(skipped)))
    if failed:
        print("FAIL: " + " ".join(failed))
        return 1
    return 0 if ran else SKIP


def copy_project(project, dest, a):
    """Copy project into dest; the reason when it cannot be had."""
    if project == "sample":
        src = os.path.join(a.srcroot, "tests", "install", "sample")
    elif project == "lua":
        p = subprocess.run(["bash", os.path.join(a.srcroot, "tests", "real", "fetch.sh"),
                            a.cache, "lua5.4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            return p.stdout.decode(errors="replace").strip() or "fetch.sh failed"
        src = p.stdout.decode().strip().splitlines()[-1]
    elif project and os.path.isdir(os.path.join(a.srcroot, "tests", "real", "recipes", project)):
        src = os.path.join(a.srcroot, "tests", "real", "recipes", project)
    else:
        return "unknown project %r" % project
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".fetched"))
    # a project's release ships configure; the sample has only configure.ac
    if os.path.exists(os.path.join(dest, "configure.ac")) and \
            not os.path.exists(os.path.join(dest, "configure")):
        if not shutil.which("autoreconf"):
            return "no autoreconf"
        p = subprocess.run(["autoreconf", "-i"], cwd=dest, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if p.returncode != 0:
            return "autoreconf failed: " + p.stdout.decode(errors="replace")[-500:]
    return None


def check_binary(binary, rundir, prelude, env):
    """Run a recipe's program traced; why it is not right, or None."""
    if not os.access(binary, os.X_OK):
        return "no %s after the recipe" % binary
    os.makedirs(rundir)
    sh = prelude + 'FDRTRACE_MODE=fdr "$1"\nfor t in *.fdr; do fdrtrace verify "$t"; ' \
        'fdrtrace account "$t"; done\n'
    p = subprocess.run(["bash", "-e", "-c", sh, "check", binary], cwd=rundir, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0:
        return "running it traced, verifying and accounting its trace failed:\n" + out
    if not re.search(r"^385$", out, re.M):
        return "it did not print 385:\n" + out
    if not re.search(r"fdrtrace\.hello\.\d+\.fdr: \d+ records, 0 lost", out):
        return "no exit line saying nothing was lost (is it linked with libfdrtrace?):\n" + out
    if not re.search(r"\bsum_squares$", out, re.M):
        return "sum_squares is not in its trace's account:\n" + out
    return None


if __name__ == "__main__":
    sys.exit(main())
