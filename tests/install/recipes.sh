#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/install/recipes.sh - every build recipe of docs/real-projects.md,
# run exactly as printed against an installed libfdrtrace. A build recipe
# is a block that opens with
#   ```sh recipe=NAME project=sample binary=BINARY ...
# (the real suite's real-recipes runs every recipe, these included, from
# the build directory: tests/real/recipes.py). It runs (bash -e) in a
# fresh copy of tests/install/sample, against
# libfdrtrace installed into a scratch DESTDIR (pkg-config finds it through
# PKG_CONFIG_PATH and PKG_CONFIG_SYSROOT_DIR, the compiler through
# LIBRARY_PATH and CPATH: what `meson install` gives in /usr/local); then
# BINARY runs with FDRTRACE_MODE=fdr and must print what the untraced
# sample prints and leave a trace that verifies, with the sample's calls.
# usage: recipes.sh MESON BUILD_ROOT SOURCE_ROOT
set -euo pipefail
if [ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ]; then
	echo "skip: sanitized build (its libraries need the sanitizer runtime in the program)"
	exit 77
fi
meson=$1 build=$2 src=$3
doc=$src/docs/real-projects.md
work=$(mktemp -d /tmp/fdrtrace-recipes.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

$meson install -C "$build" --no-rebuild --quiet --destdir "$work/root" >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log" >&2; fail "meson install"; }
pcfile=$(find "$work/root" -name fdrtrace.pc | head -n 1)
lib=$(find "$work/root" -name 'libfdrtrace.so' | head -n 1)
[ -n "$pcfile" ] && [ -n "$lib" ] || fail "install: no fdrtrace.pc or libfdrtrace.so"
fdrtrace=$(find "$work/root" -path '*/bin/fdrtrace' | head -n 1)
export PKG_CONFIG_PATH=$(dirname "$pcfile") PKG_CONFIG_SYSROOT_DIR=$work/root
export LIBRARY_PATH=$(dirname "$lib") LD_LIBRARY_PATH=$(dirname "$lib")
export CPATH=$(find "$work/root" -type d -name include | head -n 1)

# NAME BINARY, then the block, for each recipe: "@@ NAME BINARY" lines
# start a recipe in the extracted file.
python3 - "$doc" >"$work/recipes" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
i = 0
while i < len(lines):
    m = re.match(r"```sh\s+(.*)$", lines[i])
    i += 1
    if not m:
        continue
    attrs = dict(a.split("=", 1) for a in m.group(1).split() if "=" in a)
    if attrs.get("project") != "sample" or "binary" not in attrs:
        continue
    print(f"@@ {attrs['recipe']} {attrs['binary']}")
    while lines[i] != "```":
        print(lines[i])
        i += 1
PY
count=$(grep -c '^@@ ' "$work/recipes")
[ "$count" -ge 6 ] || fail "found $count recipes in $doc, expected at least 6"

have() { command -v "$1" >/dev/null 2>&1; }
expected=$(printf '385')
ran=0
while read -r _ name binary; do
	dir=$work/$name
	cp -r "$src/tests/install/sample" "$dir"
	awk -v n="$name" '/^@@ /{on = ($2 == n); next} on' "$work/recipes" >"$work/$name.sh"
	case $name in
	*clang*) have clang || { echo "skip $name: no clang"; continue; } ;;
	esac
	case $name in
	cmake-*) have cmake || { echo "skip $name: no cmake"; continue; } ;;
	autotools-*)
		have autoreconf && have automake || { echo "skip $name: no autoconf/automake"; continue; }
		# a project's release ships configure; the sample makes it
		(cd "$dir" && autoreconf -i >"$work/$name.autoreconf" 2>&1) ||
			{ cat "$work/$name.autoreconf" >&2; fail "$name: autoreconf"; } ;;
	esac
	(cd "$dir" && bash -e "$work/$name.sh") >"$work/$name.log" 2>&1 ||
		{ tail -n 30 "$work/$name.log" >&2; fail "$name: the recipe as printed failed"; }
	[ -x "$dir/$binary" ] || fail "$name: no $binary after the recipe"
	mkdir "$dir/run"
	out=$(cd "$dir/run" && FDRTRACE_MODE=fdr "$dir/$binary" 2>"$work/$name.err") ||
		fail "$name: $binary failed: $(cat "$work/$name.err")"
	[ "$out" = "$expected" ] || fail "$name: printed '$out', expected '$expected'"
	trace=$(ls "$dir/run"/*.fdr 2>/dev/null | head -n 1)
	[ -n "$trace" ] || fail "$name: no trace (is the program linked with libfdrtrace? $(cat "$work/$name.err"))"
	"$fdrtrace" verify "$trace" >/dev/null || fail "$name: the trace does not verify"
	calls=$("$fdrtrace" account "$trace" --format csv 2>/dev/null | grep -c 'sum_squares' || true)
	[ "$calls" -ge 1 ] || fail "$name: sum_squares is not in the trace's account"
	echo "ok   $name: $binary traced"
	ran=$((ran + 1))
done < <(grep '^@@ ' "$work/recipes")
[ "$ran" -ge 2 ] || fail "only $ran recipes could run"
echo "$ran of $count recipes run as printed"
