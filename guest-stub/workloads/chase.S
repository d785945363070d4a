/* The pointer-chasing functions of known cost (workloads.h: wl_pchase), counted in the comments. */

/*
 * struct wl_node *wl_chase_xK(struct wl_node *node (rdi), uint64_t steps (rsi >= 1)):
 * 2 + 3 steps instructions, 1 + steps branches. Four copies, so that a profile tells them apart.
 */
	.macro	chase name
	.globl	\name
	.type	\name, @function
\name:
	mov	%rdi, %rax			/* 1 */
1:	mov	(%rax), %rax			/* per step: the dependent load, */
	dec	%rsi
	jnz	1b				/* a branch */
	ret					/* 2, branch */
	.size	\name, . - \name
	.endm

	.text
	chase	wl_chase_x4
	chase	wl_chase_x3
	chase	wl_chase_x2
	chase	wl_chase_x1

/* One call, from the node the previous call reached: 4 instructions, 1 branch. */
	.macro	call_chase name, slot
	mov	%rbx, %rdi
	mov	\slot*8(%r13), %rsi
	call	\name
	mov	%rax, %rbx
	.endm

/*
 * uint64_t wl_pchase(struct wl_node *start (rdi), uint64_t rounds (rsi),
 *                    const uint64_t steps[4] (rdx)):
 * 11 + 18 rounds instructions and 1 + 5 rounds branches of its own. Returns the node reached.
 */
	.globl	wl_pchase
	.type	wl_pchase, @function
wl_pchase:
	push	%rbx				/* 1 */
	push	%r12				/* 2 */
	push	%r13				/* 3 */
	mov	%rdi, %rbx			/* 4: node */
	mov	%rsi, %r12			/* 5: rounds left */
	mov	%rdx, %r13			/* 6: steps */
1:	call_chase wl_chase_x4, 0		/* per round: 4 x 4 */
	call_chase wl_chase_x3, 1
	call_chase wl_chase_x2, 2
	call_chase wl_chase_x1, 3
	dec	%r12				/* + 2 */
	jnz	1b				/* branch */
	mov	%rbx, %rax			/* 7 */
	pop	%r13				/* 8 */
	pop	%r12				/* 9 */
	pop	%rbx				/* 10 */
	ret					/* 11, branch */
	.size	wl_pchase, . - wl_pchase

	.section .note.GNU-stack, "", @progbits
