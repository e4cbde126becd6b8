// SPDX-License-Identifier: MIT
/*
 * runtime/record/autoexclude_patch.c - auto_exclude's patched call sites:
 * the hot calls of a counted function counted without entering the hooks.
 *
 * A counted call still costs a hook: the call of __cyg_profile_func_enter,
 * the gate, the guard, the id cache entry, the slot of the thread's table
 * (autoexclude.c). Here, the flush thread rewrites the instrumented
 * program's own `call __cyg_profile_func_enter` (and `..._exit`) at the
 * call sites of counted calls, so that they call a stub of a few
 * instructions instead, generated here, which counts the call in the
 * thread's own count of that function (@fast[k], struct fdr_ax_thread)
 * and keeps the nesting (@nest, @nest_addr) exactly as the hook would.
 *
 * Contract:
 *   - The hook (fdr_record_inactive(), autoexclude.c) writes the call site
 *     of each counted call it finishes into the thread's ring (ax_want()).
 *     fdr_ax_patch_round() (flush thread, about every 50 ms) reads every
 *     thread's ring, racily, and trusts nothing in it: a site is patched
 *     only when its five bytes are a direct `call` (E8 rel32) whose target
 *     is the hook of the ring's action, directly or through a PLT entry
 *     (`[endbr64] [bnd] jmp *slot(%rip)`, the slot holding the hook), in an
 *     executable PT_LOAD segment of an object the loader has (checked
 *     under dl_iterate_phdr(), which holds off dlclose()), not libfdrtrace
 *     itself, on pages no other segment shares, and when the function is
 *     counted (ax_fn[id].state).
 *   - The stubs fall back to the hook (a jump, with the hook's arguments
 *     untouched) whenever the hook would do anything but count: another
 *     function passed at that site (an enter stub checks its own), the
 *     gate not COUNTED (stopped, finished, a fork child not started), the
 *     function timed again, the thread's guard held (a signal handler
 *     inside a hook), the thread not registered or ignored, no counts of
 *     its own yet (@t->ax), a restart not seen yet (@epoch), an outermost
 *     call due to be sampled, an exit that is not the innermost counted
 *     call's. The counts and the nesting are the hook's own: a count of a
 *     call is in @slot or in @fast, never both, never neither.
 *   - The write: only the call's rel32 changes, with one locked
 *     compare-and-swap of the aligned 8 or 16 bytes that hold it, the
 *     segment made writable (and still executable) for the round and
 *     given back its protection at its end (ax_seg). Another thread then
 *     executes either the old call (the hook) or the new (the stub), both
 *     right: nothing needs the new code seen at once. A site whose rel32
 *     no aligned 16 bytes hold is changed in three steps at the segment's
 *     end (ax_split_run()); one whose first two bytes straddle 16 bytes
 *     is left alone (its calls keep the hook).
 *   - The stubs live in executable pages mapped within ±2 GiB of the
 *     object (a rel32 reaches them), generated once per (object, function)
 *     and never changed or unmapped: a fork child keeps them with the
 *     text. A site is patched once and never given back: its stub does
 *     the hook's work whenever the hook would decide otherwise.
 *   - Not with max_depth or a name filter (fdr_ax_init(): ax_patching):
 *     counting a nested call then depends on the function.
 *
 * Memory ordering: ax_fast_id[k] is written before ax_fast_n is raised
 * (release), and both before any stub of k exists; emitters read
 * ax_fast_n with acquire (autoexclude_counts.c). A stub's count is a
 * plain add by the owner, read relaxed by emitters, as @slot's.
 */
#include <link.h>
#include <linux/membarrier.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "autoexclude.h"
#include "autoexclude_internal.h"
#include "funcid_map.h"
#include "slowpath.h"
#include "state.h"
#include "thread.h"

/*
 * The hooks (compiler-hooks/cyg_profile.c) as the program's calls reach
 * them: the dynamic linker fills these in as it binds the program's own
 * references. Weak: a unit test's library may have no hooks. Data, so that
 * no code of the runtime names a hook (tests/runtime/check_notrace.sh).
 */
extern void __cyg_profile_func_enter(void *fn, void *site) __attribute__((weak));
extern void __cyg_profile_func_exit(void *fn, void *site) __attribute__((weak));
void (*ax_hooks[2])(void *, void *) fdr_hidden = { __cyg_profile_func_enter,
						   __cyg_profile_func_exit };
#define ax_hook_enter ((uintptr_t)ax_hooks[0])
#define ax_hook_exit ((uintptr_t)ax_hooks[1])

#define AX_REGIONS 16u		/* objects with stubs */
#define AX_REGION_SIZE (512u << 10)
#define AX_STUB_MAX 256u	/* bytes an enter stub may take */
#define AX_SEEN (1u << 14)	/* call sites patched or refused for good (a power of two) */
#define AX_REQS 4096u		/* call sites looked at per round */
#define AX_PAGE 4096u

/* Stubs for the sites of one object: within ±2 GiB of all its executable segments. */
struct ax_region {
	uintptr_t lo, hi;	/* the executable range it serves */
	uint8_t *code;
	uint32_t used;
	/*
	 * offset + 1 (0: none yet) of function k's enter stubs: [k] counts
	 * its outermost calls too, [AX_FAST + k] only the nested ones; [2 *
	 * AX_FAST]: the exit stub
	 */
	uint32_t stub_at[2 * AX_FAST + 1];
	bool writable;		/* made writable in this round (ax_writable_end()) */
};

struct ax_req {
	uintptr_t ret;		/* the return address: the call is the 5 bytes before */
	uintptr_t fn;
	unsigned action;
	bool found;		/* in an executable segment (ax_patch_obj()) */
};

/* flush thread only */
static struct ax_region ax_regions[AX_REGIONS];
static uint32_t ax_nregions;
static uintptr_t ax_seen[AX_SEEN];	/* return addresses; 0: free */
static uint32_t ax_nseen;
static struct ax_req ax_reqs[AX_REQS];
static uint32_t ax_nreqs;
static bool ax_offsets_ok;

/* %fs-relative offsets of the thread state the stubs use */
static struct {
	int32_t guard, state, ignored, tax;
	int32_t epoch, nest, sample_left, nest_addr, fast;
} ax_off;

/* ---- the stubs' machine code ---- */

struct ax_asm {
	uint8_t *p;
	uint32_t n, cap;
	uint32_t to_real[16];	/* rel32 fields that jump to the fallback */
	uint32_t nreal;
	bool bad;
};

static notrace void a_b(struct ax_asm *a, const uint8_t *b, uint32_t len)
{
	if (a->n + len > a->cap) {
		a->bad = true;
		return;
	}
	memcpy(a->p + a->n, b, len);
	a->n += len;
}

static notrace void a_u8(struct ax_asm *a, uint8_t v)
{
	a_b(a, &v, 1);
}

static notrace void a_u32(struct ax_asm *a, uint32_t v)
{
	a_b(a, (const uint8_t *)&v, 4);
}

static notrace void a_u64(struct ax_asm *a, uint64_t v)
{
	a_b(a, (const uint8_t *)&v, 8);
}

/* movabs $v, %rax (48 b8) or %rcx (48 b9) */
static notrace void a_movabs(struct ax_asm *a, uint8_t reg, uint64_t v)
{
	a_u8(a, 0x48);
	a_u8(a, (uint8_t)(0xb8 + reg));
	a_u64(a, v);
}

/* j<cc> to the fallback: 0f 8<cc> rel32, filled in by a_real() */
static notrace void a_jreal(struct ax_asm *a, uint8_t cc)
{
	a_u8(a, 0x0f);
	a_u8(a, (uint8_t)(0x80 | cc));
	if (a->nreal < 16)
		a->to_real[a->nreal++] = a->n;
	else
		a->bad = true;
	a_u32(a, 0);
}

/* %fs:disp32, absolute (no base, no index): modrm with rm=100, sib 0x25 */
static notrace void a_fs_abs(struct ax_asm *a, uint8_t op_reg, int32_t disp)
{
	a_u8(a, (uint8_t)(op_reg << 3 | 4));
	a_u8(a, 0x25);
	a_u32(a, (uint32_t)disp);
}

/* cmp{l,b,q} $imm8, %fs:disp (@size 4, 1 or 8) */
static notrace void a_cmp_fs(struct ax_asm *a, unsigned size, int32_t disp, uint8_t imm)
{
	a_u8(a, 0x64);
	if (size == 8)
		a_u8(a, 0x48);
	a_u8(a, size == 1 ? 0x80 : 0x83);
	a_fs_abs(a, 7, disp);
	a_u8(a, imm);
}

/* mov %fs:disp, %e<reg> (8b) or mov %e<reg>, %fs:disp (89); reg 0 eax, 1 ecx */
static notrace void a_mov_fs(struct ax_asm *a, bool store, uint8_t reg, int32_t disp)
{
	a_u8(a, 0x64);
	a_u8(a, store ? 0x89 : 0x8b);
	a_fs_abs(a, reg, disp);
}

/* @op (89 mov, 39 cmp) %rdi with %fs:disp(,%rax,8): 64 48 op 3c c5 disp32 (9 bytes) */
static notrace void a_rdi_level(struct ax_asm *a, uint8_t op, int32_t disp)
{
	const uint8_t insn[] = { 0x64, 0x48, op, 0x3c, 0xc5 };

	a_b(a, insn, sizeof(insn));
	a_u32(a, (uint32_t)disp);
}

/* The fallback: jmp to @hook (its arguments untouched), and every j<cc> to it resolved. */
static notrace void a_real(struct ax_asm *a, uintptr_t hook)
{
	uint32_t here = a->n;

	for (uint32_t i = 0; i < a->nreal; i++) {
		int32_t rel = (int32_t)(here - (a->to_real[i] + 4));

		memcpy(a->p + a->to_real[i], &rel, 4);
	}
	a_movabs(a, 0, hook);
	a_u8(a, 0xff);	/* jmp *%rax */
	a_u8(a, 0xe0);
}

/* The checks both stubs begin with: gate COUNTED, no guard, no restart unseen. */
static notrace void a_common(struct ax_asm *a)
{
	static const uint8_t cmp_gate[] = { 0x83, 0x38, FDR_GATE_COUNTED };	/* cmpl $5,(%rax) */
	static const uint8_t cmp_epoch[] = { 0x3b, 0x08 };	/* cmp (%rax),%ecx */

	a_movabs(a, 0, (uintptr_t)&fdr_gate);
	a_b(a, cmp_gate, sizeof(cmp_gate));
	a_jreal(a, 0x5);	/* jne */
	a_cmp_fs(a, 4, ax_off.guard, 0);
	a_jreal(a, 0x5);
	a_movabs(a, 0, (uintptr_t)&fdr_depth_epoch);
	a_mov_fs(a, false, 1, ax_off.epoch);
	a_b(a, cmp_epoch, sizeof(cmp_epoch));
	a_jreal(a, 0x5);
}

/*
 * The enter stub of function @fn (id @id, count @k): the hook's counted
 * enter (autoexclude.c, fdr_record_inactive() and ax_enter_counted()),
 * with the count in @fast[k] instead of the slot. @outer: the function is
 * counted, and its outermost calls are counted here too (the checks the
 * hook makes there: the function still counted, the thread registered,
 * not ignored, with counts of its own, the sample countdown); else only
 * the calls inside a counted call are (as every call there is).
 */
static notrace void a_enter(struct ax_asm *a, uintptr_t fn, uint32_t id, uint32_t k, bool outer)
{
	static const uint8_t cmp_fn[] = { 0x48, 0x39, 0xc7 };	/* cmp %rax,%rdi */
	static const uint8_t cmp_state[] = { 0x83, 0x39, AX_STATE_COUNTED };	/* cmpl $2,(%rcx) */
	static const uint8_t test_eax[] = { 0x85, 0xc0 };
	static const uint8_t jnz_nested[] = { 0x75, 0 };	/* filled below */
	static const uint8_t dec_ecx[] = { 0x83, 0xe9, 0x01 };	/* sub $1,%ecx */
	static const uint8_t cmp_ecx[] = { 0x83, 0xf9, 0x3f };	/* cmp $63,%ecx */
	static const uint8_t lea_ecx[] = { 0x8d, 0x48, 0x01 };	/* lea 1(%rax),%ecx */
	static const uint8_t cmp_eax[] = { 0x83, 0xf8, AX_NEST };	/* cmp $AX_NEST,%eax */
	static const uint8_t jae_count[] = { 0x73, 9 };	/* over the 9-byte store */
	uint32_t jnz_at;

	_Static_assert(AX_NEST < 128, "an imm8");
	a_movabs(a, 0, fn);
	a_b(a, cmp_fn, sizeof(cmp_fn));
	a_jreal(a, 0x5);
	a_common(a);
	a_mov_fs(a, false, 0, ax_off.nest);
	a_b(a, test_eax, sizeof(test_eax));
	if (outer) {
		jnz_at = a->n;
		a_b(a, jnz_nested, sizeof(jnz_nested));
		/* the outermost call: %eax is 0, kept */
		a_movabs(a, 1, (uintptr_t)ax_state_of(id));
		a_b(a, cmp_state, sizeof(cmp_state));
		a_jreal(a, 0x5);
		a_cmp_fs(a, 4, ax_off.state, FDR_T_ACTIVE);
		a_jreal(a, 0x5);
		a_cmp_fs(a, 1, ax_off.ignored, 0);
		a_jreal(a, 0x5);
		a_cmp_fs(a, 8, ax_off.tax, 0);
		a_jreal(a, 0x4);	/* je: no counts of its own yet */
		/* the sample countdown (AX_SAMPLE_EVERY, 64): the one due goes to the hook */
		a_mov_fs(a, false, 1, ax_off.sample_left);
		a_b(a, dec_ecx, sizeof(dec_ecx));
		a_b(a, cmp_ecx, sizeof(cmp_ecx));
		a_jreal(a, 0x7);	/* ja */
		a_mov_fs(a, true, 1, ax_off.sample_left);
		if (!a->bad)
			a->p[jnz_at + 1] = (uint8_t)(a->n - (jnz_at + 2));
	} else {
		a_jreal(a, 0x4);	/* je: not inside a counted call */
	}
	/* the level, then its address (a handler in between sees the level open, and closes its own) */
	a_b(a, lea_ecx, sizeof(lea_ecx));
	a_mov_fs(a, true, 1, ax_off.nest);
	a_b(a, cmp_eax, sizeof(cmp_eax));
	a_b(a, jae_count, sizeof(jae_count));
	a_rdi_level(a, 0x89, ax_off.nest_addr);	/* mov %rdi,%fs:nest_addr(,%rax,8) */
	/* addq $1,%fs:fast[k]: 64 48 83 04 25 disp32 01 */
	a_u8(a, 0x64);
	a_u8(a, 0x48);
	a_u8(a, 0x83);
	a_fs_abs(a, 0, ax_off.fast + (int32_t)(k * 8));
	a_u8(a, 0x01);
	a_u8(a, 0xc3);	/* ret */
	a_real(a, ax_hook_enter);
}

/* The exit stub (any function): the innermost counted call's exit, as the hook's. */
static notrace void a_exit(struct ax_asm *a)
{
	static const uint8_t test_eax[] = { 0x85, 0xc0 };
	static const uint8_t cmp_eax[] = { 0x83, 0xf8, AX_NEST };
	static const uint8_t ja_trust[] = { 0x77, 15 };	/* over the 9-byte cmp and the 6-byte jne */
	static const uint8_t dec_eax[] = { 0x83, 0xe8, 0x01 };	/* sub $1,%eax */

	a_common(a);
	a_mov_fs(a, false, 0, ax_off.nest);
	a_b(a, test_eax, sizeof(test_eax));
	a_jreal(a, 0x4);	/* je: no counted call open */
	a_b(a, cmp_eax, sizeof(cmp_eax));
	a_b(a, ja_trust, sizeof(ja_trust));
	a_rdi_level(a, 0x39, ax_off.nest_addr - 8);	/* cmp %rdi,%fs:nest_addr-8(,%rax,8) */
	a_jreal(a, 0x5);	/* not the innermost's: the hook sorts it out */
	a_b(a, dec_eax, sizeof(dec_eax));
	a_mov_fs(a, true, 0, ax_off.nest);
	a_u8(a, 0xc3);
	a_real(a, ax_hook_exit);
}

/* ---- where the stubs go ---- */

static notrace bool ax_off_of(const void *p, int32_t *off)
{
	intptr_t d = (intptr_t)p - (intptr_t)__builtin_thread_pointer();

	if (d != (int32_t)d)
		return false;
	*off = (int32_t)d;
	return true;
}

/* The stubs' offsets into the thread state (the same for every thread: initial-exec TLS). */
static notrace bool ax_offsets(void)
{
	struct fdr_thread *t = &fdr_self;
	struct fdr_ax_thread *x = &ax_self;

	_Static_assert(sizeof(t->guard) == 4 && sizeof(t->state) == 4 && sizeof(t->ignored) == 1,
		       "the stubs' operand sizes");
	_Static_assert(sizeof(x->nest) == 4 && sizeof(x->epoch) == 4 && sizeof(x->sample_left) == 4,
		       "the stubs' operand sizes");
	_Static_assert(sizeof(fdr_depth_epoch) == 4 && sizeof(fdr_gate) == 4, "32-bit compares");
	return ax_off_of(&t->guard, &ax_off.guard) && ax_off_of(&t->state, &ax_off.state) &&
	       ax_off_of(&t->ignored, &ax_off.ignored) && ax_off_of(&t->ax, &ax_off.tax) &&
	       ax_off_of(&x->epoch, &ax_off.epoch) && ax_off_of(&x->nest, &ax_off.nest) &&
	       ax_off_of(&x->sample_left, &ax_off.sample_left) &&
	       ax_off_of(&x->nest_addr[0], &ax_off.nest_addr) &&
	       ax_off_of(&x->fast[AX_FAST - 1], &(int32_t){ 0 }) &&
	       ax_off_of(&x->fast[0], &ax_off.fast);
}

static notrace bool ax_near(uintptr_t from, uintptr_t to)
{
	int64_t d = (int64_t)to - (int64_t)from;

	return d > -(int64_t)0x7ff00000 && d < (int64_t)0x7ff00000;
}

/* Whether every call in [@lo, @hi) reaches every stub at [@m, @m + AX_REGION_SIZE) with a rel32. */
static notrace bool ax_reaches(uintptr_t lo, uintptr_t hi, uintptr_t m)
{
	return ax_near(lo, m) && ax_near(hi, m) && ax_near(lo, m + AX_REGION_SIZE) &&
	       ax_near(hi, m + AX_REGION_SIZE);
}

/* The region for the executable range [@lo, @hi) of one object, mapped near it. */
static notrace struct ax_region *ax_region_for(uintptr_t lo, uintptr_t hi)
{
	struct ax_region *r;

	for (uint32_t i = 0; i < ax_nregions; i++) {
		r = &ax_regions[i];
		if (r->lo <= lo && hi <= r->hi)
			return r;
		if (ax_reaches(lo, hi, (uintptr_t)r->code))
			return r;	/* an object near another's stubs shares them */
	}
	if (ax_nregions == AX_REGIONS)
		return NULL;
	/* below the object, then above, a step at a time: the first free place in reach */
	for (int i = 1; i <= 64; i++) {
		uintptr_t step = (uintptr_t)i << 24;	/* 16 MiB */
		uintptr_t hints[2] = { lo > step + AX_REGION_SIZE ? (lo - step) & ~(uintptr_t)0xffff : 0,
				       ((hi + step) | 0xffff) + 1 };

		for (int j = 0; j < 2; j++) {
			void *m;

			if (!hints[j])
				continue;
			m = mmap((void *)hints[j], AX_REGION_SIZE, PROT_READ | PROT_EXEC,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (m == MAP_FAILED)
				continue;
			if (!ax_reaches(lo, hi, (uintptr_t)m)) {
				munmap(m, AX_REGION_SIZE);	/* an old kernel placed it elsewhere */
				continue;
			}
			r = &ax_regions[ax_nregions++];
			r->lo = lo;
			r->hi = hi;
			r->code = m;
			return r;
		}
	}
	return NULL;
}

/*
 * Write access for a round. A page made writable for one write and back
 * for the next cost two mprotect() calls a site, the second a TLB
 * shootdown on every CPU running the program (kernel functions for it
 * were 3% of a Lua run's samples, its hundreds of sites and stubs
 * patched in its first rounds). So a round makes each executable segment
 * it patches (ax_seg) and each stub region it writes writable once, and
 * ax_writable_end() gives them back their protection: at the end of the
 * segment's sites, and of the object's (still inside dl_iterate_phdr(),
 * before the loader may unmap either).
 */
static struct {
	uintptr_t p0, p1;	/* the segment's pages no other segment shares */
	int prot;
	int state;		/* 0: as mapped, 1: writable, -1: refused */
} ax_seg;

static notrace bool ax_seg_writable(void)
{
	if (!ax_seg.state)
		ax_seg.state = mprotect((void *)ax_seg.p0, ax_seg.p1 - ax_seg.p0,
					ax_seg.prot | PROT_WRITE) == 0 ? 1 : -1;
	return ax_seg.state > 0;
}

/* The segment's protection back (its sites done), and the regions' (@regions). */
static notrace void ax_writable_end(bool regions)
{
	if (ax_seg.state > 0)
		mprotect((void *)ax_seg.p0, ax_seg.p1 - ax_seg.p0, ax_seg.prot);
	ax_seg.state = 0;
	for (uint32_t i = 0; regions && i < ax_nregions; i++) {
		if (ax_regions[i].writable)
			mprotect(ax_regions[i].code, AX_REGION_SIZE, PROT_READ | PROT_EXEC);
		ax_regions[i].writable = false;
	}
}

/* Write @len bytes of code at @dst in a region (pages R+X, maybe running other stubs). */
static notrace bool ax_region_write(struct ax_region *r, uint32_t at, const uint8_t *code,
				    uint32_t len)
{
	if (!r->writable) {
		if (mprotect(r->code, AX_REGION_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
			return false;
		r->writable = true;
	}
	memcpy(r->code + at, code, len);
	return true;
}

/*
 * The stub @s of @r (ax_region.stub_at's index: function @fn's, id @id,
 * or the exit stub), generated the first time. Return: its address or 0.
 */
static notrace uintptr_t ax_stub(struct ax_region *r, uint32_t s, uintptr_t fn, uint32_t id)
{
	uint32_t *at = &r->stub_at[s];
	uint8_t code[AX_STUB_MAX];
	struct ax_asm a = { .p = code, .cap = sizeof(code) };

	if (*at)
		return (uintptr_t)r->code + *at - 1;
	if (s < 2 * AX_FAST)
		a_enter(&a, fn, id, s % AX_FAST, s < AX_FAST);
	else
		a_exit(&a);
	if (a.bad || r->used + a.n > AX_REGION_SIZE)
		return 0;
	if (!ax_region_write(r, r->used, code, a.n))
		return 0;
	*at = r->used + 1;
	r->used = (r->used + a.n + 15) & ~15u;
	return (uintptr_t)r->code + *at - 1;
}

/* ---- the call sites ---- */

static notrace uint32_t ax_seen_hash(uintptr_t ret)
{
	return (uint32_t)((ret * 0x9e3779b97f4a7c15ull) >> 50) & (AX_SEEN - 1);
}

static notrace bool ax_seen_has(uintptr_t ret)
{
	for (uint32_t h = ax_seen_hash(ret), i = 0; i < AX_SEEN; i++, h = (h + 1) & (AX_SEEN - 1)) {
		if (ax_seen[h] == ret)
			return true;
		if (!ax_seen[h])
			return false;
	}
	return true;	/* full: looked at no more */
}

static notrace void ax_seen_add(uintptr_t ret)
{
	if (ax_nseen >= AX_SEEN / 2)
		return;		/* half full: the rest is looked at again, rarely */
	for (uint32_t h = ax_seen_hash(ret);; h = (h + 1) & (AX_SEEN - 1)) {
		if (ax_seen[h] == ret)
			return;
		if (!ax_seen[h]) {
			ax_seen[h] = ret;
			ax_nseen++;
			return;
		}
	}
}

/* An object's loaded segments, as dl_iterate_phdr() gives them. */
struct ax_obj {
	const struct dl_phdr_info *info;
};

/* Whether [@a, @a + @len) lies in a loaded segment of @o (executable only: @x). */
static notrace bool ax_obj_has(const struct ax_obj *o, uintptr_t a, size_t len, bool x)
{
	for (int i = 0; i < o->info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &o->info->dlpi_phdr[i];
		uintptr_t lo = o->info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || (x && !(ph->p_flags & PF_X)) || !(ph->p_flags & PF_R))
			continue;
		if (a >= lo && a + len <= lo + ph->p_memsz && a + len >= a)
			return true;
	}
	return false;
}

/*
 * Whether the instruction at @call (5 bytes in @o) is @op (0xe8 call,
 * 0xe9 jmp) rel32 to @hook: directly, or through a PLT entry of @o whose
 * slot holds @hook.
 */
static notrace bool ax_calls_hook(const struct ax_obj *o, uintptr_t call, uintptr_t hook,
				  uint8_t op)
{
	const uint8_t *c = (const uint8_t *)call;
	int32_t rel;
	uintptr_t to, slot;
	const uint8_t *p;

	if (c[0] != op)
		return false;
	memcpy(&rel, c + 1, 4);
	to = call + 5 + (uintptr_t)(intptr_t)rel;
	if (to == hook)
		return true;
	if (!ax_obj_has(o, to, 16, true))
		return false;
	p = (const uint8_t *)to;
	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		p += 4;	/* endbr64 */
	if (p[0] == 0xf2)
		p++;	/* bnd */
	if (p[0] != 0xff || p[1] != 0x25)
		return false;
	memcpy(&rel, p + 2, 4);
	slot = (uintptr_t)p + 6 + (uintptr_t)(intptr_t)rel;
	if (!ax_obj_has(o, slot, sizeof(uintptr_t), false))
		return false;
	return *(const uintptr_t *)slot == hook;
}

/* cmpxchg16b: the 16 bytes at @p from @old to @new, atomically. */
static notrace bool ax_cas16(void *p, const uint64_t old[2], const uint64_t new[2])
{
	uint64_t lo = old[0], hi = old[1];
	bool ok;

	__asm__ __volatile__("lock cmpxchg16b %1"
			     : "=@ccz"(ok), "+m"(*(volatile struct { uint64_t q[2]; } *)p), "+a"(lo), "+d"(hi)
			     : "b"(new[0]), "c"(new[1])
			     : "memory");
	return ok;
}

/*
 * Set the @n bytes at @at to @bytes with one locked write of the aligned 8
 * or 16 bytes that hold them. Return: false when no such block holds them
 * (nothing written), or when they changed meanwhile.
 */
static notrace bool ax_cas_bytes(uintptr_t at, const uint8_t *bytes, unsigned n)
{
	uintptr_t base;

	if ((at & 7) + n <= 8) {
		uint64_t old, new;

		base = at & ~(uintptr_t)7;
		memcpy(&old, (const void *)base, 8);
		new = old;
		memcpy((uint8_t *)&new + (at - base), bytes, n);
		return __atomic_compare_exchange_n((uint64_t *)base, &old, new, false,
						   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	}
	if ((at & 15) + n <= 16) {
		uint64_t old[2], new[2];

		base = at & ~(uintptr_t)15;
		memcpy(old, (const void *)base, 16);
		memcpy(new, old, 16);
		memcpy((uint8_t *)new + (at - base), bytes, n);
		return ax_cas16((void *)base, old, new);
	}
	return false;
}

/*
 * Sites whose rel32 no aligned 16 bytes hold, changed at the round's end
 * (ax_split_run()) in three steps, each made visible to every thread
 * before the next: the instruction's first two bytes become `jmp .` (a
 * thread that comes meanwhile waits there), then its last three bytes
 * are written, then its first two. Between the steps,
 * membarrier(SYNC_CORE) makes every thread of the process execute a
 * serializing instruction: none is left with the old instruction half
 * decoded when its other half changes.
 */
#define AX_SPLITS 128u
static struct {
	uintptr_t at;
	uint8_t insn[5];	/* the new instruction */
	uint8_t orig[2];	/* the old one's first two bytes */
	bool spun;		/* (ax_split_run()) */
} ax_splits[AX_SPLITS];
static uint32_t ax_nsplits;
static int ax_sync_core;	/* 0: not asked yet, 1: registered, -1: not available */

static notrace bool ax_sync(void)
{
	return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0;
}

/*
 * The split sites of this segment, in this round (in the object's
 * dl_iterate_phdr() callback: no dlclose()), before ax_writable_end().
 */
static notrace void ax_split_run(void)
{
	static const uint8_t spin[2] = { 0xeb, 0xfe };	/* jmp . */
	uint32_t n = ax_nsplits;
	bool synced;

	ax_nsplits = 0;
	if (!n || !ax_seg_writable())
		return;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(ax_splits[i].orig, (const void *)ax_splits[i].at, 2);
		ax_splits[i].spun = ax_cas_bytes(ax_splits[i].at, spin, 2);
	}
	synced = ax_sync();
	for (uint32_t i = 0; i < n; i++) {
		if (!ax_splits[i].spun)
			continue;
		if (synced) {
			memcpy((uint8_t *)ax_splits[i].at + 2, ax_splits[i].insn + 2, 3);
		} else {
			/* not expected once registered: the first bytes back, the rest untouched */
			ax_cas_bytes(ax_splits[i].at, ax_splits[i].orig, 2);
			ax_sync_core = -1;
		}
	}
	if (synced) {
		ax_sync();
		for (uint32_t i = 0; i < n; i++)
			if (ax_splits[i].spun)
				ax_cas_bytes(ax_splits[i].at, ax_splits[i].insn, 2);
	}
}

/*
 * Point the call (or jmp: @op) at @at to @stub: its rel32 only, in one
 * locked write of the aligned 8 or 16 bytes that hold it, or at the
 * round's end in three steps (ax_split_run()); in the segment ax_seg.
 * Return: 1 patched (or to be), 0 not possible here for good, -1 not now.
 */
static notrace int ax_repoint(uintptr_t at, uintptr_t stub, uint8_t op)
{
	int64_t rel = (int64_t)stub - (int64_t)(at + 5);
	int32_t rel32 = (int32_t)rel;
	bool ok;

	if (rel != rel32)
		return 0;
	if (((at + 1) & 15) + 4 > 16) {
		if (!ax_sync_core)
			ax_sync_core = syscall(SYS_membarrier,
					       MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE,
					       0, 0) == 0 ? 1 : -1;
		/* the first two bytes must be one aligned write too */
		if (ax_sync_core < 0 || ((at & 15) + 2 > 16))
			return 0;
		if (ax_nsplits == AX_SPLITS)
			return -1;
		ax_splits[ax_nsplits].at = at;
		ax_splits[ax_nsplits].insn[0] = op;
		memcpy(ax_splits[ax_nsplits].insn + 1, &rel32, 4);
		ax_nsplits++;
		return 1;
	}
	if (!ax_seg_writable())
		return 0;
	ok = ax_cas_bytes(at + 1, (const uint8_t *)&rel32, 4);
	return ok ? 1 : -1;
}

/* The count index of function @id, given one the first time. Return: AX_FAST when full. */
static notrace uint32_t ax_fast_index(uint32_t id)
{
	uint32_t n = atomic_load_explicit(&ax_fast_n, memory_order_relaxed);

	for (uint32_t k = 0; k < n; k++)
		if (ax_fast_id[k] == id)
			return k;
	if (n == AX_FAST)
		return AX_FAST;
	ax_fast_id[n] = id;
	/* release: the id before the count that emitters then read */
	atomic_store_explicit(&ax_fast_n, n + 1, memory_order_release);
	return n;
}

/*
 * A function @fn whose exit hook was not called from where it returns:
 * gcc ends it with `jmp __cyg_profile_func_exit` (a tail call), whose
 * address the hook cannot know. The first AX_TAIL_SCAN bytes of the
 * function are searched for such jumps (E9 rel32 reaching the exit hook:
 * five bytes that match by chance are one in 2^40 a place), and each is
 * pointed at the exit stub, which serves any function's exit (the
 * ret of the stub returns where the function would have). Once per function.
 */
#define AX_TAIL_SCAN 2048u
static notrace void ax_tail_exits(const struct ax_obj *o, uintptr_t fn, uintptr_t lo,
				  uintptr_t hi)
{
	uintptr_t key = fn | (uintptr_t)1 << 62;	/* in the seen set: scanned */
	uintptr_t hook = ax_hook_exit, end, stub = 0;
	struct ax_region *r;

	if (fn < lo || fn >= hi || ax_seen_has(key))
		return;
	ax_seen_add(key);
	end = hi - fn > AX_TAIL_SCAN ? fn + AX_TAIL_SCAN : hi;
	for (uintptr_t at = fn; at + 5 <= end; at++) {
		if (*(const uint8_t *)at != 0xe9 || !ax_calls_hook(o, at, hook, 0xe9))
			continue;
		if (!stub) {
			r = ax_region_for(lo, hi);
			stub = r ? ax_stub(r, 2 * AX_FAST, 0, 0) : 0;
			if (!stub)
				return;
		}
		ax_repoint(at, stub, 0xe9);
	}
}

/* Look at one wanted site in the object (its executable segment [@lo, @hi): ax_seg). */
static notrace void ax_site(const struct ax_obj *o, const struct ax_req *q, uintptr_t lo,
			    uintptr_t hi)
{
	uintptr_t call = q->ret - 5;
	uintptr_t hook = q->action ? ax_hook_exit
				   : ax_hook_enter;
	uint32_t id, k, which = 2 * AX_FAST;
	bool counted;
	struct ax_region *r;
	uintptr_t stub;
	int done;

	if (ax_seen_has(q->ret))
		return;		/* settled earlier in this round */
	if (call < lo || q->ret > hi || !ax_calls_hook(o, call, hook, 0xe8)) {
		uintptr_t other = q->action ? ax_hook_enter
					    : ax_hook_exit;

		/* a pair read half old, half new: the other hook's site, asked for again */
		if (call >= lo && q->ret <= hi && ax_calls_hook(o, call, other, 0xe8))
			return;
		ax_seen_add(q->ret);	/* not a call of the hook: never will be */
		return;
	}
	id = fdr_funcid_find(q->fn);
	if (!id) {
		ax_seen_add(q->ret);	/* no id: not a function the hooks count */
		return;
	}
	/*
	 * A call counted because a counted call was open (the function not
	 * counted itself) gets the stub for nested calls; its exit, the exit
	 * stub, which any function's may take.
	 */
	counted = atomic_load_explicit(ax_state_of(id), memory_order_relaxed) == AX_STATE_COUNTED;
	if (!q->action) {
		k = ax_fast_index(id);
		if (k == AX_FAST) {
			ax_seen_add(q->ret);
			return;
		}
		which = counted ? k : AX_FAST + k;
	}
	r = ax_region_for(lo, hi);
	stub = r ? ax_stub(r, which, q->fn, id) : 0;
	if (!stub) {
		ax_seen_add(q->ret);
		return;
	}
	done = ax_repoint(call, stub, 0xe8);
	if (done >= 0)
		ax_seen_add(q->ret);
}

/* dl_iterate_phdr(): the wanted sites in this object's executable segments. */
static notrace int ax_patch_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ax_obj o = { .info = info };

	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		uintptr_t plo = lo & ~(uintptr_t)(AX_PAGE - 1);
		uintptr_t phi = (hi + AX_PAGE - 1) & ~(uintptr_t)(AX_PAGE - 1);
		int prot = PROT_EXEC;

		/* (our own text has no call of the hooks: nothing there passes ax_calls_hook()) */
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_flags & PF_W)
			continue;
		prot |= ph->p_flags & PF_R ? PROT_READ : 0;
		/* pages another segment shares: their protection is not this one's */
		for (int j = 0; j < info->dlpi_phnum; j++) {
			const ElfW(Phdr) *q = &info->dlpi_phdr[j];
			uintptr_t qlo = (info->dlpi_addr + q->p_vaddr) & ~(uintptr_t)(AX_PAGE - 1);
			uintptr_t qhi = (info->dlpi_addr + q->p_vaddr + q->p_memsz + AX_PAGE - 1) &
					~(uintptr_t)(AX_PAGE - 1);

			if (j == i || q->p_type != PT_LOAD || qhi <= plo || qlo >= phi)
				continue;
			if (qlo <= plo)
				plo = qhi;
			else
				phi = qlo;
		}
		lo = lo > plo ? lo : plo;
		hi = hi < phi ? hi : phi;
		if (lo >= hi)
			continue;
		ax_seg.p0 = lo & ~(uintptr_t)(AX_PAGE - 1);
		ax_seg.p1 = (hi + AX_PAGE - 1) & ~(uintptr_t)(AX_PAGE - 1);
		ax_seg.prot = prot;
		ax_seg.state = 0;
		for (uint32_t n = 0; n < ax_nreqs; n++) {
			if (ax_reqs[n].ret > lo && ax_reqs[n].ret <= hi) {
				ax_reqs[n].found = true;
				ax_site(&o, &ax_reqs[n], lo, hi);
			}
			/* an exit's hook may have been jumped to at the function's end */
			if (ax_reqs[n].action)
				ax_tail_exits(&o, ax_reqs[n].fn, lo, hi);
		}
		ax_split_run();	/* this segment's, before the loader may unmap it */
		ax_writable_end(false);
	}
	ax_writable_end(true);
	return 0;
}

/* fdr_threads_foreach(): one thread's wanted sites (its slot lock held: @t->ax stays). */
static notrace void ax_collect(struct fdr_thread *t, void *arg)
{
	/* acquire: pairs with the owner's release store of @ax */
	struct fdr_ax_thread *x = atomic_load_explicit(&t->ax, memory_order_acquire);

	(void)arg;
	if (!x)
		return;
	for (uint32_t i = 0; i < AX_WANT && ax_nreqs < AX_REQS; i++) {
		/* the owner writes them meanwhile: each pair checked before use (ax_site()) */
		uintptr_t ret = atomic_load_explicit(&x->want[i][0], memory_order_relaxed);
		uintptr_t fa = atomic_load_explicit(&x->want[i][1], memory_order_relaxed);

		/* (the same site again in this round: ax_site() finds it settled) */
		if (!ret || ax_seen_has(ret))
			continue;
		ax_reqs[ax_nreqs++] = (struct ax_req){ .ret = ret,
						       .fn = fa & ~((uintptr_t)1 << 63),
						       .action = (unsigned)(fa >> 63),
						       .found = false };
	}
}

notrace bool fdr_ax_patch_on(void)
{
	return ax_patching;
}

notrace bool fdr_ax_patch_round(void)
{

	if (!ax_patching || !ax_hook_enter || !ax_hook_exit)
		return false;
	if (!ax_offsets_ok) {
		if (!ax_offsets()) {
			ax_patching = false;
			return false;
		}
		ax_offsets_ok = true;
	}
	if (fdr_gate_rec != FDR_GATE_COUNTED ||
	    atomic_load_explicit(&fdr_gate, memory_order_relaxed) != FDR_GATE_COUNTED)
		return false;
	ax_nreqs = 0;
	fdr_threads_foreach(ax_collect, NULL, 100000);
	if (!ax_nreqs)
		return false;
	dl_iterate_phdr(ax_patch_obj, NULL);
	for (uint32_t n = 0; n < ax_nreqs; n++)
		if (!ax_reqs[n].found)
			ax_seen_add(ax_reqs[n].ret);	/* in no object's text: never */
	return true;
}
