/* Exits that end in a fault or are simply retired: triple faults, instructions guests may not use, cache flushes. */
#include "hv/domain.h"
#include "hv/vmexit.h"

/* SDM Vol. 3A 6.15 (#DF): a fault while delivering a double fault shuts the processor down. */
void exit_triple_fault(struct vcpu *v, uint64_t qual)
{
	(void)qual;
	dom_kill(v->dom, v, "triple fault");
}

/* VMX, SMX, MONITOR/MWAIT and XSETBV are hidden in CPUID: executing them is #UD, as on such a CPU. */
void exit_inject_ud(struct vcpu *v, uint64_t qual)
{
	(void)qual;
	vcpu_inject_ud(v);
}

/* INVD/WBINVD: guest RAM is write-back and coherent; there is nothing to flush for the guest. */
void exit_skip(struct vcpu *v, uint64_t qual)
{
	(void)qual;
	vcpu_advance_rip(v);
}
