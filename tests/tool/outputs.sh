#!/bin/bash
# outputs.sh FDRTRACE GOLDEN_BASIC WORKDIR
#
# No command with -o deletes or truncates a file it did not create (issue
# #11, class 1). For convert, assemble and extract-map on bad input: an
# existing user file keeps its bytes, a device node (made with mknod when
# root, else /dev/null only) stays a device. On good input: the file is
# replaced (its mode kept), a symlink's target is written and the link kept
# (a link to nothing is refused with a message, not followed),
# a FIFO is written in place, no temporary file is left behind. An output
# that is the input (the same path, a symbolic or hard link to it, standard
# output appended to it, standard input read from it) is refused with
# status 2 before anything is written, the input kept (issue 33: the trace
# was replaced by the output, status 0).
set -u

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") basic=$(abs "$2") work=$(abs "$3")
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fails=0
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

"$fdr" assemble "$basic" -o good.fdr || { echo "FAIL assemble"; exit 1; }
printf 'not a trace at all, just text, long enough for a header\n' >bad.fdr
printf 'buf frob\n' >bad.txt
printf 'the user wrote this\n' >keep.want

# run_bad NAME COMMAND... (COMMAND's -o target is the file "target")
devs=(/dev/null)
if [ "$(id -u)" = 0 ] && mknod node c 1 3 2>/dev/null; then
	devs+=("$work/node")
else
	echo "skip mknod (not root): /dev/null only"
fi
for cmd in "convert bad.fdr" "assemble bad.txt" "extract-map bad.fdr"; do
	name=${cmd%% *}
	cp keep.want target
	chmod 640 target
	if "$fdr" $cmd -o target 2>err; then fail "$name-bad-input-status"; fi
	if cmp -s keep.want target && [ "$(stat -c %a target)" = 640 ]; then
		ok "$name-keeps-user-file"
	else
		fail "$name-keeps-user-file"
	fi
	for d in "${devs[@]}"; do
		"$fdr" $cmd -o "$d" 2>/dev/null
		if [ -c "$d" ] && [ "$(stat -c %t:%T "$d")" = 1:3 ]; then
			ok "$name-keeps-device $d"
		else
			fail "$name-keeps-device $d"; ls -l "$d"
		fi
	done
	if [ "$(ls -A | grep -c '^\.target\.')" = 0 ]; then ok "$name-no-temp-left"; else fail "$name-no-temp-left"; fi
done

# Good input replaces the file, keeping its mode.
"$fdr" dump good.fdr >good.txt
for cmd in "convert good.fdr" "assemble good.txt" "extract-map good.fdr"; do
	name=${cmd%% *}
	cp keep.want target
	chmod 640 target
	"$fdr" $cmd >want.out
	if "$fdr" $cmd -o target && cmp -s want.out target && [ "$(stat -c %a target)" = 640 ]; then
		ok "$name-replaces"
	else
		fail "$name-replaces"
	fi
	rm -f link && ln -s target link && cp keep.want target
	if "$fdr" $cmd -o link && [ -L link ] && cmp -s want.out target; then
		ok "$name-through-symlink"
	else
		fail "$name-through-symlink"
	fi
	# a link to nothing is not followed to create a file; the message says so
	rm -f link nowhere && ln -s nowhere link
	if ! "$fdr" $cmd -o link 2>err && [ -L link ] && [ ! -e nowhere ] &&
		grep -q 'link: a symbolic link to a file that does not exist; not followed' err; then
		ok "$name-dangling-symlink"
	else
		fail "$name-dangling-symlink"; cat err
	fi
	rm -f link err
	rm -f fifo && mkfifo fifo
	cat fifo >from-fifo &
	if "$fdr" $cmd -o fifo && wait $! && cmp -s want.out from-fifo && [ -p fifo ]; then
		ok "$name-fifo"
	else
		fail "$name-fifo"
	fi
	if [ "$(ls -A | grep -c '^\.')" = 0 ]; then ok "$name-no-temp-left"; else fail "$name-no-temp-left"; ls -A; fi
done
# The output is the input: status 2, a message naming both, the input kept.
# refuse NAME INPUT COMMAND... (run in a copy; INPUT must keep its bytes)
refuse() {
	local name=$1 in=$2 rc=0
	shift 2
	cp -p "$in.orig" "$in"
	"$@" >out 2>err || rc=$?
	if [ "$rc" = 2 ] && grep -q "is the input" err && cmp -s "$in.orig" "$in" &&
		[ "$(ls -A | grep -c '^\.')" = 0 ]; then
		ok "same-file-$name"
	else
		fail "same-file-$name (status $rc)"
		cat err
	fi
}
cp -p good.fdr trace.fdr.orig
cp -p "$basic" basic.txt.orig
refuse convert trace.fdr "$fdr" convert trace.fdr -o trace.fdr
refuse convert-perfetto trace.fdr "$fdr" convert -f perfetto trace.fdr -o ./trace.fdr
refuse convert-xray trace.fdr "$fdr" convert -f xray trace.fdr -o trace.fdr
rm -f sym && ln -s trace.fdr sym
refuse convert-symlink trace.fdr "$fdr" convert trace.fdr -o sym
refuse extract-map-symlink trace.fdr "$fdr" extract-map trace.fdr -o sym
rm -f sym
cp -p good.fdr trace.fdr && rm -f hard && ln trace.fdr hard
refuse convert-hardlink trace.fdr "$fdr" convert trace.fdr -o hard
refuse extract-map-hardlink trace.fdr "$fdr" extract-map trace.fdr -o hard
rm -f hard
refuse extract-map trace.fdr "$fdr" extract-map trace.fdr -o trace.fdr
refuse convert-stdin trace.fdr sh -c '"$1" convert - -o trace.fdr <trace.fdr' sh "$fdr"
refuse convert-stdout trace.fdr sh -c '"$1" convert trace.fdr >>trace.fdr' sh "$fdr"
refuse assemble basic.txt "$fdr" assemble basic.txt -o basic.txt
rm -f trace.fdr* basic.txt*
# /dev/null both ways is not a file to keep: allowed
if "$fdr" extract-map /dev/null -o /dev/null 2>err; [ $? = 2 ]; then
	fail same-file-device
else
	ok same-file-device
fi

# A missing directory is an error, and creates nothing.
if "$fdr" convert good.fdr -o no-such-dir/x 2>err; then fail missing-dir; else ok missing-dir; fi

echo "$fails failed"
[ "$fails" = 0 ]
