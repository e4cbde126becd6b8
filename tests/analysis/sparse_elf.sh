#!/bin/bash
# sparse_elf.sh FDRTRACE WORKDIR
#
# A module file that is mostly a hole (issue 33): a shared library whose
# .symtab was moved into a hole at its end (sparse_elf.py: 16 KB on disk,
# 3 GB or 768 MB long: a table over 1 GiB, or one in the hole), with the
# library's build-id, named by a trace's module record or
# found as the build-id debug file of a stripped copy (--debug-dir). Every
# page of the hole read as symbols: 3 GB of RSS and seconds of work. Now
# the file is refused with one line on stderr naming it: account runs
# within 64 MB of RSS, the name falls back (#ID@0xADDRESS for the module
# record; the stripped module's .dynsym with the debug file). The intact
# library still names the function.
set -eu

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") work=$(abs "$2")
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
cc=${CC:-cc}
for t in python3 readelf strip "$cc"; do
	command -v "$t" >/dev/null || { echo "SKIP: no $t"; exit 77; }
done
printf 'int good(void) { return 2; }\n' >good.c
"$cc" -shared -fPIC -Wl,--build-id -o libgood.so good.c
id=$(readelf -n libgood.so | awk '/Build ID/ { print $3 }')
[ -n "$id" ] || { echo "SKIP: no build-id"; exit 77; }
off=$(readelf -Ws libgood.so | awk '$8 == "good" { print $2; exit }')
addr=$(printf '0x%x' $((0x7f0000000000 + 0x$off)))
trace() {	# trace NAME MODULE_PATH
	cat >"$1.txt" <<-T
	hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096
	buf ext size=auto
	buf new tid=1
	buf wal sec=1700000000 usec=0
	buf pid pid=1
	cpu new cpu=0 tsc=1000
	ext module_map delta=0 module_id=1 load_base=0x7f0000000000 size=0x100000 build_id=$id path=$2
	ext func delta=0 func_id=1 address=$addr module_id=1
	fun ent id=1 delta=0
	fun exi id=1 delta=100
	T
	"$fdr" assemble "$1.txt" -o "$1.fdr"
}
# account's peak RSS in KiB (of the child alone), stdout and stderr in NAME.out/.err
rss() {	# rss NAME ARGS...
	local name=$1
	shift
	python3 - "$name" "$@" <<-'P'
	import resource, subprocess, sys
	name = sys.argv[1]
	with open(name + ".out", "wb") as o, open(name + ".err", "wb") as e:
	    rc = subprocess.call(sys.argv[2:], stdout=o, stderr=e, timeout=120)
	print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
	sys.exit(rc)
	P
}
trace intact "$work/libgood.so"
rss intact "$fdr" account intact.fdr >/dev/null || fail "account of the intact library"
grep -q ' good$' intact.out || fail "the intact library does not name good: $(cat intact.out)"

# 3 GB: a symbol table over 1 GiB; 768 MB: under it, but in the hole
for size in $((3 << 30)) $((768 << 20)); do
	python3 "$here/sparse_elf.py" libgood.so libsparse.so $size
	disk=$(($(stat -c %b libsparse.so) * $(stat -c %B libsparse.so)))
	[ "$disk" -lt $((64 << 20)) ] || { echo "SKIP: the file system made no hole ($disk bytes)"; exit 77; }
	trace sparse "$work/libsparse.so"
	kb=$(rss sparse "$fdr" account sparse.fdr) || fail "account exited with an error"
	[ "$kb" -lt $((64 << 10)) ] || fail "account took $kb KiB of RSS on a sparse module"
	grep -q '#1@0x7f' sparse.out || fail "the name is not the fallback: $(cat sparse.out)"
	[ "$(grep -c 'libsparse.so: not used: ' sparse.err)" -eq 1 ] ||
		fail "the refusal is not said once: $(cat sparse.err)"
	echo "ok   module record, $size bytes long: $kb KiB; $(cat sparse.err)"
done
grep -q 'not used: a section it would read lies in a hole' sparse.err ||
	fail "768 MB: not refused for its hole: $(cat sparse.err)"

# the same file as the build-id debug file of a stripped copy
mkdir -p "dbg/.build-id/${id:0:2}"
python3 "$here/sparse_elf.py" libgood.so "dbg/.build-id/${id:0:2}/${id:2}.debug" $((3 << 30))
strip -o libstripped.so libgood.so
trace stripped "$work/libstripped.so"
kb=$(rss stripped "$fdr" account --debug-dir "$work/dbg" stripped.fdr) || fail "account --debug-dir"
[ "$kb" -lt $((64 << 10)) ] || fail "account took $kb KiB of RSS on a sparse debug file"
grep -q ' good$' stripped.out || fail "the stripped module's .dynsym is not used: $(cat stripped.out)"
grep -q "${id:2}.debug: not used: " stripped.err ||
	fail "the refused debug file is not named: $(cat stripped.err)"
echo "ok   debug file: $kb KiB"
