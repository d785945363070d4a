/* The interface every physical-counter backend implements (pmu/backend_soft.c, pmu/backend_arch.c). */
#ifndef PERFVISOR_PMU_BACKEND_H
#define PERFVISOR_PMU_BACKEND_H

#include "pmu/soft_classify.h"

struct vcpu;

struct pmu_backend_ops {
	const char *name;
	/*
	 * The guest changed its vPMU programming (a trapped MSR write). The counts were made
	 * current by sync before the change (pmu_wrmsr does so): the arch backend re-arms from
	 * the vPMU as it now is, and what its counters saw since the last sync would be lost.
	 */
	void (*programmed)(struct vcpu *v);
	/* Before a guest read of a counter: make the vPMU's values current. */
	void (*sync)(struct vcpu *v);
	/* Around every guest run (optional: the arch backend's counters need no help there). */
	void (*before_entry)(struct vcpu *v);
	void (*after_exit)(struct vcpu *v);
	void (*switch_in)(struct vcpu *v);
	void (*switch_out)(struct vcpu *v);
	/* A guest instruction retired at cpl (insn NULL: emulated by the hypervisor). */
	void (*retired)(struct vcpu *v, const struct soft_insn *insn, unsigned cpl);
	/* A block of n guest instructions retired at cpl, `branches` of them branches (soft). */
	void (*retired_block)(struct vcpu *v, uint64_t n, uint64_t branches, unsigned cpl);
	/* Instructions that may retire at cpl unseen before the stepper must see one (soft). */
	uint64_t (*step_room)(struct vcpu *v, unsigned cpl);
	/* Branches likewise (soft): bounds a counted loop run whole. */
	uint64_t (*step_branch_room)(struct vcpu *v, unsigned cpl);
	/* A host counter overflow interrupt while v ran. */
	void (*host_pmi)(struct vcpu *v);
	/* Per-PCPU hardware set-up. */
	void (*cpu_init)(void);
	/*
	 * Paravirtual a-mode counter i is physical GP counter i (seed 003 4.2.1): its value now, a
	 * number modulo 2^width, while v is loaded here. NULL: no counter registers; pv.c keeps
	 * soft ones that the backend advances through pv_count().
	 */
	uint64_t (*pv_phys)(struct vcpu *v, unsigned i);
};

extern const struct pmu_backend_ops pmu_soft_ops;
extern const struct pmu_backend_ops pmu_arch_ops;

/* Raises the guest PMI for the counters in `overflowed` (a GLOBAL_STATUS mask), if any. */
void pmu_deliver_overflow(struct vcpu *v, uint64_t overflowed);

#endif
