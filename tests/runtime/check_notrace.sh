#!/bin/sh
# SPDX-License-Identifier: MIT
# check_notrace.sh OBJDUMP FILE... - fail when any FILE calls __cyg_profile_*.
#
# The files are the runtime compiled WITH -finstrument-functions: every
# function that lacks the notrace attribute then calls the hooks, and shows
# up here by name. Exit 77 (skip) without objdump.
objdump="$1"
shift
[ -x "$objdump" ] || exit 77
status=0
for f in "$@"; do
	# -r: in an object file a call's target is a relocation, not an address.
	bad=$("$objdump" -dr --no-show-raw-insn "$f" | awk '
		/^[0-9a-f]+ <.*>:$/ { fn = $2 }
		/R_X86_64_[A-Z0-9]+[ \t]+__cyg_profile_func_(enter|exit)/ { print "  " fn }
		/call[ \t].*<__cyg_profile_func_(enter|exit)>$/ { print "  " fn }' | sort -u)
	if [ -n "$bad" ]; then
		echo "$f: functions without notrace (they call __cyg_profile_*):"
		echo "$bad"
		status=1
	fi
done
[ $status -eq 0 ] && echo "no __cyg_profile_* calls in: $*"
exit $status
