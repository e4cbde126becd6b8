// SPDX-License-Identifier: MIT
/*
 * tests/runtime/modlib.c - a tiny library for the modules tests, built
 * several times (with different MODLIB_TAG values, and stripped). It has one
 * exported function, found by dladdr(), and one static function, found only
 * in .symtab; the exported getter hands out the static one's address.
 */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

typedef int (*modlib_fn)(int);

modlib_fn CAT(modlib_static_addr_, MODLIB_TAG)(void);
int CAT(modlib_public_, MODLIB_TAG)(int x);

static __attribute__((noinline, used)) int modlib_hidden_helper(int x)
{
	/* Enough body that the function has a size and an inside. */
	volatile int v = x;

	v = v * 3 + 1;
	v ^= 0x55;
	return v;
}

int CAT(modlib_public_, MODLIB_TAG)(int x)
{
	return modlib_hidden_helper(x) + 1;
}

modlib_fn CAT(modlib_static_addr_, MODLIB_TAG)(void)
{
	return modlib_hidden_helper;
}
