/* Inline wrappers for the VMX instructions; only hv/ includes this (the arch seam). */
#ifndef PERFVISOR_HV_VMX_OPS_H
#define PERFVISOR_HV_VMX_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "hv/vmx_defs.h"

/* SDM Vol. 3C 31.2: VMX instructions report failure in CF (no current VMCS) or ZF (with an error number). */
static inline bool vmxon(uint64_t pa)
{
	bool ok;

	__asm__ volatile("vmxon %1; seta %0" : "=qm"(ok) : "m"(pa) : "cc", "memory");
	return ok;
}

static inline bool vmclear(uint64_t pa)
{
	bool ok;

	__asm__ volatile("vmclear %1; seta %0" : "=qm"(ok) : "m"(pa) : "cc", "memory");
	return ok;
}

static inline bool vmptrld(uint64_t pa)
{
	bool ok;

	__asm__ volatile("vmptrld %1; seta %0" : "=qm"(ok) : "m"(pa) : "cc", "memory");
	return ok;
}

static inline uint64_t vmread(enum vmcs_field f)
{
	uint64_t v;

	__asm__ volatile("vmread %1, %0" : "=r"(v) : "r"((uint64_t)f) : "cc");
	return v;
}

static inline void vmwrite(enum vmcs_field f, uint64_t v)
{
	__asm__ volatile("vmwrite %1, %0" : : "r"((uint64_t)f), "r"(v) : "cc");
}

/* INVEPT single-context (type 1), SDM Vol. 3C 30.3. */
static inline void invept_single(uint64_t eptp)
{
	struct {
		uint64_t eptp, reserved;
	} desc = { eptp, 0 };

	__asm__ volatile("invept %0, %1" : : "m"(desc), "r"(1ull) : "cc", "memory");
}

#endif
