/* SPDX-License-Identifier: MIT */
/*
 * tiny.c - the functions of the fuzz targets' ELF file (m.elf: this file
 * alone, a shared object with symbols, DWARF and an XRay instrumentation
 * map) and of the LLVM XRay traces of their corpus (with driver.c).
 * Rebuilt by gen_seeds.sh, which says how.
 */
static volatile int sink;

__attribute__((noinline)) static int leaf(int x)
{
	sink += x;
	return x + 1;
}

__attribute__((noinline)) int helper(int x)
{
	return leaf(x) * 2;
}

__attribute__((noinline)) int fact(int n)
{
	return n <= 1 ? 1 : n * fact(n - 1);
}

__attribute__((noinline)) int work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += helper(i) + fact(i % 5);
	return s;
}
