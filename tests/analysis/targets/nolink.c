// SPDX-License-Identifier: MIT
/*
 * nolink.c - built with -finstrument-functions but not linked with
 * libfdrtrace: "fdrtrace record" must preload the library. Fixed counts:
 * main 1, outer 3, inner 6.
 */
static volatile int sink;

__attribute__((noinline)) static void inner(int i)
{
	sink += i;
}

__attribute__((noinline)) static void outer(int i)
{
	inner(i);
	inner(i + 1);
}

int main(void)
{
	int i;

	for (i = 0; i < 3; i++)
		outer(i);
	return 0;
}
