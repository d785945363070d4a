/* Debug registers are per VCPU: a hostile domain and the soft PMU's stepper never show in a watcher's. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/rt/rt.h"
#include "guest-stub/lib/report.h"
#include "guest-stub/tests/soft_guest.h"
#include "include/x86/dr.h"
#include "include/x86/pmu_msr.h"

/* Instructions retired at both rings (SDM Vol. 3B 20.2.1.1, table 20-1). */
#define EVTSEL_INSTRUCTIONS	(ARCH_EVENT_INST_RETIRED | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN)

#define DR_WRITE(n, v)	__asm__ volatile("mov %0, %%dr" #n : : "r"((uint64_t)(v)))
#define DR_READ(n, v)	__asm__ volatile("mov %%dr" #n ", %0" : "=r"(v))

static void dr_write_all(const uint64_t dr[4], uint64_t dr7)
{
	DR_WRITE(0, dr[0]);
	DR_WRITE(1, dr[1]);
	DR_WRITE(2, dr[2]);
	DR_WRITE(3, dr[3]);
	DR_WRITE(7, dr7);
}

/* How many of DR0-DR3 and DR7 differ from what this VCPU wrote. */
static unsigned dr_differ(const uint64_t dr[4], uint64_t dr7)
{
	uint64_t got[5];

	DR_READ(0, got[0]);
	DR_READ(1, got[1]);
	DR_READ(2, got[2]);
	DR_READ(3, got[3]);
	DR_READ(7, got[4]);
	return (got[0] != dr[0]) + (got[1] != dr[1]) + (got[2] != dr[2]) + (got[3] != dr[3]) +
	       (got[4] != dr7);
}

/* The #DB handler: counts the hit, keeps DR6, sets RF in the frame so the fault does not repeat. */
volatile uint64_t soft_db_hits, soft_db_dr6;
__asm__(".text\n"
	"soft_db_entry:\n\t"
	"push %rax\n\t"
	"mov %dr6, %rax\n\t"
	"mov %rax, soft_db_dr6(%rip)\n\t"
	"incq soft_db_hits(%rip)\n\t"
	"pop %rax\n\t"
	"orq $0x10000, 16(%rsp)\n\t"	/* RFLAGS.RF: SDM Vol. 3A 18.3.1.1 */
	"iretq\n");
void soft_db_entry(void);

static __attribute__((noinline)) void watched(void)
{
	__asm__ volatile("nop");
}

/*
 * case=watch: its own execute breakpoint in DR2 on watched(), unused values in DR0, DR1, DR3,
 * an instructions counter on (the soft PMU's stepper then borrows debug registers around it):
 * every call hits, and DR0-DR3/DR7 read back as written, whoever ran between.
 */
static int case_watch(unsigned rounds)
{
	const uint64_t dr[4] = { 0x1111000, 0x2222000, (uintptr_t)watched, 0x3333000 };
	const uint64_t dr7 = DR7_FIXED1 | DR7_L(2);
	unsigned differ = 0;

	rt_idt_set_gate(1, soft_db_entry, 0);
	dr_write_all(dr, dr7);
	rt_wrmsr(MSR_IA32_PERFEVTSEL0, EVTSEL_INSTRUCTIONS);
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 1);
	for (unsigned r = 0; r < rounds; r++) {
		watched();
		differ += dr_differ(dr, dr7);
	}
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	report(soft_db_hits == rounds, "watch: its own breakpoint fired %llu times in %u calls",
	       (unsigned long long)soft_db_hits, rounds);
	report(soft_db_dr6 & DR6_B(2), "watch: DR6 (%#llx) says breakpoint 2",
	       (unsigned long long)soft_db_dr6);
	report(differ == 0, "watch: %u reads of DR0-DR3/DR7 differed from its own values", differ);
	DR_WRITE(7, DR7_FIXED1);
	return report_summary();
}

/*
 * case=hostile: fills DR0-DR3 and DR7 with its own values (breakpoints on addresses it never
 * runs), changes them every turn, and reads them back: only ever its own.
 */
static int case_hostile(unsigned turns)
{
	unsigned differ = 0;
	uint64_t dr[4], dr7;

	for (unsigned t = 0; t < turns; t++) {
		for (unsigned k = 0; k < 4; k++)
			dr[k] = 0xdead0000ull + (t << 4) + k;
		dr7 = DR7_FIXED1 | (t & 1 ? 0xFF : 0x55);
		dr_write_all(dr, dr7);
		for (unsigned i = 0; i < 20; i++)
			differ += dr_differ(dr, dr7);
	}
	DR_WRITE(7, DR7_FIXED1);
	report(differ == 0, "hostile: %u reads of DR0-DR3/DR7 differed from its own values",
	       differ);
	return report_summary();
}

int main(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "case=watch"))
			return case_watch(soft_arg(argc, argv, "rounds", 2000));
		if (!strcmp(argv[i], "case=hostile"))
			return case_hostile(soft_arg(argc, argv, "turns", 2000));
	}
	printf("soft_dr: say case=watch or case=hostile\n");
	return 1;
}
