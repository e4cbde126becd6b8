// SPDX-License-Identifier: MIT
/*
 * tests/integration/targets/depth.cc - calls whose exits the hooks never
 * see, for max_depth: built with g++ and with clang++.
 *
 *   depth longjmp  guarded() sets a jump point and calls nest(10), which
 *                  longjmps back from 11 calls down; then leaf x1000
 *   depth throw    catcher() catches what thrower(10) throws from 11
 *                  calls down (g++ calls the exit hooks while unwinding,
 *                  clang++ does not); then leaf x1000
 *
 * Instrumented calls: main, guarded or catcher, nest or thrower x11, leaf
 * x1000, one line on stdout ("ok MODE").
 */
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <stdexcept>

static volatile long sink;
static std::jmp_buf jump;
static volatile bool armed = true;	/* always: the compiler sees a way back */

/* C names, as the test looks them up */
extern "C" {

__attribute__((noinline)) void leaf(int i)
{
	sink += i;
}

/* no destructors on the way: a longjmp over these frames is defined */
__attribute__((noinline)) void nest(int n)
{
	if (n == 0) {
		if (armed)
			std::longjmp(jump, 1);
		return;
	}
	nest(n - 1);
	sink++;
}

__attribute__((noinline)) int guarded()
{
	if (setjmp(jump))
		return 1;
	nest(10);
	return 0;
}

__attribute__((noinline)) void thrower(int n)
{
	if (n == 0)
		throw std::runtime_error("down");
	thrower(n - 1);
	sink++;
}

__attribute__((noinline)) int catcher()
{
	try {
		thrower(10);
	} catch (const std::exception &) {
		return 1;
	}
	return 0;
}

}

int main(int argc, char **argv)
{
	int back;

	if (argc < 2)
		return 2;
	if (!std::strcmp(argv[1], "longjmp"))
		back = guarded();
	else if (!std::strcmp(argv[1], "throw"))
		back = catcher();
	else
		return 2;
	if (!back)
		return 1;
	for (int i = 0; i < 1000; i++)
		leaf(i);
	std::printf("ok %s\n", argv[1]);
	return 0;
}
