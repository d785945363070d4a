/* Test guest: NMIs by ICR to self and to the other VCPU, blocking until IRET, one pending, kicks. */
#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"
#include "guest-stub/tests/irq_stub.h"
#include "include/x86/apic.h"
#include "include/x86/trap.h"

#define WAIT_SPINS	20000000u	/* pause loops: far beyond any delivery, short of the timeout */
/*
 * An NMI to a VCPU spinning without exits on another PCPU must arrive by a kick: the sender's
 * ICR exit, the host IPI, the receiver's exit and injection, the handler's APIC ID read, each
 * some thousands of TSC ticks under Bochs. Without a kick it waits for the receiver's next exit:
 * its timer tick (quantum=2000000 in the scenario) or the end of its 100 ms slice, both at
 * least 2,000,000 ticks away: 100,000 is 1/20 of that.
 */
#define KICK_BOUND	100000u

static volatile unsigned nmis[KCPU_MAX];	/* NMIs each VCPU took */
static volatile unsigned depth, max_depth;	/* handlers running at once */
static volatile unsigned resend;		/* self-NMIs the next handler sends */
static volatile bool ready, halting, halted_woke;
static volatile uint64_t spin_left;

static uint32_t apic_read(unsigned reg)
{
	return *(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + reg);
}

static void apic_write(unsigned reg, uint32_t val)
{
	*(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + reg) = val;
}

static void send_nmi(unsigned dest, uint32_t shorthand)
{
	apic_write(APIC_ICR_HI, dest << 24);
	apic_write(APIC_ICR_LO, APIC_ICR_ASSERT | APIC_ICR_NMI | shorthand);
}

/* Called by nmi_entry with the caller-saved registers saved; no locks here (report's is one). */
void nmi_handler(void)
{
	unsigned d = ++depth;

	if (d > max_depth)
		max_depth = d;
	nmis[apic_read(APIC_ID) >> 24]++;
	for (; resend; resend--)
		send_nmi(0, APIC_ICR_SELF);
	depth--;
}

IRQ_STUB(nmi_entry, nmi_handler);

static bool wait_for(const volatile unsigned *p, unsigned want)
{
	for (unsigned i = 0; i < WAIT_SPINS && *p < want; i++)
		__asm__ volatile("pause");
	return *p >= want;
}

/* VCPU 1: spins without a single exit until its NMI comes, then halts with IF clear for the next. */
static int receiver(void *arg)
{
	(void)arg;
	ready = true;
	for (spin_left = WAIT_SPINS; spin_left && !nmis[1]; spin_left--)
		__asm__ volatile("" : : : "memory");
	halting = true;
	/* SDM Vol. 2A HLT: an NMI resumes a halted processor even with IF clear. */
	__asm__ volatile("cli; hlt; sti" : : : "memory");
	halted_woke = nmis[1] == 2;
	return 0;
}

int main(int argc, char **argv)
{
	struct kthread *t;
	uint64_t t0, t1;
	bool arrived;

	kernel_init(argc, argv);
	rt_idt_set_gate(EXC_NMI, nmi_entry, 0);

	send_nmi(0, APIC_ICR_SELF);
	report(wait_for(&nmis[0], 1), "SDM Vol. 3A 11.6.1: an NMI to self by ICR arrives");
	resend = 1;
	send_nmi(0, APIC_ICR_SELF);
	report(wait_for(&nmis[0], 3) && max_depth == 1,
	       "SDM Vol. 3A 6.7.1: an NMI sent inside the handler waits for its IRET (no nesting)");
	resend = 3;
	send_nmi(0, APIC_ICR_SELF);
	wait_for(&nmis[0], 6);
	report_value("SDM Vol. 3A 6.7.1: three NMIs while blocked: one stays pending, taken after IRET",
		     nmis[0], 5);

	t = kthread_create(receiver, (void *)0, KTHREAD_KERNEL, 1);
	if (!t) {
		report(false, "a kernel thread on VCPU 1");
		return report_summary();
	}
	while (!ready)
		__asm__ volatile("pause");
	t0 = rt_rdtsc();
	send_nmi(1, 0);
	arrived = wait_for(&nmis[1], 1);
	t1 = rt_rdtsc();
	report(arrived, "SDM Vol. 3A 11.6.1: an NMI to another VCPU by APIC ID arrives");
	report(t1 - t0 < KICK_BOUND,
	       "an NMI to a VCPU running on another PCPU kicks it: %llu TSC ticks, bound %u",
	       (unsigned long long)(t1 - t0), KICK_BOUND);
	report(spin_left > 0, "the receiver took it while spinning");
	/* Let it reach its HLT. */
	while (!halting)
		__asm__ volatile("pause");
	for (unsigned i = 0; i < 100000; i++)
		__asm__ volatile("pause");
	send_nmi(1, 0);
	kthread_join(t);
	report(halted_woke, "SDM Vol. 2A HLT: an NMI wakes a VCPU halted with IF clear");
	report_value("NMIs taken by VCPU 0 in all (no stray ones)", nmis[0], 5);
	return report_summary();
}
