/* A Linux user program of four functions of known user-mode instruction counts, to profile. */
/*
 * Static, no libc, like known.S: _start calls cost10, cost7, cost4 and cost1 once each and ends
 * with the exit system call. Each function is COST_FN(name, N):
 *
 *	mov	$N, %ecx		1
 *   1:	dec	%ecx			N
 *	jnz	1b			N
 *	ret				1
 *
 * 2N + 2 user-mode instructions, CALL excluded (it is _start's). With N = m * UNIT / 2 - 1 a
 * function costs exactly m * UNIT: cost10 20000, cost7 14000, cost4 8000, cost1 2000 for UNIT =
 * 2000, 44000 in all, and _start's own 7 (four CALLs, MOV, XOR, SYSCALL): 44007 instructions.
 *
 * Sampled every UNIT user instructions, sample k interrupts after instruction k * UNIT, at
 * instruction k * UNIT + 1 (no skid). A function's instructions are consecutive in the stream,
 * and any m * UNIT consecutive integers hold exactly m multiples of UNIT, so each function gets
 * exactly m samples wherever it starts: 10, 7, 4 and 1, and _start none (22 samples; the 23rd
 * would need 46000 instructions). Its share of the samples equals its share of the functions'
 * instructions (10/22 = 20000/44000, ...): a profile ratio of exactly 1.
 */
#define UNIT	2000

#define COST_FN(name, m)		\
	.globl name;			\
	.type name, @function;		\
name:					\
	mov	$(m * UNIT / 2 - 1), %ecx;	\
1:	dec	%ecx;			\
	jnz	1b;			\
	ret;				\
	.size name, . - name

	.text
	.globl _start
	.type _start, @function
_start:
	call	cost10
	call	cost7
	call	cost4
	call	cost1
	mov	$60, %eax		/* exit(0) */
	xor	%edi, %edi
	syscall
	.size _start, . - _start

COST_FN(cost10, 10)
COST_FN(cost7, 7)
COST_FN(cost4, 4)
COST_FN(cost1, 1)

	.section .note.GNU-stack, "", @progbits
