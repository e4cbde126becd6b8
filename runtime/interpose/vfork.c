// SPDX-License-Identifier: MIT
/*
 * runtime/interpose/vfork.c - a vfork child's calls are not its parent
 * thread's.
 *
 * A vfork child runs on its parent's memory, on the thread that called
 * vfork(), with that thread's TLS, until it execs or exits; the parent is
 * suspended meanwhile. Instrumented code in the child (GNU make built
 * without posix_spawn runs its exec_command there; so does any program's
 * own code between vfork and exec) recorded into the parent thread's
 * buffer: in the parent's trace, a call that never returned and lasted
 * the whole time the parent waited (replay: `in_child(); 201 ms`, ended
 * by an outer exit).
 *
 * So libfdrtrace defines vfork (exported, as the exec family and _exit
 * are): it makes the system call itself and sets the thread's guard to
 * FDR_GUARD_VFORK in the child, so that its hooks return at once and count
 * nothing (held.c, fdr_record_reentry()): the child has no trace of its
 * own (it shares the parent's memory), and its calls are not the parent's
 * to lose. The parent, once it runs again, gets its guard back as it was.
 *
 * vfork cannot be a C function that calls the real one: the child would
 * return through this function's frame and leave the stack the parent
 * returns through changed. As libc's does, it keeps its return address in
 * a register across the system call (the kernel restores the parent's
 * registers; the child may overwrite the stack), and puts it back on the
 * stack after. The guard is saved before the call, so the parent restores
 * it whatever the child did; errno is set here on a failure.
 */
#include <errno.h>
#include <sys/syscall.h>

#include "compiler.h"
#include "thread.h"

#define VF_STR2(x) #x
#define VF_STR(x) VF_STR2(x)

/* Called from vfork below, before the system call. */
fdr_hidden notrace void fdr_vfork_prepare(void);
/* Called after it, in both: @r is what the system call returned. Return: vfork's value. */
fdr_hidden notrace long fdr_vfork_returned(long r);

notrace void fdr_vfork_prepare(void)
{
	fdr_self.vfork_guard = fdr_self.guard;
}

notrace long fdr_vfork_returned(long r)
{
	struct fdr_thread *t = &fdr_self;

	if (r == 0) {
		t->guard = FDR_GUARD_VFORK;	/* the child: nothing recorded until exec or exit */
		return 0;
	}
	t->guard = t->vfork_guard;	/* the parent, the child gone (or none made) */
	if (r < 0 && r >= -4095) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/*
 * Stack alignment: 8 mod 16 at entry (the return address), so 8 more
 * before the first call; after the return address is popped and pushed
 * back, 8 more again before the second.
 */
__asm__("	.text\n"
	"	.globl	vfork\n"
	"	.type	vfork, @function\n"
	"	.p2align 4\n"
	"vfork:\n"
	"	.cfi_startproc\n"
	"	subq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call	fdr_vfork_prepare\n"
	"	addq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq	%rdi\n"	/* the return address: in a register across the call */
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_register %rip, %rdi\n"
	"	movl	$" VF_STR(SYS_vfork) ", %eax\n"
	"	syscall\n"
	"	pushq	%rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rip, 0\n"
	"	subq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	movq	%rax, %rdi\n"
	"	call	fdr_vfork_returned\n"
	"	addq	$8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size	vfork, .-vfork\n");
