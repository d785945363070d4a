/* Inline wrappers for the x86 instructions the hypervisor uses outside VMX: ports, MSRs, CPUID, control registers. */
#ifndef PERFVISOR_LIB_CPU_H
#define PERFVISOR_LIB_CPU_H

#include <stdint.h>

#include "include/x86/msr.h"

/* The operand of LGDT/LIDT/SGDT/SIDT in 64-bit mode (SDM Vol. 3A 3.5.1). */
struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

/* Fault-tolerant MSR access (boot/extable.S): 0 on success, -1 if the access raised #GP. */
int rdmsr_safe(uint32_t msr, uint64_t *val);
int wrmsr_safe(uint32_t msr, uint64_t val);

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_regs r;

	__asm__ volatile("cpuid"
			 : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
			 : "a"(leaf), "c"(subleaf));
	return r;
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

#define DEFINE_CR_ACCESS(n)						\
	static inline uint64_t read_cr##n(void)				\
	{								\
		uint64_t v;						\
		__asm__ volatile("mov %%cr" #n ", %0" : "=r"(v));	\
		return v;						\
	}								\
	static inline void write_cr##n(uint64_t v)			\
	{								\
		__asm__ volatile("mov %0, %%cr" #n : : "r"(v) : "memory"); \
	}
DEFINE_CR_ACCESS(0)
DEFINE_CR_ACCESS(2)
DEFINE_CR_ACCESS(3)
DEFINE_CR_ACCESS(4)
#undef DEFINE_CR_ACCESS

/*
 * Lets FXSAVE/FXRSTOR hold guests' SSE state (SDM Vol. 3A 13.1.3-13.1.4): CR4.OSFXSR and
 * OSXMMEXCPT, CR0.MP set, EM and TS clear. The hypervisor itself never uses x87 or SSE.
 */
static inline void fpu_enable(void)
{
	write_cr0((read_cr0() | (1ull << 1)) & ~((1ull << 2) | (1ull << 3)));
	write_cr4(read_cr4() | (1ull << 9) | (1ull << 10));
}

static inline void cpu_relax(void)
{
	__asm__ volatile("pause" ::: "memory");
}

__attribute__((noreturn)) static inline void cpu_halt_forever(void)
{
	for (;;)
		__asm__ volatile("cli; hlt");
}

#endif
