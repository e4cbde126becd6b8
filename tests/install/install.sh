#!/usr/bin/env bash
# tests/install/install.sh - what a user does after `meson install`:
# install into a scratch DESTDIR, build a program with
# `cc -finstrument-functions app.c $(pkg-config --cflags --libs fdrtrace)`,
# run it with FDRTRACE_MODE=fdr, and check the trace with the installed
# fdrtrace command; then the same program linked statically
# (pkg-config --static).
# usage: install.sh MESON BUILD_ROOT SOURCE_ROOT
set -euo pipefail
if [ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ]; then
	echo "skip: sanitized build (its libraries need the sanitizer runtime in the program)"
	exit 77
fi
meson=$1 build=$2 src=$3
work=$(mktemp -d /tmp/fdrtrace-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

$meson install -C "$build" --no-rebuild --quiet --destdir "$work/root" >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log" >&2; fail "meson install"; }
prefix=$($meson introspect "$build" --buildoptions |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
root=$work/root$prefix
pc=$(dirname "$(find "$root" -name fdrtrace.pc | head -n 1)")
[ -n "$pc" ] || fail "no fdrtrace.pc installed"
for f in include/fdrtrace/fdrtrace.h include/fdrtrace/format.h include/fdrtrace/reader.h bin/fdrtrace \
	share/man/man3/fdrtrace-api.3 share/man/man1/fdrtrace.1 share/man/man1/fdrtrace-record.1; do
	[ -e "$root/$f" ] || fail "$f not installed"
done
libdir=$(dirname "$(find "$root" -name 'libfdrtrace.so' | head -n 1)")
export PKG_CONFIG_PATH=$pc
pcflags="--define-variable=prefix=$root"

cat >"$work/app.c" <<'C'
#include <stdio.h>
#include <fdrtrace/fdrtrace.h>
static int twice(int x) { return 2 * x; }
static int sum(int n) { int s = 0; for (int i = 0; i < n; i++) s += twice(i); return s; }
int main(void) { printf("%d\n", sum(10)); return 0; }
C
# shellcheck disable=SC2046
cc -finstrument-functions "$work/app.c" $(pkg-config $pcflags --cflags --libs fdrtrace) -o "$work/app"
# the library's flags before the objects (LDFLAGS' place in make and
# CMake): with Debian's --as-needed the library used to be dropped and the
# program ran untraced; pkg-config's Libs keeps it needed
# shellcheck disable=SC2046
cc $(pkg-config $pcflags --libs fdrtrace) -finstrument-functions \
	$(pkg-config $pcflags --cflags fdrtrace) "$work/app.c" -o "$work/app-early"
readelf -d "$work/app-early" | grep -q 'NEEDED.*libfdrtrace' ||
	fail "app-early: libfdrtrace named before the objects was dropped (--as-needed)"
# shellcheck disable=SC2046
cc -finstrument-functions "$work/app.c" $(pkg-config $pcflags --cflags fdrtrace) \
	"$libdir/libfdrtrace.a" $(pkg-config $pcflags --static --libs-only-l fdrtrace | sed 's/-lfdrtrace//') \
	-o "$work/app-static"

for app in app app-early app-static; do
	mkdir -p "$work/run-$app"
	out=$(cd "$work/run-$app" && LD_LIBRARY_PATH=$libdir FDRTRACE_MODE=fdr "$work/$app" 2>"$work/$app.err")
	[ "$out" = 90 ] || fail "$app printed '$out'"
	trace=$(ls "$work/run-$app"/fdrtrace.$app.*.fdr)
	LD_LIBRARY_PATH=$libdir "$root/bin/fdrtrace" verify "$trace" || fail "$app: trace does not verify"
	# main, sum and 10 x twice: 12 entries
	entries=$(LD_LIBRARY_PATH=$libdir "$root/bin/fdrtrace" info "$trace" | sed -n 's/.*(entry \([0-9]*\),.*/\1/p')
	[ "$entries" = 12 ] || fail "$app: $entries function entries, expected 12"
	grep -q "fdrtrace: .*fdrtrace.$app.*: 24 records, 0 lost" "$work/$app.err" ||
		fail "$app: summary line: $(cat "$work/$app.err")"
	echo "ok   $app (pkg-config $( [ $app = app-static ] && echo static || echo shared ))"
done

# The install's last step refreshes the dynamic linker's cache, so that a
# linked program starts without LD_LIBRARY_PATH (what the README says);
# a staged install (DESTDIR) leaves that to the packager, and a directory
# the linker does not search is named with what to do.
post=$src/tools/install/post-install.sh
grep -q "post-install.sh" "$src/meson.build" || fail "meson.build does not run post-install.sh"
out=$(DESTDIR=$work/root sh "$post" "$libdir" 2>&1) || fail "post-install.sh with DESTDIR failed"
[ -z "$out" ] || fail "post-install.sh with DESTDIR said: $out"
out=$(env -u DESTDIR sh "$post" "$libdir" 2>&1) || fail "post-install.sh failed"
case $out in
*"$libdir"*LD_LIBRARY_PATH*) echo "ok   post-install names $libdir, which the linker does not search" ;;
*) fail "post-install.sh for an unsearched directory said: '$out'" ;;
esac
