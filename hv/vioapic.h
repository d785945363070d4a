/* A virtual I/O APIC per domain (82093AA layout at 0xFEC00000): pins routed to the VCPUs' APICs. */
#ifndef PERFVISOR_HV_VIOAPIC_H
#define PERFVISOR_HV_VIOAPIC_H

#include <stdbool.h>
#include <stdint.h>

#include "hv/vapic.h"
#include "include/x86/ioapic.h"

#define VIOAPIC_SIZE	0x1000u
#define VIOAPIC_PINS	24

struct vioapic {
	uint32_t sel;			/* IOREGSEL */
	uint8_t id;			/* IOAPICID bits 27:24 */
	uint64_t redir[VIOAPIC_PINS];	/* redirection table, remote IRR included */
	uint32_t level;			/* the pins' input levels */
};

/* Reset: ID 0, every pin masked, edge, fixed, vector 0. */
void vioapic_init(struct vioapic *io);

/*
 * Guest MMIO at IOAPIC_DEFAULT_BASE + off: IOREGSEL at 0x00 and IOWIN at 0x10, 32-bit accesses
 * (a narrower read returns the low bytes). Reads elsewhere return 0; writes elsewhere are ignored.
 * A write that unmasks a level-triggered pin still asserted sends its interrupt: true, *msg.
 */
uint32_t vioapic_read(struct vioapic *io, unsigned off, unsigned size);
bool vioapic_write(struct vioapic *io, unsigned off, unsigned size, uint32_t val,
		   struct vapic_ipi *msg);

/*
 * A device sets pin to level. True when an interrupt message goes out (fills *msg, to be routed
 * like an IPI): on a rising edge of an unmasked edge-triggered pin, or while an unmasked
 * level-triggered pin is high and its remote IRR is clear (which sending sets).
 */
bool vioapic_set_irq(struct vioapic *io, unsigned pin, bool level, struct vapic_ipi *msg);

/*
 * A local APIC's EOI of a level-triggered vector: clears the remote IRR of the pins with that
 * vector; a pin still high interrupts again (true, *msg; one message per call: the first pin).
 */
bool vioapic_eoi(struct vioapic *io, uint8_t vector, struct vapic_ipi *msg);

#endif
