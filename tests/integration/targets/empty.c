// SPDX-License-Identifier: MIT
/* tests/integration/targets/empty.c - links libfdrtrace, calls nothing instrumented. */
#include <stdio.h>

#include <fdrtrace/fdrtrace.h>

int main(void)
{
	int r = fdrtrace_flush();

	printf("flush %d\n", r);
	return 0;
}
