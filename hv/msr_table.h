/* The table of every MSR a guest may touch (passthrough, VMCS, emulated, PMU), per-VCPU state. */
#ifndef PERFVISOR_HV_MSR_TABLE_H
#define PERFVISOR_HV_MSR_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "include/x86/msr.h"

enum msr_kind {
	MSR_GP,			/* not in the table: RDMSR and WRMSR raise #GP, as for a missing MSR */
	MSR_PASS,		/* the hardware MSR, switched per VCPU (hv/vmx.c's bitmap, hv/vcpu.c) */
	MSR_VMCS,		/* guest state in the VMCS, emulated in hv/exit_msr.c */
	MSR_EMUL,		/* emulated here, per VCPU (struct msr_vcpu) */
	MSR_PMU,		/* the virtual PMU's (pmu/vpmu_msr.c) */
	MSR_APIC,		/* the virtual local APIC's in x2APIC mode (hv/vapic.c), else #GP */
};

struct msr_row {
	uint32_t first, last;
	const char *name;
	enum msr_kind kind;
};

extern const struct msr_row msr_table[];
extern const unsigned msr_table_len;

/* The row holding msr, or NULL (#GP). */
const struct msr_row *msr_lookup(uint32_t msr);

/* What the emulated MSRs depend on, from the domain's CPUID. */
struct msr_env {
	bool vpmu;		/* MISC_ENABLE bit 7 */
	bool tsc_aux;		/* RDTSCP or RDPID offered: IA32_TSC_AUX exists */
};

/* A VCPU's emulated MSRs. */
struct msr_vcpu {
	uint64_t misc_enable;	/* the writable bits */
	uint64_t mcg_status;
	uint64_t tsc_adjust;
};

enum msr_result { MSR_OK, MSR_FAULT, MSR_NOT_EMUL };

void msr_vcpu_init(struct msr_vcpu *m);
/* MSR_NOT_EMUL: the MSR is not an MSR_EMUL row with state here (the caller handles it). */
enum msr_result msr_emul_read(const struct msr_vcpu *m, const struct msr_env *env, uint32_t msr,
			      uint64_t *val);
enum msr_result msr_emul_write(struct msr_vcpu *m, const struct msr_env *env, uint32_t msr,
			       uint64_t val);
/*
 * SDM Vol. 3B 17.17.3: a write of `val` to IA32_TSC when the guest's TSC reads `now` moves the
 * TSC and IA32_TSC_ADJUST by the same amount; a write to IA32_TSC_ADJUST moves the TSC by the
 * change. Both return what to add to the VCPU's TSC offset.
 */
uint64_t msr_tsc_write(struct msr_vcpu *m, uint64_t val, uint64_t now);
uint64_t msr_tsc_adjust_write(struct msr_vcpu *m, uint64_t val);

#endif
