/* counters=raw-msr: the thread programs the trapped PMU MSRs itself, interrupts off meanwhile. */
#include <stdio.h>

#include "guest-stub/rt/rt.h"
#include "guest-stub/workloads/meter.h"
#include "include/x86/pmu_msr.h"

/* SDM Vol. 3B 20.2: three general counters, enabled by GLOBAL_CTRL. */
#define CPUID_PMU		0xA
#define PMU_VERSION_MIN		2	/* GLOBAL_CTRL exists from version 2 */
#define COUNTERS		3

/* Counter i counts event counted[i] (SDM Vol. 3B table 20-1, architectural events). */
static const struct {
	enum wl_event event;
	uint8_t code;
} counted[COUNTERS] = {
	{ WL_INSTRUCTIONS, 0xC0 },
	{ WL_BRANCHES, 0xC4 },
	{ WL_CYCLES, 0x3C },
};

static bool msr_setup(int argc, char **argv)
{
	struct rt_cpuid_regs a = rt_cpuid(CPUID_PMU, 0);

	(void)argc;
	(void)argv;
	if ((a.eax & 0xFF) < PMU_VERSION_MIN || (a.eax >> 8 & 0xFF) < COUNTERS) {
		printf("meter: raw-msr: no architectural PMU version %u with %u counters here "
		       "(CPUID.0AH eax=%#x)\n", PMU_VERSION_MIN, COUNTERS, a.eax);
		return false;
	}
	return true;
}

static bool msr_open(struct wl_meter_state *s)
{
	(void)s;
	return true;
}

/* Everything after the last WRMSR is in the window, and the same every time. */
static void msr_start(struct wl_meter_state *s)
{
	__asm__ volatile("cli" : : : "memory");
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	for (unsigned i = 0; i < COUNTERS; i++) {
		rt_wrmsr(MSR_IA32_PMC0 + i, 0);
		rt_wrmsr(MSR_IA32_PERFEVTSEL0 + i, counted[i].code | EVTSEL_OS | EVTSEL_EN);
	}
	s->tsc = rt_rdtsc();
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, (1u << COUNTERS) - 1);
}

static void msr_stop(struct wl_meter_state *s, uint64_t values[WL_NEVENTS])
{
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	values[WL_TSC] = rt_rdtsc() - s->tsc;
	for (unsigned i = 0; i < COUNTERS; i++)
		values[counted[i].event] = rt_rdmsr(MSR_IA32_PMC0 + i);
	__asm__ volatile("sti" : : : "memory");
}

const struct wl_meter wl_meter_raw_msr = {
	.name = "raw-msr",
	.ring = KTHREAD_KERNEL,
	.setup = msr_setup,
	.open = msr_open,
	.start = msr_start,
	.stop = msr_stop,
};
