/* Soft PMU isolation: a watcher's a-mode page never moves while a busy neighbour runs on its PCPU. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/perfvisor/hypercall.h"
#include "guest-stub/lib/report.h"
#include "guest-stub/tests/soft_guest.h"
#include "include/perfvisor/pmu.h"

#define ROUNDS_MAX	64
/* IA32_PERFEVTSELx: instructions retired (SDM Vol. 3B table 20-1), USR, OS, EN (20.2.1.1). */
#define EVT_INSTRUCTIONS	(0xC0 | 1u << 16 | 1u << 17 | 1u << 22)

static uint8_t area[PV_PMU_AREA_STRIDE] __attribute__((aligned(4096)));
#define PAGE	((volatile struct pv_vcpu_area *)area)

static const struct pv_control count_instructions = {
	.ncounters = 1,
	.evtsel = { EVT_INSTRUCTIONS },
};
static const struct pv_control nothing;

static bool start_counting(void)
{
	return rt_vmcall(HC_PMU_SETUP, (uintptr_t)area, 1) == 0 &&
	       rt_vmcall(HC_PMU_RESUME, (uintptr_t)&count_instructions, 0) == 0;
}

struct window {
	uint64_t delta;		/* soft_phys[0] at the end minus at the start */
	bool descheduled;	/* tsc.start_vcpu changed: the VCPU was switched out and back in */
};

/*
 * Reads the page's soft_phys[0] and tsc.start_vcpu, runs k turns of DEC/JNZ, reads them again.
 * The first load's value excludes itself; the second's includes it, the second MOV, the MOV
 * to RCX and the 2k loop instructions: 2k + 3 retired between the reads, whoever ran beside.
 */
static struct window watch_window(uint64_t k)
{
	uint64_t delta, start0, start1;

	__asm__ volatile("mov %c[phys](%[a]), %%r8\n\t"
			 "mov %c[start](%[a]), %[s0]\n\t"
			 "mov %[k], %%rcx\n"
			 "1:\tdec %%rcx\n\t"
			 "jnz 1b\n\t"
			 "mov %c[phys](%[a]), %%rax\n\t"
			 "mov %c[start](%[a]), %[s1]\n\t"
			 "sub %%r8, %%rax"
			 : "=&a"(delta), [s0] "=&r"(start0), [s1] "=&r"(start1)
			 : [a] "r"(area), [k] "r"(k),
			   [phys] "i"(offsetof(struct pv_vcpu_area, soft_phys)),
			   [start] "i"(offsetof(struct pv_vcpu_area, tsc.start_vcpu))
			 : "rcx", "r8", "memory", "cc");
	return (struct window){ delta, start0 != start1 };
}

static int case_watch(uint64_t rounds, uint64_t k)
{
	struct window w[ROUNDS_MAX];
	unsigned exact = 0, switched = 0;

	if (rounds > ROUNDS_MAX)
		rounds = ROUNDS_MAX;
	report(start_counting(), "watch: SETUP and RESUME of an a-mode instructions counter");
	for (uint64_t r = 0; r < rounds; r++)
		w[r] = watch_window(k);
	/* Counting stops before printing: stepping newlib's printf takes long. */
	rt_vmcall(HC_PMU_RESUME, (uintptr_t)&nothing, 0);
	for (uint64_t r = 0; r < rounds; r++) {
		exact += w[r].delta == 2 * k + 3;
		switched += w[r].descheduled && w[r].delta == 2 * k + 3;
		if (w[r].delta != 2 * k + 3)
			printf("soft_watch: window %llu moved by %llu (want %llu)%s\n",
			       (unsigned long long)r, (unsigned long long)w[r].delta,
			       (unsigned long long)(2 * k + 3),
			       w[r].descheduled ? ", descheduled in it" : "");
	}
	report(exact == rounds, "watch: %u of %llu windows moved by exactly their own 2k + 3",
	       exact, (unsigned long long)rounds);
	/* Without a switch inside a window nothing was shown: the row's scenario makes many. */
	report(switched > 0, "watch: %u windows spanned a deschedule and stayed exact", switched);
	return report_summary();
}

/* The neighbour: counts its own instructions into its page, as fast as stepping goes. */
static int case_busy(uint64_t turns)
{
	report(start_counting(), "busy: SETUP and RESUME of an a-mode instructions counter");
	for (uint64_t i = 0; i < turns; i++)
		__asm__ volatile("" : : : "memory");
	rt_vmcall(HC_PMU_RESUME, (uintptr_t)&nothing, 0);
	return report_summary();
}

int main(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "case=watch"))
			return case_watch(soft_arg(argc, argv, "rounds", 20),
					  soft_arg(argc, argv, "k", 1000));
		if (!strcmp(argv[i], "case=busy"))
			return case_busy(soft_arg(argc, argv, "turns", 100000));
	}
	printf("soft_watch: say case=watch or case=busy\n");
	return 1;
}
