/* The bzstub kernel's entries: none at 0 (32-bit), the 64-bit one at 0x200 (boot.rst). */
	.section .text.entry, "ax"
	.code64
	.globl _start
_start:
	/* boot.rst: 0 is the 32-bit entry, which this kernel does not offer. */
	ud2
	.org 0x200, 0xcc
	.globl startup_64
startup_64:
	lea	stack_top(%rip), %rsp
	mov	%rsi, %rdi
	call	bz_main
	mov	%eax, %eax
	mov	$0xf4, %edx
	out	%eax, %dx
1:	hlt
	jmp	1b

	/* In .data: the flat image carries it, so nothing needs zeroing. */
	.section .data
	.balign 16
	.skip 8192
stack_top:
