/* EPT violations: emulated MMIO regions (hv/mmio.c); any other access outside the domain's RAM ends the domain. */
#include "hv/domain.h"
#include "hv/mmio.h"
#include "hv/vmexit.h"
#include "hv/vmx_ops.h"

/* SDM Vol. 3C 28.2.1, table 28-7: bits 0-2 say read, write or fetch. */
void exit_ept_violation(struct vcpu *v, uint64_t qual)
{
	uint64_t gpa = vmread(VMCS_GUEST_PHYS_ADDR);

	if (mmio_handle(v, gpa, qual))
		return;
	if (gpa >= v->dom->ro_start && gpa < v->dom->ro_end) {
		dom_kill(v->dom, v, "write to its read-only PMU page at guest-physical 0x%lx", gpa);
		return;
	}
	dom_kill(v->dom, v, "%s of guest-physical 0x%lx, outside its %lu MiB of RAM",
		 (qual & 4) ? "instruction fetch" : (qual & 2) ? "write" : "read", gpa,
		 v->dom->ram_size >> 20);
}
