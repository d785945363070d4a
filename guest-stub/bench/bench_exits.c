/* Path lengths of trapped operations and of one soft-PMU single-step, measured with RDTSC. */
#include <stdint.h>

#include "guest-stub/bench/bench.h"
#include "include/perfvisor/hypercall.h"
#include "include/x86/pmu_msr.h"

/* The counted loops run SHORT_ITERS and LONG_ITERS times; their difference is what counts. */
#define SHORT_ITERS	2
#define LONG_ITERS	10
#define STEPPED_INSNS	(4 * (LONG_ITERS - SHORT_ITERS))
/* A counted loop run whole: its turns cost no exit of their own. */
#define WHOLE_ITERS	10000

static struct bench_series empty, series, shorter;

/*
 * n iterations of nop; nop; sub $1; jnz: 4 n + 1 instructions (n >= 1), one branch in four. SUB,
 * not DEC: the soft PMU runs a turn of it a block, one exit a turn (a DEC; JNZ loop is counted
 * from its register, all turns one block: loop4_dec() below).
 */
static inline void loop4(uint64_t n)
{
	__asm__ volatile("mov %0, %%rsi\n"
			 "1:\tnop\n\t"
			 "nop\n\t"
			 "sub $1, %%rsi\n\t"
			 "jnz 1b"
			 : : "r"(n) : "rsi", "cc");
}

/* The same with DEC: a counted loop (docs/soft-pmu.md). */
static inline void loop4_dec(uint64_t n)
{
	__asm__ volatile("mov %0, %%rsi\n"
			 "1:\tnop\n\t"
			 "nop\n\t"
			 "dec %%rsi\n\t"
			 "jnz 1b"
			 : : "r"(n) : "rsi", "cc");
}

/*
 * The soft backend counts the guest in blocks (and single steps) while a counter counts
 * instructions: every block costs a VM exit at its breakpoint, its counting, the next block's
 * decoding and an entry. soft-step: per counted instruction of a loop of 4 run a turn a block
 * (the longer series' extra spans over its extra instructions, less the instruction itself);
 * soft-loop: the extra ticks of a counted loop run whole, its instructions included.
 */
static void step_cost(void)
{
	uint64_t base;

	rt_wrmsr(MSR_IA32_PERFEVTSEL0, ARCH_EVENT_INST_RETIRED | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN);
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1);
	BENCH_MEASURE(&shorter, loop4(SHORT_ITERS));
	BENCH_MEASURE(&series, loop4(LONG_ITERS));
	base = bench_median(&shorter);
	/* A backend with a real PMU counts without stepping: no step to measure then. */
	if (bench_median(&series) - base < 100 * STEPPED_INSNS) {
		bench_na("soft-step", "the loop was not single-stepped: not the soft PMU backend");
		bench_na("soft-loop", "the loop was not single-stepped: not the soft PMU backend");
	} else {
		for (int i = 0; i < BENCH_REPS; i++)
			series.span[i] = (series.span[i] - base) / STEPPED_INSNS - 1;
		bench_report("soft-step", &series, 0);
		BENCH_MEASURE(&shorter, loop4_dec(SHORT_ITERS));
		BENCH_MEASURE(&series, loop4_dec(WHOLE_ITERS));
		bench_report("soft-loop", &series, bench_median(&shorter));
	}
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	rt_wrmsr(MSR_IA32_PERFEVTSEL0, 0);
}

int main(void)
{
	uint64_t base;

	BENCH_MEASURE(&empty, );
	base = bench_median(&empty);
	BENCH_MEASURE(&series, rt_vmcall(HC_VCPU_ID, 0, 0));
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
