// SPDX-License-Identifier: MIT
/* tests/reliability/targets/dl_b.c - loaded where dl_a was, with other names. */
static volatile long dl_sink;

void dl_b_inner(void);
__attribute__((noinline)) void dl_b_inner(void)
{
	dl_sink += 2;
}

void rel_dl_fn(void);
void rel_dl_fn(void)
{
	dl_b_inner();
}
