// SPDX-License-Identifier: MIT
/*
 * tests/runtime/notrace_control.c - a function WITHOUT notrace, compiled
 * with -finstrument-functions, so that check_notrace.sh is shown to fail on
 * instrumented code (the test using it is should_fail).
 */
int notrace_control_instrumented(int x);

int notrace_control_instrumented(int x)
{
	return x * 2 + 1;
}
