/* The running guest's CR0, CR4 and CPL from the current VMCS, inline for the exit fast path. */
#ifndef PERFVISOR_HV_GUEST_REGS_H
#define PERFVISOR_HV_GUEST_REGS_H

#include <stdint.h>

#include "hv/exit_cr.h"
#include "hv/vmx_ops.h"

/*
 * The guest/host masks write_controls() (hv/vcpu.c) gives every VMCS and nothing changes:
 * known here, they need no VMREAD.
 */
static inline uint64_t guest_regs_cr0_mask(void)
{
	return CR0_HOST_MASK;
}

static inline uint64_t guest_regs_cr4_mask(void)
{
	return ~cr4_guest_bits;
}

/* SDM Vol. 3C 25.6.6: the guest reads host-owned bits from the shadow, the rest from the register */
static inline uint64_t guest_regs_cr(enum vmcs_field reg, enum vmcs_field shadow, uint64_t mask)
{
	return (vmread(reg) & ~mask) | (vmread(shadow) & mask);
}

static inline uint64_t guest_regs_cr0(void)
{
	return guest_regs_cr(VMCS_GUEST_CR0, VMCS_CR0_SHADOW, guest_regs_cr0_mask());
}

static inline uint64_t guest_regs_cr4(void)
{
	return guest_regs_cr(VMCS_GUEST_CR4, VMCS_CR4_SHADOW, guest_regs_cr4_mask());
}

/* SDM Vol. 3C 28.3.1: SS.DPL is the CPL. */
static inline unsigned guest_regs_cpl(void)
{
	return (vmread(VMCS_GUEST_SS_AR) >> 5) & 3;
}

#endif
