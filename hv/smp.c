/* SMP bring-up: CPUs from the ACPI MADT or MP table, INIT-SIPI-SIPI through the local APIC (SDM Vol. 3A 9.4.4). */
#include "lib/cpu.h"
#include "lib/frame.h"
#include "lib/printk.h"
#include "lib/string.h"
#include "hv/cpus_fw.h"
#include "hv/lapic.h"
#include "hv/pcpu.h"
#include "hv/sched.h"
#include "hv/smp.h"
#include "hv/vmx.h"
#include "pmu/pmu.h"

#define TRAMP_BASE	0x7000
#define AP_STACK_PAGES	4

extern const char ap_tramp_start[], ap_tramp_end[];
extern uint64_t ap_tramp_cr3, ap_tramp_stack, ap_tramp_pcpu;

static volatile int aps_released;
/* The boot path's per-CPU start-up (descriptor tables, GS), run first on every AP. */
static void (*ap_cpu_init)(struct pcpu *p);
uint64_t lapic_base = APIC_DEFAULT_BASE;

void ap_main(struct pcpu *p);

static void udelay(uint64_t us)
{
	uint64_t end = rdtsc() + us * tsc_khz / 1000;

	while ((int64_t)(rdtsc() - end) < 0)
		cpu_relax();
}

static void send_ipi(uint32_t apic_id, uint32_t icr)
{
	lapic_write(APIC_ICR_HI, apic_id << 24);
	lapic_write(APIC_ICR_LO, icr);
	for (int i = 0; i < 100000 && (lapic_read(APIC_ICR_LO) & APIC_ICR_BUSY); i++)
		cpu_relax();
}

/* Where the trampoline's variables land once it is copied below 1 MiB. */
static uint64_t *tramp_var(uint64_t *var)
{
	return (uint64_t *)(TRAMP_BASE + ((const char *)var - ap_tramp_start));
}

static bool start_ap(struct pcpu *p)
{
	uint64_t stack = frame_alloc_contig(AP_STACK_PAGES, 1);
	uint64_t deadline;

	if (!stack)
		return false;
	*tramp_var(&ap_tramp_cr3) = read_cr3();
	*tramp_var(&ap_tramp_stack) = stack + AP_STACK_PAGES * 4096;
	*tramp_var(&ap_tramp_pcpu) = (uint64_t)p;
	/* INIT, 10 ms, then two SIPIs 200 us apart (SDM Vol. 3A 9.4.4.1). */
	send_ipi(p->apic_id, APIC_ICR_ASSERT | APIC_ICR_INIT);
	udelay(10000);
	for (int i = 0; i < 2 && !p->online; i++) {
		send_ipi(p->apic_id, APIC_ICR_ASSERT | APIC_ICR_SIPI | (TRAMP_BASE >> 12));
		udelay(200);
	}
	deadline = rdtsc() + 100 * tsc_khz;	/* 100 ms */
	while (!p->online && (int64_t)(rdtsc() - deadline) < 0)
		cpu_relax();
	return p->online;
}

void smp_start_aps(unsigned max_cpus, void (*cpu_init)(struct pcpu *p))
{
	ap_cpu_init = cpu_init;
	const struct fw_window w = { (const uint8_t *)0, 0, 1ull << 32 };
	struct fw_cpus fw;
	const char *err = fw_cpus_find(&w, &fw);
	uint32_t bsp_id = cpuid(1, 0).ebx >> 24;

	pcpus[0].apic_id = bsp_id;
	if (err) {
		printk("perfvisor: cannot find the other CPUs (%s): running on one\n", err);
		return;
	}
	lapic_base = fw.lapic_base;
	memcpy((void *)TRAMP_BASE, ap_tramp_start, (size_t)(ap_tramp_end - ap_tramp_start));
	for (unsigned i = 0; i < fw.count && num_pcpus < max_cpus && num_pcpus < MAX_PCPUS; i++) {
		struct pcpu *p = &pcpus[num_pcpus];

		if (fw.apic_id[i] == bsp_id || (fw.not_enabled & (1ull << i)))
			continue;
		p->index = num_pcpus;
		p->apic_id = fw.apic_id[i];
		if (start_ap(p))
			num_pcpus++;
		else
			printk("perfvisor: cpu with APIC ID %u did not start\n", p->apic_id);
	}
	pr_info("perfvisor: %u cpu%s online (%s)\n", num_pcpus, num_pcpus > 1 ? "s" : "",
		fw.source);
}

void smp_release_aps(void)
{
	__atomic_store_n(&aps_released, 1, __ATOMIC_RELEASE);
}

/* First C code on an AP: its own tables, VMX on, then wait to be let into the scheduler. */
void ap_main(struct pcpu *p)
{
	fpu_enable();
	ap_cpu_init(p);
	if (!vmx_enable_cpu())
		cpu_halt_forever();
	pmu_cpu_init();
	__atomic_store_n(&p->online, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&aps_released, __ATOMIC_ACQUIRE))
		cpu_relax();
	sched_run();
}
