/* Exact counts through the trapped virtual PMU: a loop of N iterations of K instructions, on GP and fixed counters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/rt/rt.h"

#define PERFEVTSEL0	0x186
#define PMC0		0xC1
#define PMC1		0xC2
#define FIXED_CTR0	0x309
#define FIXED_CTRL	0x38D
#define GLOBAL_CTRL	0x38F
#define EVTSEL_USR	(1u << 16)
#define EVTSEL_OS	(1u << 17)
#define EVTSEL_EN	(1u << 22)
#define EV_INSTRUCTIONS	0xC0
#define EV_BRANCHES	0xC4
#define LOOP_INSNS	4	/* nop; nop; dec; jnz */

/*
 * The counting window, all in one asm block so its length is known: the WRMSR that starts
 * counting retires while counting (1), then mov (1), the loop (4 per iteration, n >= 1), and
 * mov, xor, xor before the WRMSR that stops it (3): n * 4 + 5 instructions, n branches (jnz).
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

static int failures, checks;

static void report(int ok, const char *name, uint64_t got, uint64_t want)
{
	checks++;
	if (!ok)
		failures++;
	printf("%s %d - %s: measured %llu expected %llu\n", ok ? "ok" : "not ok", checks, name,
	       (unsigned long long)got, (unsigned long long)want);
	printf("{\"event\": \"%s\", \"measured\": %llu, \"expected\": %llu}\n", name,
	       (unsigned long long)got, (unsigned long long)want);
}

static void gp_count(const char *name, uint32_t event, uint64_t n, uint64_t want)
{
	rt_wrmsr(PMC0, 0);
	window(PERFEVTSEL0, event | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN, n);
	report(rt_rdmsr(PMC0) == want && rt_rdpmc(0) == want, name, rt_rdmsr(PMC0), want);
}

int main(int argc, char **argv)
{
	uint64_t n = 1000;
	struct rt_cpuid_regs a = rt_cpuid(0xA, 0);

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "n=", 2))
			n = strtoull(argv[i] + 2, NULL, 0);
	printf("vpmu_count: CPUID.0AH eax=%#x ebx=%#x edx=%#x, n=%llu\n", a.eax, a.ebx, a.edx,
	       (unsigned long long)n);
	if ((a.eax & 0xFF) < 2) {
		printf("not ok 1 - no architectural PMU version 2 in CPUID.0AH\n");
		return 1;
	}
	rt_wrmsr(GLOBAL_CTRL, 0xF);
	gp_count("instructions-gp", EV_INSTRUCTIONS, n, n * LOOP_INSNS + WINDOW_CONSTANT);
	gp_count("branches-gp", EV_BRANCHES, n, n);
	gp_count("instructions-gp-2n", EV_INSTRUCTIONS, 2 * n, 2 * n * LOOP_INSNS + WINDOW_CONSTANT);

	/* Fixed counter 0 (instructions) at OS and USR, started and stopped by GLOBAL_CTRL bit 32. */
	rt_wrmsr(FIXED_CTR0, 0);
	rt_wrmsr(FIXED_CTRL, 0x3);
	rt_wrmsr(GLOBAL_CTRL, 0);
	window(GLOBAL_CTRL, 1ull << 32, n);
	report(rt_rdpmc(1u << 30) == n * LOOP_INSNS + WINDOW_CONSTANT, "instructions-fixed0",
	       rt_rdpmc(1u << 30), n * LOOP_INSNS + WINDOW_CONSTANT);
	printf("vpmu_count: %d checks, %d failed\n", checks, failures);
	return failures;
}
