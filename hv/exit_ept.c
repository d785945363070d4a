/* EPT violations: emulated MMIO regions (hv/mmio.c), data beyond RAM as on a PC; code outside RAM ends the domain. */
#include "hv/domain.h"
#include "hv/mmio.h"
#include "hv/step_cache.h"
#include "hv/step_pv.h"
#include "hv/vmexit.h"
#include "hv/vmx_ops.h"

/* Nothing answers: as on a PC's bus, a read floats to all ones and a write goes nowhere. */
static void unbacked_access(struct vcpu *v, uint64_t gpa, unsigned size, bool write,
			    uint64_t *val)
{
	(void)v;
	(void)gpa;
	if (!write)
		*val = ~0ull >> (64 - 8 * size);
}

/*
 * SDM Vol. 3C 28.2.1, table 28-7: bits 0-2 say read, write or fetch; bit 7 that a linear
 * address is known, and bit 8 then whether the access was to it (else to a paging structure).
 */
#define QUAL_WRITE		(1ull << 1)
#define QUAL_FETCH		(1ull << 2)
#define QUAL_LINEAR_VALID	(1ull << 7)
#define QUAL_TRANSLATED		(1ull << 8)

void exit_ept_violation(struct vcpu *v, uint64_t qual)
{
	uint64_t gpa = vmread(VMCS_GUEST_PHYS_ADDR);
	bool data = (qual & QUAL_LINEAR_VALID) && (qual & QUAL_TRANSLATED) && !(qual & QUAL_FETCH);

	if (mmio_handle(v, gpa, qual))
		return;
	if (gpa >= v->dom->ro_start && gpa < v->dom->ro_end) {
		/* A read of a page the soft PMU shut while its VCPU runs a block (hv/step_pv.c). */
		if (!(qual & (QUAL_WRITE | QUAL_FETCH))) {
			step_pv_fault(v, gpa);
			return;
		}
		dom_kill(v->dom, v, "write to its read-only PMU page at guest-physical 0x%lx", gpa);
		return;
	}
	/* A write to a code page the soft PMU's block cache protected: its blocks go, it runs. */
	if ((qual & QUAL_WRITE) && step_cache_write_fault(v, gpa))
		return;
	/* Data beyond RAM behaves as on a PC; code or page tables there cannot run or walk. */
	if (data && gpa >= v->dom->ram_size) {
		mmio_emulate(v, gpa, unbacked_access);
		return;
	}
	dom_kill(v->dom, v, "%s of guest-physical 0x%lx, outside its %lu MiB of RAM",
		 (qual & QUAL_FETCH) ? "instruction fetch" :
		 !(qual & QUAL_TRANSLATED) ? "page walk" : (qual & 2) ? "write" : "read", gpa,
		 v->dom->ram_size >> 20);
}
