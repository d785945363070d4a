/* The I/O APIC's MMIO window, register indices and redirection-entry fields (Intel 82093AA datasheet). */
#ifndef PERFVISOR_X86_IOAPIC_H
#define PERFVISOR_X86_IOAPIC_H

#include "include/x86/bit.h"

/* Where a PC's I/O APIC answers; 4 KiB of MMIO (82093AA 3.0). */
#define IOAPIC_DEFAULT_BASE	0xFEC00000

/* Indirect access: select a register at IOREGSEL, read or write it at IOWIN (82093AA 3.1). */
#define IOAPIC_REGSEL		0x00
#define IOAPIC_WIN		0x10

/* Register indices (82093AA 3.2): redirection entry n is the pair 0x10 + 2n, 0x11 + 2n. */
#define IOAPIC_REG_ID		0x00
#define IOAPIC_REG_VERSION	0x01
#define IOAPIC_REG_ARB		0x02
#define IOAPIC_REG_REDIR	0x10

/* Redirection entry fields (82093AA 3.2.4). */
#define IOAPIC_RTE_VECTOR	0xFFull
#define IOAPIC_RTE_MODE_SHIFT	8
#define IOAPIC_RTE_LOGICAL	X86_BIT(11)
#define IOAPIC_RTE_STATUS	X86_BIT(12)	/* delivery status, read-only */
#define IOAPIC_RTE_REMOTE_IRR	X86_BIT(14)	/* read-only */
#define IOAPIC_RTE_LEVEL	X86_BIT(15)
#define IOAPIC_RTE_MASKED	X86_BIT(16)
#define IOAPIC_RTE_DEST_SHIFT	56

#endif
