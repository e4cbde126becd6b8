#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
tests/check_layers.py - a tree built in layers calls only down, and no
files of one layer call each other in a circle.

usage: check_layers.py NM [--interposed VERSION_SCRIPT] NAME=LIBRARY.a ...
       (bottom layer first)

The runtime (runtime/meson.build) and the fdrtrace command
(tools/fdrtrace/meson.build) are each built as one static library per
layer (docs/design.md). A layer compiles with the include directories of
its own and the lower layers only, so an upward #include fails to build;
but a stray prototype would still let a lower layer call a function of a
higher one, and the final link would not mind. This reads each layer's
objects with nm and fails when an object references a symbol that no
object of its own layer or a lower one defines and a higher layer does.
Symbols no layer defines (the C library, libunwind, liburcu, libelf,
ncurses) are not ours to judge, nor, with --interposed, the C library's
functions the runtime interposes (the exported names of VERSION_SCRIPT
other than the hooks and fdrtrace_*): a call of sigaction() is a call of
the C library's, which the program's view (signals/sigview.c) happens to
stand in front of.

Inside a layer the files form a stack too: an object may reference
symbols another object of its layer defines, but no chain of such
references may lead back to it. (Between layers every reference points
down once no UPWARD is reported, so no circle can cross layers.) Each
circle found is printed with the symbols that make each step of it
("a.c (sym) -> b.c": a.c uses sym, which b.c defines). An inline header
and the .c file that defines what it calls are one object here, so they
are no circle.

Exit 0 when every reference points down or sideways and no layer has a
circle, 1 when not, 2 on a usage or nm error.
"""
import os
import re
import subprocess
import sys


def interposed(script):
    """The C library's names the version script exports."""
    text = re.sub(r"/\*.*?\*/", "", open(script).read(), flags=re.S)
    glob = text.split("global:", 1)[1].split("local:", 1)[0]
    return {n for n in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", glob)
            if not n.startswith(("fdrtrace_", "__cyg_profile_"))}


def symbols(nm, lib):
    """{object: (defined set, undefined set)} of the archive @lib."""
    out = subprocess.run([nm, "-A", lib], check=True, capture_output=True,
                         text=True).stdout
    objs = {}
    for line in out.splitlines():
        # "LIB:OBJ:0000000000000000 T name" or "LIB:OBJ:                 U name"
        if not line.startswith(lib + ":"):
            continue
        obj, _, rest = line[len(lib) + 1:].partition(":")
        parts = rest.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        d, u = objs.setdefault(obj, (set(), set()))
        if kind == "U":
            u.add(name)
        elif kind.isupper() and kind not in "N":
            d.add(name)
    return objs


def short(obj):
    """"libfdrtrace_record.a.p/record_held.c.o" -> "held.c" (a layer's prefix dropped)."""
    name = os.path.basename(obj)
    name = name[:-2] if name.endswith(".o") else name
    return name.split("_", 1)[1] if "_" in name and not name.startswith("..") else name


def edges(objs):
    """{A: {B: [symbols]}}: object A references symbols object B defines (A != B)."""
    owner = {}
    for obj, (d, _) in objs.items():
        for sym in d:
            owner.setdefault(sym, obj)
    out = {obj: {} for obj in objs}
    for obj, (_, u) in objs.items():
        for sym in sorted(u):
            b = owner.get(sym)
            if b is not None and b != obj:
                out[obj].setdefault(b, []).append(sym)
    return out


def circles(graph):
    """The strongly connected components of @graph with more than one node (Tarjan)."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def one_circle(graph, comp):
    """A path inside @comp from its first node back to it: [A, B, ..., A]."""
    start, inside = comp[0], set(comp)
    seen, path = set(), [start]

    def walk(v):
        for w in sorted(graph[v]):
            if w == start:
                path.append(w)
                return True
            if w in inside and w not in seen:
                seen.add(w)
                path.append(w)
                if walk(w):
                    return True
                path.pop()
        return False

    walk(start)
    return path


def main():
    args = sys.argv[1:]
    libc = set()
    try:
        nm = args.pop(0)
        if args and args[0] == "--interposed":
            args.pop(0)
            libc = interposed(args.pop(0))
        layers = [a.split("=", 1) for a in args]
        if not layers or any(len(l) != 2 for l in layers):
            raise IndexError
        objs = [symbols(nm, lib) for _, lib in layers]
    except IndexError:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 2
    defined = [set().union(*(d for d, _ in o.values())) if o else set() for o in objs]
    bad = 0
    for i, (name, _) in enumerate(layers):
        here_or_below = set().union(*defined[:i + 1]) | libc
        for obj, (_, undef) in sorted(objs[i].items()):
            for sym in sorted(undef - here_or_below):
                above = [layers[j][0] for j in range(i + 1, len(layers)) if sym in defined[j]]
                if above:
                    print(f"UPWARD: {name}/{os.path.basename(obj)} uses {sym}, defined in {', '.join(above)}")
                    bad += 1
    names = " < ".join(n for n, _ in layers)
    loops = 0
    for i, (name, _) in enumerate(layers):
        graph = edges(objs[i])
        for comp in circles(graph):
            path = one_circle(graph, comp)
            steps = " -> ".join(
                short(a) + (f" ({', '.join(graph[a][b][:4])}"
                            f"{', ...' if len(graph[a][b]) > 4 else ''})")
                for a, b in zip(path, path[1:])) + " -> " + short(path[-1])
            print(f"CIRCLE: {name}: {', '.join(short(o) for o in comp)}: {steps}")
            loops += 1
    if bad or loops:
        if loops:
            print(f"check_layers: {loops} circle(s) between the files of a layer")
        if bad:
            print(f"check_layers: {bad} upward reference(s); layers: {names}")
        return 1
    print(f"ok: every layer references only its own and lower layers: {names}; "
          "inside each, the files form a stack (no circle)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
