// SPDX-License-Identifier: MIT
/*
 * tests/integration/targets/exceptions.cc - exceptions thrown through
 * instrumented frames: g++ calls the exit hook while unwinding, so every
 * entry still has its exit.
 */
#include <cstdio>
#include <stdexcept>

static volatile int sink;

__attribute__((noinline)) static void thrower(int depth)
{
	sink = sink + 1;
	if (depth == 0)
		throw std::runtime_error("deep");
	thrower(depth - 1);
}

__attribute__((noinline)) static int catcher(void)
{
	try {
		thrower(5);
	} catch (const std::exception &) {
		return 1;
	}
	return 0;
}

int main()
{
	int caught = 0;

	for (int i = 0; i < 20; i++)
		caught += catcher();
	std::printf("caught %d\n", caught);
	return caught == 20 ? 0 : 1;
}
