#!/usr/bin/env python3
# perfetto_check.py TRACE.pftrace [COUNTS]
#
# Decodes fdrtrace convert --format perfetto output with a wire-format
# decoder of its own (no protobuf library) and checks its structure: one
# packet sequence whose first packet clears the incremental state; every
# track event on a track described before it (thread tracks with a
# ThreadDescriptor under a process track); every name_iid interned before
# its use; per track, slices balanced as a stack with non-decreasing
# timestamps (a begin without an end only with "ended" never / records
# lost / unknown when written: begun early for the reorder window / after
# recording stopped); flow
# ids (a run's arrows) fixed64, each ending one that began. Prints "NAME COUNT" per slice name, sorted; with COUNTS (a file of
# such lines) they must be equal. With --args=FILE: each slice with debug
# annotations other than "ended" (its begin's and its end's together: the
# values logged inside a call), one line in begin order, "NAME k=v k=v"
# (names sorted; int_value signed, uint_value unsigned, strings as such).
import sys

args_out = None
for a in list(sys.argv[1:]):
    if a.startswith("--args="):
        args_out = open(a[len("--args="):], "w")
        sys.argv.remove(a)

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i

def fields(b):
    """(field, wiretype, value) of a message; LEN values are bytes."""
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            v = b[i:i + n]
            if len(v) != n:
                sys.exit("truncated field %d" % f)
            i += n
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            sys.exit("bad wire type %d" % w)
        out.append((f, w, v))
    return out

def one(fs, f, default=None):
    for g, _, v in fs:
        if g == f:
            return v
    return default

def fail(msg):
    sys.exit("perfetto_check: " + msg)

data = open(sys.argv[1], "rb").read()
packets = fields(data)
if not packets or any(f != 1 or w != 2 for f, w, _ in packets):
    fail("not a Trace of packets")
names, cats, tracks = {}, {}, {}
stacks, last_ts, count, instants = {}, {}, {}, {}
flows_out, flows_in = [], []
sliced = []
seq = None
for n, (_, _, raw) in enumerate(packets):
    p = fields(raw)
    s = one(p, 10)
    if s is None:
        fail("packet %d has no sequence id" % n)
    if seq is None:
        seq = s
        if not (one(p, 13, 0) & 1):
            fail("the first packet does not clear the incremental state")
    elif s != seq:
        fail("more than one sequence")
    for f, _, v in p:
        if f == 12:
            for g, _, e in fields(v):
                ef = fields(e)
                (cats if g == 1 else names)[one(ef, 1)] = one(ef, 2).decode()
    td = one(p, 60)
    if td is not None:
        tf = fields(td)
        uuid = one(tf, 1)
        thread, proc = one(tf, 4), one(tf, 3)
        if thread is not None:
            th = fields(thread)
            if one(tf, 5) not in tracks or tracks[one(tf, 5)][0] != "process":
                fail("thread track %d without its process track before it" % uuid)
            tracks[uuid] = ("thread", one(th, 2), one(th, 5, b"").decode())
        elif proc is not None:
            tracks[uuid] = ("process", one(fields(proc), 1), one(fields(proc), 6, b"").decode())
        elif one(tf, 5) is not None and one(tf, 2) is not None:
            # a named track under a process (a run's fork/exec arrows)
            if tracks.get(one(tf, 5), ("",))[0] != "process":
                fail("track %d without its process track before it" % uuid)
            tracks[uuid] = ("track", None, one(tf, 2).decode())
        else:
            fail("a track descriptor without process or thread")
    te = one(p, 11)
    if te is None:
        continue
    ts = one(p, 8)
    if ts is None or not (one(p, 13, 0) & 2):
        fail("packet %d: track event without timestamp or incremental-state flag" % n)
    ef = fields(te)
    typ, uuid = one(ef, 9), one(ef, 11)
    if tracks.get(uuid, ("",))[0] not in ("thread", "track"):
        fail("packet %d: event on undescribed track %r" % (n, uuid))
    if ts < last_ts.get(uuid, 0):
        fail("packet %d: time goes back on track %d" % (n, uuid))
    last_ts[uuid] = ts
    for f, w, v in ef:
        # flow_ids 47, terminating_flow_ids 48: fixed64
        if f in (47, 48):
            if w != 1:
                fail("packet %d: flow id not fixed64" % n)
            (flows_out if f == 47 else flows_in).append(int.from_bytes(v, "little"))
    args = {}
    for f, _, v in ef:
        if f == 4:
            af = fields(v)
            val = one(af, 6, b"").decode() or one(af, 3)
            if one(af, 4) is not None:
                val = one(af, 4)
                val = val - (1 << 64) if val >= 1 << 63 else val
            args[one(af, 10).decode()] = val
    st = stacks.setdefault(uuid, [])
    if typ in (1, 3):
        iid = one(ef, 10)
        if iid not in names:
            fail("packet %d: name iid %r not interned before" % (n, iid))
        for c in [v for f, _, v in ef if f == 3]:
            if c not in cats:
                fail("packet %d: category iid %r not interned" % (n, c))
        if typ == 1:
            sl = [names[iid], dict(args)]
            st.append((names[iid], args.get("ended"), sl))
            sliced.append(sl)
            count[names[iid]] = count.get(names[iid], 0) + 1
        else:
            instants[names[iid]] = instants.get(names[iid], 0) + 1
    elif typ == 2:
        if not st:
            fail("packet %d: slice end without a begin on track %d" % (n, uuid))
        st.pop()[2][1].update(args)
    else:
        fail("packet %d: event type %r" % (n, typ))
for uuid, st in stacks.items():
    for name, ended, _ in st:
        # "unknown when written": begun early (the reorder window), then lost
        if ended not in ("never", "unknown: records lost", "unknown when written",
                         "after recording stopped"):
            fail("track %d: %s has no end" % (uuid, name))
out = sorted("%s %d" % kv for kv in count.items())
print("\n".join(out))
threads = sorted("%s %s" % (t[1], t[2]) for t in tracks.values() if t[0] == "thread")
print("# threads: " + ", ".join(threads), file=sys.stderr)
if sorted(flows_out) != sorted(set(flows_out)) or sorted(flows_in) != sorted(set(flows_in)):
    fail("a flow id used twice")
if set(flows_in) - set(flows_out):
    fail("flows ending without a start: %s" % sorted(set(flows_in) - set(flows_out)))
if flows_out:
    print("# flows: %d" % len(flows_in), file=sys.stderr)
for name, n in sorted(instants.items()):
    print("# instant %s: %d" % (name, n), file=sys.stderr)
if len(sys.argv) > 2:
    want = sorted(l.strip() for l in open(sys.argv[2]) if l.strip())
    if want != out:
        fail("counts differ:\n  want %s\n  got  %s" % (want, out))
if args_out:
    for name, args in sliced:
        kv = ["%s=%s" % (k, args[k]) for k in sorted(args) if k != "ended"]
        if kv:
            print(name + " " + " ".join(kv), file=args_out)
    args_out.close()
