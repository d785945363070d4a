/* SYSCALL from ring 3 and SYSRET back, and RDPMC's #GP at CPL 3: counted as Intel counts them. */
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

/* The window's reads, what the SYSCALL handler saw in R11, the #GP frame's RFLAGS. */
volatile uint32_t soft_sys_t0[NCTRS], soft_sys_t1[NCTRS];
volatile uint64_t soft_sys_r11, soft_sys_gp_flags, soft_sys_gps;

/*
 * IA32_LSTAR's targets, at CPL 0 on the caller's stack (SDM Vol. 2B SYSCALL, SYSRET).
 * soft_sys_entry: MOV, SYSRETQ; R11 holds the RFLAGS SYSCALL saw: the guest's own, never the
 * stepper's TF. soft_sys_read_entry: counters 0 and 1 into soft_sys_t0, then back.
 * soft_sys_gp_entry, the #GP handler: counters 0 and 1 into soft_sys_t1 after three pushes
 * and a MOV, then past the faulting 2-byte RDPMC.
 */
__asm__(".text\n"
	"soft_sys_entry:\n\t"
	"mov %r11, soft_sys_r11(%rip)\n\t"
	"sysretq\n"
	"soft_sys_read_entry:\n\t"
	"mov %rcx, %r8\n\t"
	"mov $0, %ecx\n\trdpmc\n\tmov %eax, soft_sys_t0+0(%rip)\n\t"
	"mov $1, %ecx\n\trdpmc\n\tmov %eax, soft_sys_t0+4(%rip)\n\t"
	"mov %r8, %rcx\n\t"
	"sysretq\n"
	"soft_sys_gp_entry:\n\t"
	"push %rax\n\tpush %rcx\n\tpush %rdx\n\t"
	"mov $0, %ecx\n\trdpmc\n\tmov %eax, soft_sys_t1+0(%rip)\n\t"
	"mov $1, %ecx\n\trdpmc\n\tmov %eax, soft_sys_t1+4(%rip)\n\t"
	"mov 48(%rsp), %rax\n\tmov %rax, soft_sys_gp_flags(%rip)\n\t"	/* error code, RIP, CS */
	"incq soft_sys_gps(%rip)\n\t"
	"pop %rdx\n\tpop %rcx\n\tpop %rax\n\t"
	"add $8, %rsp\n\t"
	"addq $2, (%rsp)\n\t"
	"iretq\n");
void soft_sys_entry(void);
void soft_sys_read_entry(void);
void soft_sys_gp_entry(void);

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

static void window_syscall(void)
{
	__asm__ volatile(READS("soft_sys_t0") "syscall\n\t" READS("soft_sys_t1")
			 : : : "rax", "rcx", "rdx", "r11", "memory", "cc");
}

/* With CR4.PCE clear: the kernel reads the counters, at SYSCALL and at the #GP. */
static void window_rdpmc_gp(void)
{
	__asm__ volatile("syscall\n\txor %%ecx, %%ecx\n\trdpmc"
			 : : : "rax", "rcx", "rdx", "r8", "r11", "memory", "cc");
}

static void (*user_window)(void);

/* The user thread: a window that no timer tick entered (the kernel's count of them). */
static int user_main(void *arg)
{
	const volatile struct kthread_uinfo *me = sys_self();
	uint32_t *d = arg;

	for (unsigned i = 0; i < TRIES; i++) {
		uint64_t ticks = me->ticks, resumes = me->resumes;

		user_window();
		if (me->ticks == ticks && me->resumes == resumes) {
			for (unsigned k = 0; k < NCTRS; k++)
				d[k] = soft_sys_t1[k] - soft_sys_t0[k];
			return (int)current_cpl();
		}
	}
	return -1;
}

/* Counters 0..n-1 programmed with sel (from zero), the others off; the window run in user mode. */
static int run_user(const uint64_t *sel, unsigned n, void (*window)(void), uint32_t *d)
{
	struct kthread *t;
	int cpl;

	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	for (unsigned k = 0; k < NCTRS; k++) {
		rt_wrmsr(MSR_IA32_PMC0 + k, 0);
		rt_wrmsr(MSR_IA32_PERFEVTSEL0 + k, k < n ? sel[k] : 0);
	}
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, (1u << n) - 1);
	user_window = window;
	t = kthread_create(user_main, d, KTHREAD_USER, 0);
	cpl = t ? kthread_join(t) : -1;
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	report(cpl == 3, "a window at CPL 3 that no timer tick entered (%d)", cpl);
	return cpl;
}

/*
 * RDPMC at CPL 3 with CR4.PCE clear: #GP (SDM Vol. 2B RDPMC), a privilege check that comes
 * before the VM exit RDPMC exiting would cause (SDM Vol. 3C 26.1.1), so the CPU delivers it.
 * As for any fault (SDM Vol. 3B 20.2.1.2) RDPMC does not retire and the handler's
 * instructions do. Counted in every ring, so no ring change needs attributing: from the
 * SYSCALL handler's first read, its RDPMC, MOV, MOV, RDPMC, MOV, MOV, SYSRETQ (7), the user's
 * XOR, not its RDPMC, then the #GP handler's PUSH x3 and MOV (4): 12. Branches from its
 * second read: SYSRETQ only.
 */
static void case_rdpmc_gp(void)
{
	static const uint64_t sel[2] = {
		ARCH_EVENT_INST_RETIRED | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN,
		ARCH_EVENT_BRANCH_RETIRED | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN,
	};
	uint32_t d[NCTRS] = { 0 };
	uint64_t cr4;

	__asm__ volatile("movq %%cr4, %0" : "=r"(cr4));
	__asm__ volatile("movq %0, %%cr4" : : "r"(cr4 & ~CR4_PCE));
	rt_wrmsr(MSR_LSTAR, (uintptr_t)soft_sys_read_entry);
	rt_idt_set_gate(13, soft_sys_gp_entry, 0);
	soft_sys_gps = 0;
	if (run_user(sel, 2, window_rdpmc_gp, d) != 3)
		return;
	report(soft_sys_gps >= 1, "RDPMC at CPL 3 with CR4.PCE clear: #GP (%llu)",
	       (unsigned long long)soft_sys_gps);
	report_value("RDPMC's #GP: instructions, RDPMC not among them", d[0], 7 + 1 + 4);
	report_value("RDPMC's #GP: branches", d[1], 1);
	report(!(soft_sys_gp_flags & RFLAGS_TF), "RDPMC's #GP: the frame's RFLAGS (%#llx) shows "
	       "no TF", (unsigned long long)soft_sys_gp_flags);
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
	if (run_user(evtsel, NCTRS, window_syscall, d) != 3)
		return report_summary();
	report_value("SYSCALL, SYSRET: user-mode instructions (the reads and one)", d[INS_USR],
		     WINDOW_USR + 1);
	report_value("SYSCALL, SYSRET: kernel-mode instructions (MOV and one)", d[INS_OS], 2);
	report_value("SYSCALL, SYSRET: user-mode branches", d[BR_USR], 1);
	report_value("SYSCALL, SYSRET: kernel-mode branches", d[BR_OS], 1);
	report(!(soft_sys_r11 & RFLAGS_TF), "SYSCALL's R11 (%#llx) shows no TF",
	       (unsigned long long)soft_sys_r11);
	case_rdpmc_gp();
	return report_summary();
}
