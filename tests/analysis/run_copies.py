#!/usr/bin/env python3
# run_copies.py DUMP_TEXT OUTDIR COUNT [FIRST_PID]
#
# COUNT copies of a trace in dump's text form (fdrtrace dump -n), each as
# another process: its pid (Pid records, the FDRx process, fork and thread
# records, NewBuffer thread ids) is FIRST_PID + i (default 200000), its
# other threads' ids moved along. Writes OUTDIR/copy.PID.txt, for
# fdrtrace assemble. Used by run.sh to make runs of 100 and 1,000 processes.
import os, struct, sys

text = open(sys.argv[1]).read().splitlines()
out, count = sys.argv[2], int(sys.argv[3])
first = int(sys.argv[4]) if len(sys.argv) > 4 else 200000

pid = None
for l in text:
    if l.startswith("buf pid pid="):
        pid = int(l.split("=")[1])
        break
if pid is None:
    sys.exit("run_copies: no Pid record")

def patch(hexdata, ids):
    b = bytearray.fromhex(hexdata)
    if len(b) < 16 or b[:4] != b"FDRx":
        return hexdata
    kind = b[5]
    # u32 fields holding a pid or tid, by kind (docs/format.md 5.2):
    # process pid (ppid stays); thread_name, stack: tid; fork: child pid
    offs = {1: [8], 6: [8], 11: [8], 8: [12]}.get(kind, [])
    for o in offs:
        v = struct.unpack_from("<I", b, o)[0]
        if v in ids:
            struct.pack_into("<I", b, o, ids[v])
    return b.hex()

for i in range(count):
    new = first + i
    ids = {}
    lines = []
    for l in text:
        if l.startswith("buf new tid="):
            t = int(l.split("=")[1])
            if t not in ids:
                ids[t] = new if t == pid else new + 1000000 + len(ids)
            l = "buf new tid=%d" % ids[t]
        elif l.startswith("buf pid pid="):
            l = "buf pid pid=%d" % new
        elif l.startswith("evt cus ") and " data=" in l:
            ids.setdefault(pid, new)
            head, data = l.rsplit(" data=", 1)
            l = head + " data=" + patch(data, ids)
        lines.append(l)
    with open(os.path.join(out, "copy.%d.txt" % new), "w") as f:
        f.write("\n".join(lines) + "\n")
