/* Probes the architectural PMU by behaviour: CPUID.0AH alone is not trusted (Bochs claims a PMU that never counts). */
#include "lib/cpu.h"
#include "include/x86/pmu_msr.h"
#include "pmu/pmu_probe.h"

struct pmu_hw_info pmu_hw;

/* Runs about 3 * n instructions the counter should see. */
static void probe_loop(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

/* Programs GP counter 0 for instructions retired at all rings and returns its count over a loop. */
static bool probe_count(uint64_t *count)
{
	uint64_t evtsel = ARCH_EVENT_INST_RETIRED | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN;
	uint64_t global = 0;
	bool has_global = pmu_hw.version >= 2;

	if (wrmsr_safe(MSR_IA32_PERFEVTSEL0, 0) || wrmsr_safe(MSR_IA32_PMC0, 0))
		return false;
	/* Version 2+: counting also needs the counter's enable bit in IA32_PERF_GLOBAL_CTRL. */
	if (has_global && (rdmsr_safe(MSR_IA32_PERF_GLOBAL_CTRL, &global) ||
			   wrmsr_safe(MSR_IA32_PERF_GLOBAL_CTRL, global | 1)))
		return false;
	if (wrmsr_safe(MSR_IA32_PERFEVTSEL0, evtsel))
		return false;
	probe_loop(10000);
	wrmsr_safe(MSR_IA32_PERFEVTSEL0, 0);
	if (rdmsr_safe(MSR_IA32_PMC0, count))
		return false;
	if (has_global)
		wrmsr_safe(MSR_IA32_PERF_GLOBAL_CTRL, global);
	wrmsr_safe(MSR_IA32_PMC0, 0);
	return true;
}

void pmu_probe(void)
{
	struct cpuid_regs r = cpuid(0, 0);
	struct pmu_hw_info *p = &pmu_hw;

	if (r.eax < 0xA) {
		p->why_not = "the CPU has no CPUID leaf 0AH";
		return;
	}
	r = cpuid(0xA, 0);
	p->version = r.eax & 0xFF;
	p->num_gp = (r.eax >> 8) & 0xFF;
	p->gp_width = (r.eax >> 16) & 0xFF;
	p->unavailable_events = r.ebx;
	if (p->version >= 2) {
		p->num_fixed = r.edx & 0x1F;
		p->fixed_width = (r.edx >> 5) & 0xFF;
	}
	if (!p->version || !p->num_gp) {
		p->why_not = "CPUID.0AH reports no architectural PMU";
		return;
	}
	if (!probe_count(&p->probe_count)) {
		p->why_not = "CPUID.0AH claims one, but its MSRs fault";
		return;
	}
	/* The loop retires about 30000 instructions; demand a plausible fraction of them. */
	if (p->probe_count < 10000) {
		p->why_not = "CPUID.0AH claims one, but a programmed counter does not count";
		return;
	}
	p->works = true;
}
