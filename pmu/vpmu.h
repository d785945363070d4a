/* The guest-visible architectural PMU of one VCPU: state, MSR/RDPMC emulation, and event counting. */
#ifndef PERFVISOR_PMU_VPMU_H
#define PERFVISOR_PMU_VPMU_H

#include <stdbool.h>
#include <stdint.h>

#include "include/x86/pmu_msr.h"

#define VPMU_MAX_GP	8
#define VPMU_MAX_FIXED	3

/* The events perfvisor can count (exactly, on the soft backend). */
enum vpmu_event {
	VPMU_EV_NONE = -1,		/* programmed, but not an event this backend counts */
	VPMU_EV_INSTRUCTIONS = 0,	/* INST_RETIRED.ANY (0xC0), fixed counter 0 */
	VPMU_EV_BRANCHES,		/* BR_INST_RETIRED.ALL_BRANCHES (0xC4) */
	VPMU_EV_CORE_CYCLES,		/* CPU_CLK_UNHALTED.CORE (0x3C), fixed counter 1 */
	VPMU_EV_REF_CYCLES,		/* CPU_CLK_UNHALTED.REF (0x3C/0x01), fixed counter 2 */
	VPMU_EV_COUNT,
};

/* What one domain's guests are shown (CPUID.0AH) and allowed to program. */
struct vpmu_config {
	bool enabled;			/* false: pmu=off, CPUID.0AH all zero, every PMU MSR #GP */
	unsigned version;		/* architectural perfmon version shown (2) */
	unsigned num_gp, num_fixed;	/* <= VPMU_MAX_GP, VPMU_MAX_FIXED */
	unsigned width;			/* counter width in bits (48) */
	/* CPUID.0AH:EBX: bit i set = architectural event i NOT available (SDM Vol. 3B 20.2.1.2). */
	uint32_t unavailable;
};

struct vpmu {
	const struct vpmu_config *cfg;
	uint64_t evtsel[VPMU_MAX_GP];	/* IA32_PERFEVTSELx as written */
	uint64_t pmc[VPMU_MAX_GP];	/* counter values, width bits */
	uint64_t fixed_ctrl;		/* IA32_FIXED_CTR_CTRL */
	uint64_t fixed[VPMU_MAX_FIXED];
	uint64_t global_ctrl, global_status;
};

/* Counter values are cfg->width bits wide (CPUID.0AH:EAX[23:16] and EDX[12:5]); width < 64. */
static inline uint64_t vpmu_width_mask(const struct vpmu_config *cfg)
{
	return (1ull << cfg->width) - 1;
}

/* The GP counters the guest has, as IA32_PERF_GLOBAL_* bits (SDM Vol. 3B 20.2.2); none if off. */
static inline uint64_t vpmu_gp_bits(const struct vpmu_config *cfg)
{
	return cfg->enabled ? (1ull << cfg->num_gp) - 1 : 0;
}

/* The fixed counters the guest has, as IA32_PERF_GLOBAL_* bits; none if off. */
static inline uint64_t vpmu_fixed_bits(const struct vpmu_config *cfg)
{
	return cfg->enabled ? ((1ull << cfg->num_fixed) - 1) << GLOBAL_FIXED_SHIFT : 0;
}

enum vpmu_result {
	VPMU_OK,
	VPMU_GP,		/* the access raises #GP, as on hardware */
	VPMU_NOT_PMU,		/* not a PMU MSR: the caller handles it */
};

/* CPUID.0AH:EBX bit of each event (set = not available), for the allow-list. */
extern const uint32_t vpmu_event_ebx_bit[VPMU_EV_COUNT];

/*
 * Power-on state: all zero except IA32_PERF_GLOBAL_CTRL, whose GP counter enables are set
 * (SDM Vol. 3A table 10-1: "Sets bits n-1:0 and clears the upper bits", n GP counters).
 */
void vpmu_reset(struct vpmu *p, const struct vpmu_config *cfg);
/* CPUID leaf 0AH for this configuration. */
void vpmu_cpuid(const struct vpmu_config *cfg, uint32_t *eax, uint32_t *ebx, uint32_t *ecx,
		uint32_t *edx);
/* Whether msr is a register of a version 2 PMU (present in this VCPU's or not). */
bool vpmu_msr_known(uint32_t msr);
enum vpmu_result vpmu_rdmsr(struct vpmu *p, uint32_t msr, uint64_t *val);
/* What vpmu_wrmsr would answer (VPMU_OK: it would take the write), without writing. */
enum vpmu_result vpmu_wrmsr_check(const struct vpmu *p, uint32_t msr, uint64_t val);
enum vpmu_result vpmu_wrmsr(struct vpmu *p, uint32_t msr, uint64_t val);
/* Whether writing val to msr leaves what every counter counts as it is (an idle event select). */
bool vpmu_wrmsr_inert(const struct vpmu *p, uint32_t msr, uint64_t val);
/* RDPMC with ECX = ecx at privilege cpl with CR4.PCE = pce (SDM Vol. 2B RDPMC). */
enum vpmu_result vpmu_rdpmc(struct vpmu *p, uint32_t ecx, unsigned cpl, bool pce, uint64_t *val);

/*
 * Counting (used by the soft backend, and by the arch backend to fold in hardware deltas):
 * n events of kind ev happened at privilege cpl. Every enabled counter programmed for ev
 * whose OS/USR bits match cpl advances; counters that wrap set their GLOBAL_STATUS bit.
 * Returns the counters (GLOBAL_STATUS bit layout) that overflowed with their PMI bit set.
 */
uint64_t vpmu_count(struct vpmu *p, enum vpmu_event ev, uint64_t n, unsigned cpl);
/* What an IA32_PERFEVTSELx value counts at cpl (EN, OS/USR, event and umask). */
enum vpmu_event vpmu_evtsel_event(uint64_t sel, unsigned cpl);
/* Bit ev set when some enabled counter counts ev at cpl (the soft backend steps only then). */
uint32_t vpmu_active(const struct vpmu *p, unsigned cpl);
/* Events of kind ev still to come at cpl before the first counter overflows (UINT64_MAX: none). */
uint64_t vpmu_until_overflow(const struct vpmu *p, enum vpmu_event ev, unsigned cpl);

#endif
