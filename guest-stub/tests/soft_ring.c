/* A user-mode-only (:u) count across system calls and interrupts: exact, and the kernel unstepped. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"
#include "include/x86/cr.h"
#include "include/x86/pmu_msr.h"

/* SDM Vol. 3B 20.2.1.1 (PERFEVTSELx, USR without OS: CPL 1-3 only), table 20-1 (C0H, C4H). */
#define EVTSEL_U(ev)	((ev) | EVTSEL_USR | EVTSEL_EN)
#define EV_INSNS	0xC0
#define EV_BRANCHES	0xC4

/* The user thread's window, defaults overridden by calls= and loops= on the command line. */
static uint64_t calls = 1000, loops = 100000;

struct window {
	uint32_t insns, branches;	/* counter 0 and 1 across the window (mod 2^32) */
	uint64_t ticks;			/* timer interrupts that found the thread in it */
	unsigned cpl;
};

/*
 * At CPL 3, between two RDPMC of counter 0 (RDPMC reads the count before its own retirement,
 * docs/soft-pmu.md), these instructions retire, from the first RDPMC up to the second:
 *
 *	rdpmc; mov %eax, %r8d; mov $1, %ecx; rdpmc; mov %eax, %r11d	5
 *	mov calls, %r9					1
 *   1:	mov $SYS_VCPU, %eax; int $0x80; dec %r9; jnz 1b	4 per call
 *	mov loops, %r10					1
 *   2:	dec %r10; jnz 2b				2 per loop
 *	xor %ecx, %ecx					1
 *
 * 8 + 4 calls + 2 loops instructions. Counter 1 is read one instruction after counter 0 at
 * both ends, so its window holds the same instructions; its branches (SDM Vol. 3B table 20-1:
 * INT n is a far branch, Jcc taken or not) are 2 calls + loops. The system calls' and the
 * timer's kernel code runs at CPL 0: none of it counts, and none of it may be stepped.
 */
static int user_window(void *arg)
{
	struct window *w = arg;
	const volatile struct kthread_uinfo *me = sys_self();
	uint64_t ticks = me->ticks;
	uint32_t i0, i1, b0, b1;

	__asm__ volatile("xor %%ecx, %%ecx\n\t"
			 "rdpmc\n\t"
			 "mov %%eax, %%r8d\n\t"
			 "mov $1, %%ecx\n\t"
			 "rdpmc\n\t"
			 "mov %%eax, %%r11d\n\t"
			 "mov %[calls], %%r9\n"
			 "1:\tmov %[vcpu], %%eax\n\t"
			 "int $0x80\n\t"
			 "dec %%r9\n\t"
			 "jnz 1b\n\t"
			 "mov %[loops], %%r10\n"
			 "2:\tdec %%r10\n\t"
			 "jnz 2b\n\t"
			 "xor %%ecx, %%ecx\n\t"
			 "rdpmc\n\t"
			 "mov %%eax, %[i1]\n\t"
			 "mov $1, %%ecx\n\t"
			 "rdpmc\n\t"
			 "mov %%eax, %[b1]\n\t"
			 "mov %%r8d, %[i0]\n\t"
			 "mov %%r11d, %[b0]"
			 : [i0] "=&r"(i0), [i1] "=&r"(i1), [b0] "=&r"(b0), [b1] "=&r"(b1)
			 : [calls] "m"(calls), [loops] "m"(loops), [vcpu] "i"(SYS_VCPU)
			 : "rax", "rcx", "rdx", "r8", "r9", "r10", "r11", "cc", "memory");
	w->insns = i1 - i0;
	w->branches = b1 - b0;
	w->ticks = me->ticks - ticks;
	w->cpl = current_cpl();
	return 0;
}

static void args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "calls=", 6) == 0)
			calls = strtoull(argv[i] + 6, NULL, 0);
		else if (strncmp(argv[i], "loops=", 6) == 0)
			loops = strtoull(argv[i] + 6, NULL, 0);
	}
	if (!calls)
		calls = 1;
	if (!loops)
		loops = 1;
}

int main(int argc, char **argv)
{
	static struct window w;
	struct kthread *t;
	uint64_t cr4;

	kernel_init(argc, argv);
	args(argc, argv);
	/* RDPMC at CPL 3 (SDM Vol. 3A 2.5, CR4.PCE); one VCPU, so this one is the thread's. */
	__asm__ volatile("movq %%cr4, %0" : "=r"(cr4));
	__asm__ volatile("movq %0, %%cr4" : : "r"(cr4 | CR4_PCE));
	rt_wrmsr(MSR_IA32_PERFEVTSEL0, EVTSEL_U(EV_INSNS));
	rt_wrmsr(MSR_IA32_PERFEVTSEL0 + 1, EVTSEL_U(EV_BRANCHES));
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 3);
	t = kthread_create(user_window, &w, KTHREAD_USER, 0);
	if (!t) {
		printf("soft_ring: out of memory\n");
		return 1;
	}
	kthread_join(t);
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	report(w.cpl == 3, "the window ran at CPL 3");
	report_value("user-only instructions across system calls and interrupts", w.insns,
		     8 + 4 * calls + 2 * loops);
	report_value("user-only branches across system calls and interrupts", w.branches,
		     2 * calls + loops);
	/* What the hypervisor's summary is held to (tests/system/checks.py, retired_beyond). */
	printf("soft_ring: user window: %u instructions, %lu kernel entries by INT 0x80, %lu timer "
	       "interrupts\n", w.insns, (unsigned long)calls, (unsigned long)w.ticks);
	return report_summary();
}
