#!/usr/bin/env python3
# mutate.py FDRTRACE WORKDIR TRACE...
#
# Damaged traces never crash an analysis command, and runs of records agree
# with one event per record (FDRTRACE_ANALYSIS_READER=1) on every one:
# the same output, the same exit status. Each round changes 1..4 random
# bytes after the file header of one of the TRACEs (.txt files are
# assembled first) and, one time in five, cuts it short. Seeded: the same
# rounds every run.
import os
import random
import subprocess
import sys

fdr, work, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(work, exist_ok=True)
inputs = []
for i, t in enumerate(traces):
    if t.endswith('.txt'):
        out = os.path.join(work, 'in%d.fdr' % i)
        subprocess.run([fdr, 'assemble', t, '-o', out], check=True)
        t = out
    inputs.append(open(t, 'rb').read())

rng = random.Random(20261122)
reader_env = dict(os.environ, FDRTRACE_ANALYSIS_READER='1')
path = os.path.join(work, 'mutant.fdr')
failures = 0
for round_ in range(150):
    b = bytearray(rng.choice(inputs))
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(32, len(b))] = rng.randrange(256)
    if rng.random() < 0.2:
        b = b[:rng.randrange(32, len(b))]
    with open(path, 'wb') as f:
        f.write(b)
    for cmd in (['account'], ['stack', '-P'], ['replay'], ['convert'], ['graph']):
        fast = subprocess.run([fdr] + cmd + [path], capture_output=True, timeout=30)
        slow = subprocess.run([fdr] + cmd + [path], capture_output=True, timeout=30,
                              env=reader_env)
        if fast.returncode not in (0, 1) or slow.returncode not in (0, 1):
            print('FAIL round %d %s: exit %d (reader path %d)' %
                  (round_, cmd, fast.returncode, slow.returncode))
        elif fast.stdout != slow.stdout or fast.returncode != slow.returncode:
            print('FAIL round %d %s: runs and one event per record disagree' % (round_, cmd))
        else:
            continue
        failures += 1
        os.rename(path, os.path.join(work, 'failed-%d.fdr' % round_))
        break
print('%d rounds, %d failures' % (150, failures))
sys.exit(1 if failures else 0)
