#!/bin/bash
# regen.sh FDRTRACE: rewrite expected/*.dump, *.info and *.verify from the
# current fdrtrace and reader. Not run by the test suite: use it after a
# deliberate change of the dump format or of a reader message, then read
# the diff (git diff tests/tool/expected) before committing it.
set -eu
fdr=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in "$here"/golden/*.txt; do
	n=$(basename "$t" .txt)
	"$fdr" assemble "$t" -o "$tmp/trace.fdr"
	"$fdr" dump "$tmp/trace.fdr" >"$here/expected/$n.dump"
	if [ -e "$here/expected/$n.info" ]; then
		(cd "$tmp" && "$fdr" info trace.fdr) >"$here/expected/$n.info"
	fi
done
for t in "$here"/invalid/*.txt; do
	n=$(basename "$t" .txt)
	"$fdr" assemble "$t" -o "$tmp/trace.fdr"
	rc=0
	(cd "$tmp" && "$fdr" verify trace.fdr) >"$here/expected/$n.verify" || rc=$?
	[ "$rc" -eq 1 ] || echo "regen.sh: $n: verify exited $rc, not 1" >&2
done
