/* MOV to the physical DR0-DR3: the one place hv/exit_dr.c touches them (host unit tests replace it). */
#ifndef PERFVISOR_HV_DR_OPS_H
#define PERFVISOR_HV_DR_OPS_H

#include <stdint.h>

/* Physical DRk = la (k 0..3; SDM Vol. 3A 18.2.1). */
static inline void dr_write_phys(unsigned k, uint64_t la)
{
	switch (k) {
	case 0:
		__asm__ volatile("mov %0, %%dr0" : : "r"(la));
		break;
	case 1:
		__asm__ volatile("mov %0, %%dr1" : : "r"(la));
		break;
	case 2:
		__asm__ volatile("mov %0, %%dr2" : : "r"(la));
		break;
	default:
		__asm__ volatile("mov %0, %%dr3" : : "r"(la));
		break;
	}
}

#endif
