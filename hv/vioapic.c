/* A virtual I/O APIC (82093AA datasheet): indirect registers, the redirection table, pin routing. */
#include "hv/vioapic.h"

#define REG_SEL		0x00
#define REG_WIN		0x10
#define IDX_ID		0x00
#define IDX_VERSION	0x01
#define IDX_ARB		0x02
#define IDX_REDIR	0x10

/* 82093AA 3.2.2: version 0x11, maximum redirection entry 23 in bits 23:16. */
#define IOAPIC_VERSION		(0x11u | (VIOAPIC_PINS - 1) << 16)

/* Redirection entry bits (82093AA 3.2.4). */
#define RTE_VECTOR	0xffull
#define RTE_MODE_SHIFT	8
#define RTE_LOGICAL	(1ull << 11)
#define RTE_STATUS	(1ull << 12)	/* delivery status, read-only */
#define RTE_REMOTE_IRR	(1ull << 14)	/* read-only */
#define RTE_LEVEL	(1ull << 15)
#define RTE_MASKED	(1ull << 16)
#define RTE_DEST_SHIFT	56
/* Writable: vector, delivery mode, destination mode, polarity, trigger, mask, destination. */
#define RTE_WRITABLE	(0xff00000000000000ull | 0x1afffull)

void vioapic_init(struct vioapic *io)
{
	unsigned i;

	__builtin_memset(io, 0, sizeof(*io));
	for (i = 0; i < VIOAPIC_PINS; i++)
		io->redir[i] = RTE_MASKED;
}

static uint32_t read_index(const struct vioapic *io, uint32_t idx)
{
	unsigned pin = (idx - IDX_REDIR) / 2;

	switch (idx) {
	case IDX_ID:
	case IDX_ARB:	/* the arbitration ID is loaded from the ID (82093AA 3.2.3) */
		return (uint32_t)io->id << 24;
	case IDX_VERSION:
		return IOAPIC_VERSION;
	}
	if (idx < IDX_REDIR || pin >= VIOAPIC_PINS)
		return 0;
	return (uint32_t)(io->redir[pin] >> (idx & 1 ? 32 : 0));
}

uint32_t vioapic_read(struct vioapic *io, unsigned off, unsigned size)
{
	uint32_t val;

	if (size != 1 && size != 2 && size != 4)
		return 0;
	if (off == REG_SEL)
		val = io->sel;
	else if (off == REG_WIN)
		val = read_index(io, io->sel);
	else
		return 0;
	return size == 4 ? val : val & ((1u << 8 * size) - 1);
}

static void message(const struct vioapic *io, unsigned pin, struct vapic_ipi *msg)
{
	uint64_t rte = io->redir[pin];

	msg->mode = rte >> RTE_MODE_SHIFT & 7;
	msg->vector = rte & RTE_VECTOR;
	msg->shorthand = VAPIC_SH_NONE;
	msg->logical = rte & RTE_LOGICAL;
	msg->dest = rte >> RTE_DEST_SHIFT;
	msg->level = rte & RTE_LEVEL;
}

/* A level-triggered pin high, unmasked and not waiting for an EOI sends (again). */
static bool level_fire(struct vioapic *io, unsigned pin, struct vapic_ipi *msg)
{
	uint64_t rte = io->redir[pin];

	if (!(rte & RTE_LEVEL) || (rte & (RTE_MASKED | RTE_REMOTE_IRR)) ||
	    !(io->level >> pin & 1))
		return false;
	io->redir[pin] |= RTE_REMOTE_IRR;
	message(io, pin, msg);
	return true;
}

bool vioapic_write(struct vioapic *io, unsigned off, unsigned size, uint32_t val,
		   struct vapic_ipi *msg)
{
	uint32_t idx = io->sel;
	unsigned pin = (idx - IDX_REDIR) / 2;
	uint64_t half, rte;

	if (size != 4 && !(size == 1 && off == REG_SEL))
		return false;
	if (off == REG_SEL) {
		io->sel = val & 0xff;
		return false;
	}
	if (off != REG_WIN)
		return false;
	if (idx == IDX_ID) {
		io->id = val >> 24 & 0xf;
		return false;
	}
	if (idx < IDX_REDIR || pin >= VIOAPIC_PINS)
		return false;	/* version and arbitration are read-only */
	half = idx & 1 ? (uint64_t)val << 32 : val;
	rte = io->redir[pin];
	rte = idx & 1 ? (rte & 0xffffffffull) | half : (rte & ~0xffffffffull) | half;
	io->redir[pin] = (rte & RTE_WRITABLE) | (io->redir[pin] & RTE_REMOTE_IRR);
	/* An edge-triggered pin has no remote IRR to keep. */
	if (!(io->redir[pin] & RTE_LEVEL))
		io->redir[pin] &= ~RTE_REMOTE_IRR;
	return level_fire(io, pin, msg);
}

bool vioapic_set_irq(struct vioapic *io, unsigned pin, bool level, struct vapic_ipi *msg)
{
	bool was;

	if (pin >= VIOAPIC_PINS)
		return false;
	was = io->level >> pin & 1;
	io->level = level ? io->level | 1u << pin : io->level & ~(1u << pin);
	if (io->redir[pin] & RTE_LEVEL)
		return level_fire(io, pin, msg);
	if (!level || was || (io->redir[pin] & RTE_MASKED))
		return false;
	message(io, pin, msg);
	return true;
}

bool vioapic_eoi(struct vioapic *io, uint8_t vector, struct vapic_ipi *msg)
{
	bool sent = false;
	unsigned pin;

	for (pin = 0; pin < VIOAPIC_PINS; pin++) {
		if ((io->redir[pin] & RTE_VECTOR) != vector || !(io->redir[pin] & RTE_LEVEL))
			continue;
		io->redir[pin] &= ~RTE_REMOTE_IRR;
		if (!sent)
			sent = level_fire(io, pin, msg);
	}
	return sent;
}
