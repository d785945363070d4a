/* Faults the hypervisor makes on purpose (inject=), each breaking one mechanism (docs/tour.md). */
#ifndef LIB_INJECT_H
#define LIB_INJECT_H

#include <stdbool.h>

/*
 * A test that proves a mechanism must fail when it breaks: a canary row runs the hypervisor with
 * one of these and passes only when the counts come out wrong (tests/system/tour.cfg). In the
 * order of the inject= words (boot/main.c).
 */
enum inject_fault {
	INJECT_NONE,
	INJECT_PV_SKIP_SUM,	/* pv_switch_out(): no Sum_vcpu += Phys - Start_vcpu (eq. 3) */
	INJECT_PV_STALE_START,	/* pv_switch_in(): counters keep their old Start_vcpu (eq. 3) */
	INJECT_VPMU_NO_SEXT,	/* vpmu_wrmsr(): legacy PMC writes not sign-extended */
	INJECT_PMI_DROP,	/* pmu_deliver_overflow(): the trapped PMU's PMI never raised */
	INJECT_TSC_NO_OFFSET,	/* switch_in(): a VCPU's TSC runs on while it waits */
	INJECT_PV_DROP_PENDING,	/* isuspend(): overflows not yet told are forgotten */
	INJECT_PV_KEEP_PENDING,	/* isuspend(): told to the thread, yet left pending on the VCPU */
	INJECT_ACCT_AS_GUEST,	/* pmu_domain_init(): every domain counts with acct=guest */
	INJECT_PV_STALE_ACTIVE,	/* resume(): the page no longer shows the control loaded */
	INJECT_COUNT
};

/*
 * The fault chosen, INJECT_NONE unless the command line says otherwise. Weak, so that host unit
 * tests compiling a module with a hook get it without the rest of the hypervisor.
 */
__attribute__((weak)) unsigned inject_fault;

static inline bool inject_on(enum inject_fault f)
{
	return inject_fault == f;
}

#endif
