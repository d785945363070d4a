/* Speculative-execution mitigations between domains: what this CPU enumerates and what is done. */
#ifndef PERFVISOR_HV_SPEC_H
#define PERFVISOR_HV_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "include/x86/msr.h"

/* CPUID.(EAX=7,ECX=0):EDX bits (SDM Vol. 2A CPUID; Intel's speculative-execution guidance). */
#define CPUID7_EDX_MD_CLEAR		(1u << 10)
#define CPUID7_EDX_IBRS_IBPB		(1u << 26)
#define CPUID7_EDX_L1D_FLUSH		(1u << 28)
#define CPUID7_EDX_ARCH_CAPABILITIES	(1u << 29)

/* IA32_ARCH_CAPABILITIES bits (SDM Vol. 4 table 2-2). */
#define ARCH_CAP_RDCL_NO		(1ull << 0)
#define ARCH_CAP_SKIP_L1DFL_VMENTRY	(1ull << 3)
#define ARCH_CAP_MDS_NO			(1ull << 5)

struct spec_policy {
	bool ibpb_on_domain_switch;	/* IA32_PRED_CMD.IBPB when a PCPU goes to another domain */
	bool l1d_flush_on_entry;	/* IA32_FLUSH_CMD.L1D_FLUSH before every VM entry (L1TF) */
	bool verw_on_entry;		/* VERW clears CPU buffers before every VM entry (MDS) */
};

extern struct spec_policy spec_policy;

/*
 * The policy for a CPU with CPUID.7.0:EDX cpuid7_edx and, where it enumerates the MSR,
 * IA32_ARCH_CAPABILITIES arch_caps (ignored otherwise). A pure decision: unit-tested.
 */
struct spec_policy spec_decide(uint32_t cpuid7_edx, uint64_t arch_caps);
/* One line saying what is done, into buf. */
void spec_describe(const struct spec_policy *p, char *buf, size_t size);
/* Reads this CPU's enumeration, sets spec_policy and prints it (boot CPU; all PCPUs are alike). */
void spec_init(void);
/* Before a VM entry; at a switch to a VCPU of another domain than this PCPU ran last. */
void spec_before_entry(void);
void spec_domain_switch(void);

#endif
