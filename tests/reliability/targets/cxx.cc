// SPDX-License-Identifier: MIT
/*
 * tests/reliability/targets/cxx.cc - C++ exceptions through instrumented
 * frames, and thread_local destructors that call instrumented code after
 * the runtime's own per-thread exit handling may have run. Built with g++
 * and with clang++.
 */
#include <cstdio>
#include <stdexcept>
#include <thread>

static volatile long sink;

__attribute__((noinline)) static void tl_leaf(int i)
{
	sink += i;
}

struct on_exit_calls {
	~on_exit_calls()
	{
		for (int i = 0; i < 10; i++)
			tl_leaf(i);
	}
};

static thread_local on_exit_calls tl;

__attribute__((noinline)) static void thrower(int depth)
{
	if (depth == 0)
		throw std::runtime_error("down");
	thrower(depth - 1);
	sink++;
}

__attribute__((noinline)) static int catcher()
{
	try {
		thrower(5);
	} catch (const std::exception &) {
		return 1;
	}
	return 0;
}

static void worker()
{
	(void)&tl;
	for (int i = 0; i < 10; i++)
		catcher();
}

int main()
{
	int caught = 0;

	for (int i = 0; i < 10; i++)
		caught += catcher();
	for (int i = 0; i < 4; i++) {
		std::thread t(worker);
		t.join();
	}
	std::printf("caught %d\n", caught);
	return 0;
}
