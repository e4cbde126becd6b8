#!/bin/bash
# perfetto.sh FDRTRACE CALC WORKDIR
#
# convert --format perfetto, decoded two ways: protoc --decode_raw (Debian's
# protobuf-compiler) must parse every output and show every function name;
# perfetto_check.py (a wire-format decoder of its own) checks the structure
# (one sequence, tracks described before use, names interned before use,
# slices balanced and in time order per track) and counts the slices per
# name, which must equal the complete and begin events of the Chrome JSON
# of the same trace (golden traces: basic, imperfect, events, damaged,
# out-of-order), and the exact call counts of account on a real run of
# examples/calc. The selectors apply (-F). Prints both sizes for calc.
set -u

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") calc=$(abs "$2") work=$(abs "$3")
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! command -v python3 >/dev/null; then
	echo "SKIP: python3 is needed to decode the output"
	exit 77
fi
have_protoc=1
command -v protoc >/dev/null || { have_protoc=0; echo "note: no protoc (protobuf-compiler): --decode_raw not checked"; }

# "name count" of the Chrome JSON's complete and begin events
chrome_counts() {
	python3 -c '
import json, sys, collections
c = collections.Counter(e["name"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] in "XB")
print("\n".join(sorted("%s %d" % kv for kv in c.items())))' "$1"
}

decode() {	# decode NAME TRACE.pftrace [COUNTS]: both decoders
	local name=$1
	shift
	if [ $have_protoc = 1 ]; then
		if ! protoc --decode_raw <"$1" >"$name.raw" 2>"$name.raw.err"; then
			fail "$name: protoc --decode_raw: $(cat "$name.raw.err")"
			return 1
		fi
	fi
	python3 "$here/perfetto_check.py" "$@" >"$name.counts" 2>"$name.check" || {
		fail "$name: $(cat "$name.check")"
		return 1
	}
	if [ $have_protoc = 1 ]; then
		while read -r fn _; do
			grep -qF "2: \"$fn\"" "$name.raw" || { fail "$name: '$fn' not in protoc's decoding"; return 1; }
		done <"$name.counts"
	fi
	echo "ok   $name"
}

for g in basic imperfect events damaged out-of-order; do
	"$fdr" assemble "$here/golden/$g.txt" -o "$g.fdr"
	"$fdr" convert -q "$g.fdr" -o "$g.json"
	chrome_counts "$g.json" >"$g.want"
	"$fdr" convert -q -f perfetto "$g.fdr" -o "$g.pftrace" || { fail "$g: convert exited $?"; continue; }
	decode "$g" "$g.pftrace" "$g.want"
done
grep -q '^1 .* worker$\|200 worker' basic.check || fail "basic: thread 200 is not named 'worker': $(cat basic.check)"

# the selectors: only parse and what it calls
"$fdr" convert -q -f perfetto -F parse basic.fdr -o filtered.pftrace
printf 'lex 3\nparse 2\n' >filtered.want
decode filtered filtered.pftrace filtered.want

# a real run: exact counts
FDRTRACE_MODE=fdr FDRTRACE_OPTIONS=logfile_base=calc. "$calc" >run.out 2>run.err || fail "calc failed"
set -- calc.*.fdr
if [ -e "$1" ]; then
	"$fdr" account -q -f csv "$1" | tail -n +2 |
		awk -F, '{ n = $10; gsub(/"/, "", n); print n, $2 }' | sort >calc.want
	"$fdr" convert -q -f perfetto "$1" -o calc.pftrace
	"$fdr" convert -q "$1" -o calc.json
	decode calc calc.pftrace calc.want
	echo "sizes: trace $(stat -c %s "$1"), chrome $(stat -c %s calc.json), perfetto $(stat -c %s calc.pftrace) bytes"
else
	fail "calc wrote no trace"
fi

echo "$fails failed"
[ "$fails" = 0 ]
