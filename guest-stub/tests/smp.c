/* Test guest: every VCPU reports its APIC ID, then an IPI goes round from each VCPU to the next. */
#include <stdbool.h>
#include <stdio.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/lib/report.h"

#define IPI_VECTOR	0x40
#define WAIT_WAKEUPS	5000	/* timer ticks: seconds natively, minutes of Bochs */

struct probe {
	unsigned cpu;		/* the VCPU this probe is pinned to */
	unsigned apic_id;
	unsigned vcpu;		/* from SYS_VCPU */
	unsigned smp_id;
	bool turn_came;
	bool ipi_arrived;
};

static volatile unsigned ipis[KCPU_MAX];	/* IPIs each VCPU took */
static volatile unsigned turn;			/* the VCPU whose turn it is to send */

static void on_ipi(uint8_t vector)
{
	(void)vector;
	ipis[kcpu_id()]++;
}

/*
 * Waits until *p differs from old, halting until the next interrupt (a timer tick, an IPI)
 * between looks: a waiting VCPU leaves its PCPU to the others, under perfvisor and QEMU.
 */
static bool wait_change(const volatile unsigned *p, unsigned old)
{
	for (unsigned i = 0; i < WAIT_WAKEUPS && *p == old; i++)
		__asm__ volatile("hlt" : : : "memory");
	return *p != old;
}

/* A kernel thread pinned to one VCPU: reports it, then sends its IPI when its turn comes. */
static int probe(void *arg)
{
	struct probe *p = arg;
	unsigned next = (p->cpu + 1) % kernel_ncpus(), before, seen;

	p->apic_id = kapic_id();
	p->vcpu = sys_vcpu();
	p->smp_id = sys_self()->smp_id;
	uprintf("smp: vcpu %u: local APIC ID %u\n", p->cpu, p->apic_id);

	/* turn only grows: wait through every smaller value, reading each once. */
	while ((seen = turn) != p->cpu)
		if (!wait_change(&turn, seen))
			return 1;
	p->turn_came = true;
	before = ipis[next];
	kapic_send_ipi(next, IPI_VECTOR);
	p->ipi_arrived = wait_change(&ipis[next], before);
	uprintf("smp: vcpu %u: IPI to vcpu %u %s\n", p->cpu, next,
		p->ipi_arrived ? "arrived" : "did not arrive");
	turn = p->cpu + 1;
	return 0;
}

int main(int argc, char **argv)
{
	static struct probe probes[KCPU_MAX];
	struct kthread *t[KCPU_MAX];
	unsigned n = kernel_init(argc, argv);

	if (!kernel_irq_register(IPI_VECTOR, on_ipi)) {
		printf("smp: vector 0x%x refused\n", IPI_VECTOR);
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		probes[i].cpu = i;
		t[i] = kthread_create(probe, &probes[i], KTHREAD_KERNEL, (int)i);
		if (!t[i]) {
			printf("smp: out of memory\n");
			return 1;
		}
	}
	for (unsigned i = 0; i < n; i++)
		kthread_join(t[i]);

	for (unsigned i = 0; i < n; i++) {
		struct probe *p = &probes[i];

		report(p->apic_id == i, "vcpu %u: local APIC ID is %u", i, p->apic_id);
		report(p->vcpu == i && p->smp_id == i,
		       "vcpu %u: pinned thread ran there (smp_id %u)", i, p->smp_id);
		report(p->turn_came && p->ipi_arrived, "vcpu %u: IPI to vcpu %u arrived", i,
		       (i + 1) % n);
	}
	return report_summary();
}
