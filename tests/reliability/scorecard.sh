#!/usr/bin/env bash
# tests/reliability/scorecard.sh - run the reliability suite and rewrite the
# scorecard table in docs/reliability.md (between the two marker lines).
#
# usage: tests/reliability/scorecard.sh [BUILDDIR] [ASAN_BUILDDIR]
#   BUILDDIR       a configured build of this tree (default: build)
#   ASAN_BUILDDIR  optional -Db_sanitize=address,undefined -Dfuzz=true build:
#                  its fuzz targets give the fuzz rows
# Each test appends "row|runs|failures|figure" lines to $FDRTRACE_SCORECARD;
# a test that fails is marked FAIL on its rows whatever it reported.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
asan=${2:-}
doc=$top/docs/reliability.md
work=$(mktemp -d /tmp/fdrtrace-scorecard-XXXXXX)
trap 'rm -rf "$work"' EXIT

ninja -C "$build" >/dev/null || exit 1
export FDRTRACE_SCORECARD=$work/rows
: >"$FDRTRACE_SCORECARD"
"$build/tests/reliability/test_reliability" -j2 --tap="$work/tap" >"$work/log" 2>&1
suite=$?
python3 "$top/tests/reliability/check_signal_safety.py" objdump \
  "$build/runtime/libfdrtrace.so" >"$work/sigsafe" 2>&1
sig=$?
calls=$(sed -n 's/^library calls: //p' "$work/sigsafe" | wc -w)
reached=$(sed -n 's/^reached \([0-9]*\) functions.*/\1/p' "$work/sigsafe")
if [[ $sig == 0 ]]; then verdict="all on the allow-list"; else verdict=$(grep '^NOT' "$work/sigsafe" | tr '\n' ' '); fi
echo "Fatal-signal path: async-signal-safe calls only (objdump call graph)|1|$sig|${reached:-?} functions reached from lc_fatal, $calls library calls, $verdict" \
  >>"$FDRTRACE_SCORECARD"

# fuzz rows: each fuzz target of the ASan build for a fixed number of runs
if [[ -n $asan && -d $asan/tests/fuzz ]]; then
  ninja -C "$asan" >/dev/null || exit 1
  for f in "$asan"/tests/fuzz/fuzz_*; do
    [[ -x $f && ! -d $f && $f != *-corpus ]] || continue
    name=$(basename "$f")
    mkdir -p "$work/corpus-$name"
    # the command's targets run a whole command (or eleven) per input
    case $name in
      fuzz_analysis) runs=10000 len=65536 seeds=("$top/tests/fuzz/corpus-$name" "$top/tests/fuzz/corpus") ;;
      fuzz_roundtrip) runs=30000 len=65536 seeds=("$top/tests/fuzz/corpus-$name" "$top/tests/fuzz/corpus") ;;
      fuzz_assemble) runs=50000 len=16384 seeds=("$top/tests/fuzz/corpus-$name") ;;
      *) runs=200000 len=16384 seeds=("$top/tests/fuzz/corpus") ;;
    esac
    out=$("$f" -runs=$runs -max_len=$len -timeout=20 -rss_limit_mb=1024 \
      -artifact_prefix="$work/$name-" "$work/corpus-$name" "${seeds[@]}" 2>&1)
    rc=$?
    execs=$(grep -o 'Done [0-9]* runs' <<<"$out" | grep -o '[0-9]*' | tail -1)
    echo "Fuzz: $name (ASan+UBSan, LeakSanitizer)|${execs:-0}|$((rc != 0))|${execs:-0} executions, $((rc != 0)) crashes" \
      >>"$FDRTRACE_SCORECARD"
  done
fi

# failed tests from the TAP stream: "not ok N - suite::name ..."
failed=$(grep '^not ok' "$work/tap" 2>/dev/null | sed 's/^not ok [0-9]* - //; s/ .*//' | tr '\n' ' ')

python3 - "$FDRTRACE_SCORECARD" "$doc" "$suite" "$failed" <<'PY'
import sys, datetime, subprocess
rows_path, doc, suite, failed = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = []
for line in open(rows_path):
    parts = line.rstrip("\n").split("|", 3)
    if len(parts) == 4:
        rows.append(parts)
table = ["| scenario | runs | failures | figure |", "|---|---:|---:|---|"]
for name, runs, fails, fig in sorted(rows, key=lambda r: r[0].lower()):
    table.append(f"| {name} | {runs} | {fails} | {fig.replace('|', '/')} |")
when = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")
try:
    rev = subprocess.run(["git", "-C", doc.rsplit("/docs/", 1)[0], "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
except OSError:
    rev = "?"
status = "all tests passed" if suite == 0 and not failed.strip() else f"FAILED tests: {failed.strip() or '(see log)'}"
table.append("")
table.append(f"Generated {when} at {rev} by `tests/reliability/scorecard.sh`: {status}.")
text = open(doc).read()
begin, end = "<!-- scorecard:begin -->", "<!-- scorecard:end -->"
a, b = text.index(begin) + len(begin), text.index(end)
open(doc, "w").write(text[:a] + "\n" + "\n".join(table) + "\n" + text[b:])
print("\n".join(table))
PY
[[ $suite == 0 && $sig == 0 ]]
