#!/usr/bin/env bash
# examples/demo.sh - the README's first command: install what is needed,
# build, run the example calculator with tracing on, and show its trace.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-deps
[[ -d build ]] || meson setup build >/dev/null
ninja -C build >/dev/null
out=$(mktemp -d /tmp/fdrtrace-demo.XXXXXX)
echo "== FDRTRACE_MODE=fdr build/examples/calc   (trace files go to $out)"
(cd "$out" && FDRTRACE_MODE=fdr "$OLDPWD/build/examples/calc")
trace=$(ls "$out"/fdrtrace.calc.*.fdr | head -n 1)
echo
echo "== fdrtrace info $trace"
build/tools/fdrtrace/fdrtrace info "$trace"
echo
echo "== fdrtrace verify $trace && echo valid"
build/tools/fdrtrace/fdrtrace verify "$trace" && echo valid
echo
echo "== fdrtrace account $trace"
build/tools/fdrtrace/fdrtrace account "$trace"
echo
echo "== fdrtrace dump $trace | head -n 40"
build/tools/fdrtrace/fdrtrace dump "$trace" | head -n 40 || true
