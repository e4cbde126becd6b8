#!/bin/bash
# golden.sh FDRTRACE TEXT EXPECTED_DUMP WORKDIR [LLVM_XRAY]
#
# A valid golden trace: assemble TEXT, then
#   - verify exits 0 and prints nothing;
#   - dump exits 0 and prints exactly EXPECTED_DUMP;
#   - dump | assemble gives back the identical file (with and without the
#     derived comments);
#   - info exits 0 (and prints exactly expected/NAME.info when it exists);
#   - when LLVM_XRAY is given (meson leaves it empty for traces llvm-xray 14
#    cannot read: version 1, empty event payloads), llvm-xray
#     fdr-dump --verify accepts it too (an independent reader).
set -eu

# Paths given relative to the directory meson runs us in stay valid after cd.
abs() { case $1 in /*) echo "$1" ;; '') echo "" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$1 text=$2 expected=$3 work=$4 xray=${5:-}
fdr=$(abs "$fdr") text=$(abs "$text") expected=$(abs "$expected") work=$(abs "$work")

for f in "$fdr" "$text" "$expected"; do
	[ -e "$f" ] || { echo "golden.sh: missing $f" >&2; exit 1; }
done
rm -rf "$work"
mkdir -p "$work"
cd "$work"

step() { echo "--- $*"; }
expect_rc() {	# expect_rc WANT COMMAND...: run, and insist on the exact status
	local want=$1 rc=0
	shift
	"$@" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: '$*' exited $rc, expected $want" >&2
		exit 1
	fi
}

step "assemble $text"
expect_rc 0 "$fdr" assemble "$text" -o trace.fdr
[ -s trace.fdr ] || { echo "FAIL: assemble wrote nothing" >&2; exit 1; }

step "verify"
expect_rc 0 "$fdr" verify trace.fdr >verify.out
if [ -s verify.out ]; then
	echo "FAIL: verify printed something for a valid trace:" >&2
	cat verify.out >&2
	exit 1
fi

step "dump, compared with $expected"
expect_rc 0 "$fdr" dump trace.fdr >trace.dump
diff -u "$expected" trace.dump

step "round trip: dump | assemble | cmp"
expect_rc 0 "$fdr" assemble trace.dump -o again.fdr
cmp trace.fdr again.fdr
expect_rc 0 "$fdr" dump -n trace.fdr >plain.dump
if grep -q '#' plain.dump; then
	echo "FAIL: dump -n printed a comment" >&2
	exit 1
fi
"$fdr" dump -n - <trace.fdr | "$fdr" assemble - -o plain.fdr
cmp trace.fdr plain.fdr

step "info"
expect_rc 0 "$fdr" info trace.fdr >info.out
grep -q '^version:' info.out
info_expected=${expected%.dump}.info
if [ -e "$info_expected" ]; then
	step "info, compared with $info_expected"
	diff -u "$info_expected" info.out
fi

if [ -n "$xray" ]; then
	step "llvm-xray fdr-dump --verify"
	"$xray" fdr-dump --verify trace.fdr >xray.out
fi
echo "ok"
