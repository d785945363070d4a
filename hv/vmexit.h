/* VM-exit dispatch: one handler per exit reason, per-VCPU counts, and the ring of recent exits. */
#ifndef PERFVISOR_HV_VMEXIT_H
#define PERFVISOR_HV_VMEXIT_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

/*
 * Called by the exit stub (hv/entry.S) on every exit: counts it and answers the cheap ones
 * (read-only and PV PMU hypercalls, CPUID, the vPMU's MSRs) when nothing else needs the
 * hypervisor. True: resume the guest at once; false: vmx_run() returns and vmexit_handle()
 * takes it.
 */
bool vmexit_fast(struct vcpu *v);
/* Handles the exit that just happened on v (after vmexit_fast() declined it). */
void vmexit_handle(struct vcpu *v);

/* Handlers, one file per exit family (hv/exit_*.c). */
void exit_exception(struct vcpu *v, uint64_t qual);
void exit_io(struct vcpu *v, uint64_t qual);
void exit_cpuid(struct vcpu *v, uint64_t qual);
void exit_rdmsr(struct vcpu *v, uint64_t qual);
void exit_wrmsr(struct vcpu *v, uint64_t qual);
void exit_cr_access(struct vcpu *v, uint64_t qual);
void exit_dr_access(struct vcpu *v, uint64_t qual);
void exit_ept_violation(struct vcpu *v, uint64_t qual);
void exit_vmcall(struct vcpu *v, uint64_t qual);
/* The fast path's hypercalls (read-only ones, PV PMU ones); false: not one of them. */
bool exit_vmcall_fast(struct vcpu *v);
void exit_hlt(struct vcpu *v, uint64_t qual);
void exit_intr_window(struct vcpu *v, uint64_t qual);
void exit_nmi_window(struct vcpu *v, uint64_t qual);
void exit_preemption_timer(struct vcpu *v, uint64_t qual);
void exit_external_intr(struct vcpu *v, uint64_t qual);
void exit_triple_fault(struct vcpu *v, uint64_t qual);
void exit_inject_ud(struct vcpu *v, uint64_t qual);
void exit_skip(struct vcpu *v, uint64_t qual);
void exit_rdpmc(struct vcpu *v, uint64_t qual);

const char *exit_reason_name(uint32_t reason);

#endif
