/* Test guest: RF in the frames of faults perfvisor injects; a single-step trap across HLT; DR7.GD. */
#include <stdint.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"
#include "include/x86/apic.h"
#include "include/x86/dr.h"
#include "include/x86/rflags.h"

#define TIMER_VECTOR	0x40
#define MSR_BAD		0x12345678u	/* no such MSR: perfvisor injects #GP */
#define EVENTS		8

/* What a handler saw: its vector, the frame's RIP and RFLAGS, DR6 for #DB. */
struct event {
	uint64_t vector, rip, rflags, dr6;
};

volatile struct event events[EVENTS];
volatile uint64_t nevents, fixup;

/* Called by the stubs with the vector and the frame (RIP, CS, RFLAGS...). */
void record(uint64_t vector, uint64_t *frame)
{
	uint64_t dr6;

	__asm__ volatile("mov %%dr6, %0" : "=r"(dr6));
	if (nevents < EVENTS)
		events[nevents] = (struct event){ vector, frame[0], frame[2], dr6 };
	nevents++;
	if (vector == 1)
		__asm__ volatile("mov %0, %%dr6" : : "r"(0xFFFF0FF0ull));
	if (vector == TIMER_VECTOR)
		*(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + APIC_EOI) = 0;
	/* A fault resumes at the fixup the test set, not at the faulting instruction. */
	if (vector == 6 || vector == 13)
		frame[0] = fixup;
}

/* Stubs: keep the caller-saved registers, RSP 16-byte aligned for the call (a #GP's error code
 * dropped first). */
#define STUB_BODY(vec) \
	"	push %rax; push %rcx; push %rdx; push %rsi; push %rdi\n" \
	"	push %r8; push %r9; push %r10; push %r11\n" \
	"	mov $" #vec ", %edi\n" \
	"	lea 72(%rsp), %rsi\n" \
	"	cld\n" \
	"	call record\n" \
	"	pop %r11; pop %r10; pop %r9; pop %r8\n" \
	"	pop %rdi; pop %rsi; pop %rdx; pop %rcx; pop %rax\n" \
	"	iretq\n"
#define STUB(name, vec)		#name ":\n" STUB_BODY(vec)
#define STUB_ERR(name, vec)	#name ":\n	add $8, %rsp\n" STUB_BODY(vec)
void db_entry(void), ud_entry(void), gp_entry(void), timer_entry(void);
__asm__(".text\n"
	STUB(db_entry, 1)
	STUB(ud_entry, 6)
	STUB_ERR(gp_entry, 13)
	STUB(timer_entry, 0x40));

static void apic_write(unsigned reg, uint32_t val)
{
	*(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + reg) = val;
}

static void test_fault_rf(void)
{
	nevents = 0;
	__asm__ volatile("lea 1f(%%rip), %%rax; mov %%rax, fixup(%%rip)\n\t"
			 "wrmsr\n"
			 "1:"
			 : : "c"(MSR_BAD), "a"(0), "d"(0) : "memory");
	report(nevents == 1 && events[0].vector == 13 && (events[0].rflags & RFLAGS_RF),
	       "SDM Vol. 3A 17.3.1.1: the #GP perfvisor injects for WRMSR has RF set in its frame");
	nevents = 0;
	__asm__ volatile("lea 1f(%%rip), %%rax; mov %%rax, fixup(%%rip)\n\t"
			 "vmxoff\n"
			 "1:"
			 : : : "rax", "memory");
	report(nevents == 1 && events[0].vector == 6 && (events[0].rflags & RFLAGS_RF),
	       "SDM Vol. 3A 17.3.1.1: the #UD perfvisor injects for VMXOFF has RF set in its frame");
}

/*
 * TF set, STI; HLT with the APIC timer armed: the single-step trap of STI comes at HLT, the
 * one of HLT right after it wakes, before the timer's interrupt (debug traps rank above
 * external interrupts, SDM Vol. 3A 6.9; STI blocking does not hold #DB back, 6.8.3).
 */
static void test_sti_hlt_step(void)
{
	uint64_t hlt_rip;

	__asm__ volatile("cli");
	apic_write(APIC_TIMER_DCR, APIC_DCR_DIVIDE_1);
	apic_write(APIC_LVT_TIMER, TIMER_VECTOR);	/* one-shot */
	nevents = 0;
	apic_write(APIC_TIMER_ICR, 1000000);
	__asm__ volatile("pushf; orq %1, (%%rsp); popf\n\t"
			 "sti\n"
			 "2: hlt\n\t"
			 "pushf; andq %2, (%%rsp); popf\n\t"
			 "lea 2b(%%rip), %0"
			 : "=r"(hlt_rip) : "i"(RFLAGS_TF), "i"(~RFLAGS_TF) : "memory", "cc");
	__asm__ volatile("cli");
	report(nevents >= 3 && events[0].vector == 1 && events[0].rip == hlt_rip &&
	       (events[0].dr6 & DR6_BS), "SDM Vol. 3A 6.8.3: single-step #DB after STI, at HLT");
	report(nevents >= 3 && events[1].vector == 1 && events[1].rip == hlt_rip + 1 &&
	       (events[1].dr6 & DR6_BS),
	       "SDM Vol. 3A 17.3.1.4: single-step #DB after the HLT perfvisor emulates");
	report(nevents >= 3 && events[2].vector == TIMER_VECTOR && events[2].rip == hlt_rip + 1,
	       "SDM Vol. 3A 6.9: the timer interrupt that woke HLT comes after that #DB");
}

/*
 * DR7.GD set: the next MOV DR raises a #DB fault before it executes (its frame points at it),
 * DR6.BD set; the delivery clears GD, so that the handler's own MOV DR and the MOV's second
 * run go through.
 */
static void test_general_detect(void)
{
	uint64_t mov_rip, dr7;

	nevents = 0;
	__asm__ volatile("mov %1, %%dr7\n\t"
			 "lea 3f(%%rip), %0\n"
			 "3: mov %2, %%dr6"
			 : "=&r"(mov_rip) : "r"(DR7_FIXED1 | DR7_GD), "r"(DR6_FIXED1) : "memory");
	__asm__ volatile("mov %%dr7, %0" : "=r"(dr7));
	report(nevents == 1 && events[0].vector == 1 && events[0].rip == mov_rip &&
	       events[0].dr6 == (DR6_FIXED1 | DR6_BD),
	       "SDM Vol. 3A 18.2.4: MOV DR with DR7.GD set: #DB fault before it, DR6.BD set");
	report(dr7 == DR7_FIXED1, "SDM Vol. 3A 18.2.4: the #DB cleared DR7.GD");
}

/*
 * TF set by POPF, then MOV SS, then two ICEBPs (INT1): the single step of the MOV waits in its
 * shadow (SDM Vol. 3A 6.8.3) and is dropped by the first ICEBP's #DB; each ICEBP's #DB follows
 * it and reports no DR6 condition (INT1 is none of them, 18.2.3); the single steps go on after.
 */
static void test_movss_icebp(void)
{
	uint64_t start, none = DR6_FIXED1;
	unsigned clean = 0;

	nevents = 0;
	__asm__ volatile("pushf; pop %%rax; or %1, %%rax; push %%rax\n\t"
			 "mov %%ss, %%ax\n\t"
			 "popf\n\t"
			 "mov %%ax, %%ss\n\t"
			 ".byte 0xf1\n"
			 "4: .byte 0xf1\n\t"
			 "and %2, %%rax\n\t"
			 "push %%rax; popf\n\t"
			 "lea 4b(%%rip), %0"
			 : "=r"(start) : "i"(RFLAGS_TF), "i"(~RFLAGS_TF) : "rax", "memory", "cc");
	for (unsigned i = 0; i < nevents && i < EVENTS; i++)
		clean += events[i].vector == 1;
	report(nevents == 5 && clean == 5 && events[0].rip == start && events[1].rip == start + 1,
	       "SDM Vol. 2A INT1: a #DB after each ICEBP, the first one in a MOV SS shadow");
	report(nevents == 5 && events[0].dr6 == none && events[1].dr6 == none,
	       "SDM Vol. 3A 18.2.3: the #DB of ICEBP sets no DR6 condition, single step pending or not");
}

int main(void)
{
	rt_idt_set_gate(1, db_entry, 0);
	rt_idt_set_gate(6, ud_entry, 0);
	rt_idt_set_gate(13, gp_entry, 0);
	rt_idt_set_gate(TIMER_VECTOR, timer_entry, 0);
	apic_write(APIC_SPIV, 0x1FF);
	test_fault_rf();
	test_sti_hlt_step();
	test_general_detect();
	test_movss_icebp();
	return report_summary();
}
