/* RDPMC exits: with no virtual PMU offered (CPUID.0AH is zero), every counter index is #GP (SDM Vol. 2B RDPMC). */
#include "hv/vcpu.h"
#include "hv/vmexit.h"

void exit_rdpmc(struct vcpu *v, uint64_t qual)
{
	(void)qual;
	vcpu_inject_gp(v);
}
