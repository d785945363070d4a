/* mb32 test kernel entry: multiboot v1 header, its own GDT and stack, then kmain(magic, info). */

#define MB_HEADER_MAGIC	0x1BADB002
/* Modules page-aligned, memory information wanted; no address fields: loaded as ELF. */
#define MB_HEADER_FLAGS	0x00000003

#define SEL_CODE	0x08
#define SEL_DATA	0x10

	.section .multiboot, "a"
	.balign	4
	.long	MB_HEADER_MAGIC
	.long	MB_HEADER_FLAGS
	.long	-(MB_HEADER_MAGIC + MB_HEADER_FLAGS)

	.section .rodata
	.balign	8
gdt:
	.quad	0
	.quad	0x00cf9a000000ffff	/* SEL_CODE: flat 32-bit code */
	.quad	0x00cf92000000ffff	/* SEL_DATA: flat data */
gdt_end:
gdt_ptr:
	.word	gdt_end - gdt - 1
	.long	gdt

	.bss
	.balign	16
stack:
	.skip	16384
stack_top:

/*
 * Multiboot 0.6.96, 3.2: EAX = magic, EBX = info, flat CS/DS, but the GDTR may be invalid, so
 * load our own before any segment register (an interrupt gate reloads CS from it too).
 */
	.text
	.globl	_start
_start:
	cli
	cld
	movl	%eax, %esi
	lgdt	gdt_ptr
	ljmp	$SEL_CODE, $1f
1:	movw	$SEL_DATA, %ax
	movw	%ax, %ds
	movw	%ax, %es
	movw	%ax, %fs
	movw	%ax, %gs
	movw	%ax, %ss
	movl	$stack_top, %esp
	pushl	%ebx
	pushl	%esi
	call	kmain			/* does not return */
2:	hlt
	jmp	2b

	.section .note.GNU-stack, "", @progbits
