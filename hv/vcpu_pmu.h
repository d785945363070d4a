/* The seam between hv/ and pmu/: what the PMU code may ask of a VCPU (pmu/ never touches VMX itself). */
#ifndef PERFVISOR_HV_VCPU_PMU_H
#define PERFVISOR_HV_VCPU_PMU_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

/* The guest's current privilege level (0..3). */
unsigned vcpu_pmu_cpl(struct vcpu *v);
/*
 * Single-step the guest exactly, instruction by instruction, from the next VM entry on (or stop);
 * ring0 false: not at CPL 0, where nothing counted needs it (the kernel runs unstepped).
 */
void vcpu_pmu_set_stepping(struct vcpu *v, bool on, bool ring0);
/* The counter-overflow interrupt, through the VCPU's virtual LVTPC. */
void vcpu_pmu_raise_pmi(struct vcpu *v);
/* Bound the next guest run to at most `ticks` host TSC ticks (a cycle counter's overflow point). */
void vcpu_pmu_limit_run(struct vcpu *v, uint64_t ticks);
/*
 * The IA32_PERF_GLOBAL_CTRL value live while the guest runs, and the one loaded at VM exit (the
 * arch backend's switch between guest and hypervisor counting): by the VM-entry/VM-exit "load
 * IA32_PERF_GLOBAL_CTRL" controls where offered, else by the VM-entry/VM-exit MSR-load lists.
 */
void vcpu_pmu_set_global_ctrl(struct vcpu *v, uint64_t guest, uint64_t host);
/* This PCPU's host LVTPC: host counter overflows arrive as interrupt `vector` (masked: none). */
void hv_pmu_host_lvtpc(uint8_t vector, bool masked);

/* The paravirtual PMU's needs: guest memory by linear address (false: -EFAULT), the shared area
 * mapped read-only (NULL with *why when the request is bad), the PCPU, the guest TSC, a vector. */
bool vcpu_pmu_read_guest(struct vcpu *v, void *dst, uint64_t la, uint64_t len);
bool vcpu_pmu_write_guest(struct vcpu *v, uint64_t la, const void *src, uint64_t len);
/*
 * The len bytes the guest reads at la, when they lie in one page of its RAM: where they are in
 * the hypervisor (until the guest runs again), with no copy; NULL: copy them with
 * vcpu_pmu_read_guest(), which fails if the guest cannot read them. One walk per VCPU is
 * remembered and checked entry by entry (hv/gpt.c), so a changed mapping is always seen.
 */
const void *vcpu_pmu_guest_bytes(struct vcpu *v, uint64_t la, uint64_t len);
void *vcpu_pmu_map_area(struct vcpu *v, uint64_t gpa, unsigned nvcpus, const char **why);
uint64_t vcpu_pmu_guest_tsc(struct vcpu *v);
void vcpu_pmu_raise_vector(struct vcpu *v, uint8_t vector);

/* RDPMC from this VCPU traps (trap-and-emulate) or runs on the hardware (paravirtual a-mode
 * direct reads on the arch backend); only while its VMCS is loaded on this PCPU. */
void vcpu_pmu_set_rdpmc_exiting(struct vcpu *v, bool on);

/* The VCPU's PMU state. */
struct pmu_vcpu *vcpu_pmu_state(struct vcpu *v);

#endif
