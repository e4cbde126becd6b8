// SPDX-License-Identifier: MIT
/* tests/reliability/targets/early_main.c - runs with targets/early.c loaded. */
#include <stdio.h>

int early_count(void);

int main(void)
{
	printf("early %d ", early_count());
	fflush(stdout);
	return 0;
}
