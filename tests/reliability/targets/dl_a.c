// SPDX-License-Identifier: MIT
/* tests/reliability/targets/dl_a.c - an instrumented library, loaded then unloaded. */
static volatile long dl_sink;

void dl_a_inner(void);
__attribute__((noinline)) void dl_a_inner(void)
{
	dl_sink++;
}

void rel_dl_fn(void);
void rel_dl_fn(void)
{
	dl_a_inner();
}
