#!/bin/bash
# invalid.sh FDRTRACE TEXT EXPECTED_VERIFY WORKDIR
#
# An invalid trace: TEXT assembles (assemble does not validate), then
#   - verify exits exactly 1 and prints exactly EXPECTED_VERIFY (the
#     "trace.fdr:OFFSET: message" lines);
#   - dump exits exactly 1 and its last line on stderr is the first problem;
#   - info exits exactly 1, prints an "error:" line with the first problem;
#   - when that problem is in the file header (offset below 32), every
#     analysis command exits exactly 1 with it on stderr: none reads on.
set -eu

# Paths given relative to the directory meson runs us in stay valid after cd.
abs() { case $1 in /*) echo "$1" ;; '') echo "" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$1 text=$2 expected=$3 work=$4
fdr=$(abs "$fdr") text=$(abs "$text") expected=$(abs "$expected") work=$(abs "$work")

for f in "$fdr" "$text" "$expected"; do
	[ -e "$f" ] || { echo "invalid.sh: missing $f" >&2; exit 1; }
done
[ -s "$expected" ] || { echo "invalid.sh: $expected is empty" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cd "$work"

expect_rc() {
	local want=$1 rc=0
	shift
	"$@" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: '$*' exited $rc, expected $want" >&2
		exit 1
	fi
}

echo "--- assemble $text"
expect_rc 0 "$fdr" assemble "$text" -o trace.fdr

echo "--- verify, compared with $expected"
expect_rc 1 "$fdr" verify trace.fdr >verify.out
diff -u "$expected" verify.out

first=$(head -n 1 "$expected")

echo "--- dump"
expect_rc 1 "$fdr" dump trace.fdr >dump.out 2>dump.err
if [ "$(tail -n 1 dump.err)" != "$first" ]; then
	echo "FAIL: dump's error is not the first problem:" >&2
	cat dump.err >&2
	exit 1
fi

echo "--- info"
expect_rc 1 "$fdr" info trace.fdr >info.out 2>info.err
grep -qF "error:           $first" info.out

off=${first#trace.fdr:}
off=${off%%:*}
if [ "$off" -lt 32 ]; then
	echo "--- a header problem: every command refuses the trace"
	for c in "account" "replay" "stack" "graph" "convert -o out" "convert -f perfetto -o out" \
		"convert -f xray -o out" "extract-map -o out" "diff trace.fdr"; do
		expect_rc 1 "$fdr" $c trace.fdr >cmd.out 2>cmd.err
		grep -qxF "$first" cmd.err || {
			echo "FAIL: '$c' did not say '$first':" >&2
			cat cmd.err >&2
			exit 1
		}
	done
fi
echo "ok"
