/* A Linux user program whose user-mode instruction and branch counts are known from its code. */
/*
 * Static, no libc: execve() starts it at _start and it ends with the exit system call, so the
 * only user-mode instructions it retires are these (N = KNOWN_LOOPS):
 *
 *	mov	$N, %ecx		1
 *   1:	dec	%ecx			N	(one per iteration)
 *	jnz	1b			N	(taken N - 1 times, falls through once)
 *	mov	$60, %eax		1	(exit)
 *	xor	%edi, %edi		1	(status 0)
 *	syscall				1
 *
 * instructions:u = 2N + 4, branches:u = N + 1 (the N JNZ and the SYSCALL, a far branch), each
 * counting the SYSCALL as retired in user mode; a PMU that counts it on the kernel's side
 * sees 2N + 3 and N. With N = 10000: 20004 instructions and 10001 branches.
 */
#define KNOWN_LOOPS	10000

	.text
	.globl _start
_start:
	mov	$KNOWN_LOOPS, %ecx
1:	dec	%ecx
	jnz	1b
	mov	$60, %eax
	xor	%edi, %edi
	syscall

	.section .note.GNU-stack, "", @progbits
