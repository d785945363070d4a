/* X86_BIT(n): a register bit that C and assembly can both use. */
#ifndef PERFVISOR_X86_BIT_H
#define PERFVISOR_X86_BIT_H

/* 64 bits wide in C, so that ~X86_BIT(n) keeps a 64-bit register's upper half; gas has no ULL. */
#ifdef __ASSEMBLER__
#define X86_BIT(n)	(1 << (n))
#else
#define X86_BIT(n)	(1ull << (n))
#endif

#endif
