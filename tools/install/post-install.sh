#!/bin/sh
# SPDX-License-Identifier: MIT
# post-install.sh LIBDIR - run by `meson install` after it copied the files:
# refresh the dynamic linker's cache so that a program linked with
# libfdrtrace runs right away (libfdrtrace.so.0 is found without
# LD_LIBRARY_PATH). Nothing to do for a staged install (DESTDIR: the
# packager's ldconfig runs on the target). Never fails the install: when
# the cache cannot be refreshed it says what to do instead.
libdir=$1
[ -n "$DESTDIR" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then
	ldconfig || echo "fdrtrace: ldconfig failed: run it by hand before starting a program linked with libfdrtrace" >&2
	if ! ldconfig -p | grep -q "libfdrtrace.so.0 .*=> $libdir/"; then
		echo "fdrtrace: $libdir is not a directory the dynamic linker searches: add it to /etc/ld.so.conf.d/ and run ldconfig, or set LD_LIBRARY_PATH=$libdir" >&2
	fi
else
	echo "fdrtrace: installed in $libdir; as root, run ldconfig (or set LD_LIBRARY_PATH=$libdir) before starting a program linked with libfdrtrace" >&2
fi
exit 0
