#!/bin/bash
# fuzzfound.sh FDRTRACE FUZZFOUND_DIR WORKDIR
#
# Regression tests for the defects the fdrtrace command's fuzz targets
# (tests/fuzz/fuzz_analysis.c, fuzz_assemble.c, fuzz_roundtrip.c) found,
# one check each, with runs of records (the reader's batch path) and with
# one event per record (FDRTRACE_ANALYSIS_READER=1). In the sanitized build (CI's ASan + UBSan
# pass) the undefined behaviour itself stops the command; elsewhere the
# checks below see its effects:
#   huge-duration.txt  a 1 Hz clock and a call of 2^62 ticks: stack's value
#                      (ns, us) is 2^64-1, saturated (it was a double out of
#                      uint64_t's range converted: 0, and the line vanished);
#                      the Chrome JSON parses
#   no-calls.txt       diff of traces without a single function: exit 0 (it
#                      gave qsort() a NULL array)
#   native stacks whose module path (lib\xff.so) and whose ELF symbol
#   (caf\xe9_fn, built here with cc) are not UTF-8: replay, info and the
#   Chrome JSON are valid UTF-8, the bytes replaced by '?' (they were
#   printed raw)
#   memcheck: every analysis command on ../golden/basic.txt and on the
#                      native stacks under valgrind, no error (replay read
#                      its uninitialised "thread printed" flag: UBSan's
#                      invalid-bool-load in the fuzzer, at random elsewhere);
#                      skipped without valgrind and in sanitized builds
#   leaks: an --instr-map YAML entry that names its function, then breaks
#                      (id 0, a bad address, no id, a key without ':'):
#                      status 1 and no leak (the copied name leaked on that
#                      error path, issue 33), under valgrind's leak check,
#                      or LeakSanitizer in the ASan build
set -u

abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
fdr=$(abs "$1") dir=$(abs "$2") work=$(abs "$3")
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fails=0
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
utf8() { iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1; }
json() { python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$1"; }

for t in huge-duration no-calls; do
	"$fdr" assemble "$dir/$t.txt" -o "$t.fdr" || fail "assemble $t"
done

# An ELF file with a symbol that is not UTF-8, under a name that is not either.
cc=${CC:-cc}
native=0
if command -v "$cc" >/dev/null; then
	printf 'int bad(void) __asm__("caf\\xe9_fn");\nint bad(void) { return 1; }\nint good(void) { return 2; }\n' >bad.c
	if "$cc" -shared -fPIC -o libbad.so bad.c 2>cc.err; then
		cp libbad.so "$(printf 'lib\xff.so')"
		bad=$((0x7f0000000000 + 0x$(nm libbad.so | awk '$3 ~ /^caf.*_fn$/ { print $1 }')))
		good=$((0x7f1000000000 + 0x$(nm libbad.so | awk '$3 == "good" { print $1 }')))
		cat >native.txt <<-T
		hdr fdr version=5 bitfield=3 cycle_frequency=1000000000 buffer_size=4096
		buf ext size=auto
		buf new tid=1
		buf wal sec=1700000000 usec=0
		buf pid pid=1
		cpu new cpu=0 tsc=1000
		ext module_map delta=0 module_id=1 load_base=0x7f0000000000 size=0x100000 path="$work/libbad.so"
		ext module_map delta=0 module_id=2 load_base=0x7f1000000000 size=0x100000 path="$work/lib\xff.so"
		ext func delta=0 func_id=1 address=0x401000 module_id=0 name=main
		fun ent id=1 delta=0
		ext native_stack delta=1 tid=1 why=signal signal=11 fault_address=0 frames=$bad@1,$((good + 1))@2
		T
		"$fdr" assemble native.txt -o native.fdr && native=1 || fail "assemble native"
	else
		cat cc.err
	fi
fi

for path in fast reader; do
	if [ $path = reader ]; then export FDRTRACE_ANALYSIS_READER=1; else unset FDRTRACE_ANALYSIS_READER; fi

	for u in ns us; do
		out=$("$fdr" stack -q -u $u huge-duration.fdr)
		if [ "$out" = "eternal 18446744073709551615" ]; then
			ok "$path: stack -u $u saturates a duration beyond 64 bits"
		else
			fail "$path: stack -u $u saturates a duration beyond 64 bits (got '$out')"
		fi
	done
	if "$fdr" convert -q huge-duration.fdr -o huge.json && json huge.json; then
		ok "$path: convert of a duration beyond 64 bits parses"
	else
		fail "$path: convert of a duration beyond 64 bits parses"
	fi

	if "$fdr" diff -q no-calls.fdr no-calls.fdr >diff.out 2>diff.err; then
		ok "$path: diff of traces without functions"
	else
		fail "$path: diff of traces without functions"; cat diff.err
	fi

	if [ $native = 1 ]; then
		bad=0
		for cmd in replay info; do
			"$fdr" $cmd native.fdr >out 2>err || { echo "$cmd failed"; cat err; bad=1; }
			utf8 out || { echo "$cmd: not UTF-8"; bad=1; }
		done
		grep -q "caf?_fn (libbad.so+0x" out && grep -q "good (lib?.so+0x" out ||
			{ echo "info: the frames' names"; cat out; bad=1; }
		"$fdr" convert -q native.fdr -o native.json && json native.json || bad=1
		[ $bad = 0 ] && ok "$path: native stacks with names that are not UTF-8" ||
			fail "$path: native stacks with names that are not UTF-8"
	else
		echo "skip native stacks (no C compiler)"
	fi
done

# memcheck
if command -v valgrind >/dev/null && [ "${FDRTRACE_TEST_SANITIZED:-0}" != 1 ]; then
	"$fdr" assemble "$dir/../golden/basic.txt" -o basic.fdr || fail "assemble basic"
	traces=basic.fdr
	[ $native = 1 ] && traces="$traces native.fdr"
	for t in $traces; do
		for cmd in account "account -f csv" replay stack graph convert "convert -f perfetto" \
			   extract-map info; do
			if valgrind -q --error-exitcode=99 "$fdr" $cmd $t >out 2>vg.err; then
				ok "memcheck: $cmd $t"
			else
				fail "memcheck: $cmd $t"; grep -m5 '==' vg.err
			fi
		done
	done
else
	echo "skip memcheck (no valgrind, or a sanitized build)"
fi

# leaks on --instr-map's error paths
"$fdr" assemble "$dir/../golden/basic.txt" -o leak.fdr || fail "assemble basic"
i=0
for entry in "function-name: leaked_name, id: 0" "function-name: leaked_name, id: 1, function: x" \
	     "function-name: leaked_name" "function-name: leaked_name, id 1"; do
	i=$((i + 1))
	printf -- '---\n- { id: 2, function: 0x401100, function-name: parse }\n- { %s }\n' \
		"$entry" >leak$i.yaml
	if [ "${FDRTRACE_TEST_SANITIZED:-0}" = 1 ]; then
		rc=0
		"$fdr" account --instr-map leak$i.yaml leak.fdr >out 2>err || rc=$?
		if [ $rc = 1 ] && ! grep -q Sanitizer err; then
			ok "no leak: --instr-map '{ $entry }'"
		else
			fail "no leak: --instr-map '{ $entry }' (status $rc)"; grep -m5 -A3 Sanitizer err
		fi
	elif command -v valgrind >/dev/null; then
		rc=0
		valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
			"$fdr" account --instr-map leak$i.yaml leak.fdr >out 2>err || rc=$?
		if [ $rc = 1 ] && grep -q "leak$i.yaml:3: not an instrumentation map entry" err; then
			ok "no leak: --instr-map '{ $entry }'"
		else
			fail "no leak: --instr-map '{ $entry }' (status $rc)"; grep -m5 '==' err
		fi
	fi
done

echo "$fails failed"
[ "$fails" = 0 ]
