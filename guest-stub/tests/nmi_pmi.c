/* Test guest: counter overflows with the LVTPC in NMI delivery mode (what Linux perf programs). */
#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"
#include "guest-stub/tests/irq_stub.h"
#include "include/x86/apic.h"
#include "include/x86/pmu_msr.h"
#include "include/x86/trap.h"

#define SPURIOUS	0xFF

/* SDM Vol. 3B 20.2.1.1 (PERFEVTSELx), 20.2.2 (GLOBAL_*), Table 20-1 (instructions retired). */
#define EVTSEL_INSNS		0xC0

#define PERIOD		1000	/* instructions to the first overflow */
#define REARM_PERIOD	50	/* the handler's own instructions overflow it again */
#define PMIS		3	/* the handler re-arms until this many came */

static volatile unsigned pmis, depth, max_depth;
static volatile uint64_t status_seen;

static void apic_write(unsigned reg, uint32_t val)
{
	*(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + reg) = val;
}

static uint32_t apic_read(unsigned reg)
{
	return *(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + reg);
}

/* A write to PMC0 takes the low 32 bits, sign-extended (SDM Vol. 3B 20.2.5): 2^48 - n. */
static void arm(uint32_t n)
{
	rt_wrmsr(MSR_IA32_PMC0, (uint32_t)-n);
}

/*
 * As Linux perf does: acknowledge, and unmask the LVTPC (which the delivery masked) in NMI
 * mode. Re-armed with a short period, the counter overflows again inside this handler: that
 * NMI must wait for the IRET (SDM Vol. 3A 6.7.1).
 */
void nmi_handler(void)
{
	unsigned d = ++depth;

	if (d > max_depth)
		max_depth = d;
	status_seen |= rt_rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
	if (++pmis < PMIS) {
		rt_wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);
		arm(REARM_PERIOD);
		apic_write(APIC_LVT_PMC, APIC_LVT_NMI);
		for (volatile unsigned i = 0; i < 2 * REARM_PERIOD; i++)
			;
	}
	depth--;
}

IRQ_STUB(nmi_entry, nmi_handler);

int main(void)
{
	if (!(rt_cpuid(0xA, 0).eax & 0xFF)) {
		report_skip("no architectural PMU in CPUID.0AH");
		return report_summary();
	}
	rt_idt_set_gate(EXC_NMI, nmi_entry, 0);
	apic_write(APIC_SPIV, 0x100 | SPURIOUS);
	apic_write(APIC_LVT_PMC, APIC_LVT_NMI);
	rt_wrmsr(MSR_IA32_PERFEVTSEL0,
		 EVTSEL_EN | EVTSEL_OS | EVTSEL_USR | EVTSEL_INT | EVTSEL_INSNS);
	arm(PERIOD);
	/* IF clear: a fixed-mode PMI could not come (SDM Vol. 3A 6.8.1); an NMI ignores IF. */
	__asm__ volatile("cli" : : : "memory");
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1);
	for (volatile unsigned i = 0; i < 2 * PERIOD; i++)
		;
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);

	report(pmis >= 1, "SDM Vol. 3A 11.5.1: a PMI with the LVTPC in NMI mode arrives as an NMI, "
	       "IF clear");
	report(status_seen & 1, "SDM Vol. 3B 20.2.2: the NMI handler sees PMC0's overflow bit");
	report_value("re-armed from its handler: every overflow an NMI, none lost", pmis, PMIS);
	report_value("SDM Vol. 3A 6.7.1: an overflow inside the handler waits for its IRET "
		     "(handlers running at once)", max_depth, 1);
	report((apic_read(APIC_LVT_PMC) & APIC_LVT_MASKED) != 0,
	       "SDM Vol. 3A 11.5.1: the last delivery masked the LVTPC");
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);
	return report_summary();
}
