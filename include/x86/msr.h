/* Architectural MSRs outside the PMU (SDM Vol. 4 table 2-2); include/x86/pmu_msr.h has the PMU's. */
#ifndef PERFVISOR_X86_MSR_H
#define PERFVISOR_X86_MSR_H

/* Plain numbers: the guests' start-up assembly includes this file. */
#define MSR_IA32_TSC		0x10
#define MSR_EFER		0xC0000080
#define MSR_GS_BASE		0xC0000101

/* IA32_EFER.LME: IA-32e mode enable (SDM Vol. 3A 2.2.1). */
#define EFER_LME		0x100

#endif
