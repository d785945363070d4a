/* The local xAPIC: enabling it, EOI, IPIs, and the periodic timer that drives preemption. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "guest-stub/kernel/internal.h"
#include "guest-stub/rt/rt.h"
#include "include/perfvisor/hypercall.h"
#include "include/x86/apic.h"

#define CAL_TSC_TICKS	10000000ull	/* ~3 ms at 3 GHz */

/* Timer ticks per TSC tick, 32.32 fixed point; 1:1 under perfvisor. */
static uint64_t timer_per_tsc = 1ull << 32;

/* Plain 32-bit loads and stores: the only accesses the xAPIC page takes. */
static uint32_t apic_read(unsigned reg)
{
	return *(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + reg);
}

static void apic_write(unsigned reg, uint32_t val)
{
	*(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + reg) = val;
}

unsigned kapic_id(void)
{
	return apic_read(APIC_ID) >> 24;
}

#define PIC1_DATA	0x21
#define PIC2_DATA	0xA1

/*
 * The legacy 8259 PICs: the firmware leaves them on, and their interrupts (the PIT's on
 * vector 8 after a BIOS) reach the BSP through LINT0. Masking every line keeps them out;
 * perfvisor has no PIC and ignores these writes.
 */
void pic_mask_all(void)
{
	rt_outb(PIC1_DATA, 0xFF);
	rt_outb(PIC2_DATA, 0xFF);
}

/* SDM Vol. 3A, "Spurious-Interrupt Vector Register": software-enables the APIC. */
void apic_cpu_init(void)
{
	apic_write(APIC_TPR, 0);
	apic_write(APIC_SPIV, APIC_SPIV_ENABLE | SPURIOUS_VECTOR);
}

void apic_eoi(void)
{
	apic_write(APIC_EOI, 0);
}

/* SDM Vol. 3A, "Local Vector Table": the PMI's entry, which masks itself at each delivery. */
void apic_set_lvtpc(uint32_t lvt)
{
	apic_write(APIC_LVT_PMC, lvt);
}

/* SDM Vol. 3A, "Interrupt Command Register": the destination first, the low word sends. */
void apic_send(unsigned apic_id, uint32_t icr_low)
{
	while (apic_read(APIC_ICR_LO) & APIC_ICR_BUSY)
		cpu_relax();
	apic_write(APIC_ICR_HI, apic_id << 24);
	apic_write(APIC_ICR_LO, icr_low);
}

void kapic_send_ipi(unsigned cpu, uint8_t vector)
{
	apic_send(cpu, APIC_ICR_ASSERT | APIC_ICR_FIXED | vector);
}

const char *kernel_domain_name(void)
{
	static char name[sizeof(struct rt_cpuid_regs) + 1];
	struct rt_cpuid_regs r;

	if (name[0])
		return name;
	if (!rt_under_perfvisor())
		return "native";
	/* perfvisor's name leaf: the domain's name, NUL-padded (README, CPUID). */
	r = rt_cpuid(HV_CPUID_NAME, 0);
	memcpy(name, &r, sizeof(r));
	return name;
}

/*
 * Quanta are given in TSC ticks. perfvisor clocks the APIC timer with the VCPU's TSC; on
 * other platforms the timer counts a bus clock of its own, so count it against the TSC once.
 */
void apic_timer_calibrate(void)
{
	uint64_t start;
	uint32_t elapsed;

	if (rt_under_perfvisor())
		return;
	apic_write(APIC_TIMER_DCR, APIC_DCR_DIVIDE_1);
	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_TIMER_ICR, UINT32_MAX);
	start = rt_rdtsc();
	while (rt_rdtsc() - start < CAL_TSC_TICKS)
		cpu_relax();
	elapsed = UINT32_MAX - apic_read(APIC_TIMER_CCR);
	apic_write(APIC_TIMER_ICR, 0);
	timer_per_tsc = ((uint64_t)elapsed << 32) / CAL_TSC_TICKS;
}

/* SDM Vol. 3A, "APIC Timer": periodic mode reloads the initial count at every expiry. */
void apic_timer_start(uint64_t tsc_ticks)
{
	uint64_t count = (uint64_t)(((unsigned __int128)tsc_ticks * timer_per_tsc) >> 32);

	apic_write(APIC_TIMER_DCR, APIC_DCR_DIVIDE_1);
	apic_write(APIC_LVT_TIMER, APIC_LVT_PERIODIC | TIMER_VECTOR);
	apic_write(APIC_TIMER_ICR, count ? (count > UINT32_MAX ? UINT32_MAX : (uint32_t)count) : 1);
}
