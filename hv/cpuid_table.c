/* The CPUID feature table (SDM Vol. 2A CPUID, tables 3-8 to 3-11) and the filter it drives. */
#include "hv/cpuid_table.h"

#define L1	1, 0
#define L7	7, 0
#define X1	0x80000001u, 0
#define X8	0x80000008u, 0

#define NOVMM	"no VMM support"

/*
 * Every bit perfvisor offers is listed; so is every hidden bit whose MSR or instruction a guest
 * could otherwise reach. Bits of the feature registers below that are not offered here are
 * cleared. An offered bit with an MSR has that MSR in hv/msr_table.c; a hidden one's MSR #GPs.
 */
const struct cpuid_feature cpuid_features[] = {
	{ L1, CPUID_EDX, 0, "FPU", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 1, "VME", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 2, "DE", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 3, "PSE", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 4, "TSC", CPUID_HOST, 0x10, 0 },
	{ L1, CPUID_EDX, 5, "MSR", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 6, "PAE", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 7, "MCE", CPUID_HIDDEN, 0, "CR4.MCE and #MC belong to the host" },
	{ L1, CPUID_EDX, 8, "CX8", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 9, "APIC", CPUID_HOST, 0x1B, 0 },
	{ L1, CPUID_EDX, 11, "SEP", CPUID_HOST, 0x174, 0 },
	{ L1, CPUID_EDX, 12, "MTRR", CPUID_HIDDEN, 0xFE, "MTRRs are not emulated (EPT sets the types)" },
	{ L1, CPUID_EDX, 13, "PGE", CPUID_HOST, 0, 0 },
	/* Machine-check architecture with zero banks (SDM Vol. 3B 16.3.1). */
	{ L1, CPUID_EDX, 14, "MCA", CPUID_ALWAYS, 0x179, 0 },
	{ L1, CPUID_EDX, 15, "CMOV", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 16, "PAT", CPUID_HOST, 0x277, 0 },
	{ L1, CPUID_EDX, 17, "PSE-36", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 18, "PSN", CPUID_HIDDEN, 0, NOVMM },
	{ L1, CPUID_EDX, 19, "CLFSH", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 21, "DS", CPUID_HIDDEN, 0x600, "no debug store (IA32_DS_AREA)" },
	{ L1, CPUID_EDX, 22, "ACPI", CPUID_HIDDEN, 0x19C, "no thermal monitor MSRs" },
	{ L1, CPUID_EDX, 23, "MMX", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 24, "FXSR", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 25, "SSE", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 26, "SSE2", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 27, "SS", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 28, "HTT", CPUID_HOST, 0, 0 },
	{ L1, CPUID_EDX, 29, "TM", CPUID_HIDDEN, 0, NOVMM },
	{ L1, CPUID_EDX, 31, "PBE", CPUID_HIDDEN, 0, NOVMM },

	{ L1, CPUID_ECX, 0, "SSE3", CPUID_HOST, 0, 0 },
	{ L1, CPUID_ECX, 1, "PCLMULQDQ", CPUID_HOST, 0, 0 },
	{ L1, CPUID_ECX, 2, "DTES64", CPUID_HIDDEN, 0, "no debug store" },
	{ L1, CPUID_ECX, 3, "MONITOR", CPUID_HIDDEN, 0, "MONITOR/MWAIT exit" },
	{ L1, CPUID_ECX, 4, "DS-CPL", CPUID_HIDDEN, 0, "no debug store" },
	{ L1, CPUID_ECX, 5, "VMX", CPUID_HIDDEN, 0x480, "no nested VT-x" },
	{ L1, CPUID_ECX, 6, "SMX", CPUID_HIDDEN, 0, NOVMM },
	{ L1, CPUID_ECX, 7, "EIST", CPUID_HIDDEN, 0x198, "no P-state MSRs" },
	{ L1, CPUID_ECX, 8, "TM2", CPUID_HIDDEN, 0, NOVMM },
	{ L1, CPUID_ECX, 9, "SSSE3", CPUID_HOST, 0, 0 },
	{ L1, CPUID_ECX, 10, "CNXT-ID", CPUID_HIDDEN, 0, NOVMM },
	{ L1, CPUID_ECX, 11, "SDBG", CPUID_HIDDEN, 0xC80, "no silicon debug MSR" },
	{ L1, CPUID_ECX, 12, "FMA", CPUID_HIDDEN, 0, "needs AVX state (XSAVE is hidden)" },
	{ L1, CPUID_ECX, 13, "CX16", CPUID_HOST, 0, 0 },
	{ L1, CPUID_ECX, 14, "xTPR", CPUID_HIDDEN, 0, NOVMM },
	/* IA32_PERF_CAPABILITIES exists exactly when the virtual PMU does. */
	{ L1, CPUID_ECX, 15, "PDCM", CPUID_IF_VPMU, 0x345, 0 },
	{ L1, CPUID_ECX, 17, "PCID", CPUID_HOST, 0, 0 },
	{ L1, CPUID_ECX, 18, "DCA", CPUID_HIDDEN, 0, NOVMM },
	{ L1, CPUID_ECX, 19, "SSE4.1", CPUID_HOST, 0, 0 },
	{ L1, CPUID_ECX, 20, "SSE4.2", CPUID_HOST, 0, 0 },
	/* The virtual local APIC's x2APIC mode (SDM Vol. 3A 11.12), on any host. */
	{ L1, CPUID_ECX, 21, "x2APIC", CPUID_ALWAYS, 0x802, 0 },
	{ L1, CPUID_ECX, 22, "MOVBE", CPUID_HOST, 0, 0 },
	{ L1, CPUID_ECX, 23, "POPCNT", CPUID_HOST, 0, 0 },
	{ L1, CPUID_ECX, 24, "TSC-Deadline", CPUID_HIDDEN, 0x6E0, "no APIC TSC-deadline mode" },
	{ L1, CPUID_ECX, 25, "AESNI", CPUID_HOST, 0, 0 },
	{ L1, CPUID_ECX, 26, "XSAVE", CPUID_HIDDEN, 0, "XSAVE state is not switched" },
	{ L1, CPUID_ECX, 27, "OSXSAVE", CPUID_HIDDEN, 0, "XSAVE state is not switched" },
	{ L1, CPUID_ECX, 28, "AVX", CPUID_HIDDEN, 0, "XSAVE state is not switched" },
	{ L1, CPUID_ECX, 29, "F16C", CPUID_HIDDEN, 0, "needs AVX state" },
	{ L1, CPUID_ECX, 30, "RDRAND", CPUID_HOST, 0, 0 },
	{ L1, CPUID_ECX, 31, "hypervisor", CPUID_ALWAYS, 0, 0 },

	{ L7, CPUID_EBX, 0, "FSGSBASE", CPUID_HOST, 0, 0 },
	/* Emulated per VCPU on top of the TSC offset (SDM Vol. 3B 17.17.3). */
	{ L7, CPUID_EBX, 1, "TSC_ADJUST", CPUID_ALWAYS, 0x3B, 0 },
	{ L7, CPUID_EBX, 3, "BMI1", CPUID_HOST, 0, 0 },
	{ L7, CPUID_EBX, 4, "HLE", CPUID_HIDDEN, 0, "TSX is not offered" },
	{ L7, CPUID_EBX, 5, "AVX2", CPUID_HIDDEN, 0, "needs AVX state" },
	{ L7, CPUID_EBX, 7, "SMEP", CPUID_HOST, 0, 0 },
	{ L7, CPUID_EBX, 8, "BMI2", CPUID_HOST, 0, 0 },
	{ L7, CPUID_EBX, 9, "ERMS", CPUID_HOST, 0, 0 },
	{ L7, CPUID_EBX, 10, "INVPCID", CPUID_HIDDEN, 0, "the enable-INVPCID control is off" },
	{ L7, CPUID_EBX, 11, "RTM", CPUID_HIDDEN, 0, "TSX is not offered" },
	{ L7, CPUID_EBX, 14, "MPX", CPUID_HIDDEN, 0xD90, "needs XSAVE state" },
	{ L7, CPUID_EBX, 16, "AVX512F", CPUID_HIDDEN, 0, "needs AVX state" },
	{ L7, CPUID_EBX, 19, "ADX", CPUID_HOST, 0, 0 },
	{ L7, CPUID_EBX, 20, "SMAP", CPUID_HOST, 0, 0 },
	{ L7, CPUID_EBX, 23, "CLFLUSHOPT", CPUID_HOST, 0, 0 },
	{ L7, CPUID_EBX, 25, "PT", CPUID_HIDDEN, 0x570, "no processor trace" },
	{ L7, CPUID_EBX, 29, "SHA", CPUID_HOST, 0, 0 },

	{ L7, CPUID_ECX, 3, "PKU", CPUID_HIDDEN, 0, "PKRU is not switched" },
	{ L7, CPUID_ECX, 16, "LA57", CPUID_HIDDEN, 0, "no 5-level guest paging" },
	/* RDPID reads IA32_TSC_AUX, per VCPU (hv/vcpu.c switches it with the syscall MSRs). */
	{ L7, CPUID_ECX, 22, "RDPID", CPUID_HOST, 0xC0000103u, 0 },

	/* Speculation controls: not offered at all, so neither are their MSRs (issue 13). */
	{ L7, CPUID_EDX, 26, "IBRS_IBPB", CPUID_HIDDEN, 0x48, "SPEC_CTRL is not virtualized" },
	{ L7, CPUID_EDX, 27, "STIBP", CPUID_HIDDEN, 0, "SPEC_CTRL is not virtualized" },
	{ L7, CPUID_EDX, 28, "L1D_FLUSH", CPUID_HIDDEN, 0x10B, "IA32_FLUSH_CMD is not offered" },
	{ L7, CPUID_EDX, 29, "ARCH_CAPABILITIES", CPUID_HIDDEN, 0x10A, "not offered" },
	{ L7, CPUID_EDX, 31, "SSBD", CPUID_HIDDEN, 0, "SPEC_CTRL is not virtualized" },

	{ X1, CPUID_ECX, 0, "LAHF-SAHF", CPUID_HOST, 0, 0 },
	{ X1, CPUID_ECX, 5, "LZCNT", CPUID_HOST, 0, 0 },
	{ X1, CPUID_ECX, 8, "PREFETCHW", CPUID_HOST, 0, 0 },
	{ X1, CPUID_EDX, 11, "SYSCALL", CPUID_HOST, 0xC0000081u, 0 },
	{ X1, CPUID_EDX, 20, "NX", CPUID_HOST, 0, 0 },
	{ X1, CPUID_EDX, 26, "Page1GB", CPUID_HOST, 0, 0 },
	{ X1, CPUID_EDX, 27, "RDTSCP", CPUID_HOST, 0xC0000103u, 0 },
	{ X1, CPUID_EDX, 29, "LM", CPUID_HOST, 0xC0000080u, 0 },

	{ X8, CPUID_EBX, 12, "AMD_IBPB", CPUID_HIDDEN, 0x49, "SPEC_CTRL is not virtualized" },
	{ X8, CPUID_EBX, 14, "AMD_IBRS", CPUID_HIDDEN, 0x48, "SPEC_CTRL is not virtualized" },
};
const unsigned cpuid_feature_count = sizeof(cpuid_features) / sizeof(cpuid_features[0]);

const struct cpuid_feature_reg cpuid_feature_regs[] = {
	{ L1, CPUID_ECX }, { L1, CPUID_EDX }, { L7, CPUID_EBX }, { L7, CPUID_ECX }, { L7, CPUID_EDX },
	{ X1, CPUID_ECX }, { X1, CPUID_EDX }, { X8, CPUID_EBX },
};
const unsigned cpuid_feature_reg_count = sizeof(cpuid_feature_regs) / sizeof(cpuid_feature_regs[0]);

bool cpuid_filter(uint32_t leaf, uint32_t sub, enum cpuid_reg reg, bool vpmu, uint32_t *val)
{
	uint32_t out = 0;
	bool found = false;

	/* Of the feature leaves only leaf 7 has subleaves: the others ignore ECX (SDM Vol. 2A CPUID). */
	if (leaf != 7)
		sub = 0;
	/* Leaf 7's later subleaves hold features too, none of them offered. */
	if (leaf == 7 && sub && reg != CPUID_EAX) {
		*val = 0;
		return true;
	}
	for (unsigned i = 0; i < cpuid_feature_reg_count; i++) {
		const struct cpuid_feature_reg *r = &cpuid_feature_regs[i];

		found |= r->leaf == leaf && r->sub == sub && r->reg == reg;
	}
	if (!found)
		return false;
	for (unsigned i = 0; i < cpuid_feature_count; i++) {
		const struct cpuid_feature *f = &cpuid_features[i];
		uint32_t bit = 1u << f->bit;

		if (f->leaf != leaf || f->sub != sub || f->reg != reg)
			continue;
		if (f->offer == CPUID_ALWAYS || (f->offer == CPUID_HOST && (*val & bit)) ||
		    (f->offer == CPUID_IF_VPMU && vpmu))
			out |= bit;
	}
	*val = out;
	return true;
}
