/* Starting the application processors: INIT-SIPI-SIPI, and their first steps in the kernel. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "guest-stub/kernel/internal.h"
#include "guest-stub/kernel/trampoline.h"
#include "guest-stub/rt/rt.h"
#include "include/x86/apic.h"

/*
 * SDM Vol. 3A, "MP Initialization Protocol Algorithm": INIT, 10 ms, SIPI, 200 us, SIPI.
 * The platforms this kernel runs on (perfvisor, QEMU) take INIT at once, so the waits are
 * short, and the second SIPI goes out only if the AP has not shown up after the first.
 * Timeouts count this VCPU's TSC, which under perfvisor stands still while the AP has the
 * PCPU: they must cover a whole slice of spinning (500k ticks at slice=10000 in Bochs).
 */
#define INIT_DELAY	10000ull
#define SIPI_TIMEOUT	50000000ull

/* The trampoline's parameter block (trampoline.S), in its copy below 1 MiB. */
struct ap_boot_args {
	uint64_t cr3;
	uint64_t rsp;
	uint64_t entry;
	uint64_t cpu;
};

extern const char ap_trampoline[], ap_trampoline_end[], ap_boot_args[];

static uint64_t ap_quantum;

static void tsc_wait(uint64_t ticks)
{
	uint64_t start = rt_rdtsc();

	while (rt_rdtsc() - start < ticks)
		cpu_relax();
}

static bool wait_online(const struct kcpu *c, uint64_t ticks)
{
	uint64_t start = rt_rdtsc();

	while (!c->online && rt_rdtsc() - start < ticks)
		cpu_relax();
	return c->online;
}

/*
 * An AP arrives here from the trampoline in 64-bit mode, with the kernel's page tables and
 * SSE on, on the stack of its idle thread. It sets up what is per CPU (GDT and TSS, IDT,
 * APIC, timer) and becomes its idle thread; the scheduler takes it from there.
 */
static void ap_main(struct kcpu *c)
{
	gdt_load(c);
	rt_idt_load();
	apic_cpu_init();
	apic_timer_start(ap_quantum);
	c->online = true;
	sched_run_idle(c);
}

/* Starts VCPUs 1..kcpu_count-1 one after the other; returns how many VCPUs run. */
unsigned smp_boot_aps(uint64_t cr3, uint64_t quantum)
{
	struct ap_boot_args *args =
		(struct ap_boot_args *)(uintptr_t)(TRAMPOLINE_BASE + (ap_boot_args - ap_trampoline));

	memcpy((void *)(uintptr_t)TRAMPOLINE_BASE, ap_trampoline,
	       (size_t)(ap_trampoline_end - ap_trampoline));
	ap_quantum = quantum;
	args->cr3 = cr3;
	args->entry = (uintptr_t)ap_main;
	for (unsigned i = 1; i < kcpu_count; i++) {
		struct kcpu *c = &kcpus[i];

		/* One AP at a time: they share the parameter block. */
		args->rsp = c->idle->kstack_top;
		args->cpu = (uintptr_t)c;
		apic_send(i, APIC_ICR_ASSERT | APIC_ICR_INIT);
		tsc_wait(INIT_DELAY);
		for (int sipi = 0; sipi < 2 && !c->online; sipi++) {
			apic_send(i, APIC_ICR_ASSERT | APIC_ICR_SIPI | TRAMPOLINE_SIPI_VECTOR);
			wait_online(c, SIPI_TIMEOUT);
		}
		if (!c->online) {
			printf("kernel: vcpu %u did not start; going on with %u\n", i, i);
			return i;
		}
	}
	return kcpu_count;
}
