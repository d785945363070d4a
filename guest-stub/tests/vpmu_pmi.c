/* Counter overflow: one PMI via LVTPC at zero skid, only with INT; GLOBAL_STATUS and OVF_CTRL. */
#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/lib/vpmu_test.h"
#include "guest-stub/rt/rt.h"
#include "include/x86/apic.h"

#define PMI_VECTOR	0x40
#define SPURIOUS_VECTOR	0xFF

/* Instructions the handler below retires, IRETQ included: the counter counts them too. */
#define HANDLER_INSNS	8

static volatile unsigned pmi_count __attribute__((used));
static volatile uint64_t pmi_rip __attribute__((used));

void pmi_entry(void);

/* Records where the PMI struck (the RIP it returns to) and how often; EOI for the next one. */
__asm__(".text\n"
	"pmi_entry:\n\t"
	"push %rax\n\t"
	"mov 8(%rsp), %rax\n\t"
	"mov %rax, pmi_rip(%rip)\n\t"
	"incl pmi_count(%rip)\n\t"
	"mov $" VT_STR(APIC_DEFAULT_BASE) " + " VT_STR(APIC_EOI) ", %eax\n\t"
	"movl $0, (%rax)\n\t"
	"pop %rax\n\t"
	"iretq\n");

static volatile uint32_t *apic(unsigned off)
{
	return (volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + off);
}

/*
 * A counter preset to 2^48 - m counts the instructions of vt_window(); bit is its
 * GLOBAL_CTRL/STATUS bit (i for PMCi, 32 for FIXED_CTR0), pmi whether INT (PMI) is set.
 */
static const struct pmi_case {
	const char *name;
	unsigned bit;
	bool pmi;
	unsigned m;
} cases[] = {
	{ "PMC0, INT set", 0, true, 1000 },
	{ "PMC3, INT set", 3, true, 777 },
	/* The first counted instruction, the NOP after the (uncounted) enabling WRMSR, overflows. */
	{ "PMC2, INT set, overflow on the first instruction", 2, true, 1 },
	{ "PMC1, INT clear", 1, false, 1000 },
	{ "FIXED_CTR0, PMI set", 32, true, 1000 },
	{ "FIXED_CTR0, PMI clear", 32, false, 500 },
};

/* SDM Vol. 3B 20.2.1.1 (INT, bit 20) and 20.2.2 (a fixed counter's PMI bit, bit 3 of its field). */
static void program(const struct pmi_case *c)
{
	vt_pmu_quiet();
	if (c->bit < 32) {
		vt_wrmsr(MSR_A_PMC0 + c->bit, VT_TOP - c->m);
		vt_wrmsr(MSR_PERFEVTSEL0 + c->bit, EVTSEL_EN | EVTSEL_OS | EV_INSTRUCTIONS |
			 (c->pmi ? EVTSEL_INT : 0));
	} else {
		vt_wrmsr(MSR_FIXED_CTR0, VT_TOP - c->m);
		vt_wrmsr(MSR_FIXED_CTR_CTRL, FIXED_OS | (c->pmi ? FIXED_PMI : 0));
	}
}

static void run_case(const struct pmi_case *c)
{
	/*
	 * The m-th counted instruction is NOP m of the sled: the enabling WRMSR retires under the
	 * counters it found, so it is not counted (Intel hardware; docs/soft-pmu.md).
	 */
	uint64_t want_rip = (uintptr_t)vt_sled + c->m;
	uint64_t want_count = VT_WINDOW + (c->pmi ? HANDLER_INSNS : 0) - c->m;
	uint64_t status, count;
	bool masked;

	program(c);
	*apic(APIC_LVT_PMC) = PMI_VECTOR;
	pmi_count = 0;
	pmi_rip = 0;
	__asm__ volatile("sti" : : : "memory");
	vt_window(MSR_GLOBAL_CTRL, 1ull << c->bit);
	__asm__ volatile("cli" : : : "memory");
	status = vt_read(MSR_GLOBAL_STATUS);
	masked = *apic(APIC_LVT_PMC) & APIC_LVT_MASKED;
	count = vt_read(c->bit < 32 ? MSR_PMC0 + c->bit : MSR_FIXED_CTR0);

	report(pmi_count == c->pmi, "%s: %u PMI(s), want %u", c->name, pmi_count, c->pmi);
	if (c->pmi)
		report(pmi_rip == want_rip, "%s: PMI returns to %#llx, right after the %u-th "
		       "instruction (want %#llx: zero skid)", c->name,
		       (unsigned long long)pmi_rip, c->m, (unsigned long long)want_rip);
	/* SDM Vol. 3B 20.2.2: the overflow sets the status bit whether or not a PMI comes. */
	report(status == 1ull << c->bit, "%s: GLOBAL_STATUS %#llx", c->name,
	       (unsigned long long)status);
	/* SDM Vol. 3A 11.5.1 (figure 11-8 note): delivering the PMI masks LVTPC. */
	report(masked == c->pmi, "%s: LVTPC mask bit %s after the window", c->name,
	       masked ? "set" : "clear");
	/* The counter counts on through the wrap, and the handler's instructions. */
	report(count == want_count, "%s: counter %llu after the window, want %llu", c->name,
	       (unsigned long long)count, (unsigned long long)want_count);
	vt_wrmsr(MSR_GLOBAL_OVF_CTRL, 1ull << c->bit);
	status = vt_read(MSR_GLOBAL_STATUS);
	report(!status, "%s: GLOBAL_OVF_CTRL clears GLOBAL_STATUS (%#llx)", c->name,
	       (unsigned long long)status);
}

int main(void)
{
	vt_gp_install();
	rt_idt_set_gate(PMI_VECTOR, pmi_entry, 0);
	/* SDM Vol. 3A 11.4.7.2: LVT entries only take writes while the APIC is software-enabled. */
	*apic(APIC_SPIV) = APIC_SPIV_ENABLE | SPURIOUS_VECTOR;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	return report_summary();
}
