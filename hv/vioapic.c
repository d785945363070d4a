/* A virtual I/O APIC (82093AA datasheet): indirect registers, the redirection table, pin routing. */
#include "hv/vioapic.h"

/* 82093AA 3.2.2: version 0x11, maximum redirection entry 23 in bits 23:16. */
#define IOAPIC_VERSION		(0x11u | (VIOAPIC_PINS - 1) << 16)

/* Writable: vector, delivery mode, destination mode, polarity, trigger, mask, destination. */
#define RTE_WRITABLE	(0xff00000000000000ull | 0x1afffull)

void vioapic_init(struct vioapic *io)
{
	unsigned i;

	__builtin_memset(io, 0, sizeof(*io));
	for (i = 0; i < VIOAPIC_PINS; i++)
		io->redir[i] = IOAPIC_RTE_MASKED;
}

static uint32_t read_index(const struct vioapic *io, uint32_t idx)
{
	unsigned pin = (idx - IOAPIC_REG_REDIR) / 2;

	switch (idx) {
	case IOAPIC_REG_ID:
	case IOAPIC_REG_ARB:	/* the arbitration ID is loaded from the ID (82093AA 3.2.3) */
		return (uint32_t)io->id << 24;
	case IOAPIC_REG_VERSION:
		return IOAPIC_VERSION;
	}
	if (idx < IOAPIC_REG_REDIR || pin >= VIOAPIC_PINS)
		return 0;
	return (uint32_t)(io->redir[pin] >> (idx & 1 ? 32 : 0));
}

uint32_t vioapic_read(struct vioapic *io, unsigned off, unsigned size)
{
	uint32_t val;

	if (size != 1 && size != 2 && size != 4)
		return 0;
	if (off == IOAPIC_REGSEL)
		val = io->sel;
	else if (off == IOAPIC_WIN)
		val = read_index(io, io->sel);
	else
		return 0;
	return size == 4 ? val : val & ((1u << 8 * size) - 1);
}

static void message(const struct vioapic *io, unsigned pin, struct vapic_ipi *msg)
{
	uint64_t rte = io->redir[pin];

	msg->mode = rte >> IOAPIC_RTE_MODE_SHIFT & 7;
	msg->vector = rte & IOAPIC_RTE_VECTOR;
	msg->shorthand = VAPIC_SH_NONE;
	msg->logical = rte & IOAPIC_RTE_LOGICAL;
	msg->x2apic = false;	/* 8-bit destinations: 0xFF broadcasts */
	msg->dest = rte >> IOAPIC_RTE_DEST_SHIFT;
	msg->level = rte & IOAPIC_RTE_LEVEL;
}

/* A level-triggered pin high, unmasked and not waiting for an EOI sends (again). */
static bool level_fire(struct vioapic *io, unsigned pin, struct vapic_ipi *msg)
{
	uint64_t rte = io->redir[pin];

	if (!(rte & IOAPIC_RTE_LEVEL) || (rte & (IOAPIC_RTE_MASKED | IOAPIC_RTE_REMOTE_IRR)) ||
	    !(io->level >> pin & 1))
		return false;
	io->redir[pin] |= IOAPIC_RTE_REMOTE_IRR;
	message(io, pin, msg);
	return true;
}

bool vioapic_write(struct vioapic *io, unsigned off, unsigned size, uint32_t val,
		   struct vapic_ipi *msg)
{
	uint32_t idx = io->sel;
	unsigned pin = (idx - IOAPIC_REG_REDIR) / 2;
	uint64_t half, rte;

	if (size != 4 && !(size == 1 && off == IOAPIC_REGSEL))
		return false;
	if (off == IOAPIC_REGSEL) {
		io->sel = val & 0xff;
		return false;
	}
	if (off != IOAPIC_WIN)
		return false;
	if (idx == IOAPIC_REG_ID) {
		io->id = val >> 24 & 0xf;
		return false;
	}
	if (idx < IOAPIC_REG_REDIR || pin >= VIOAPIC_PINS)
		return false;	/* version and arbitration are read-only */
	half = idx & 1 ? (uint64_t)val << 32 : val;
	rte = io->redir[pin];
	rte = idx & 1 ? (rte & 0xffffffffull) | half : (rte & ~0xffffffffull) | half;
	io->redir[pin] = (rte & RTE_WRITABLE) | (io->redir[pin] & IOAPIC_RTE_REMOTE_IRR);
	/* An edge-triggered pin has no remote IRR to keep. */
	if (!(io->redir[pin] & IOAPIC_RTE_LEVEL))
		io->redir[pin] &= ~IOAPIC_RTE_REMOTE_IRR;
	return level_fire(io, pin, msg);
}

bool vioapic_set_irq(struct vioapic *io, unsigned pin, bool level, struct vapic_ipi *msg)
{
	bool was;

	if (pin >= VIOAPIC_PINS)
		return false;
	was = io->level >> pin & 1;
	io->level = level ? io->level | 1u << pin : io->level & ~(1u << pin);
	if (io->redir[pin] & IOAPIC_RTE_LEVEL)
		return level_fire(io, pin, msg);
	if (!level || was || (io->redir[pin] & IOAPIC_RTE_MASKED))
		return false;
	message(io, pin, msg);
	return true;
}

bool vioapic_eoi(struct vioapic *io, uint8_t vector, struct vapic_ipi *msg)
{
	bool sent = false;
	unsigned pin;

	for (pin = 0; pin < VIOAPIC_PINS; pin++) {
		if ((io->redir[pin] & IOAPIC_RTE_VECTOR) != vector ||
		    !(io->redir[pin] & IOAPIC_RTE_LEVEL))
			continue;
		io->redir[pin] &= ~IOAPIC_RTE_REMOTE_IRR;
		if (!sent)
			sent = level_fire(io, pin, msg);
	}
	return sent;
}
