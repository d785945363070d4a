/* Test guest: the I/O APIC at 0xFEC00000 (82093AA registers) answers as on a PC. */
#include <stdint.h>

#include "guest-stub/lib/report.h"

#define IOAPIC		0xFEC00000u
#define IOREGSEL	0x00
#define IOWIN		0x10

static uint32_t ioapic_read(uint32_t idx)
{
	*(volatile uint32_t *)(uintptr_t)(IOAPIC + IOREGSEL) = idx;
	return *(volatile uint32_t *)(uintptr_t)(IOAPIC + IOWIN);
}

static void ioapic_write(uint32_t idx, uint32_t val)
{
	*(volatile uint32_t *)(uintptr_t)(IOAPIC + IOREGSEL) = idx;
	*(volatile uint32_t *)(uintptr_t)(IOAPIC + IOWIN) = val;
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
	return report_summary();
}
