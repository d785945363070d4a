/* Architectural MSRs outside the PMU and VMX (SDM Vol. 4 table 2-2); include/x86/pmu_msr.h has the PMU's. */
#ifndef PERFVISOR_X86_MSR_H
#define PERFVISOR_X86_MSR_H

#include "include/x86/bit.h"

/* Plain numbers: the guests' start-up assembly includes this file. */
#define MSR_IA32_TSC			0x10
#define MSR_IA32_APIC_BASE		0x1B
#define MSR_IA32_FEATURE_CONTROL	0x3A
#define MSR_IA32_TSC_ADJUST		0x3B
#define MSR_IA32_SPEC_CTRL		0x48
#define MSR_IA32_PRED_CMD		0x49
#define MSR_IA32_BIOS_SIGN_ID		0x8B
#define MSR_IA32_ARCH_CAPABILITIES	0x10A
#define MSR_IA32_FLUSH_CMD		0x10B
#define MSR_IA32_SYSENTER_CS		0x174
#define MSR_IA32_SYSENTER_ESP		0x175
#define MSR_IA32_SYSENTER_EIP		0x176
#define MSR_IA32_MCG_CAP		0x179
#define MSR_IA32_MCG_STATUS		0x17A
#define MSR_IA32_MCG_CTL		0x17B
#define MSR_IA32_MISC_ENABLE		0x1A0
#define MSR_IA32_PAT			0x277
#define MSR_IA32_MC0_CTL		0x400
#define MSR_IA32_DS_AREA		0x600
#define MSR_IA32_TSC_DEADLINE		0x6E0
#define MSR_EFER			0xC0000080
#define MSR_STAR			0xC0000081
#define MSR_LSTAR			0xC0000082
#define MSR_CSTAR			0xC0000083
#define MSR_FMASK			0xC0000084
#define MSR_FS_BASE			0xC0000100
#define MSR_GS_BASE			0xC0000101
#define MSR_KERNEL_GS_BASE		0xC0000102
#define MSR_IA32_TSC_AUX		0xC0000103

/* IA32_EFER: syscall enable, IA-32e mode enable and active, execute-disable (SDM Vol. 3A 2.2.1). */
#define EFER_SCE			X86_BIT(0)
#define EFER_LME			X86_BIT(8)
#define EFER_LMA			X86_BIT(10)
#define EFER_NXE			X86_BIT(11)

/* IA32_MISC_ENABLE bits (SDM Vol. 4 table 2-2). */
#define MISC_ENABLE_FAST_STRINGS	X86_BIT(0)
#define MISC_ENABLE_TCC			X86_BIT(3)	/* automatic thermal control circuit */
#define MISC_ENABLE_PERFMON		X86_BIT(7)	/* performance monitoring available */
#define MISC_ENABLE_BTS_UNAVAIL		X86_BIT(11)
#define MISC_ENABLE_PEBS_UNAVAIL	X86_BIT(12)
#define MISC_ENABLE_EIST		X86_BIT(16)	/* enhanced Intel SpeedStep */
#define MISC_ENABLE_MONITOR_FSM		X86_BIT(18)	/* MONITOR/MWAIT */
#define MISC_ENABLE_LIMIT_CPUID		X86_BIT(22)	/* basic CPUID leaves end at 2 */
#define MISC_ENABLE_XTPR_OFF		X86_BIT(23)	/* xTPR messages disabled */
#define MISC_ENABLE_XD_DISABLE		X86_BIT(34)	/* CPUID hides execute-disable */

#endif
