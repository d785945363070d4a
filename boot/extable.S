/* rdmsr_safe()/wrmsr_safe(): MSR access that returns -1 instead of faulting, via the .ex_table fix-ups. */

/* Each .ex_table entry: the address of an instruction that may fault, and where to resume. */
	.macro ex_entry insn, fixup
	.pushsection .ex_table, "a"
	.quad \insn, \fixup
	.popsection
	.endm

	.text
	.code64
	/* int rdmsr_safe(uint32_t msr, uint64_t *val) */
	.globl rdmsr_safe
rdmsr_safe:
	movl %edi, %ecx
1:	rdmsr
	shlq $32, %rdx
	movl %eax, %eax
	orq %rdx, %rax
	movq %rax, (%rsi)
	xorl %eax, %eax
	ret
2:	movl $-1, %eax
	ret
	ex_entry 1b, 2b

	/* int wrmsr_safe(uint32_t msr, uint64_t val) */
	.globl wrmsr_safe
wrmsr_safe:
	movl %edi, %ecx
	movl %esi, %eax
	movq %rsi, %rdx
	shrq $32, %rdx
3:	wrmsr
	xorl %eax, %eax
	ret
4:	movl $-1, %eax
	ret
	ex_entry 3b, 4b
