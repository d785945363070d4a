/* Test guest: the I/O APIC at 0xFEC00000 (82093AA registers, edge and level pins) as on a PC. */
#include <stdint.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"
#include "guest-stub/tests/irq_stub.h"
#include "include/x86/apic.h"
#include "include/x86/ioapic.h"

/* QEMU's pc-testdev: OUT of 0/1 to port 0x2000 + pin drives that I/O APIC pin. */
#define IRQ_LINES	0x2000
#define EDGE_PIN	3
#define LEVEL_PIN	9
#define VECTOR		0x52
#define SPINS		1000000

static volatile unsigned irqs, lower_in_handler;

/* Counts the interrupt; for the level case lowers the pin on the second one, then EOI. */
void irq_handler(void)
{
	if (++irqs == lower_in_handler)
		rt_outb(IRQ_LINES + LEVEL_PIN, 0);
	*(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + APIC_EOI) = 0;
}

IRQ_STUB(irq_entry, irq_handler);

static void wait_irqs(unsigned n)
{
	for (unsigned i = 0; i < SPINS && irqs < n; i++)
		__asm__ volatile("pause" : : : "memory");
}

static uint32_t ioapic_read(uint32_t idx)
{
	*(volatile uint32_t *)(uintptr_t)(IOAPIC_DEFAULT_BASE + IOAPIC_REGSEL) = idx;
	return *(volatile uint32_t *)(uintptr_t)(IOAPIC_DEFAULT_BASE + IOAPIC_WIN);
}

static void ioapic_write(uint32_t idx, uint32_t val)
{
	*(volatile uint32_t *)(uintptr_t)(IOAPIC_DEFAULT_BASE + IOAPIC_REGSEL) = idx;
	*(volatile uint32_t *)(uintptr_t)(IOAPIC_DEFAULT_BASE + IOAPIC_WIN) = val;
}

int main(void)
{
	unsigned pin, masked = 0;

	report_value("82093AA 3.2.2: version 0x11, maximum redirection entry 23", ioapic_read(1),
		     0x00170011);
	for (pin = 0; pin < 24; pin++)
		masked += ioapic_read(0x10 + 2 * pin) == 0x10000;
	report_value("82093AA 3.2.4: every redirection entry masked at reset", masked, 24);
	ioapic_write(0, 0x0a000000);
	report_value("82093AA 3.2.1: the ID takes bits 27:24", ioapic_read(0), 0x0a000000);
	report_value("82093AA 3.2.3: the arbitration ID follows it", ioapic_read(2), 0x0a000000);
	ioapic_write(1, 0);
	report_value("82093AA 3.2.2: the version is read-only", ioapic_read(1), 0x00170011);
	ioapic_write(0x10 + 2 * 5, 0xffffffff);
	ioapic_write(0x11 + 2 * 5, 0xffffffff);
	report_value("82093AA 3.2.4: pin 5 low dword: delivery status and remote IRR read-only",
		     ioapic_read(0x10 + 2 * 5), 0x1afff);
	report_value("82093AA 3.2.4: pin 5 high dword: destination only", ioapic_read(0x11 + 2 * 5),
		     0xff000000);
	report_value("82093AA 3.2.4: pin 4 untouched", ioapic_read(0x10 + 2 * 4), 0x10000);

	rt_idt_set_gate(VECTOR, irq_entry, 0);
	*(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + APIC_SPIV) = 0x1FF;
	__asm__ volatile("sti");
	/* Edge: to APIC ID 0, physical, fixed. */
	ioapic_write(0x11 + 2 * EDGE_PIN, 0);
	ioapic_write(0x10 + 2 * EDGE_PIN, VECTOR);
	rt_outb(IRQ_LINES + EDGE_PIN, 1);
	wait_irqs(1);
	rt_outb(IRQ_LINES + EDGE_PIN, 1);
	wait_irqs(2);
	report_value("82093AA 3.2.4: an edge pin interrupts once per rising edge", irqs, 1);
	rt_outb(IRQ_LINES + EDGE_PIN, 0);
	rt_outb(IRQ_LINES + EDGE_PIN, 1);
	wait_irqs(2);
	report_value("82093AA 3.2.4: low then high: a second interrupt", irqs, 2);
	report_value("SDM Vol. 3A 11.8.4: TMR clear for an edge-triggered vector",
		     *(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + APIC_TMR +
						       (VECTOR / 32) * 0x10) >> VECTOR % 32 & 1, 0);
	ioapic_write(0x10 + 2 * EDGE_PIN, 0x10000);

	/* Level: the pin stays high through the first EOI, so it interrupts again (remote IRR). */
	irqs = 0;
	lower_in_handler = 2;
	ioapic_write(0x11 + 2 * LEVEL_PIN, 0);
	ioapic_write(0x10 + 2 * LEVEL_PIN, IOAPIC_RTE_LEVEL | VECTOR);
	rt_outb(IRQ_LINES + LEVEL_PIN, 1);
	wait_irqs(3);
	report_value("82093AA 3.2.4: a level pin still high after the EOI interrupts again, "
		     "until lowered", irqs, 2);
	report_value("82093AA 3.2.4: remote IRR clear after the last EOI",
		     ioapic_read(0x10 + 2 * LEVEL_PIN) & IOAPIC_RTE_REMOTE_IRR, 0);
	report_value("SDM Vol. 3A 11.8.4: TMR set for a level-triggered vector",
		     *(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + APIC_TMR +
						       (VECTOR / 32) * 0x10) >> VECTOR % 32 & 1, 1);
	return report_summary();
}
