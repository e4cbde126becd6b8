#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/integration/check_library.sh OBJDUMP NM LIB.so LIB.a
#
# The runtime must never be instrumented: no call to __cyg_profile_* may
# appear in libfdrtrace outside the two hook definitions themselves. And the
# shared library exports the hooks, the fdrtrace_* API and the exec family
# (runtime/interpose/exec.c), nothing else.
set -eu
objdump=$1 nm=$2 so=$3 a=$4
status=0

for lib in "$so" "$a"; do
	# -r shows relocations, so unresolved calls in the .a count too. The hooks'
	# own .cold parts (the compiler's split slow paths) are part of them.
	bad=$("$objdump" -dr --no-show-raw-insn "$lib" | awk '
		/^[0-9a-f]+ <.*>:$/ { fn = $2; next }
		/__cyg_profile_func_(enter|exit)/ && (/call|jmp/ || /R_X86_64_/) {
			if (fn !~ /^<__cyg_profile_func_(enter|exit)(\.cold)?>:$/)
				print fn " " $0
		}')
	if [ -n "$bad" ]; then
		echo "$lib: calls to the hooks from the runtime:" >&2
		echo "$bad" >&2
		status=1
	fi
	if ! "$objdump" -d "$lib" | grep -q '<__cyg_profile_func_enter>:'; then
		echo "$lib: no __cyg_profile_func_enter definition" >&2
		status=1
	fi
done

exports=$("$nm" -D --defined-only "$so" | awk '{ print $NF }' | sort)
for sym in $exports; do
	case $sym in
	__cyg_profile_func_enter|__cyg_profile_func_exit|fdrtrace_*) ;;
	# runtime/interpose/exec.c: the trace is closed before an exec; lifecycle.c: before _exit;
	# vfork.c: a vfork child records nothing as its parent; sigview.c: dispositions
	execve|execv|execvp|execvpe|execl|execlp|execle|fexecve|execveat|_exit|_Exit|vfork) ;;
	# spawn.c: posix_spawn's child is named by a spawn record
	posix_spawn|posix_spawnp) ;;
	sigaction|signal|bsd_signal|sysv_signal) ;;
	# creds.c: the trace is named before the process changes its identity or root
	setuid|setgid|seteuid|setegid|setreuid|setregid|setresuid|setresgid|setgroups|initgroups|chroot) ;;
	*) echo "$so exports $sym" >&2; status=1 ;;
	esac
done
for sym in __cyg_profile_func_enter __cyg_profile_func_exit fdrtrace_flush fdrtrace_thread_name \
	fdrtrace_start fdrtrace_stop fdrtrace_custom_event fdrtrace_typed_event fdrtrace_log_arg \
	fdrtrace_thread_ignore; do
	echo "$exports" | grep -qx "$sym" || { echo "$so does not export $sym" >&2; status=1; }
done
exit $status
