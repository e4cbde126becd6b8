// SPDX-License-Identifier: MIT
/*
 * events.c - the application's own events, traced through libfdrtrace:
 * main() -> step(1), which records a custom event "step 1"; then main
 * records a typed event (type 7, "typed!"). Exits 1 when the library
 * refuses either (the test then fails instead of missing the lines).
 */
#include <stdio.h>
#include <string.h>

#include <fdrtrace/fdrtrace.h>

__attribute__((noinline)) static int step(int i)
{
	char msg[32];

	snprintf(msg, sizeof(msg), "step %d", i);
	return fdrtrace_custom_event(msg, strlen(msg));
}

int main(void)
{
	int rc = step(1);

	if (rc) {
		fprintf(stderr, "events: fdrtrace_custom_event: %d\n", rc);
		return 1;
	}
	rc = fdrtrace_typed_event(7, "typed!", 6);
	if (rc) {
		fprintf(stderr, "events: fdrtrace_typed_event: %d\n", rc);
		return 1;
	}
	return 0;
}
