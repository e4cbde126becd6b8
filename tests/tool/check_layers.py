#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
tests/tool/check_layers.py - the fdrtrace command's files call in one
direction.

usage: check_layers.py NM NAME=LIBRARY.a ...   (bottom layer first)

The command is built as one static library per directory (reader, base,
symbols, analysis, output, cmd: tools/fdrtrace/meson.build, docs/design.md).
An upward #include does not build, since a layer sees only its own and the
lower layers' headers; this reads the objects with nm and checks what the
compiler cannot see:

  UPWARD  an object references a symbol that no object of its own layer or
          a lower one defines and a higher layer's does;
  CYCLE   files that call each other, directly or around a circle: the
          objects, with an edge from each to the objects that define the
          symbols it references, have no cycle (a header's inline functions
          count as calls of the file that includes them, so an inline
          header and its own .c may not call each other either).

Symbols no library here defines (the C library, libelf, libdw, ncurses) are
not judged. Exit 0 when both hold, 1 when not, 2 on a usage or nm error.
"""
import os
import subprocess
import sys


def objects(nm, lib):
    """{object: (defined set, undefined set)} of the archive @lib."""
    out = subprocess.run([nm, "-A", lib], check=True, capture_output=True,
                         text=True).stdout
    objs = {}
    for line in out.splitlines():
        # "LIB:OBJ:0000000000000000 T name" or "LIB:OBJ:                 U name"
        if not line.startswith(lib + ":"):
            continue
        obj, _, rest = line[len(lib) + 1:].partition(":")
        fields = rest.split()
        if len(fields) < 2:
            continue
        kind, name = fields[-2], fields[-1]
        defined, undefined = objs.setdefault(obj, (set(), set()))
        if kind == "U":
            undefined.add(name)
        elif kind.isupper() and kind != "N":
            defined.add(name)
    return objs


def cycles(edges):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(root):
        # iterative: (node, iterator over its successors)
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, succ = work[-1]
            w = next(succ, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    if len(sys.argv) < 3 or any("=" not in a for a in sys.argv[2:]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    nm = sys.argv[1]
    layers = [a.split("=", 1) for a in sys.argv[2:]]
    try:
        objs = [objects(nm, lib) for _, lib in layers]
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 2

    # every object as "layer/file.o"; who defines each symbol
    where = {}
    for i, (name, _) in enumerate(layers):
        for obj, (defined, _) in objs[i].items():
            for sym in defined:
                where.setdefault(sym, set()).add((i, f"{name}/{os.path.basename(obj)}"))

    bad = 0
    edges, uses = {}, {}
    for i, (name, _) in enumerate(layers):
        for obj, (_, undefined) in sorted(objs[i].items()):
            me = f"{name}/{os.path.basename(obj)}"
            out = edges.setdefault(me, {})
            for sym in sorted(undefined):
                defs = where.get(sym, set())
                for _, o in defs:
                    if o != me:
                        out.setdefault(o, []).append(sym)
                if defs and min(j for j, _ in defs) > i:
                    above = sorted(o for _, o in defs)
                    print(f"UPWARD: {me} uses {sym}, defined in {', '.join(above)}")
                    bad += 1
    for comp in cycles(edges):
        print("CYCLE: " + " <-> ".join(comp))
        for a in comp:
            for b in sorted(set(edges[a]) & set(comp)):
                print(f"  {a} -> {b}: {', '.join(edges[a][b][:6])}")
        bad += 1

    names = " < ".join(n for n, _ in layers)
    if bad:
        print(f"check_layers: {bad} problem(s); layers: {names}")
        return 1
    print(f"ok: {len(edges)} files; each layer calls only its own and lower ones, "
          f"and no files call each other: {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
