/* Guest runtime API: port I/O, TSC, MSR, PMC and CPUID access, IDT, fw_cfg, leaving the guest. */
#ifndef GUEST_STUB_RT_RT_H
#define GUEST_STUB_RT_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rt_cpuid_regs {
	uint32_t eax;
	uint32_t ebx;
	uint32_t ecx;
	uint32_t edx;
};

static inline void rt_outb(uint16_t port, uint8_t val)
{
	__asm__ volatile("outb %0, %1" : : "a"(val), "Nd"(port));
}

static inline void rt_outw(uint16_t port, uint16_t val)
{
	__asm__ volatile("outw %0, %1" : : "a"(val), "Nd"(port));
}

static inline void rt_outl(uint16_t port, uint32_t val)
{
	__asm__ volatile("outl %0, %1" : : "a"(val), "Nd"(port));
}

static inline uint8_t rt_inb(uint16_t port)
{
	uint8_t val;

	__asm__ volatile("inb %1, %0" : "=a"(val) : "Nd"(port));
	return val;
}

static inline uint16_t rt_inw(uint16_t port)
{
	uint16_t val;

	__asm__ volatile("inw %1, %0" : "=a"(val) : "Nd"(port));
	return val;
}

static inline uint32_t rt_inl(uint16_t port)
{
	uint32_t val;

	__asm__ volatile("inl %1, %0" : "=a"(val) : "Nd"(port));
	return val;
}

static inline uint64_t rt_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t rt_rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}

static inline void rt_wrmsr(uint32_t msr, uint64_t val)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32)));
}

/* ECX bit 30 selects the fixed-function counters (SDM vol. 2B, RDPMC). */
static inline uint64_t rt_rdpmc(uint32_t counter)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
}

static inline struct rt_cpuid_regs rt_cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct rt_cpuid_regs r;

	__asm__ volatile("cpuid"
			 : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
			 : "a"(leaf), "c"(subleaf));
	return r;
}

/*
 * VMCALL with the number in RAX and two arguments in RDI, RSI (include/perfvisor/hypercall.h);
 * only under perfvisor (rt_under_perfvisor()), and only at CPL 0.
 */
static inline int64_t rt_vmcall(uint64_t nr, uint64_t a0, uint64_t a1)
{
	int64_t ret;

	__asm__ volatile("vmcall" : "=a"(ret) : "a"(nr), "D"(a0), "S"(a1) : "memory");
	return ret;
}

/* Whether CPUID's hypervisor leaf says "perfvisor". */
bool rt_under_perfvisor(void);

/*
 * The IDT has 256 gates; the runtime fills the 32 exception vectors with handlers that report
 * the fault and end the guest. A guest kernel adds its own interrupt gates: DPL 3 lets user
 * code reach the gate with INT n. rt_idt_load() loads the IDT on another CPU.
 */
void rt_idt_set_gate(uint8_t vector, void (*entry)(void), unsigned dpl);
void rt_idt_load(void);

/* Turns SSE on and resets the x87/SSE state: every CPU runs this once before using floats. */
void rt_fpu_init(void);

/* Reads fw_cfg item key (little-endian integers); false when there is no fw_cfg device. */
bool rt_fwcfg_read(uint16_t key, void *buf, size_t len);

/*
 * Flushes stdout and stderr, waits for the UART to send everything, then leaves the
 * machine: code to port 0xF4 (QEMU isa-debug-exit, the hypervisor), "Shutdown" to port
 * 0x8900 (Bochs), and halts if neither worked. exit() and returning from main end here.
 */
void rt_exit(int code) __attribute__((noreturn));

#endif
