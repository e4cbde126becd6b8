#!/usr/bin/env python3
# stack_bytes.py DEPTH NAMELEN: a trace text (fdrtrace assemble) of one
# thread nesting DEPTH functions whose names are NAMELEN bytes long, each
# level calling a leaf too: DEPTH * 2 distinct paths whose folded lines,
# written whole, hold DEPTH^2 names (300 levels of 4 KB names: 370 MB of
# `stack` output from a 1.3 MB trace).
import sys

depth, namelen = int(sys.argv[1]), int(sys.argv[2])
out = ["hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4194304",
       "buf ext size=auto", "buf new tid=1", "buf wal sec=1700000000 usec=0",
       "buf pid pid=1", "cpu new cpu=0 tsc=1000",
       "ext process delta=0 pid=1 ppid=0 program=deep"]
for i in range(1, depth + 2):
    name = ("f%d_" % i).ljust(namelen, "x") if i <= depth else "leaf"
    out.append("ext func delta=0 func_id=%d address=0x%x module_id=0 name=%s"
               % (i, 0x401000 + 16 * i, name))
for i in range(1, depth + 1):
    out.append("fun ent id=%d delta=10" % i)
    out.append("fun ent id=%d delta=10" % (depth + 1))
    out.append("fun exi id=%d delta=10" % (depth + 1))
for i in range(depth, 0, -1):
    out.append("fun exi id=%d delta=10" % i)
print("\n".join(out))
