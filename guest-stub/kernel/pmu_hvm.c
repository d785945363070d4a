/* The PMU driver's hvm backend: the PMU MSRs as on hardware (each one trapped), PMIs by LVTPC. */
#include <stdio.h>

#include "guest-stub/kernel/internal.h"
#include "guest-stub/kernel/pmu_backend.h"
#include "include/x86/pmu_msr.h"

/* SDM Vol. 3B 20.2: architectural PMU version 2, full-width writes, 48-bit counters. */
#define WIDTH			48
#define WIDTH_MASK		((1ull << WIDTH) - 1)

static union kpmu_page *pages;

/*
 * The kernel's own pages for the read formula: with the counters saved and restored per VCPU
 * by the hypervisor, Phys* is Phys itself (Sum/Start_vcpu and offset stay 0) and Phys is RDPMC.
 */
static bool hvm_init(union kpmu_page *p, unsigned ncpus)
{
	struct rt_cpuid_regs r = rt_cpuid(0xA, 0);

	/* SDM Vol. 3B 20.2.1.1: CPUID.0AH EAX[7:0] version, [15:8] counters, [23:16] width. */
	if ((r.eax & 0xFF) < 2 || (r.eax >> 8 & 0xFF) < PV_PMU_COUNTERS ||
	    (r.eax >> 16 & 0xFF) != WIDTH) {
		printf("kpmu: mode hvm needs an architectural PMU v2 with %u %u-bit counters "
		       "(CPUID.0AH eax=%#x)\n", PV_PMU_COUNTERS, WIDTH, r.eax);
		return false;
	}
	pages = p;
	for (unsigned k = 0; k < ncpus; k++) {
		struct pv_vcpu_area *a = &p[k].area;

		a->version = PV_PMU_VERSION;
		a->size = sizeof(*a);
		a->vcpu_id = k;
		a->width = WIDTH;
		a->wrap = WIDTH_MASK;
		for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
			a->rdpmc_index[i] = i;
	}
	return true;
}

static void hvm_cpu_init(void)
{
	apic_set_lvtpc(KPMU_VECTOR);
}

/*
 * Counter i overflowed and counted on to value (events since it passed zero): the next period
 * starts with what counted past zero, and each whole period in value is one more overflow.
 * Adds them to *counts and returns the counter's new value.
 */
static uint64_t rearm(const struct kpmu_thread *t, unsigned i, uint64_t value, uint32_t *counts)
{
	uint64_t reset = t->control.ireset[i] & WIDTH_MASK, period = WIDTH_MASK - reset + 1;

	*counts = pv_pending_add(*counts, i, 1 + value / period);
	return reset + value % period;
}

/* Programs t's control; nothing for no thread: the last one's unload stopped every counter. */
static int64_t hvm_load(struct kpmu_thread *t, unsigned cpu)
{
	const struct pv_control *c;

	if (!t)
		return 0;
	c = &t->control;
	for (unsigned i = 0; i < c->ncounters; i++) {
		bool imode = c->imode_mask >> i & 1;

		rt_wrmsr(MSR_IA32_PERFEVTSEL0 + i, c->evtsel[i] | (imode ? EVTSEL_INT : 0));
		if (imode)
			rt_wrmsr(MSR_IA32_A_PMC0 + i, t->ivalues[i]);
	}
	pages[cpu].area.active = *c;
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, (1ull << c->ncounters) - 1);
	kpmu_cpu_stats[cpu].resumes++;
	return 0;
}

/*
 * Every counter stops; i-mode values are saved. An overflow whose PMI has not been taken yet
 * shows in GLOBAL_STATUS: it is the thread's, told when it runs again (seed 003 4.2.2).
 */
static uint32_t hvm_unload(struct kpmu_thread *t, unsigned cpu)
{
	uint32_t imode = t->control.imode_mask, overflowed, counts = 0;
	uint64_t status;

	(void)cpu;
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	if (!imode)
		return 0;
	status = rt_rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
	overflowed = (uint32_t)status & imode;
	for (uint32_t m = imode; m; m &= m - 1) {
		unsigned i = __builtin_ctz(m);
		uint64_t v = rt_rdmsr(MSR_IA32_A_PMC0 + i);

		t->ivalues[i] = overflowed >> i & 1 ? rearm(t, i, v, &counts) : v;
	}
	if (overflowed)
		rt_wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, overflowed);
	return counts;
}

/* The PMI: the running thread's overflowed i-mode counters re-armed; LVTPC masked itself. */
static uint32_t hvm_iack(struct kpmu_thread *t)
{
	uint64_t status = rt_rdmsr(MSR_IA32_PERF_GLOBAL_STATUS);
	uint32_t mine = t ? (uint32_t)status & t->control.imode_mask : 0, counts = 0;

	for (uint32_t m = mine; m; m &= m - 1) {
		unsigned i = __builtin_ctz(m);
		uint64_t v = rt_rdmsr(MSR_IA32_A_PMC0 + i);

		rt_wrmsr(MSR_IA32_A_PMC0 + i, rearm(t, i, v, &counts));
	}
	if (status)
		rt_wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, status);
	apic_set_lvtpc(KPMU_VECTOR);
	return counts;
}

const struct kpmu_backend kpmu_hvm_backend = {
	.name = "hvm",
	.init = hvm_init,
	.cpu_init = hvm_cpu_init,
	.load = hvm_load,
	.unload = hvm_unload,
	.iack = hvm_iack,
};
