/* The microbenchmark's loop (workloads.h: wl_mbench): every instruction counted in the comments. */

	.section .rodata
	.balign	8
.Lscale:
	.double	0.5
.Loffset:
	.double	1.0		/* x = x / 2 + 1 tends to 2: no overflow, no denormals */

	.text
	.globl	wl_mbench
	.type	wl_mbench, @function
/* double wl_mbench(double *buf (rdi), uint64_t mask (rsi), uint64_t n (rdx)) */
wl_mbench:
	movsd	.Lscale(%rip), %xmm1		/* 1 */
	movsd	.Loffset(%rip), %xmm2		/* 2 */
	xorpd	%xmm3, %xmm3			/* 3: the sum */
	xor	%ecx, %ecx			/* 4: index */
	test	%rdx, %rdx			/* 5 */
	jz	3f				/* 6, branch */
1:	movsd	(%rdi,%rcx,8), %xmm0		/* memory load */
	mulsd	%xmm1, %xmm0			/* floating point */
	addsd	%xmm2, %xmm0
	movsd	%xmm0, (%rdi,%rcx,8)		/* memory store */
	inc	%rcx
	and	%rsi, %rcx
	/* Iteration i (from 0) sees index (i + 1) & mask: odd when i is even, so it jumps. */
	test	$1, %cl
	jnz	2f				/* branch: 10 instructions when taken... */
	addsd	%xmm0, %xmm3			/* ...11 when not, on odd i */
2:	dec	%rdx
	jnz	1b				/* branch */
3:	movapd	%xmm3, %xmm0			/* 7 */
	ret					/* 8, branch */
	.size	wl_mbench, . - wl_mbench

	.section .note.GNU-stack, "", @progbits
