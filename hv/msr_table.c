/* The MSRs a guest may touch, by kind, and the ones emulated per VCPU (SDM Vol. 4 table 2-2). */
#include <stddef.h>

#include "hv/msr_table.h"

/* SDM Vol. 4 table 2-2, IA32_MISC_ENABLE: the bits software may write (the rest it only reads). */
#define MISC_WRITABLE		(MISC_ENABLE_FAST_STRINGS | MISC_ENABLE_TCC | MISC_ENABLE_EIST | \
				 MISC_ENABLE_MONITOR_FSM | MISC_ENABLE_LIMIT_CPUID | \
				 MISC_ENABLE_XTPR_OFF | MISC_ENABLE_XD_DISABLE)
/* SDM Vol. 3B 16.3.1.2: RIPV, EIPV, MCIP, LMCE_S. */
#define MCG_STATUS_BITS		0xFull

/* Sorted by first MSR; every range an instruction may name without #GP. */
const struct msr_row msr_table[] = {
	{ MSR_IA32_TSC, MSR_IA32_TSC, "IA32_TSC", MSR_EMUL },	/* reads pass (TSC offset) */
	/* hv/exit_msr.c, the vAPIC */
	{ MSR_IA32_APIC_BASE, MSR_IA32_APIC_BASE, "IA32_APIC_BASE", MSR_VMCS },
	{ MSR_IA32_FEATURE_CONTROL, MSR_IA32_FEATURE_CONTROL, "IA32_FEATURE_CONTROL", MSR_EMUL },
	{ MSR_IA32_TSC_ADJUST, MSR_IA32_TSC_ADJUST, "IA32_TSC_ADJUST", MSR_EMUL },
	{ MSR_IA32_BIOS_SIGN_ID, MSR_IA32_BIOS_SIGN_ID, "IA32_BIOS_SIGN_ID", MSR_EMUL },
	{ 0xC1, 0xC8, "IA32_PMCx", MSR_PMU },
	{ MSR_IA32_SYSENTER_CS, MSR_IA32_SYSENTER_EIP, "IA32_SYSENTER_CS/ESP/EIP", MSR_PASS },
	{ MSR_IA32_MCG_CAP, MSR_IA32_MCG_CAP, "IA32_MCG_CAP", MSR_EMUL },
	{ MSR_IA32_MCG_STATUS, MSR_IA32_MCG_STATUS, "IA32_MCG_STATUS", MSR_EMUL },
	{ 0x186, 0x18D, "IA32_PERFEVTSELx", MSR_PMU },
	{ MSR_IA32_MISC_ENABLE, MSR_IA32_MISC_ENABLE, "IA32_MISC_ENABLE", MSR_EMUL },
	{ MSR_IA32_PAT, MSR_IA32_PAT, "IA32_PAT", MSR_VMCS },
	{ 0x309, 0x30B, "IA32_FIXED_CTRx", MSR_PMU },
	{ 0x345, 0x345, "IA32_PERF_CAPABILITIES", MSR_PMU },
	{ 0x38D, 0x38D, "IA32_FIXED_CTR_CTRL", MSR_PMU },
	{ 0x38E, 0x390, "IA32_PERF_GLOBAL_STATUS/CTRL/OVF_CTRL", MSR_PMU },
	{ 0x4C1, 0x4C8, "IA32_A_PMCx", MSR_PMU },
	/* Every x2APIC MSR exits (hv/vmx_msr_bitmap.c): the host's own x2APIC is never reached. */
	{ 0x800, 0x8FF, "IA32_X2APIC_*", MSR_APIC },
	{ MSR_EFER, MSR_EFER, "IA32_EFER", MSR_VMCS },
	{ MSR_STAR, MSR_FMASK, "IA32_STAR/LSTAR/CSTAR/FMASK", MSR_PASS },
	{ MSR_FS_BASE, MSR_KERNEL_GS_BASE, "IA32_FS_BASE/GS_BASE/KERNEL_GS_BASE", MSR_PASS },
	{ MSR_IA32_TSC_AUX, MSR_IA32_TSC_AUX, "IA32_TSC_AUX", MSR_EMUL },
};
const unsigned msr_table_len = sizeof(msr_table) / sizeof(msr_table[0]);

const struct msr_row *msr_lookup(uint32_t msr)
{
	for (unsigned i = 0; i < msr_table_len; i++)
		if (msr >= msr_table[i].first && msr <= msr_table[i].last)
			return &msr_table[i];
	return NULL;
}

void msr_vcpu_init(struct msr_vcpu *m)
{
	m->misc_enable = MISC_ENABLE_FAST_STRINGS;
	m->mcg_status = 0;
	m->tsc_adjust = 0;
}

enum msr_result msr_emul_read(const struct msr_vcpu *m, const struct msr_env *env, uint32_t msr,
			      uint64_t *val)
{
	switch (msr) {
	case MSR_IA32_TSC_ADJUST:
		*val = m->tsc_adjust;
		return MSR_OK;
	case MSR_IA32_MCG_CAP:
		*val = 0;	/* no banks, no MCG_CTL, no extended state (SDM Vol. 3B 16.3.1.1) */
		return MSR_OK;
	case MSR_IA32_MCG_STATUS:
		*val = m->mcg_status;
		return MSR_OK;
	case MSR_IA32_MISC_ENABLE:
		/* No debug store: BTS and PEBS unavailable; bit 7 says whether CPUID.0AH has a PMU. */
		*val = m->misc_enable | MISC_ENABLE_BTS_UNAVAIL | MISC_ENABLE_PEBS_UNAVAIL |
		       (env->vpmu ? MISC_ENABLE_PERFMON : 0);
		return MSR_OK;
	case MSR_IA32_TSC_AUX:
		return env->tsc_aux ? MSR_NOT_EMUL : MSR_FAULT;
	default:
		return MSR_NOT_EMUL;
	}
}

enum msr_result msr_emul_write(struct msr_vcpu *m, const struct msr_env *env, uint32_t msr,
			       uint64_t val)
{
	uint64_t ro = MISC_ENABLE_PERFMON | MISC_ENABLE_BTS_UNAVAIL | MISC_ENABLE_PEBS_UNAVAIL;

	switch (msr) {
	case MSR_IA32_MCG_CAP:
		return MSR_FAULT;	/* read-only */
	case MSR_IA32_MCG_STATUS:
		if (val & ~MCG_STATUS_BITS)
			return MSR_FAULT;
		m->mcg_status = val;
		return MSR_OK;
	case MSR_IA32_MISC_ENABLE:
		/* Reserved bits #GP; the read-only ones are ignored, so a value just read goes back. */
		if (val & ~(MISC_WRITABLE | ro))
			return MSR_FAULT;
		m->misc_enable = val & MISC_WRITABLE;
		return MSR_OK;
	case MSR_IA32_TSC_AUX:
		/* SDM Vol. 4 table 2-2: bits 63:32 are reserved. */
		return env->tsc_aux && !(val >> 32) ? MSR_NOT_EMUL : MSR_FAULT;
	default:
		return MSR_NOT_EMUL;
	}
}

uint64_t msr_tsc_write(struct msr_vcpu *m, uint64_t val, uint64_t now)
{
	m->tsc_adjust += val - now;
	return val - now;
}

uint64_t msr_tsc_adjust_write(struct msr_vcpu *m, uint64_t val)
{
	uint64_t delta = val - m->tsc_adjust;

	m->tsc_adjust = val;
	return delta;
}
