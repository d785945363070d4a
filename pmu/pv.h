/* The paravirtual PMU (perfctr-xen): shared pages, a-mode offsets, i-mode save/restore and overflow vectors. */
#ifndef PERFVISOR_PMU_PV_H
#define PERFVISOR_PMU_PV_H

#include <stdbool.h>
#include <stdint.h>

#include "include/perfvisor/pmu.h"
#include "pmu/soft_classify.h"
#include "pmu/vpmu.h"

/* VCPUs per domain the PV PMU serves (hv/domcfg.h DOM_VCPUS_MAX). */
#define PV_MAX_VCPUS	8

struct vcpu;
struct pmu_vcpu;
struct pmu_backend_ops;

/* Per domain: where the shared area is, which vector overflows use, each VCPU's control. */
struct pv_domain {
	struct pv_vcpu_area *area;	/* host address of VCPU 0's page; NULL before HC_PMU_SETUP */
	int claimed;			/* a SETUP took the area (atomic: the first caller wins) */
	unsigned nvcpus;
	uint8_t vector;
	/*
	 * The control each VCPU runs, as validated: the page's `active` is the guest's copy. A
	 * hypervisor write for the guest may land on the page, and what the hypervisor counts and
	 * programs must not follow it.
	 */
	struct pv_control ctl[PV_MAX_VCPUS];
	/*
	 * Derived from ctl[k] when it changes: the a-mode counters (bit i: counter i) that count
	 * each event at CPL 0 ([k][0]) and above ([k][1]), so that counting does not decode.
	 */
	uint8_t counting[PV_MAX_VCPUS][2][VPMU_EV_COUNT];
	/*
	 * The soft backend's "physical" a-mode counters, one set per VCPU: they count only this
	 * domain's events, so a page never shows another domain's progress (issue 13).
	 */
	uint64_t soft_phys[PV_MAX_VCPUS][PV_PMU_COUNTERS];
};

/* The backend pmu_init chose, and its physical GP counters' width (pmu_init, once). */
void pv_init(const struct pmu_backend_ops *ops, unsigned width);
/* A HC_PMU_* hypercall from v with arguments RDI, RSI, RDX...; returns RAX. */
int64_t pv_hypercall(struct vcpu *v, uint64_t nr, const uint64_t args[3]);
/* pv_hypercall() of HC_PMU_RESUME (ctl_la its argument), the thread switch's. */
int64_t pv_resume(struct vcpu *v, uint64_t ctl_la);
/* Inter-domain switches: a-mode Sum/Start bookkeeping (seed 003 4.2.1). */
void pv_switch_in(struct vcpu *v);
void pv_switch_out(struct vcpu *v);
/*
 * n events of ev happened at cpl on v that no physical counter saw (the soft backend: all of
 * them; the arch backend: instructions the hypervisor emulated); a-mode counters take them.
 */
void pv_count(struct vcpu *v, int ev, uint64_t n, unsigned cpl);
/* ticks of core and reference cycles at cpl (both follow the TSC), as pv_count() of each. */
void pv_count_cycles(struct pmu_vcpu *pv, uint64_t ticks, unsigned cpl);
/* Events some a-mode counter of v counts (enum vpmu_event bits), for the stepping decision. */
uint32_t pv_active(struct vcpu *v);
/* The same at cpl only: whether CPL 0 needs stepping. */
uint32_t pv_active_at(struct vcpu *v, unsigned cpl);
/* v's a-mode counters (bit i: counter i) and their event selects, for a backend to program. */
uint32_t pv_amode(struct vcpu *v, uint64_t evtsel[PV_PMU_COUNTERS]);
/* i-mode counters among a GLOBAL_STATUS overflow mask: handled (vector raised, counter re-armed); returns the rest. */
uint64_t pv_overflow(struct vcpu *v, uint64_t overflowed);

#endif
