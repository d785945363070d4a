/* The irq and nmi test guests' interrupt entry: caller-saved registers kept around a C call. */
#ifndef GUEST_STUB_TESTS_IRQ_STUB_H
#define GUEST_STUB_TESTS_IRQ_STUB_H

/*
 * Defines the IDT entry `entry` that calls void fn(void) and returns with IRETQ. At entry RSP
 * is 8 mod 16 (five words pushed, no error code); nine more make it 16-byte aligned for the call.
 */
#define IRQ_STUB(entry, fn)						\
	void entry(void);						\
	void fn(void);							\
	__asm__(".text\n"						\
		#entry ":\n"						\
		"	push %rax; push %rcx; push %rdx; push %rsi; push %rdi\n" \
		"	push %r8; push %r9; push %r10; push %r11\n"	\
		"	cld\n"						\
		"	call " #fn "\n"					\
		"	pop %r11; pop %r10; pop %r9; pop %r8\n"		\
		"	pop %rdi; pop %rsi; pop %rdx; pop %rcx; pop %rax\n" \
		"	iretq\n")

#endif
