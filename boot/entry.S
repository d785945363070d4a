/* Multiboot v1 header and the 32-bit entry that switches to long mode and calls boot_main(). */

#include "include/x86/cr.h"
#include "include/x86/msr.h"

#define MB_MAGIC	0x1BADB002
/* Bit 0: modules page aligned; bit 1: memory info; bit 16: use the address fields below. */
#define MB_FLAGS	0x00010003

	.section .multiboot, "a"
	.align 4
mb_header:
	.long MB_MAGIC
	.long MB_FLAGS
	.long -(MB_MAGIC + MB_FLAGS)
	/* Multiboot 0.6.96 3.1.3: the address fields, so an ELF64 file loads as a flat image. */
	.long mb_header
	.long __image_start
	.long __load_end
	.long __image_end
	.long _start32

	.section .text.boot32, "ax"
	.code32
	.globl _start32
_start32:
	cli
	cld
	movl %eax, boot_mb_magic
	/* The first thing: the TSC at entry, for the boot-cost figure (make bench). */
	movl %edx, %edi
	rdtsc
	movl %eax, boot_entry_tsc
	movl %edx, boot_entry_tsc + 4
	movl %edi, %edx
	movl %ebx, boot_mb_info
	movl $boot_stack_top, %esp

	/* Long mode needs CPUID.80000001H:EDX.LM (SDM Vol. 3A 9.8.5); say so on COM1 if absent. */
	movl $0x80000000, %eax
	cpuid
	cmpl $0x80000001, %eax
	jb no_long_mode
	movl $0x80000001, %eax
	cpuid
	btl $29, %edx
	jnc no_long_mode

	/* Identity-map the low 4 GiB with 2 MiB pages; the top GiB (APIC, I/O) uncached. */
	movl $boot_pd, %edi
	xorl %ecx, %ecx
1:	movl %ecx, %eax
	shll $21, %eax
	orl $0x83, %eax			/* present, writable, 2 MiB page */
	cmpl $1536, %ecx
	jb 2f
	orl $0x18, %eax			/* PWT|PCD */
2:	movl %eax, (%edi,%ecx,8)
	movl $0, 4(%edi,%ecx,8)
	incl %ecx
	cmpl $2048, %ecx
	jb 1b

	movl $boot_pdpt, %edi
	xorl %ecx, %ecx
3:	movl %ecx, %eax
	shll $12, %eax
	addl $boot_pd + 3, %eax
	movl %eax, (%edi,%ecx,8)
	movl $0, 4(%edi,%ecx,8)
	incl %ecx
	cmpl $4, %ecx
	jb 3b

	movl $boot_pdpt + 3, %eax
	movl %eax, boot_pml4
	movl $0, boot_pml4 + 4

	/* SDM Vol. 3A 9.8.5: PAE, CR3, EFER.LME, then CR0.PG. */
	movl %cr4, %eax
	orl $CR4_PAE, %eax
	movl %eax, %cr4
	movl $boot_pml4, %eax
	movl %eax, %cr3
	movl $MSR_EFER, %ecx
	rdmsr
	orl $EFER_LME, %eax
	wrmsr
	movl %cr0, %eax
	orl $(CR0_PG | CR0_PE), %eax
	andl $~(CR0_CD | CR0_NW), %eax	/* caches on: clear CD and NW, which a BIOS may leave set */
	movl %eax, %cr0

	lgdt boot_gdt_desc
	ljmp $0x08, $start64

no_long_mode:
	movl $no_lm_msg, %esi
4:	lodsb
	testb %al, %al
	jz 5f
	movw $0x3F8, %dx
	outb %al, %dx
	movw $0xE9, %dx
	outb %al, %dx
	jmp 4b
5:	hlt
	jmp 5b

	.code64
start64:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
	movq $boot_stack_top, %rsp
	movl boot_mb_magic, %edi
	movl boot_mb_info, %esi
	call boot_main
6:	cli
	hlt
	jmp 6b

	.section .rodata
no_lm_msg:
	.asciz "perfvisor: this CPU has no long mode (x86-64); it cannot run here\r\n"

	/* A minimal GDT for the switch; gdt.c installs the real per-CPU one with a TSS. */
	.align 16
boot_gdt:
	.quad 0
	.quad 0x00AF9A000000FFFF	/* 0x08: 64-bit code */
	.quad 0x00CF92000000FFFF	/* 0x10: data */
boot_gdt_desc:
	.word boot_gdt_desc - boot_gdt - 1
	.long boot_gdt

	.data
	.globl boot_mb_magic, boot_mb_info, boot_entry_tsc
boot_mb_magic:	.long 0
boot_mb_info:	.long 0
	.align 8
boot_entry_tsc:	.quad 0

	.bss
	.align 4096
	.globl boot_pml4
boot_pml4:	.skip 4096
boot_pdpt:	.skip 4096
boot_pd:	.skip 4096 * 4
	.align 16
	.globl boot_stack_top
boot_stack:	.skip 16384
boot_stack_top:
