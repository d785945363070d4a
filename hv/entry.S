/* vmx_run(): enter the guest with its GPRs and come back here on the next VM exit (HOST_RIP = vmx_exit_entry). */

/* Offsets of struct vcpu's first member, the GPR array, in x86 encoding order (hv/vcpu.h). */
#define G_RAX	0
#define G_RCX	8
#define G_RDX	16
#define G_RBX	24
#define G_RBP	40
#define G_RSI	48
#define G_RDI	56
#define G_R8	64
#define G_R9	72
#define G_R10	80
#define G_R11	88
#define G_R12	96
#define G_R13	104
#define G_R14	112
#define G_R15	120
#define G_CR2	128

#define VMCS_HOST_RSP	0x6C14

	.text
	.code64
/*
 * int vmx_run(struct vcpu *v, int launched)
 * Returns 0 after a VM exit, 1 when VMLAUNCH/VMRESUME itself failed (VMCS_INSN_ERROR says why).
 */
	.globl vmx_run
vmx_run:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	pushq %rdi			/* the vcpu, found again at (%rsp) after the exit */
	movq $VMCS_HOST_RSP, %rax
	vmwrite %rsp, %rax
	/* The guest's CR2 is not part of the VMCS: load it by hand (SDM Vol. 3C 28.3.2.1). */
	movq G_CR2(%rdi), %rax
	movq %rax, %cr2
	movq G_RBP(%rdi), %rbp
	movq G_R12(%rdi), %r12
	movq G_R13(%rdi), %r13
	movq G_R14(%rdi), %r14
	movq G_R15(%rdi), %r15
	testl %esi, %esi
/* The registers a C call may clobber, and RBX; ZF set: VMLAUNCH, clear: VMRESUME (MOV keeps it). */
load_volatile:
	movq G_RCX(%rdi), %rcx
	movq G_RDX(%rdi), %rdx
	movq G_RBX(%rdi), %rbx
	movq G_RSI(%rdi), %rsi
	movq G_R8(%rdi), %r8
	movq G_R9(%rdi), %r9
	movq G_R10(%rdi), %r10
	movq G_R11(%rdi), %r11
	movq G_RAX(%rdi), %rax
	movq G_RDI(%rdi), %rdi
	jnz 1f
	vmlaunch
	jmp 2f
1:	vmresume
2:	/* Entry failed: we are still in the host with the guest's registers loaded. */
	popq %rdi
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	movl $1, %eax
	ret

/*
 * The exit stub. First only the registers a C call may clobber, and RBX (CPUID writes it), go
 * to the vcpu: vmexit_fast() keeps RBP and R12-R15 as the SysV ABI says, so on its fast path
 * they still hold the guest's values, as CR2 does (it takes no page fault), and only the saved
 * ones come back. Otherwise the rest is saved and vmx_run() returns.
 */
	.globl vmx_exit_entry
vmx_exit_entry:
	/* HOST_RSP is 16-byte aligned: vmx_run was called aligned and pushed 7 registers. */
	pushq %rdi
	movq 8(%rsp), %rdi
	movq %rax, G_RAX(%rdi)
	movq %rcx, G_RCX(%rdi)
	movq %rdx, G_RDX(%rdi)
	movq %rbx, G_RBX(%rdi)
	movq %rsi, G_RSI(%rdi)
	popq G_RDI(%rdi)
	movq %r8, G_R8(%rdi)
	movq %r9, G_R9(%rdi)
	movq %r10, G_R10(%rdi)
	movq %r11, G_R11(%rdi)
	call vmexit_fast
	movq (%rsp), %rdi
	testb %al, %al
	/* ZF clear from here: load_volatile resumes the guest. */
	jnz load_volatile
	movq %rbp, G_RBP(%rdi)
	movq %r12, G_R12(%rdi)
	movq %r13, G_R13(%rdi)
	movq %r14, G_R14(%rdi)
	movq %r15, G_R15(%rdi)
	movq %cr2, %rax
	movq %rax, G_CR2(%rdi)
	popq %rdi
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	xorl %eax, %eax
	ret
