/* Inside the PMU driver: what its two backends (paravirtual, trapped MSRs) do for pmu.c. */
#ifndef GUEST_STUB_KERNEL_PMU_BACKEND_H
#define GUEST_STUB_KERNEL_PMU_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/kernel/pmu.h"

/* The vector of overflow interrupts: the hypervisor's own (pv) or the LVTPC's (hvm). */
#define KPMU_VECTOR	0xE0

/* One VCPU's page of the area the read formula takes Sum/Start_vcpu from. */
union kpmu_page {
	struct pv_vcpu_area area;
	char bytes[PV_PMU_AREA_STRIDE];
};

/*
 * Called on the VCPU cpu with interrupts masked. load: the VCPU counts for t now (NULL: for
 * no thread), its i-mode counters from t->ivalues; returns 0 or a negative error. unload: t
 * stops counting; i-mode values go to t->ivalues; returns the overflows it has not been told
 * of, as counts (PV_PENDING). iack: for the overflow interrupt, the running thread t's (maybe
 * NULL) overflow counts.
 * cpu_init (may be NULL): once on each VCPU, before its first thread runs.
 */
struct kpmu_backend {
	const char *name;
	bool (*init)(union kpmu_page *pages, unsigned ncpus);
	void (*cpu_init)(void);
	int64_t (*load)(struct kpmu_thread *t, unsigned cpu);
	uint32_t (*unload)(struct kpmu_thread *t, unsigned cpu);
	uint32_t (*iack)(struct kpmu_thread *t);
};

extern const struct kpmu_backend kpmu_pv_backend;
extern const struct kpmu_backend kpmu_hvm_backend;

/*
 * pmu.c: resume skipping asked for; inject=skip-by-size (docs/tour.md's deliberate breakage of
 * skipping): skip when the active control merely has as many counters; each VCPU's statistics.
 */
extern bool kpmu_skip;
extern bool kpmu_inject_skip_by_size;
extern struct kpmu_stats kpmu_cpu_stats[KCPU_MAX];

#endif
