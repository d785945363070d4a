/* Ends the perfvisor domain from Linux user space: "pv-exit D" writes the digit D to port 0xF4. */
/*
 * Linux's own power-off finds no way out of a perfvisor domain (no ACPI PM1 registers), so the
 * init script leaves through the exit port (docs/platform.md) after ioperm(0xF4, 1, 1); it
 * needs CAP_SYS_RAWIO, which init has. Without an argument the code is 0.
 */
	.text
	.globl _start
_start:
	xor	%ebx, %ebx
	cmpq	$2, (%rsp)		/* argc */
	jb	1f
	mov	16(%rsp), %rsi		/* argv[1] */
	movzbl	(%rsi), %ebx
	sub	$'0', %ebx
1:	mov	$173, %eax		/* ioperm(0xF4, 1, 1) */
	mov	$0xf4, %edi
	mov	$1, %esi
	mov	$1, %edx
	syscall
	/* One byte: ioperm() opened port 0xF4 alone, a wider OUT would touch 0xF5-0xF7 (#GP). */
	mov	%ebx, %eax
	mov	$0xf4, %edx
	outb	%al, %dx
	/* Outside perfvisor (or without the permission) the write does nothing: exit. */
	mov	$60, %eax
	mov	%ebx, %edi
	syscall

	.section .note.GNU-stack, "", @progbits
