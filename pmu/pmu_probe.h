/* What physical PMU this machine has, found by programming a counter and watching it move. */
#ifndef PERFVISOR_PMU_PMU_PROBE_H
#define PERFVISOR_PMU_PMU_PROBE_H

#include <stdbool.h>
#include <stdint.h>

struct pmu_hw_info {
	/* CPUID.0AH as the CPU reports it (SDM Vol. 3B 20.2.1-20.2.2). */
	unsigned version, num_gp, gp_width, num_fixed, fixed_width;
	uint32_t unavailable_events;	/* CPUID.0AH:EBX, a set bit = event NOT available */
	/* The behaviour test: an instructions-retired counter ran over a known loop. */
	bool works;
	uint64_t probe_count;
	const char *why_not;		/* when !works: the reason, in words */
};

extern struct pmu_hw_info pmu_hw;

void pmu_probe(void);

#endif
