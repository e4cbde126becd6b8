#!/bin/bash
# perfetto_goldens.sh FDRTRACE TESTDIR WORKDIR
#
# Every golden trace text under TESTDIR (golden/, run-golden/, hostile/,
# fuzzfound/), assembled and converted with convert --format perfetto,
# must pass perfetto_check.py: tracks and names before use, slices
# balanced and never going back in time on a track. A gap applied in
# buffer order instead of time order (issue 33: a record stamped before a
# re-entry gap, stored after its drop record) made time go back.
# tsc-wrap is left out: its TSC passes 2^64, so its times wrap too.
set -u

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") dir=$(abs "$2") work=$(abs "$3")
rm -rf "$work"
mkdir -p "$work"
cd "$work"
if ! command -v python3 >/dev/null; then
	echo "SKIP: python3 is needed to decode the output"
	exit 77
fi
fails=0 n=0
for g in "$dir"/golden/*.txt "$dir"/run-golden/*.txt "$dir"/hostile/*.txt "$dir"/fuzzfound/*.txt; do
	name=$(basename "$(dirname "$g")")-$(basename "$g" .txt)
	case $name in golden-tsc-wrap) continue ;; esac
	if ! "$fdr" assemble "$g" -o "$name.fdr" 2>"$name.err"; then
		continue	# a text that is not a whole trace (hostile parts)
	fi
	for mode in fast reader; do
		if [ $mode = reader ]; then e=FDRTRACE_ANALYSIS_READER=1; else e=X_=; fi
		env "$e" "$fdr" convert -q --format perfetto "$name.fdr" -o "$name.pf" 2>>"$name.err"
		if ! python3 "$dir/perfetto_check.py" "$name.pf" >/dev/null 2>"$name.check"; then
			echo "FAIL: $name ($mode): $(grep perfetto_check "$name.check")"
			fails=$((fails + 1))
		fi
	done
	n=$((n + 1))
done
echo "$n traces checked, $fails failures"
[ "$fails" -eq 0 ] && [ "$n" -gt 10 ]
