/* Test guest: a fixed IPI wakes a VCPU halted on an idle PCPU at once (the kick ends its HLT). */
#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"
#include "guest-stub/tests/irq_stub.h"
#include "include/x86/apic.h"

#define VECTOR		0x53
#define ROUNDS		5
#define WAIT_SPINS	20000000u	/* pause loops: far beyond any delivery, short of the timeout */
/* Pause loops after the sleeper said it halts: its HLT exit and its PCPU's idle HLT are done. */
#define SETTLE_SPINS	200000u
/*
 * With VCPU 1 halted its PCPU has nothing to run and halts itself, until a kick or the next
 * deadline: VCPU 1's timer tick (quantum=2000000 in the scenario) or the end of a 100 ms slice,
 * both at least 2,000,000 ticks away. The kick path (the sender's ICR exit, the host IPI, the
 * wake-up, the switch and the injection) takes some thousands: 100,000 is 1/20 of the rest.
 */
#define WAKE_BOUND	100000u

static volatile unsigned got, asleep;

void ipi_handler(void)
{
	got++;
	*(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + APIC_EOI) = 0;
}

IRQ_STUB(ipi_entry, ipi_handler);

/* VCPU 1: halts until each round's IPI has come (its own timer ticks wake it in between). */
static int sleeper(void *arg)
{
	(void)arg;
	for (unsigned r = 0; r < ROUNDS; r++) {
		__asm__ volatile("cli" : : : "memory");
		asleep = r + 1;
		while (got == r)
			__asm__ volatile("sti; hlt; cli" : : : "memory");
		__asm__ volatile("sti" : : : "memory");
	}
	return 0;
}

static bool wait_for(const volatile unsigned *p, unsigned want)
{
	for (unsigned i = 0; i < WAIT_SPINS && *p < want; i++)
		__asm__ volatile("pause");
	return *p >= want;
}

int main(int argc, char **argv)
{
	uint64_t t0, t1, worst = 0;
	struct kthread *t;
	unsigned r;

	kernel_init(argc, argv);
	rt_idt_set_gate(VECTOR, ipi_entry, 0);
	t = kthread_create(sleeper, (void *)0, KTHREAD_KERNEL, 1);
	if (!t) {
		report(false, "a kernel thread on VCPU 1");
		return report_summary();
	}
	for (r = 0; r < ROUNDS; r++) {
		if (!wait_for(&asleep, r + 1))
			break;
		for (unsigned i = 0; i < SETTLE_SPINS; i++)
			__asm__ volatile("pause");
		t0 = rt_rdtsc();
		kapic_send_ipi(1, VECTOR);
		if (!wait_for(&got, r + 1))
			break;
		t1 = rt_rdtsc();
		if (t1 - t0 > worst)
			worst = t1 - t0;
	}
	report_value("SDM Vol. 3A 11.6.1: every fixed IPI to the halted VCPU arrives", got, ROUNDS);
	report(r == ROUNDS && worst < WAKE_BOUND,
	       "a fixed IPI to a VCPU halted on an idle PCPU wakes that PCPU: %llu TSC ticks at "
	       "most, bound %u", (unsigned long long)worst, WAKE_BOUND);
	kthread_join(t);
	return report_summary();
}
