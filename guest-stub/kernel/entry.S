/* Interrupt and system-call entry, the way back to a thread, and the thread switch itself. */

#include "guest-stub/kernel/stamp.h"

/*
 * One stub per vector 32..255 (devices, IPIs, system calls: none pushes an error code).
 * Each pushes a zero error code and its vector, then joins intr_common. kirq_stubs lists
 * their addresses for irq.c, which installs only the gates it uses.
 */
	.section .rodata
	.balign	8
	.globl	kirq_stubs
kirq_stubs:
	.text
	.set	vector, 32
	.rept	256 - 32
	.balign	16
0:
	pushq	$0
	pushq	$vector
	jmp	intr_common
	.pushsection .rodata
	.quad	0b
	.popsection
	.set	vector, vector + 1
	.endr

/*
 * Saves the interrupted thread's registers and x87/SSE state as a struct kframe and calls
 * kernel_trap(frame). The CPU has switched to TSS.RSP0 if the thread ran at CPL 3 and, in
 * 64-bit mode, aligned the stack to 16 bytes before its pushes (SDM Vol. 3A, "64-Bit Mode
 * Stack Frame"): 7 + 15 words keep that alignment, which FXSAVE and the C ABI need.
 * Saving the FPU state here lets any kernel code use SSE and any thread be preempted.
 * The TSC goes to the VCPU's struct kcpu as soon as RAX and RDX are saved, and again on the
 * way out just before they are restored: the PMU driver charges the path in between to a
 * counting thread's window (pmu.c; KSTAMP_UNSTAMPED counts what the stamps leave out).
 */
intr_common:
	pushq	%rax
	pushq	%rbx
	pushq	%rcx
	pushq	%rdx
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movq	%rax, %gs:KCPU_ENTRY_TSC
	pushq	%rsi
	pushq	%rdi
	pushq	%rbp
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$512, %rsp
	fxsave64 (%rsp)
	cld				/* the C ABI wants DF = 0 */
	movq	%rsp, %rdi
	call	kernel_trap
/*
 * Back to the thread whose frame is at RSP. A new thread starts here too: its first
 * switch-in returns to this label over a frame thread_alloc() made up (thread.c).
 */
	.globl	kintr_return
kintr_return:
	fxrstor64 (%rsp)
	addq	$512, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rbp
	popq	%rdi
	popq	%rsi
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movq	%rax, %gs:KCPU_EXIT_TSC
	popq	%rdx
	popq	%rcx
	popq	%rbx
	popq	%rax
	addq	$16, %rsp		/* vector and error code */
	iretq

/*
 * void kswitch(struct kthread *prev, uint64_t *prev_ksp, uint64_t next_ksp)
 *
 * The thread switch. Called from C with interrupts masked, so by the C ABI only the
 * callee-saved registers (RBX, RBP, R12-R15) and RSP must survive: they go on prev's
 * stack, RSP into *prev_ksp. Then RSP becomes next's saved one and the same registers
 * come back off next's stack; RET returns wherever next had called kswitch (or, for a
 * new thread, to kintr_return). In between, already on next's stack, sched_switched(prev)
 * may hand prev to another VCPU: nothing uses prev's stack any more.
 */
	.globl	kswitch
kswitch:
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, (%rsi)
	movq	%rdx, %rsp
	/* 6 saved registers and a return address: RSP is 8 off the 16 the call wants. */
	subq	$8, %rsp
	call	sched_switched
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
