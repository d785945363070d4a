/* AP start-up code: from real mode at the SIPI page through protected mode into 64-bit mode. */
#include "guest-stub/kernel/trampoline.h"
#include "include/x86/cr.h"
#include "include/x86/msr.h"

#define SEL_CODE32	0x08
#define SEL_DATA	0x10
#define SEL_CODE64	0x18


/* The address a label has once the code is copied to TRAMPOLINE_BASE. */
#define ABS(label)	(TRAMPOLINE_BASE + (label) - ap_trampoline)

/*
 * Not run where it is linked: smpboot.c copies ap_trampoline..ap_trampoline_end to
 * TRAMPOLINE_BASE and fills ap_boot_args there, then sends the SIPI. Absolute addresses
 * are therefore all written as ABS(label); in real mode DS = CS = TRAMPOLINE_BASE >> 4.
 */
	.section .rodata
	.code16
	.globl	ap_trampoline
ap_trampoline:
	cli
	cld
	movw	%cs, %ax
	movw	%ax, %ds
	/* SDM Vol. 3A, "Switching to Protected Mode": a GDT, CR0.PE, a far jump. */
	lgdtl	gdt_ptr - ap_trampoline
	movl	%cr0, %eax
	orl	$CR0_PE, %eax
	movl	%eax, %cr0
	ljmpl	$SEL_CODE32, $ABS(protected)

	.code32
protected:
	movl	$SEL_DATA, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	/* SDM Vol. 3A, "Initializing IA-32e Mode": PAE, CR3, EFER.LME, then CR0.PG. */
	movl	%cr4, %eax
	orl	$CR4_PAE, %eax
	movl	%eax, %cr4
	movl	ABS(arg_cr3), %eax
	movl	%eax, %cr3
	movl	$MSR_EFER, %ecx
	rdmsr
	orl	$EFER_LME, %eax
	wrmsr
	/* After INIT the caches may be off (CD/NW set): turn them on with paging. */
	movl	%cr0, %eax
	andl	$~(CR0_CD + CR0_NW), %eax
	orl	$CR0_PG, %eax
	movl	%eax, %cr0
	ljmp	$SEL_CODE64, $ABS(long_mode)

	.code64
long_mode:
	movq	ABS(arg_rsp), %rsp
	/* SSE before any C: the compiler may use it anywhere. An absolute call: it is linked. */
	movq	$rt_fpu_init, %rax
	call	*%rax
	movq	ABS(arg_cpu), %rdi
	call	*ABS(arg_entry)		/* entry(cpu) never returns */

	.balign	8
gdt:
	.quad	0
	.quad	0x00cf9b000000ffff	/* SEL_CODE32: flat, 32-bit, accessed */
	.quad	0x00cf93000000ffff	/* SEL_DATA: flat, writable, accessed */
	.quad	0x00af9b000000ffff	/* SEL_CODE64: long mode */
gdt_ptr:
	.word	gdt_ptr - gdt - 1
	.long	ABS(gdt)

/* struct ap_boot_args in smpboot.c: filled in for each AP before its SIPI. */
	.balign	8
	.globl	ap_boot_args
ap_boot_args:
arg_cr3:
	.quad	0
arg_rsp:
	.quad	0
arg_entry:
	.quad	0
arg_cpu:
	.quad	0
	.globl	ap_trampoline_end
ap_trampoline_end:
