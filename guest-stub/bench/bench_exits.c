/* Path lengths of trapped operations and of one soft-PMU single-step, measured with RDTSC. */
#include <stdint.h>

#include "guest-stub/bench/bench.h"
#include "include/perfvisor/hypercall.h"
#include "include/x86/pmu_msr.h"

/* The stepped loop runs SHORT_ITERS and LONG_ITERS times; their difference is what counts. */
#define SHORT_ITERS	2
#define LONG_ITERS	10
#define STEPPED_INSNS	(4 * (LONG_ITERS - SHORT_ITERS))

static struct bench_series empty, series, shorter;

/* n iterations of nop; nop; dec; jnz: 4 n + 1 instructions (n >= 1), one branch in four. */
static inline void loop4(uint64_t n)
{
	__asm__ volatile("mov %0, %%rsi\n"
			 "1:\tnop\n\t"
			 "nop\n\t"
			 "dec %%rsi\n\t"
			 "jnz 1b"
			 : : "r"(n) : "rsi", "cc");
}

/*
 * The soft backend single-steps the guest while a counter counts instructions: every guest
 * instruction costs a #DB exit, its handling and an entry. Per step, the longer loop's extra
 * spans divided by its extra instructions, less the instruction itself.
 */
static void step_cost(void)
{
	uint64_t base;

	rt_wrmsr(MSR_IA32_PERFEVTSEL0, ARCH_EVENT_INST_RETIRED | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN);
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1);
	BENCH_MEASURE(&shorter, loop4(SHORT_ITERS));
	BENCH_MEASURE(&series, loop4(LONG_ITERS));
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	rt_wrmsr(MSR_IA32_PERFEVTSEL0, 0);
	base = bench_median(&shorter);
	/* A backend with a real PMU counts without stepping: no step to measure then. */
	if (bench_median(&series) - base < 100 * STEPPED_INSNS) {
		bench_na("soft-step", "the loop was not single-stepped: not the soft PMU backend");
		return;
	}
	for (int i = 0; i < BENCH_REPS; i++)
		series.span[i] = (series.span[i] - base) / STEPPED_INSNS - 1;
	bench_report("soft-step", &series, 0);
}

int main(void)
{
	uint64_t base;

	BENCH_MEASURE(&empty, );
	base = bench_median(&empty);
	BENCH_MEASURE(&series, bench_vmcall(HC_VCPU_ID, 0, 0));
	bench_report("null-hypercall", &series, base);
	BENCH_MEASURE(&series, rt_rdmsr(MSR_IA32_PMC0));
	bench_report("rdmsr-pmc0", &series, base);
	BENCH_MEASURE(&series, rt_wrmsr(MSR_IA32_PERFEVTSEL0, 0));
	bench_report("wrmsr-perfevtsel0", &series, base);
	BENCH_MEASURE(&series, rt_cpuid(0, 0));
	bench_report("cpuid", &series, base);
	step_cost();
	return 0;
}
