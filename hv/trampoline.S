/* Application-processor start-up code: copied to TRAMP_BASE, entered in real mode by a SIPI, ends in ap_main(). */

#include "include/x86/cr.h"
#include "include/x86/msr.h"

#define TRAMP_BASE	0x7000
#define REL(x)		((x) - ap_tramp_start)
#define ABS(x)		(TRAMP_BASE + REL(x))

	.section .rodata
	.globl ap_tramp_start, ap_tramp_end, ap_tramp_cr3, ap_tramp_stack, ap_tramp_pcpu
	.code16
	/* SDM Vol. 3A 9.9: real mode -> protected mode -> IA-32e mode, as on the boot CPU. */
ap_tramp_start:
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	lgdtl REL(tramp_gdtr)
	movl %cr0, %eax
	orl $CR0_PE, %eax
	movl %eax, %cr0
	ljmpl $0x08, $ABS(pm32)

	.code32
pm32:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movl %cr4, %eax
	orl $CR4_PAE, %eax
	movl %eax, %cr4
	movl ABS(ap_tramp_cr3), %eax
	movl %eax, %cr3
	movl $MSR_EFER, %ecx
	rdmsr
	orl $EFER_LME, %eax
	wrmsr
	movl %cr0, %eax
	orl $CR0_PG, %eax
	andl $~(CR0_CD | CR0_NW), %eax		/* caches on */
	movl %eax, %cr0
	ljmpl $0x18, $ABS(pm64)

	.code64
pm64:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movq ABS(ap_tramp_stack), %rsp
	movq ABS(ap_tramp_pcpu), %rdi
	movabsq $ap_main, %rax
	jmp *%rax

	.align 8
tramp_gdt:
	.quad 0
	.quad 0x00CF9A000000FFFF	/* 0x08: 32-bit code */
	.quad 0x00CF92000000FFFF	/* 0x10: data */
	.quad 0x00AF9A000000FFFF	/* 0x18: 64-bit code */
tramp_gdtr:
	.word tramp_gdtr - tramp_gdt - 1
	.long ABS(tramp_gdt)
	.align 8
	/* Filled in by smp.c for each AP before its SIPI. */
ap_tramp_cr3:	.quad 0
ap_tramp_stack:	.quad 0
ap_tramp_pcpu:	.quad 0
ap_tramp_end:
