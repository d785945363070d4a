/* Exact counts through the trapped virtual PMU: a loop of N iterations of K instructions, on GP and fixed counters. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/rt/rt.h"

#define PERFEVTSEL0	0x186
#define PMC0		0xC1
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
/* expect=more: vcpu accounting adds the hypervisor's work, so counts may only exceed the loop's. */
static bool expect_more;

static void report(const char *name, uint64_t got, uint64_t want)
{
	bool ok = expect_more ? got >= want : got == want;

	checks++;
	if (!ok)
		failures++;
	printf("%s %d - %s: measured %llu expected %llu%s\n", ok ? "ok" : "not ok", checks, name,
	       (unsigned long long)got, (unsigned long long)want, expect_more ? " or more" : "");
	printf("{\"event\": \"%s\", \"measured\": %llu, \"expected\": %llu, \"extra\": %llu}\n",
	       name, (unsigned long long)got, (unsigned long long)want,
	       (unsigned long long)(got - want));
}

/* One counting window on GP counter 0; RDMSR and RDPMC must agree. */
static void gp_count(const char *name, uint32_t event, uint64_t n, uint64_t want)
{
	rt_wrmsr(PMC0, 0);
	window(PERFEVTSEL0, event | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN, n);
	if (rt_rdpmc(0) != rt_rdmsr(PMC0))
		printf("not ok - RDPMC and RDMSR disagree: %llu %llu\n",
		       (unsigned long long)rt_rdpmc(0), (unsigned long long)rt_rdmsr(PMC0));
	report(name, rt_rdmsr(PMC0), want);
}

/* Fixed counter 0 (instructions) at OS and USR, started and stopped by GLOBAL_CTRL bit 32. */
static void fixed_count(uint64_t n)
{
	rt_wrmsr(FIXED_CTR0, 0);
	rt_wrmsr(FIXED_CTRL, 0x3);
	rt_wrmsr(GLOBAL_CTRL, 0);
	window(GLOBAL_CTRL, 1ull << 32, n);
	report("instructions-fixed0", rt_rdpmc(1u << 30), n * LOOP_INSNS + WINDOW_CONSTANT);
	rt_wrmsr(GLOBAL_CTRL, 0xF);
}

int main(int argc, char **argv)
{
	uint64_t n = 1000;
	const char *only = "all";
	struct rt_cpuid_regs a = rt_cpuid(0xA, 0);

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "n=", 2))
			n = strtoull(argv[i] + 2, NULL, 0);
		else if (!strncmp(argv[i], "only=", 5))
			only = argv[i] + 5;
		else if (!strcmp(argv[i], "expect=more"))
			expect_more = true;
	}
	printf("vpmu_count: CPUID.0AH eax=%#x ebx=%#x edx=%#x, n=%llu, only=%s\n", a.eax, a.ebx,
	       a.edx, (unsigned long long)n, only);
	if ((a.eax & 0xFF) < 2 || !n) {
		printf("not ok 1 - no architectural PMU version 2 in CPUID.0AH (or n=0)\n");
		return 1;
	}
	rt_wrmsr(GLOBAL_CTRL, 0xF);
	if (!strcmp(only, "all") || !strcmp(only, "instructions")) {
		gp_count("instructions-gp", EV_INSTRUCTIONS, n, n * LOOP_INSNS + WINDOW_CONSTANT);
		gp_count("instructions-gp-2n", EV_INSTRUCTIONS, 2 * n,
			 2 * n * LOOP_INSNS + WINDOW_CONSTANT);
	}
	if (!strcmp(only, "all") || !strcmp(only, "branches"))
		gp_count("branches-gp", EV_BRANCHES, n, n);
	if (!strcmp(only, "all") || !strcmp(only, "fixed"))
		fixed_count(n);
	printf("vpmu_count: %d checks, %d failed\n", checks, failures);
	return failures;
}
