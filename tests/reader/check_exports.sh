#!/bin/sh
# SPDX-License-Identifier: MIT
# check_exports.sh LIB.so - the reader's shared library exports only the
# public API (fdrtrace_* functions); everything else is hidden.
lib="$1"
command -v nm >/dev/null 2>&1 || { echo "nm not found: skipped"; exit 77; }
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ { print $3 }') || exit 1
[ -n "$syms" ] || { echo "no exported symbols in $lib"; exit 1; }
bad=$(printf '%s\n' "$syms" | grep -v '^fdrtrace_')
if [ -n "$bad" ]; then
	echo "exported beyond the API:"; printf '%s\n' "$bad"; exit 1
fi
printf '%s\n' "$syms" | grep -qx fdrtrace_reader_read || { echo "fdrtrace_reader_read not exported"; exit 1; }
exit 0
