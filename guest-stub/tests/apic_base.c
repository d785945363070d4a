/* Test guest: IA32_APIC_BASE and x2APIC mode as the SDM has them (disable, relocation, MSRs). */
#include <stdint.h>
#include <string.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"
#include "guest-stub/tests/irq_stub.h"
#include "include/x86/apic.h"
#include "include/x86/msr.h"

#define ALT_PAGE	0xFED40000ull	/* where kvm-unit-tests moves it: no RAM there */
#define CPUID1_EDX_APIC	(1u << 9)
#define CPUID1_ECX_X2APIC (1u << 21)
#define X2APIC_MSR(reg)	(0x800 + (reg) / 16)	/* SDM Vol. 3A 11.12.1.2 */
#define SELF_VECTOR	0x50
#define WAIT_SPINS	1000000u	/* pause loops: far beyond a self IPI's delivery */

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

/* RDMSR that reports whether it raised #GP; *val is what it read. */
static bool rdmsr_gp(uint32_t msr, uint64_t *val)
{
	uint64_t before = gp_count;
	uint32_t lo = 0, hi = 0;

	__asm__ volatile("lea 1f(%%rip), %%r11\n\t"
			 "mov %%r11, gp_fixup(%%rip)\n\t"
			 "rdmsr\n"
			 "1:"
			 : "+a"(lo), "+d"(hi) : "c"(msr) : "r11", "memory");
	*val = (uint64_t)hi << 32 | lo;
	return gp_count != before;
}

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

static volatile unsigned self_ipis;

void self_handler(void)
{
	self_ipis++;
	rt_wrmsr(X2APIC_MSR(APIC_EOI), 0);
}

IRQ_STUB(self_entry, self_handler);

static bool self_ipi_arrives(uint32_t msr, uint64_t val)
{
	unsigned before = self_ipis;

	rt_wrmsr(msr, val);
	__asm__ volatile("sti" : : : "memory");
	for (unsigned i = 0; i < WAIT_SPINS && self_ipis == before; i++)
		__asm__ volatile("pause");
	__asm__ volatile("cli" : : : "memory");
	return self_ipis == before + 1;
}

/* A domain with x2apic=off (argument nox2apic): an xAPIC-only CPU, EXTD reserved (11.12.1). */
static void no_x2apic(uint64_t base)
{
	uint64_t v;

	report(!(rt_cpuid(1, 0).ecx & CPUID1_ECX_X2APIC),
	       "SDM Vol. 3A 11.12.1: x2apic=off: CPUID.1:ECX.x2APIC clear");
	report(wrmsr_gp(MSR_IA32_APIC_BASE, base | APIC_BASE_EXTD),
	       "SDM Vol. 3A 11.12.1: x2apic=off: EXTD raises #GP");
	report(rdmsr_gp(X2APIC_MSR(APIC_ID), &v),
	       "SDM Vol. 3A 11.12.2: x2apic=off: RDMSR of the x2APIC ID raises #GP");
	report_value("SDM Vol. 3A 11.12.1: x2apic=off: still xAPIC, the page answers (SPIV)",
		     mmio_read(APIC_DEFAULT_BASE, APIC_SPIV), 0x1FF);
}

/* SDM Vol. 3A 11.12: x2APIC mode, entered and left through IA32_APIC_BASE; its MSRs. */
static void x2apic(uint64_t base)
{
	uint64_t v;
	bool entered;

	report(rt_cpuid(1, 0).ecx & CPUID1_ECX_X2APIC,
	       "SDM Vol. 3A 11.12.1: CPUID.1:ECX.x2APIC set");
	report(rdmsr_gp(X2APIC_MSR(APIC_ID), &v),
	       "SDM Vol. 3A 11.12.2: xAPIC mode: RDMSR of the x2APIC ID raises #GP");
	entered = !wrmsr_gp(MSR_IA32_APIC_BASE, base | APIC_BASE_EXTD);
	report(entered, "SDM Vol. 3A 11.12.5: xAPIC to x2APIC (EXTD set): no #GP");
	if (!entered)
		return;		/* the checks below would #GP with no fixup */
	report_value("SDM Vol. 3A 11.12.5: IA32_APIC_BASE reads EN and EXTD",
		     rt_rdmsr(MSR_IA32_APIC_BASE), base | APIC_BASE_EXTD);
	report(!rdmsr_gp(X2APIC_MSR(APIC_ID), &v) && v == (rt_cpuid(0xB, 0).edx),
	       "SDM Vol. 3A 11.12.8.1: RDMSR 0x802 is the x2APIC ID of CPUID.0BH:EDX");
	report_value("SDM Vol. 3A 11.12.10.2: the LDR is derived from ID 0 (cluster 0, bit 0)",
		     rt_rdmsr(X2APIC_MSR(APIC_LDR)), 1);
	report_value("SDM Vol. 3A 11.12.2: the MMIO page is not decoded (version reads all ones)",
		     mmio_read(APIC_DEFAULT_BASE, APIC_VERSION), 0xFFFFFFFF);
	report(wrmsr_gp(X2APIC_MSR(APIC_ID), 5) && wrmsr_gp(X2APIC_MSR(APIC_LDR), 1),
	       "SDM Vol. 3A table 11-6: WRMSR of the read-only ID and LDR raises #GP");
	report(rdmsr_gp(X2APIC_MSR(APIC_EOI), &v) && rdmsr_gp(X2APIC_MSR(APIC_DFR), &v) &&
	       rdmsr_gp(X2APIC_MSR(APIC_ICR_HI), &v),
	       "SDM Vol. 3A table 11-6: RDMSR of EOI (write-only), DFR, ICR high (none): #GP");
	report(wrmsr_gp(X2APIC_MSR(APIC_EOI), 1) && wrmsr_gp(X2APIC_MSR(APIC_TPR), 1ull << 32),
	       "SDM Vol. 3A 11.12.1.3: a non-zero EOI write and a reserved bit raise #GP");
	rt_wrmsr(X2APIC_MSR(APIC_SPIV), 0x1FF);
	report(self_ipi_arrives(X2APIC_MSR(APIC_SELF_IPI), SELF_VECTOR),
	       "SDM Vol. 3A 11.12.11: a SELF IPI write delivers its vector once");
	report(self_ipi_arrives(X2APIC_MSR(APIC_ICR_LO),
				rt_rdmsr(X2APIC_MSR(APIC_ID)) << 32 | SELF_VECTOR),
	       "SDM Vol. 3A 11.12.9: a 64-bit ICR write to its own x2APIC ID delivers once");
	report(wrmsr_gp(MSR_IA32_APIC_BASE, base),
	       "SDM Vol. 3A 11.12.5: x2APIC to xAPIC raises #GP");
	report(!wrmsr_gp(MSR_IA32_APIC_BASE, base & ~APIC_BASE_ENABLE),
	       "SDM Vol. 3A 11.12.5: x2APIC to disabled: no #GP");
	report(wrmsr_gp(MSR_IA32_APIC_BASE, base | APIC_BASE_EXTD),
	       "SDM Vol. 3A 11.12.5: disabled to x2APIC raises #GP");
	report(!wrmsr_gp(MSR_IA32_APIC_BASE, base),
	       "SDM Vol. 3A 11.12.5: disabled to xAPIC: no #GP");
	report_value("SDM Vol. 3A 11.12.5: back in xAPIC mode, the page answers (SPIV 0xFF)",
		     mmio_read(APIC_DEFAULT_BASE, APIC_SPIV), 0xFF);
}

int main(int argc, char **argv)
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
	report(wrmsr_gp(MSR_IA32_APIC_BASE, (base & ~APIC_BASE_ENABLE) | APIC_BASE_EXTD),
	       "SDM Vol. 3A 11.12.5: EXTD without EN (the invalid state) raises #GP");
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

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "nox2apic")) {
			no_x2apic(base);
			return report_summary();
		}
	}
	rt_idt_set_gate(SELF_VECTOR, self_entry, 0);
	x2apic(base);
	return report_summary();
}
