/* Unit tests for hv/vioapic.c: registers, the redirection table, edge and level pins, EOI, routing. */
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/vapic.c"
#include "hv/vioapic.c"

static struct vapic_ipi msg;

static uint32_t rd(struct vioapic *io, uint32_t idx)
{
	vioapic_write(io, 0x00, 4, idx, &msg);
	return vioapic_read(io, 0x10, 4);
}

static bool wr(struct vioapic *io, uint32_t idx, uint32_t val)
{
	vioapic_write(io, 0x00, 4, idx, &msg);
	return vioapic_write(io, 0x10, 4, val, &msg);
}

/* Pin's redirection entry: low dword at 0x10 + 2 * pin, high (destination) at 0x11 + 2 * pin. */
static bool route(struct vioapic *io, unsigned pin, uint32_t lo, uint8_t dest)
{
	wr(io, 0x11 + 2 * pin, (uint32_t)dest << 24);
	return wr(io, 0x10 + 2 * pin, lo);
}

static void test_registers(void)
{
	struct vioapic io;
	unsigned pin, masked = 0;

	vioapic_init(&io);
	check(rd(&io, 0x01) == 0x00170011, "version 0x11, maximum redirection entry 23");
	check(rd(&io, 0x00) == 0 && rd(&io, 0x02) == 0, "ID and arbitration ID 0 at reset");
	for (pin = 0; pin < VIOAPIC_PINS; pin++)
		masked += rd(&io, 0x10 + 2 * pin) == 0x10000 && rd(&io, 0x11 + 2 * pin) == 0;
	check(masked == 24, "all 24 entries masked at reset");
	wr(&io, 0x00, 0xffffffff);
	check(rd(&io, 0x00) == 0x0f000000 && rd(&io, 0x02) == 0x0f000000,
	      "ID takes bits 27:24; the arbitration ID follows it");
	wr(&io, 0x01, 0);
	wr(&io, 0x02, 0);
	check(rd(&io, 0x01) == 0x00170011, "version and arbitration ID are read-only");
	wr(&io, 0x10, 0xffffffff);
	wr(&io, 0x11, 0xffffffff);
	check(rd(&io, 0x10) == 0x1afff && rd(&io, 0x11) == 0xff000000,
	      "redirection entry: delivery status, remote IRR and reserved bits read 0");
	check(rd(&io, 0x40) == 0 && rd(&io, 0x03) == 0, "indexes past the table read 0");
	vioapic_write(&io, 0x00, 4, 0x01, &msg);
	check(vioapic_read(&io, 0x00, 4) == 0x01 && vioapic_read(&io, 0x10, 1) == 0x11 &&
	      vioapic_read(&io, 0x20, 4) == 0 && vioapic_read(&io, 0x10, 8) == 0,
	      "IOREGSEL reads back; narrow IOWIN reads; other offsets and sizes read 0");
}

static void test_edge(void)
{
	struct vioapic io;

	vioapic_init(&io);
	check(!vioapic_set_irq(&io, 3, true, &msg), "a masked pin sends nothing");
	vioapic_set_irq(&io, 3, false, &msg);
	route(&io, 3, 0x41, 2);
	check(vioapic_set_irq(&io, 3, true, &msg) && msg.mode == VAPIC_DM_FIXED &&
	      msg.vector == 0x41 && msg.dest == 2 && !msg.logical && !msg.level &&
	      msg.shorthand == VAPIC_SH_NONE, "rising edge: fixed 0x41 to APIC ID 2, edge");
	check(!vioapic_set_irq(&io, 3, true, &msg), "still high: no new edge, nothing sent");
	vioapic_set_irq(&io, 3, false, &msg);
	check(vioapic_set_irq(&io, 3, true, &msg), "low then high: a second edge");
	vioapic_set_irq(&io, 4, false, &msg);
	route(&io, 4, 0x400 | 0x800, 0x03);
	check(vioapic_set_irq(&io, 4, true, &msg) && msg.mode == VAPIC_DM_NMI && msg.logical &&
	      msg.dest == 3, "NMI delivery, logical destination 0x03");
	check(!vioapic_set_irq(&io, 24, true, &msg), "pin 24 does not exist");
}

static void test_level(void)
{
	struct vioapic io;

	vioapic_init(&io);
	route(&io, 9, 0x10000 | 0x8000 | 0x52, 0);
	check(!vioapic_set_irq(&io, 9, true, &msg), "masked level pin: nothing yet");
	check(wr(&io, 0x10 + 18, 0x8000 | 0x52) && msg.vector == 0x52 && msg.level,
	      "unmasking a high level pin sends it, level-triggered");
	check(rd(&io, 0x10 + 18) & 0x4000, "remote IRR set while the APIC holds it");
	check(!vioapic_set_irq(&io, 9, true, &msg), "remote IRR set: not sent again");
	check(vioapic_eoi(&io, 0x52, &msg) && msg.vector == 0x52,
	      "EOI with the pin still high: sent again");
	vioapic_set_irq(&io, 9, false, &msg);
	check(!vioapic_eoi(&io, 0x52, &msg) && !(rd(&io, 0x10 + 18) & 0x4000),
	      "EOI with the pin low: remote IRR clear, nothing sent");
	check(!vioapic_eoi(&io, 0x53, &msg), "EOI of another vector changes nothing");
	wr(&io, 0x10 + 18, 0x52);
	check(!(rd(&io, 0x10 + 18) & 0x4000), "an edge-triggered entry has no remote IRR");
}

/* The messages route like IPIs: the vAPIC takes level-triggered ones into TMR and reports the EOI. */
static void test_apic_side(void)
{
	struct vapic a;
	struct vioapic io;

	vapic_init(&a, 0);
	vapic_write(&a, 0xf0, 4, 0x1ff, 0, &msg);
	vioapic_init(&io);
	route(&io, 1, 0x8000 | 0x60, 0);
	vioapic_set_irq(&io, 1, true, &msg);
	check(vapic_is_target(&a, &msg, false) && vapic_accept(&a, &msg) &&
	      vapic_pending(&a) == 0x60, "the message reaches APIC 0's IRR");
	check(vapic_read(&a, 0x180 + 0x30, 4, 0) == 1u, "TMR bit 0x60 set: level-triggered");
	vapic_ack(&a, 0x60);
	vapic_write(&a, 0xb0, 4, 0, 0, &msg);
	check(a.level_eoi == 0x60, "its EOI is reported for the I/O APIC");
	check(vapic_read(&a, 0x180 + 0x30, 4, 0) == 1u,
	      "TMR stays set after the EOI (SDM Vol. 3A 11.8.4)");
	msg.level = false;
	vapic_accept(&a, &msg);
	check(vapic_read(&a, 0x180 + 0x30, 4, 0) == 0, "an edge-triggered 0x60 clears it");
	msg.mode = VAPIC_DM_NMI;
	check(vapic_accept(&a, &msg) && vapic_take_nmi(&a), "NMI mode latches an NMI");
	msg.mode = VAPIC_DM_INIT;
	check(!vapic_accept(&a, &msg), "INIT is left to the caller");
}

int main(void)
{
	test_registers();
	test_edge();
	test_level();
	test_apic_side();
	return unit_summary();
}
