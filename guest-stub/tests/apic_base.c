/* Test guest: IA32_APIC_BASE as the SDM gives it (hardware disable, re-enable, relocation, #GP). */
#include <stdint.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"
#include "include/x86/apic.h"
#include "include/x86/msr.h"

#define ALT_PAGE	0xFED40000ull	/* where kvm-unit-tests moves it: no RAM there */
#define CPUID1_EDX_APIC	(1u << 9)

/* #GP catcher: the handler counts the fault and resumes at gp_fixup (set before each try). */
volatile uint64_t gp_fixup, gp_count;
void gp_entry(void);
__asm__(".text\n"
	"gp_entry:\n"
	"	add $8, %rsp\n"			/* the error code */
	"	push %rax\n"
	"	mov gp_fixup(%rip), %rax\n"
	"	mov %rax, 8(%rsp)\n"		/* the frame's RIP */
	"	pop %rax\n"
	"	incq gp_count(%rip)\n"
	"	iretq\n");

/* WRMSR that reports whether it raised #GP. */
static bool wrmsr_gp(uint32_t msr, uint64_t val)
{
	uint64_t before = gp_count;

	__asm__ volatile("lea 1f(%%rip), %%r11\n\t"
			 "mov %%r11, gp_fixup(%%rip)\n\t"
			 "wrmsr\n"
			 "1:"
			 : : "c"(msr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32))
			 : "r11", "memory");
	return gp_count != before;
}

static uint32_t mmio_read(uint64_t page, unsigned reg)
{
	return *(volatile uint32_t *)(uintptr_t)(page + reg);
}

static void mmio_write(uint64_t page, unsigned reg, uint32_t val)
{
	*(volatile uint32_t *)(uintptr_t)(page + reg) = val;
}

static bool cpuid_apic(void)
{
	return rt_cpuid(1, 0).edx & CPUID1_EDX_APIC;
}

int main(void)
{
	uint64_t base;
	uint32_t version;

	rt_idt_set_gate(13, gp_entry, 0);
	base = rt_rdmsr(MSR_IA32_APIC_BASE);
	report_value("SDM Vol. 3A 11.4.4: IA32_APIC_BASE at power-up (0xFEE00000, EN, BSP)", base,
		     APIC_DEFAULT_BASE | APIC_BASE_ENABLE | APIC_BASE_BSP);
	report(cpuid_apic(), "SDM Vol. 3A 11.4.2: CPUID.1:EDX.APIC set while enabled");
	report(!wrmsr_gp(MSR_IA32_APIC_BASE, base),
	       "SDM Vol. 3A 11.4.4: writing the value read: no #GP");
	report(wrmsr_gp(MSR_IA32_APIC_BASE, base | 1),
	       "SDM Vol. 3A 11.4.4: reserved bit 0 raises #GP");
	report(wrmsr_gp(MSR_IA32_APIC_BASE, base | 1ull << 63),
	       "SDM Vol. 3A 11.4.4: a base bit above MAXPHYADDR raises #GP");
	report(wrmsr_gp(MSR_IA32_APIC_BASE, base | APIC_BASE_EXTD),
	       "SDM Vol. 3A 11.12.1: EXTD without x2APIC in CPUID raises #GP");
	report_value("SDM Vol. 3A 11.4.4: a refused write changes nothing",
		     rt_rdmsr(MSR_IA32_APIC_BASE), base);

	/* Program state that the hardware disable must lose. */
	mmio_write(APIC_DEFAULT_BASE, APIC_SPIV, 0x1FF);
	mmio_write(APIC_DEFAULT_BASE, APIC_TPR, 0x20);
	mmio_write(APIC_DEFAULT_BASE, APIC_LVT_PMC, 0x400);
	version = mmio_read(APIC_DEFAULT_BASE, APIC_VERSION);

	report(!wrmsr_gp(MSR_IA32_APIC_BASE, base & ~APIC_BASE_ENABLE),
	       "SDM Vol. 3A 11.4.3: clearing EN (hardware disable): no #GP");
	report_value("SDM Vol. 3A 11.4.3: IA32_APIC_BASE reads EN clear",
		     rt_rdmsr(MSR_IA32_APIC_BASE), base & ~APIC_BASE_ENABLE);
	report(!cpuid_apic(), "SDM Vol. 3A 11.4.3: CPUID.1:EDX.APIC clear while disabled");
	report(!wrmsr_gp(MSR_IA32_APIC_BASE, base), "SDM Vol. 3A 11.4.3: setting EN again: no #GP");
	report(cpuid_apic(), "SDM Vol. 3A 11.4.3: CPUID.1:EDX.APIC set again");
	report_value("SDM Vol. 3A 11.4.7.1: version register unchanged",
		     mmio_read(APIC_DEFAULT_BASE, APIC_VERSION), version);
	report_value("SDM Vol. 3A 11.4.7.1: ID kept", mmio_read(APIC_DEFAULT_BASE, APIC_ID), 0);
	report_value("SDM Vol. 3A 11.4.7.1: SPIV back to 0xFF",
		     mmio_read(APIC_DEFAULT_BASE, APIC_SPIV), 0xFF);
	report_value("SDM Vol. 3A 11.4.7.1: TPR back to 0",
		     mmio_read(APIC_DEFAULT_BASE, APIC_TPR), 0);
	report_value("SDM Vol. 3A 11.4.7.1: LVTPC back to masked",
		     mmio_read(APIC_DEFAULT_BASE, APIC_LVT_PMC), 0x10000);

	report(!wrmsr_gp(MSR_IA32_APIC_BASE, ALT_PAGE | APIC_BASE_ENABLE | APIC_BASE_BSP),
	       "SDM Vol. 3A 11.4.4: relocating the base: no #GP");
	report_value("SDM Vol. 3A 11.4.4: the registers answer at the new base",
		     mmio_read(ALT_PAGE, APIC_VERSION), version);
	report(!wrmsr_gp(MSR_IA32_APIC_BASE, base), "SDM Vol. 3A 11.4.4: moving it back: no #GP");
	mmio_write(APIC_DEFAULT_BASE, APIC_SPIV, 0x1FF);
	report_value("SDM Vol. 3A 11.4.4: the registers answer at the old base again",
		     mmio_read(APIC_DEFAULT_BASE, APIC_SPIV), 0x1FF);
	return report_summary();
}
