/* What the vPMU test guests share: SDM constants, #GP-safe MSR and PMC access, a counted window. */
#ifndef GUEST_STUB_LIB_VPMU_TEST_H
#define GUEST_STUB_LIB_VPMU_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Architectural PMU MSRs (SDM Vol. 4 table 2-2), written down again from the SDM rather than
 * taken from include/x86/pmu_msr.h, so that a wrong number there is a failed check here.
 */
#define MSR_PMC0		0xC1
#define MSR_PERFEVTSEL0		0x186
#define MSR_FIXED_CTR0		0x309
#define MSR_PERF_CAPABILITIES	0x345
#define MSR_FIXED_CTR_CTRL	0x38D
#define MSR_GLOBAL_STATUS	0x38E
#define MSR_GLOBAL_CTRL		0x38F
#define MSR_GLOBAL_OVF_CTRL	0x390
#define MSR_A_PMC0		0x4C1

/* IA32_PERFEVTSELx (SDM Vol. 3B 20.2.1.1) and the events counted here (table 20-1). */
#define EVTSEL_USR		(1ull << 16)
#define EVTSEL_OS		(1ull << 17)
#define EVTSEL_INT		(1ull << 20)
#define EVTSEL_ANY		(1ull << 21)
#define EVTSEL_EN		(1ull << 22)
#define EV_INSTRUCTIONS		0xC0
#define EV_BRANCHES		0xC4

/* IA32_FIXED_CTR_CTRL: 4 bits per fixed counter (SDM Vol. 3B 20.2.2). */
#define FIXED_OS		0x1ull
#define FIXED_USR		0x2ull
#define FIXED_ANY		0x4ull
#define FIXED_PMI		0x8ull

/* IA32_PERF_GLOBAL_*: GP counter i is bit i, fixed counter j bit 32 + j (SDM Vol. 3B 20.2.2). */
#define GLOBAL_FIXED(j)		(1ull << (32 + (j)))
#define RDPMC_FIXED		(1u << 30)	/* SDM Vol. 2B RDPMC: ECX type 4000H */
#define PERF_CAP_FW_WRITE	(1ull << 13)	/* SDM Vol. 3B 20.2.6 */

/* What the README promises: version 2, 4 general and 3 fixed counters of 48 bits. */
#define VT_VERSION		2
#define VT_GP			4
#define VT_FIXED		3
#define VT_WIDTH		48
#define VT_TOP			(1ull << VT_WIDTH)
#define VT_ALL_CTRS		(((1ull << VT_GP) - 1) | ((1ull << VT_FIXED) - 1) << 32)

/* The PMU MSRs the guest has, with their power-on values (SDM Vol. 3A table 10-1). */
struct vt_msr {
	uint32_t msr;
	const char *name;
	uint64_t reset;
	bool read_only;		/* Vol. 4 table 2-2: GLOBAL_STATUS, PERF_CAPABILITIES */
};

extern const struct vt_msr vt_msrs[];
extern const size_t vt_nmsrs;

/* WRMSR(msr, on), VT_SLED NOPs from vt_sled, WRMSR(msr, 0): VT_WINDOW instructions count. */
void vt_window(uint32_t msr, uint64_t on);
extern const uint8_t vt_sled[];

#define VT_SLED		1100
/* The NOPs, the two XORs and the disabling WRMSR; not the enabling one (docs/soft-pmu.md). */
#define VT_WINDOW	(VT_SLED + 2 + 1)
#define VT_STR_(x)	#x
#define VT_STR(x)	VT_STR_(x)

/*
 * Puts the #GP handler that lets the accessors below fault: it skips their RDMSR, WRMSR or
 * RDPMC and counts the fault; any other #GP goes on to the runtime's gate as before.
 */
void vt_gp_install(void);

/* RDMSR: false when it raised #GP. */
bool vt_rdmsr(uint32_t msr, uint64_t *val);

/* WRMSR: false when it raised #GP. */
bool vt_wrmsr(uint32_t msr, uint64_t val);

/* RDPMC: false when it raised #GP. */
bool vt_rdpmc(uint32_t ecx, uint64_t *val);

/* RDMSR of an MSR that must be there; ~0 (wider than any counter) if it faulted. */
uint64_t vt_read(uint32_t msr);

/* Every counter stopped and zero, no event programmed, no overflow pending. */
void vt_pmu_quiet(void);

#endif
