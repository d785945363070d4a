/* SYSCALL from ring 3 and SYSRET back: instructions and branches per ring, as Intel counts them. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"
#include "include/x86/cr.h"
#include "include/x86/msr.h"
#include "include/x86/pmu_msr.h"
#include "include/x86/rflags.h"

/* SDM Vol. 3B 20.2.1.1 (PERFEVTSELx: USR counts at CPL > 0, OS at CPL 0), table 20-1. */
enum { INS_USR, INS_OS, BR_USR, BR_OS, NCTRS };
static const uint64_t evtsel[NCTRS] = {
	[INS_USR] = ARCH_EVENT_INST_RETIRED | EVTSEL_USR | EVTSEL_EN,
	[INS_OS] = ARCH_EVENT_INST_RETIRED | EVTSEL_OS | EVTSEL_EN,
	[BR_USR] = ARCH_EVENT_BRANCH_RETIRED | EVTSEL_USR | EVTSEL_EN,
	[BR_OS] = ARCH_EVENT_BRANCH_RETIRED | EVTSEL_OS | EVTSEL_EN,
};

#define STR_(x)		#x
#define STR(x)		STR_(x)
#define TRIES		20	/* windows a timer tick may spoil before one runs clean */

/* The window's reads (user mode) and what the SYSCALL handler saw in R11. */
volatile uint32_t soft_sys_t0[NCTRS], soft_sys_t1[NCTRS];
volatile uint64_t soft_sys_r11;

/*
 * IA32_LSTAR's target, at CPL 0 on the caller's stack: MOV, SYSRETQ (SDM Vol. 2B SYSCALL,
 * SYSRET). R11 holds the RFLAGS SYSCALL saw: the guest's own, never the stepper's TF.
 */
__asm__(".text\n"
	"soft_sys_entry:\n\t"
	"mov %r11, soft_sys_r11(%rip)\n\t"
	"sysretq\n");
void soft_sys_entry(void);

/*
 * RDPMC of each counter k before and after the code, in user mode: from counter k's first
 * RDPMC (which retires after its read) to its second, the other reads' 3 * NCTRS - 1 and
 * the code's, so 3 * NCTRS + the code's at CPL 3; branches only the code's.
 */
#define READS(arr)								\
	"mov $0, %%ecx\n\trdpmc\n\tmov %%eax, " arr "+0(%%rip)\n\t"		\
	"mov $1, %%ecx\n\trdpmc\n\tmov %%eax, " arr "+4(%%rip)\n\t"		\
	"mov $2, %%ecx\n\trdpmc\n\tmov %%eax, " arr "+8(%%rip)\n\t"		\
	"mov $3, %%ecx\n\trdpmc\n\tmov %%eax, " arr "+12(%%rip)\n\t"
#define WINDOW_USR	(3 * NCTRS)
_Static_assert(NCTRS == 4, "READS reads four counters");

static void window(void)
{
	__asm__ volatile(READS("soft_sys_t0") "syscall\n\t" READS("soft_sys_t1")
			 : : : "rax", "rcx", "rdx", "r11", "memory", "cc");
}

/* The user thread: a window that no timer tick entered (the kernel's count of them). */
static int user_main(void *arg)
{
	const volatile struct kthread_uinfo *me = sys_self();
	uint32_t *d = arg;

	for (unsigned i = 0; i < TRIES; i++) {
		uint64_t ticks = me->ticks, resumes = me->resumes;

		window();
		if (me->ticks == ticks && me->resumes == resumes) {
			for (unsigned k = 0; k < NCTRS; k++)
				d[k] = soft_sys_t1[k] - soft_sys_t0[k];
			return (int)current_cpl();
		}
	}
	return -1;
}

/*
 * SDM Vol. 2B SYSCALL and SYSRET; Vol. 3B table 20-1 and the model tables' FAR_BRANCH: each
 * retires as one instruction and one (far) branch (KVM's emulator marks both IsBranch).
 * Which ring counts an instruction that changes CPL the SDM does not say: perfvisor's
 * stepper takes the CPL it starts at, KVM's emulator checks the CPL after it. The pair
 * crosses both ways, so either rule gives each ring exactly one of the two: user mode the
 * window's reads and one, the kernel the handler's MOV and one; one branch in each ring.
 */
int main(int argc, char **argv)
{
	uint32_t d[NCTRS] = { 0 };
	uint64_t cr4, kcs;
	struct kthread *t;
	int cpl;

	kernel_init(argc, argv);
	__asm__ volatile("movq %%cr4, %0" : "=r"(cr4));
	__asm__ volatile("movq %0, %%cr4" : : "r"(cr4 | CR4_PCE));
	__asm__ volatile("mov %%cs, %0" : "=r"(kcs));
	/*
	 * STAR[47:32]: SYSCALL's CS (SS the next); STAR[63:48] + 16 and + 8: SYSRET's 64-bit CS
	 * and SS, RPL 3. The kernel's GDT has user data then user code right after its own.
	 */
	rt_wrmsr(MSR_STAR, (kcs + 8) << 48 | kcs << 32);
	rt_wrmsr(MSR_LSTAR, (uintptr_t)soft_sys_entry);
	rt_wrmsr(MSR_FMASK, RFLAGS_IF | RFLAGS_TF);
	rt_wrmsr(MSR_EFER, rt_rdmsr(MSR_EFER) | EFER_SCE);
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	for (unsigned k = 0; k < NCTRS; k++) {
		rt_wrmsr(MSR_IA32_PMC0 + k, 0);
		rt_wrmsr(MSR_IA32_PERFEVTSEL0 + k, evtsel[k]);
	}
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, (1u << NCTRS) - 1);
	t = kthread_create(user_main, d, KTHREAD_USER, 0);
	cpl = t ? kthread_join(t) : -1;
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	report(cpl == 3, "a window at CPL 3 that no timer tick entered (%d)", cpl);
	if (cpl != 3)
		return report_summary();
	report_value("SYSCALL, SYSRET: user-mode instructions (the reads and one)", d[INS_USR],
		     WINDOW_USR + 1);
	report_value("SYSCALL, SYSRET: kernel-mode instructions (MOV and one)", d[INS_OS], 2);
	report_value("SYSCALL, SYSRET: user-mode branches", d[BR_USR], 1);
	report_value("SYSCALL, SYSRET: kernel-mode branches", d[BR_OS], 1);
	report(!(soft_sys_r11 & RFLAGS_TF), "SYSCALL's R11 (%#llx) shows no TF",
	       (unsigned long long)soft_sys_r11);
	return report_summary();
}
