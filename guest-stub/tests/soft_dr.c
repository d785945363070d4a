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

/* How many of DR0-DR3, DR6 and DR7 differ from what this VCPU wrote (or its #DB left in DR6). */
static unsigned dr_differ(const uint64_t dr[4], uint64_t dr6, uint64_t dr7)
{
	uint64_t got[6];

	DR_READ(0, got[0]);
	DR_READ(1, got[1]);
	DR_READ(2, got[2]);
	DR_READ(3, got[3]);
	DR_READ(6, got[4]);
	DR_READ(7, got[5]);
	return (got[0] != dr[0]) + (got[1] != dr[1]) + (got[2] != dr[2]) + (got[3] != dr[3]) +
	       (got[4] != dr6) + (got[5] != dr7);
}

/*
 * The #DB handler, branch-free so that the watcher knows how many instructions it retires
 * (DB_HANDLER_INSNS): counts the hit, ORs and ANDs the whole DR6 it reads into soft_db_or and
 * soft_db_and (equal after the run when every hit read the same DR6), clears B0-B3, BD, BS, BT
 * as a handler does (SDM Vol. 3A 18.2.3: the processor never clears them), and sets RF in the
 * frame so that the fault does not repeat.
 */
volatile uint64_t soft_db_hits, soft_db_or, soft_db_and = ~0ull;
__asm__(".text\n"
	"soft_db_entry:\n\t"
	"push %rax\n\t"
	"mov %dr6, %rax\n\t"
	"or %rax, soft_db_or(%rip)\n\t"
	"and %rax, soft_db_and(%rip)\n\t"
	"incq soft_db_hits(%rip)\n\t"
	"mov $0xFFFF0FF0, %eax\n\t"	/* DR6_FIXED1, zero-extended */
	"mov %rax, %dr6\n\t"
	"pop %rax\n\t"
	"orq $0x10000, 16(%rsp)\n\t"	/* RFLAGS.RF: SDM Vol. 3A 18.3.1.1 */
	"iretq\n");
void soft_db_entry(void);
#define DB_HANDLER_INSNS	10

/*
 * The watched function and a counted window around one call of it: WRMSR(GLOBAL_CTRL, 3) (not
 * counted), CALL, the #DB handler, NOP, RET, MOV, XOR, WRMSR(GLOBAL_CTRL, 2) (counted): PMC0
 * counts WINDOW_INSNS; PMC1 counts on outside the windows, so the stepper stays busy.
 */
__asm__(".text\n"
	"soft_watched:\n\t"
	"nop\n\t"
	"ret\n"
	"soft_dr_window:\n\t"
	"mov $0x38F, %ecx\n\t"		/* IA32_PERF_GLOBAL_CTRL */
	"mov $3, %eax\n\t"
	"xor %edx, %edx\n\t"
	"wrmsr\n\t"
	"call soft_watched\n\t"
	"mov $2, %eax\n\t"
	"xor %edx, %edx\n\t"
	"wrmsr\n\t"
	"ret\n");
void soft_watched(void);
void soft_dr_window(void);
#define WINDOW_INSNS	(1 + DB_HANDLER_INSNS + 2 + 3)

/*
 * case=watch: its own execute breakpoint in DR2 on soft_watched(), unused values in DR0, DR1,
 * DR3, instructions counters on (the soft PMU's stepper then borrows the free debug registers
 * around it): every call hits, every hit reads DR6 = FIXED1 | B2 exactly (no neighbour's bits,
 * none of the stepper's slots), DR0-DR3/DR6/DR7 read back as written, whoever ran between,
 * and each window of one call counts exactly its own instructions.
 */
static int case_watch(unsigned rounds)
{
	const uint64_t dr[4] = { 0x1111000, 0x2222000, (uintptr_t)soft_watched, 0x3333000 };
	const uint64_t dr7 = DR7_FIXED1 | DR7_L(2), hit = DR6_FIXED1 | DR6_B(2);
	unsigned differ = 0, exact = 0;
	uint64_t count, last = 0;

	rt_idt_set_gate(1, soft_db_entry, 0);
	DR_WRITE(6, DR6_FIXED1);
	dr_write_all(dr, dr7);
	rt_wrmsr(MSR_IA32_PERFEVTSEL0, EVTSEL_INSTRUCTIONS);
	rt_wrmsr(MSR_IA32_PERFEVTSEL0 + 1, EVTSEL_INSTRUCTIONS);
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 2);
	for (unsigned r = 0; r < rounds; r++) {
		rt_wrmsr(MSR_IA32_PMC0, 0);
		soft_dr_window();
		count = rt_rdmsr(MSR_IA32_PMC0);
		exact += count == WINDOW_INSNS;
		if (count != WINDOW_INSNS)
			last = count;
		differ += dr_differ(dr, DR6_FIXED1, dr7);
	}
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	report(soft_db_hits == rounds, "watch: its own breakpoint fired %llu times in %u calls",
	       (unsigned long long)soft_db_hits, rounds);
	report(soft_db_or == hit && soft_db_and == hit,
	       "watch: DR6 read %#llx at every hit (OR %#llx, AND %#llx of all)",
	       (unsigned long long)hit, (unsigned long long)soft_db_or,
	       (unsigned long long)soft_db_and);
	report(differ == 0, "watch: %u reads of DR0-DR3/DR6/DR7 differed from its own values",
	       differ);
	report(exact == rounds, "watch: instructions of %u windows exact (%u expected each; "
	       "%u exact, last other %llu)", rounds, WINDOW_INSNS, exact,
	       (unsigned long long)last);
	DR_WRITE(7, DR7_FIXED1);
	return report_summary();
}

/*
 * case=hostile: fills DR0-DR3, DR6 and DR7 with its own values (breakpoints on addresses it never
 * runs, every writable DR6 bit in turn), changes them every turn, and reads them back: only ever
 * its own.
 */
static int case_hostile(unsigned turns)
{
	unsigned differ = 0;
	uint64_t dr[4], dr6, dr7;

	for (unsigned t = 0; t < turns; t++) {
		for (unsigned k = 0; k < 4; k++)
			dr[k] = 0xdead0000ull + (t << 4) + k;
		dr6 = DR6_FIXED1 | (t & 1 ? DR6_BITS : DR6_BS | DR6_B(0) | DR6_B(2));
		dr7 = DR7_FIXED1 | (t & 1 ? 0xFF : 0x55);
		DR_WRITE(6, dr6);
		dr_write_all(dr, dr7);
		for (unsigned i = 0; i < 20; i++)
			differ += dr_differ(dr, dr6, dr7);
	}
	DR_WRITE(7, DR7_FIXED1);
	DR_WRITE(6, DR6_FIXED1);
	report(differ == 0, "hostile: %u reads of DR0-DR3/DR6/DR7 differed from its own values",
	       differ);
	return report_summary();
}

/*
 * DR7.GD (SDM Vol. 3A 18.2.4): the next access to a debug register is a #DB fault with DR6.BD
 * set and GD cleared, so that the handler's own MOV DR and the retried access then work.
 */
static void general_detect(void)
{
	uint64_t dr0, dr7;

	rt_idt_set_gate(1, soft_db_entry, 0);
	DR_WRITE(0, 0x4444000);
	DR_WRITE(6, DR6_FIXED1);
	DR_WRITE(7, DR7_FIXED1 | DR7_GD);
	DR_READ(0, dr0);
	DR_READ(7, dr7);
	report(soft_db_hits == 1 && soft_db_or == (DR6_FIXED1 | DR6_BD) &&
	       soft_db_and == (DR6_FIXED1 | DR6_BD) && dr0 == 0x4444000 && dr7 == DR7_FIXED1,
	       "hostile: DR7.GD makes the next MOV DR a #DB with DR6.BD (%llu #DB, DR6 %#llx), "
	       "then clear", (unsigned long long)soft_db_hits, (unsigned long long)soft_db_or);
}

int main(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "case=watch"))
			return case_watch(soft_arg(argc, argv, "rounds", 2000));
		if (!strcmp(argv[i], "case=hostile")) {
			general_detect();
			return case_hostile(soft_arg(argc, argv, "turns", 2000));
		}
	}
	printf("soft_dr: say case=watch or case=hostile\n");
	return 1;
}
