#!/bin/bash
# speedscope.sh FDRTRACE CALC WORKDIR
#
# fdrtrace's output in a real viewer: a trace of examples/calc converted to
# Chrome JSON (convert) and to folded stacks (stack) is loaded into
# speedscope in headless Chromium (speedscope.js, with puppeteer-core; both
# from npm, installed by .ci/install-deps into tests/viewer/node_modules);
# the functions' names must appear on the rendered page (the Sandwich
# view's table), and a name from another trace must not. Skips (exit 77)
# with a message when node, the npm packages or Chromium are missing, or
# Chromium cannot start.
set -u

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") calc=$(abs "$2") work=$(abs "$3")
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"

command -v node >/dev/null || { echo "SKIP: no node (Debian: nodejs)"; exit 77; }
[ -d "$here/node_modules/speedscope/dist/release" ] ||
	{ echo "SKIP: speedscope is not installed (cd tests/viewer && npm ci; .ci/install-deps does it)"; exit 77; }
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$chromium" ] || { echo "SKIP: no Chromium (Debian: chromium)"; exit 77; }

FDRTRACE_MODE=fdr FDRTRACE_OPTIONS=logfile_base=calc. "$calc" >run.out 2>run.err ||
	{ echo "FAIL: calc failed"; cat run.err; exit 1; }
set -- calc.*.fdr
[ -e "$1" ] || { echo "FAIL: no trace"; exit 1; }
"$fdr" convert -q "$1" -o calc.json || exit 1
"$fdr" stack -q "$1" >calc.folded || exit 1
names=main,fib,worker,evaluate,expr,term,factor,skip_space
CHROMIUM=$chromium timeout 600 node "$here/speedscope.js" \
	"$PWD/calc.json=$names,!no_such_function" "$PWD/calc.folded=$names,!no_such_function"
