/* What this CPU's VMX offers, read once from CPUID and the IA32_VMX_* capability MSRs. */
#ifndef PERFVISOR_HV_VMX_CAPS_H
#define PERFVISOR_HV_VMX_CAPS_H

#include <stdbool.h>
#include <stdint.h>

struct vmx_caps {
	bool present;		/* CPUID.1:ECX.VMX */
	bool disabled_by_firmware;
	uint64_t basic, misc, ept_vpid;
	/* The TRUE_* versions where IA32_VMX_BASIC bit 55 offers them (SDM Vol. 3D A.2). */
	uint64_t pinbased, procbased, procbased2, exit, entry;
	uint64_t cr0_fixed0, cr0_fixed1, cr4_fixed0, cr4_fixed1;
	bool ept, unrestricted, vpid, preemption_timer, mtf;
	unsigned preemption_rate;	/* the timer counts TSC >> rate (IA32_VMX_MISC[4:0]) */
};

extern struct vmx_caps vmx_caps;

/* Fills vmx_caps; returns false when VT-x cannot be used on this CPU. */
bool vmx_caps_read(void);
/* Whether a control may be 1 in a capability MSR value (allowed-1 is the high half). */
static inline bool vmx_ctl_allowed1(uint64_t cap, uint32_t bit)
{
	return (cap >> 32) & bit;
}

#endif
