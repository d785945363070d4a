/* The paravirtual PMU (perfctr-xen): shared pages, a-mode offsets, i-mode save/restore and overflow vectors. */
#ifndef PERFVISOR_PMU_PV_H
#define PERFVISOR_PMU_PV_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/include/perfvisor_pmu.h"
#include "pmu/soft_classify.h"

struct vcpu;
struct pmu_vcpu;

/* Per domain: where the shared area is and which vector overflows use. */
struct pv_domain {
	struct pv_vcpu_area *area;	/* host address of VCPU 0's page; NULL before HC_PMU_SETUP */
	unsigned nvcpus;
	uint8_t vector;
};

/* A HC_PMU_* hypercall from v with arguments RDI, RSI, RDX...; returns RAX. */
int64_t pv_hypercall(struct vcpu *v, uint64_t nr, const uint64_t args[3]);
/* Fault injection for the validation suite (inject=pv-skip-sum): skip the Sum_vcpu update. */
extern bool pv_inject_skip_sum;
/* Inter-domain switches: a-mode Sum/Start bookkeeping (seed 003 4.2.1). */
void pv_switch_in(struct vcpu *v);
void pv_switch_out(struct vcpu *v);
/* Soft backend: n events of ev happened at cpl on v's PCPU; counts them in its physical counters. */
void pv_count(struct vcpu *v, int ev, uint64_t n, unsigned cpl);
/* Events some a-mode counter of v counts (enum vpmu_event bits), for the stepping decision. */
uint32_t pv_active(struct vcpu *v);
/* i-mode counters among a GLOBAL_STATUS overflow mask: handled (vector raised, counter re-armed); returns the rest. */
uint64_t pv_overflow(struct vcpu *v, uint64_t overflowed);

#endif
