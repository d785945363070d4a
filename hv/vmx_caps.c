/* Reads the VMX capability MSRs (SDM Vol. 3D appendix A) into struct vmx_caps. */
#include "lib/cpu.h"
#include "hv/vmx_caps.h"
#include "hv/vmx_defs.h"

struct vmx_caps vmx_caps;

bool vmx_caps_read(void)
{
	struct vmx_caps *c = &vmx_caps;
	uint64_t fc = 0;
	bool true_ctls;

	c->present = cpuid(1, 0).ecx & (1u << 5);
	if (!c->present)
		return false;
	/* SDM Vol. 3C 24.7: VMXON outside SMX needs IA32_FEATURE_CONTROL bit 2 if the MSR is locked. */
	if (rdmsr_safe(MSR_IA32_FEATURE_CONTROL, &fc) == 0 && (fc & 1) && !(fc & 4)) {
		c->disabled_by_firmware = true;
		return false;
	}
	c->basic = rdmsr(MSR_IA32_VMX_BASIC);
	true_ctls = c->basic & (1ull << 55);
	c->pinbased = rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_PINBASED : MSR_IA32_VMX_PINBASED);
	c->procbased = rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_PROCBASED : MSR_IA32_VMX_PROCBASED);
	c->exit = rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_EXIT : MSR_IA32_VMX_EXIT);
	c->entry = rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_ENTRY : MSR_IA32_VMX_ENTRY);
	c->misc = rdmsr(MSR_IA32_VMX_MISC);
	c->cr0_fixed0 = rdmsr(MSR_IA32_VMX_CR0_FIXED0);
	c->cr0_fixed1 = rdmsr(MSR_IA32_VMX_CR0_FIXED1);
	c->cr4_fixed0 = rdmsr(MSR_IA32_VMX_CR4_FIXED0);
	c->cr4_fixed1 = rdmsr(MSR_IA32_VMX_CR4_FIXED1);
	if (vmx_ctl_allowed1(c->procbased, CPU_SECONDARY_CTLS)) {
		c->procbased2 = rdmsr(MSR_IA32_VMX_PROCBASED2);
		c->ept = vmx_ctl_allowed1(c->procbased2, CPU2_ENABLE_EPT);
		c->unrestricted = vmx_ctl_allowed1(c->procbased2, CPU2_UNRESTRICTED_GUEST);
		c->vpid = vmx_ctl_allowed1(c->procbased2, CPU2_ENABLE_VPID);
		if (c->ept || c->vpid)
			c->ept_vpid = rdmsr(MSR_IA32_VMX_EPT_VPID_CAP);
	}
	c->preemption_timer = vmx_ctl_allowed1(c->pinbased, PIN_PREEMPTION_TIMER);
	c->preemption_rate = c->misc & 0x1F;
	c->mtf = vmx_ctl_allowed1(c->procbased, CPU_MONITOR_TRAP_FLAG);
	return true;
}
