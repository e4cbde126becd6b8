#!/bin/bash
# gen_seeds.sh FDRTRACE [CLANG] - rebuild tests/fuzz/elf/m.elf and the seed
# directories of the fdrtrace command's fuzz targets (tests/fuzz/corpus-*).
# Run by hand after changing tiny.c or the goldens; the outputs are
# committed (CI does not run this: a new clang would change m.elf's bytes).
#
#   elf/m.elf   tiny.c alone as a shared object: symbols, DWARF (-g), an
#               XRay instrumentation map (-fxray-instrument), a build-id
#   corpus-fuzz_analysis/
#     xray-*.fdr        tiny.c + driver.c run by LLVM's XRay FDR runtime
#                       (buffers of 4 KiB and 64 KiB; function ids are
#                       m.elf's: the target names them with --instr-map)
#     golden-*.fdr      the analysis and tool goldens, assembled
#     elf-*.fdr         traces whose module records name "m.elf" (its
#                       build-id) and whose func records give only
#                       addresses in it; a native stack in it
#     elfin-*           the same followed by the separator and m.elf itself
#                       (the target then writes that part as m.elf)
#   corpus-fuzz_assemble/   the goldens' texts, and dump's text of each trace
#   corpus-fuzz_roundtrip/  every .fdr of corpus-fuzz_analysis
set -eu
fdr=$(realpath "$1")
clang=${2:-clang}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

"$clang" -fPIC -O1 -g -fxray-instrument -fxray-instruction-threshold=1 \
	-fdebug-prefix-map="$here"=. -c "$here/tiny.c" -o tiny.o
"$clang" -shared -nostdlib -o m.elf tiny.o -Wl,--build-id -Wl,-z,noseparate-code \
	-Wl,-z,norelro -Wl,--hash-style=gnu
"$clang" -O1 -c "$here/driver.c" -o driver.o
"$clang" -o tiny-x tiny.o driver.o -fxray-instrument -fxray-modes=xray-fdr
cp m.elf "$here/m.elf"

an=$here/../corpus-fuzz_analysis as=$here/../corpus-fuzz_assemble rt=$here/../corpus-fuzz_roundtrip
rm -rf "$an" "$as" "$rt"
mkdir -p "$an" "$as" "$rt"

for run in "4096 short" "65536 short" "4096 long"; do
	set -- $run
	arg=; [ "$2" = long ] && arg=long
	XRAY_OPTIONS="patch_premain=false xray_mode=xray-fdr xray_logfile_base=$work/x- verbosity=0" \
		./tiny-x "buffer_size=$1:buffer_max=8:func_duration_threshold_us=0" $arg 2>/dev/null
	mv x-tiny-x.* "$an/xray-$1-$2.fdr"
done

for t in "$top"/tests/analysis/golden/*.txt "$top"/tests/tool/golden/*.txt \
	 "$top"/tests/analysis/hostile/*.txt; do
	n=$(basename "$t" .txt)
	"$fdr" assemble "$t" -o "$an/golden-$n.fdr" || continue
	cp "$t" "$as/golden-$n.txt"
done

# Module records naming m.elf, func records with addresses only.
bid=$(readelf -n m.elf | awk '/Build ID/ { print $3 }')
base=0x7f0000000000
addr() { printf '0x%x' $((base + 0x$(nm m.elf | awk -v s="$1" '$3 == s { print $1 }'))); }
leaf=$(addr leaf) helper=$(addr helper) fact=$(addr fact) work_=$(addr work)
for v in 5 3; do
	{
		echo "hdr fdr version=$v bitfield=3 cycle_frequency=1000000000 buffer_size=4096"
		[ $v -ge 2 ] && echo "buf ext size=auto"
		echo "buf new tid=10"
		echo "buf wal sec=1700000000 usec=0"
		[ $v -ge 3 ] && echo "buf pid pid=10"
		echo "cpu new cpu=0 tsc=1000"
		if [ $v = 5 ]; then
			echo "ext process delta=0 pid=10 ppid=1 program=m.elf"
			echo "ext module_map delta=0 module_id=1 load_base=$base size=0x10000 build_id=$bid path=m.elf"
			echo "ext module_map delta=0 module_id=2 load_base=0x500000 size=0x10000 path=m.elf"
			echo "ext func delta=0 func_id=1 address=$work_ module_id=1"
			echo "ext func delta=0 func_id=2 address=$helper module_id=1"
			echo "ext func delta=0 func_id=3 address=$leaf module_id=1"
			echo "ext func delta=0 func_id=4 address=$fact module_id=1"
			echo "ext func delta=0 func_id=5 address=0x500100 module_id=2"
		fi
		echo "fun ent id=1 delta=10"
		for i in 1 2 3; do
			echo "fun ent id=2 delta=10"; echo "fun ent id=3 delta=5"
			echo "fun exi id=3 delta=5"; echo "fun exi id=2 delta=3"
			echo "fun ent id=4 delta=10"; echo "fun ent id=4 delta=2"
			echo "fun exi id=4 delta=2"; echo "fun exi id=4 delta=1"
		done
		echo "fun ent id=5 delta=10"
		[ $v = 5 ] &&
			echo "ext native_stack delta=1 tid=10 why=signal signal=11 fault_address=0 frames=$((leaf + 4))@1,$((helper + 8))@1,$((work_ + 1))@1,0x500104@2,0x1234@-1"
		echo "fun ent id=3 delta=4"
	} >elf-v$v.txt
	"$fdr" assemble elf-v$v.txt -o "$an/elf-v$v.fdr"
	cp elf-v$v.txt "$as/elf-v$v.txt"
	{ cat "$an/elf-v$v.fdr"; printf '\n#FZELF#\n'; cat m.elf; } >"$an/elfin-v$v"
done

for f in "$an"/*.fdr; do
	cp "$f" "$rt/"
	"$fdr" dump "$f" >"$as/dump-$(basename "$f" .fdr).txt" || rm -f "$as/dump-$(basename "$f" .fdr).txt"
done
ls -l "$here/m.elf" "$an" "$as" "$rt"
