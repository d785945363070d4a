/* VMX operation on each PCPU, and what all VMCSs share (MSR bitmap, the guest boot GDT layout). */
#ifndef PERFVISOR_HV_VMX_H
#define PERFVISOR_HV_VMX_H

#include <stdbool.h>
#include <stdint.h>

#include "include/x86/msr.h"

/*
 * The GDT the hypervisor writes into guest RAM for the first instruction (hv/domain.c): flat
 * code at this selector, flat data at the next (bzImage kernels get hv/bzimage.h's BZ_BOOT_CS).
 */
#define GUEST_SEL_CODE	0x08

struct vcpu;

extern uint64_t vmx_msr_bitmap_pa;

/* CR0/CR4 fixed bits and VMXON on the calling PCPU; false (with a message) on failure. */
bool vmx_enable_cpu(void);
/* Allocates the shared MSR bitmap: every MSR traps except those listed as passed through. */
bool vmx_init_global(void);
/* The calling CPU's own segment selectors and descriptor-table bases: a VMCS's host state. */
struct vmx_host_segs {
	uint16_t cs, ds, tr;
	uint64_t gdt_base, idt_base, tr_base;
};
void vmx_host_segs(struct vmx_host_segs *h);
/* Enters v (launch or resume) until the next exit; false if the entry itself failed. */
bool vmx_enter(struct vcpu *v);
/* Describes a failed VM entry in words: which check, which field. */
void vmx_explain_entry_failure(struct vcpu *v, bool insn_error, uint32_t reason);

#endif
