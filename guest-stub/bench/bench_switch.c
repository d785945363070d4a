/* Inter-domain switches for the benchmarks: N counters (a-mode or trapped vPMU), many yields. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/bench/bench.h"
#include "include/perfvisor/pmu.h"
#include "include/x86/pmu_msr.h"

#define COUNTS_BOTH	(EVTSEL_USR | EVTSEL_OS | EVTSEL_EN)
/* IA32_FIXED_CTR_CTRL: count at both rings (OS | USR). */
#define FIXED_BOTH	(FIXED_CTRL_OS | FIXED_CTRL_USR)
#define GP_COUNTERS	4
#define FIXED_COUNTERS	3

/* See bench_read.c: the shared page is a page of its own. */
static uint8_t shared_page[PV_PMU_AREA_STRIDE] __attribute__((aligned(PV_PMU_AREA_STRIDE)));

/*
 * a-mode: one resume loads a control with n cycle counters (cycles: the soft backend counts
 * them without single-stepping). n = 0 still sets up the shared page: the TSC is a-mode too.
 */
static void amode(unsigned n)
{
	struct pv_control c = { .ncounters = n };
	int64_t ret;

	if (n > PV_PMU_COUNTERS)
		bench_fail("switch", "more a-mode counters than the ABI has", n);
	for (unsigned i = 0; i < n; i++)
		c.evtsel[i] = ARCH_EVENT_CORE_CYCLES | COUNTS_BOTH;
	ret = rt_vmcall(HC_PMU_SETUP, (uint64_t)shared_page, 1);
	if (!ret)
		ret = rt_vmcall(HC_PMU_RESUME, (uint64_t)&c, 0);
	if (ret)
		bench_fail("switch", "a-mode set-up failed", ret);
}

/*
 * Trapped vPMU: the general counters count cycles, then the fixed ones in the order 1
 * (cycles), 2 (reference cycles), 0 (instructions: only the seventh counter single-steps).
 */
static void trapped(unsigned n)
{
	static const unsigned fixed_order[FIXED_COUNTERS] = { 1, 2, 0 };
	uint64_t fixed_ctrl = 0, global = 0;

	if (n > GP_COUNTERS + FIXED_COUNTERS)
		bench_fail("switch", "more counters than the vPMU has", n);
	for (unsigned i = 0; i < n && i < GP_COUNTERS; i++) {
		rt_wrmsr(MSR_IA32_PERFEVTSEL0 + i, ARCH_EVENT_CORE_CYCLES | COUNTS_BOTH);
		global |= 1ull << i;
	}
	for (unsigned k = 0; k + GP_COUNTERS < n; k++) {
		unsigned j = fixed_order[k];

		fixed_ctrl |= FIXED_BOTH << FIXED_CTRL_SHIFT(j);
		global |= 1ull << (GLOBAL_FIXED_SHIFT + j);
	}
	rt_wrmsr(MSR_IA32_FIXED_CTR_CTRL, fixed_ctrl);
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, global);
}

int main(int argc, char **argv)
{
	unsigned counters = 0, yields = 1000;
	const char *mode = "trap";

	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "mode=", 5) == 0)
			mode = argv[i] + 5;
		else if (strncmp(argv[i], "counters=", 9) == 0)
			counters = (unsigned)atoi(argv[i] + 9);
		else if (strncmp(argv[i], "yields=", 7) == 0)
			yields = (unsigned)atoi(argv[i] + 7);
	}
	if (strcmp(mode, "amode") == 0)
		amode(counters);
	else if (strcmp(mode, "trap") == 0)
		trapped(counters);
	else
		bench_fail("switch", "mode= is amode or trap", 0);
	printf("bench_switch: %u %s counters, %u yields\n", counters, mode, yields);
	/* Each yield ends the slice: the other domain on this PCPU runs, then this one again. */
	for (unsigned i = 0; i < yields; i++)
		rt_vmcall(HC_YIELD, 0, 0);
	return 0;
}
