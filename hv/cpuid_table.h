/* The CPUID feature table: each feature bit, offered to guests or not, and the MSR it brings. */
#ifndef PERFVISOR_HV_CPUID_TABLE_H
#define PERFVISOR_HV_CPUID_TABLE_H

#include <stdbool.h>
#include <stdint.h>

enum cpuid_reg { CPUID_EAX, CPUID_EBX, CPUID_ECX, CPUID_EDX };

enum cpuid_offer {
	CPUID_HIDDEN,		/* always cleared */
	CPUID_HOST,		/* shown when the host has it: needs nothing from the hypervisor */
	CPUID_ALWAYS,		/* set whatever the host says (the hypervisor-present bit) */
	CPUID_IF_VPMU,		/* shown exactly when the domain has a virtual PMU */
};

struct cpuid_feature {
	uint32_t leaf, sub;
	enum cpuid_reg reg;
	unsigned bit;
	const char *name;
	enum cpuid_offer offer;
	uint32_t msr;		/* an MSR that exists exactly when the bit is set (0: none) */
	const char *why;	/* for a hidden bit: what is missing */
};

/* A register of feature bits: every bit not offered in the table is cleared. */
struct cpuid_feature_reg {
	uint32_t leaf, sub;
	enum cpuid_reg reg;
};

extern const struct cpuid_feature cpuid_features[];
extern const unsigned cpuid_feature_count;
extern const struct cpuid_feature_reg cpuid_feature_regs[];
extern const unsigned cpuid_feature_reg_count;

/* The guest's view of a feature register from the host's value; false: no feature register. */
bool cpuid_filter(uint32_t leaf, uint32_t sub, enum cpuid_reg reg, bool vpmu, uint32_t *val);

#endif
