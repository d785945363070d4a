/* RDPMC exits: emulated by the virtual PMU (SDM Vol. 2B RDPMC: #GP on a bad index, or at CPL > 0 without CR4.PCE). */
#include "hv/vcpu.h"
#include "hv/vmexit.h"
#include "hv/vmx_ops.h"
#include "include/x86/cr.h"

void exit_rdpmc(struct vcpu *v, uint64_t qual)
{
	uint64_t val;

	(void)qual;
	if (pmu_rdpmc(v, (uint32_t)v->gpr[GPR_RCX], vcpu_guest_cr4() & CR4_PCE, &val) !=
	    VPMU_OK) {
		vcpu_inject_gp(v);
		return;
	}
	v->gpr[GPR_RAX] = (uint32_t)val;
	v->gpr[GPR_RDX] = val >> 32;
	vcpu_advance_rip(v);
}
