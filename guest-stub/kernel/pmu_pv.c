/* The PMU driver's paravirtual backend: controls and i-mode counters by hypercall, skips. */
#include <stdio.h>
#include <string.h>

#include "guest-stub/kernel/internal.h"
#include "guest-stub/kernel/pmu_backend.h"

static union kpmu_page *pages;
static const struct pv_control no_control;

static int64_t hypercall(unsigned cpu, uint64_t nr, uint64_t a0, uint64_t a1)
{
	int64_t ret;

	kpmu_cpu_stats[cpu].hypercalls++;
	__asm__ volatile("vmcall" : "=a"(ret) : "a"(nr), "D"(a0), "S"(a1) : "memory");
	return ret;
}

static bool pv_init(union kpmu_page *p, unsigned ncpus)
{
	int64_t ret;

	pages = p;
	ret = hypercall(0, HC_PMU_SETUP, (uintptr_t)p, ncpus);
	if (ret == 0)
		ret = hypercall(0, HC_PMU_SET_VECTOR, KPMU_VECTOR, 0);
	if (ret < 0)
		printf("kpmu: the paravirtual PMU refused its set-up: error %lld\n",
		       (long long)ret);
	return ret == 0;
}

/*
 * i-mode counters always need their values loaded. A control of a-mode counters only may
 * already be the VCPU's: the hypervisor shows which in the page. Then the call is skipped
 * (seed 003 4.2.1): Sum/Start_vcpu are not reset, and Start*_thread sampled after it takes
 * out the events of whoever ran since the last call.
 */
static int64_t pv_load(struct kpmu_thread *t, unsigned cpu)
{
	const struct pv_control *c = t ? &t->control : &no_control;
	struct kpmu_stats *s = &kpmu_cpu_stats[cpu];

	if (c->imode_mask) {
		s->resumes++;
		return hypercall(cpu, HC_PMU_IRESUME, (uintptr_t)c, (uintptr_t)t->ivalues);
	}
	if (kpmu_skip && (kpmu_inject_skip_by_size ?
			  c->ncounters == pages[cpu].area.active.ncounters :
			  !memcmp(c, &pages[cpu].area.active, sizeof(*c)))) {
		s->skips++;
		return 0;
	}
	s->resumes++;
	return hypercall(cpu, HC_PMU_RESUME, (uintptr_t)c, 0);
}

/* a-mode counters need nothing at suspension; i-mode ones stop and come back with news. */
static uint32_t pv_unload(struct kpmu_thread *t, unsigned cpu)
{
	int64_t counts;

	if (!t->control.imode_mask)
		return 0;
	counts = hypercall(cpu, HC_PMU_ISUSPEND, (uintptr_t)t->ivalues, 0);
	return counts > 0 ? (uint32_t)counts : 0;
}

static uint32_t pv_iack(struct kpmu_thread *t)
{
	int64_t counts = hypercall(this_cpu()->id, HC_PMU_IACK, 0, 0);

	return t && counts > 0 ? (uint32_t)counts : 0;
}

const struct kpmu_backend kpmu_pv_backend = {
	.name = "pv",
	.init = pv_init,
	.load = pv_load,
	.unload = pv_unload,
	.iack = pv_iack,
};
