/* Architectural performance-monitoring MSRs and bit fields (SDM Vol. 3B chapter 20, Vol. 4 table 2-2). */
#ifndef PERFVISOR_X86_PMU_MSR_H
#define PERFVISOR_X86_PMU_MSR_H

#define MSR_IA32_PMC0			0xC1
#define MSR_IA32_PERFEVTSEL0		0x186
#define MSR_IA32_FIXED_CTR0		0x309
#define MSR_IA32_PERF_CAPABILITIES	0x345
#define MSR_IA32_FIXED_CTR_CTRL		0x38D
#define MSR_IA32_PERF_GLOBAL_STATUS	0x38E
#define MSR_IA32_PERF_GLOBAL_CTRL	0x38F
#define MSR_IA32_PERF_GLOBAL_OVF_CTRL	0x390
#define MSR_IA32_A_PMC0			0x4C1

/* IA32_PERFEVTSELx fields, SDM Vol. 3B 20.2.1.1. */
#define EVTSEL_EVENT_MASK		0xFFull
#define EVTSEL_UMASK_SHIFT		8
#define EVTSEL_UMASK			(0xFFull << EVTSEL_UMASK_SHIFT)
#define EVTSEL_USR			(1ull << 16)
#define EVTSEL_OS			(1ull << 17)
#define EVTSEL_EDGE			(1ull << 18)
#define EVTSEL_PC			(1ull << 19)
#define EVTSEL_INT			(1ull << 20)
#define EVTSEL_ANY			(1ull << 21)
#define EVTSEL_EN			(1ull << 22)
#define EVTSEL_INV			(1ull << 23)
#define EVTSEL_CMASK_SHIFT		24
#define EVTSEL_CMASK			(0xFFull << EVTSEL_CMASK_SHIFT)
/* Vol. 4 table 2-2: bits 63:32 of IA32_PERFEVTSELx are reserved. */
#define EVTSEL_RESERVED			(0xFFFFFFFFull << 32)

/* IA32_FIXED_CTR_CTRL: one 4-bit field per fixed counter j, SDM Vol. 3B 20.2.2 and 20.2.3. */
#define FIXED_CTRL_SHIFT(j)		(4 * (j))
#define FIXED_CTRL_OS			0x1ull
#define FIXED_CTRL_USR			0x2ull
#define FIXED_CTRL_ANY			0x4ull
#define FIXED_CTRL_PMI			0x8ull

/* IA32_PERF_GLOBAL_*: GP counter i is bit i, fixed counter j is bit 32 + j (SDM Vol. 3B 20.2.2). */
#define GLOBAL_FIXED_SHIFT		32
#define GLOBAL_OVF_BUF			(1ull << 62)
#define GLOBAL_COND_CHGD		(1ull << 63)

/* IA32_PERF_CAPABILITIES.FW_WRITE: IA32_A_PMCx take full-width writes (SDM Vol. 3B 20.2.6). */
#define PERF_CAP_FW_WRITE		(1ull << 13)

/* RDPMC: ECX type 4000H (bit 30) selects the fixed counters (SDM Vol. 2B RDPMC). */
#define RDPMC_FIXED			(1u << 30)

/* Architectural events (event select | umask << 8), SDM Vol. 3B table 20-1. */
#define ARCH_EVENT_CORE_CYCLES		0x003C
#define ARCH_EVENT_INST_RETIRED		0x00C0
#define ARCH_EVENT_REF_CYCLES		0x013C
#define ARCH_EVENT_LLC_REF		0x4F2E
#define ARCH_EVENT_LLC_MISS		0x412E
#define ARCH_EVENT_BRANCH_RETIRED	0x00C4
#define ARCH_EVENT_BRANCH_MISS		0x00C5

#endif
