/* Exact counts through the trapped virtual PMU: a loop of N iterations of K instructions, on GP and fixed counters. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/lib/vpmu_test.h"
#include "guest-stub/rt/rt.h"

#define LOOP_INSNS	4	/* nop; nop; dec; jnz */

/*
 * The counting window, all in one asm block so its length is known: the WRMSR that starts
 * counting retires before it counts (0), then mov (1), the loop (4 per iteration, n >= 1),
 * mov, xor, xor (3) and the WRMSR that stops it, which retires still counting (1), as on
 * Intel hardware (docs/soft-pmu.md): n * 4 + 5 instructions, n branches (jnz).
 */
#define WINDOW_CONSTANT	5

static void window(uint32_t msr, uint64_t on, uint64_t n)
{
	uint32_t lo = (uint32_t)on, hi = (uint32_t)(on >> 32);

	__asm__ volatile("wrmsr\n\t"
			 "mov %3, %%rsi\n"
			 "1:\tnop\n\t"
			 "nop\n\t"
			 "dec %%rsi\n\t"
			 "jnz 1b\n\t"
			 "mov %0, %%ecx\n\t"
			 "xor %%eax, %%eax\n\t"
			 "xor %%edx, %%edx\n\t"
			 "wrmsr"
			 : "+c"(msr), "+a"(lo), "+d"(hi)
			 : "r"(n)
			 : "rsi", "memory");
}

/* expect=more: vcpu accounting adds the hypervisor's work, so counts may only exceed the loop's. */
static bool expect_more;

/* One count, exact or (expect=more) at least the loop's, and its JSON line for the checks. */
static void count_report(const char *name, uint64_t got, uint64_t want)
{
	if (expect_more)
		report(got >= want, "%s: measured %llu expected %llu or more", name,
		       (unsigned long long)got, (unsigned long long)want);
	else
		report_value(name, got, want);
	printf("{\"event\": \"%s\", \"measured\": %llu, \"expected\": %llu, \"extra\": %llu}\n",
	       name, (unsigned long long)got, (unsigned long long)want,
	       (unsigned long long)(got - want));
}

/* One counting window on GP counter 0; RDMSR and RDPMC must agree. */
static void gp_count(const char *name, uint32_t event, uint64_t n, uint64_t want)
{
	uint64_t pmc, msr;

	rt_wrmsr(MSR_PMC0, 0);
	window(MSR_PERFEVTSEL0, event | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN, n);
	pmc = rt_rdpmc(0);
	msr = rt_rdmsr(MSR_PMC0);
	/* A check only when it fails, so that the other checks keep their numbers. */
	if (pmc != msr)
		report(false, "%s: RDPMC and RDMSR disagree: %llu %llu", name,
		       (unsigned long long)pmc, (unsigned long long)msr);
	count_report(name, msr, want);
}

/* Fixed counter 0 (instructions) at OS and USR, started and stopped by GLOBAL_CTRL bit 32. */
static void fixed_count(uint64_t n)
{
	rt_wrmsr(MSR_FIXED_CTR0, 0);
	rt_wrmsr(MSR_FIXED_CTR_CTRL, FIXED_OS | FIXED_USR);
	rt_wrmsr(MSR_GLOBAL_CTRL, 0);
	window(MSR_GLOBAL_CTRL, GLOBAL_FIXED(0), n);
	count_report("instructions-fixed0", rt_rdpmc(RDPMC_FIXED),
		     n * LOOP_INSNS + WINDOW_CONSTANT);
	rt_wrmsr(MSR_GLOBAL_CTRL, 0xF);
}

/* One set of the windows that only= selects. */
static void count_windows(uint64_t n, const char *only)
{
	if (!strcmp(only, "all") || !strcmp(only, "instructions")) {
		gp_count("instructions-gp", EV_INSTRUCTIONS, n, n * LOOP_INSNS + WINDOW_CONSTANT);
		gp_count("instructions-gp-2n", EV_INSTRUCTIONS, 2 * n,
			 2 * n * LOOP_INSNS + WINDOW_CONSTANT);
	}
	if (!strcmp(only, "all") || !strcmp(only, "branches"))
		gp_count("branches-gp", EV_BRANCHES, n, n);
	if (!strcmp(only, "all") || !strcmp(only, "fixed"))
		fixed_count(n);
}

int main(int argc, char **argv)
{
	uint64_t n = 1000, rounds = 1;
	const char *only = "all";
	struct rt_cpuid_regs a = rt_cpuid(0xA, 0);

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "n=", 2))
			n = strtoull(argv[i] + 2, NULL, 0);
		else if (!strncmp(argv[i], "rounds=", 7))
			rounds = strtoull(argv[i] + 7, NULL, 0);
		else if (!strncmp(argv[i], "only=", 5))
			only = argv[i] + 5;
		else if (!strcmp(argv[i], "expect=more"))
			expect_more = true;
	}
	printf("vpmu_count: CPUID.0AH eax=%#x ebx=%#x edx=%#x, n=%llu, rounds=%llu, only=%s\n",
	       a.eax, a.ebx, a.edx, (unsigned long long)n, (unsigned long long)rounds, only);
	if ((a.eax & 0xFF) < 2 || !n) {
		report(false, "no architectural PMU version 2 in CPUID.0AH (or n=0)");
		return report_summary();
	}
	rt_wrmsr(MSR_GLOBAL_CTRL, 0xF);
	/* rounds=R: the same windows R times, to keep counting beside a long-running domain. */
	for (uint64_t r = 0; r < rounds; r++)
		count_windows(n, only);
	return report_summary();
}
