/* A virtual local APIC per VCPU (xAPIC MMIO or x2APIC MSRs): priorities, timer, IPIs and PMIs. */
#ifndef PERFVISOR_HV_VAPIC_H
#define PERFVISOR_HV_VAPIC_H

#include <stdbool.h>
#include <stdint.h>

#include "include/x86/apic.h"

#define VAPIC_NO_DEADLINE	UINT64_MAX

/* The x2APIC registers' MSRs: 0x800 + MMIO offset / 16 (SDM Vol. 3A 11.12.1.2, table 11-6). */
#define VAPIC_MSR_FIRST		0x800u
#define VAPIC_MSR_LAST		0x8FFu

/* LVT entries in register order from 0x320. */
enum vapic_lvt {
	VAPIC_LVT_TIMER,
	VAPIC_LVT_THERMAL,
	VAPIC_LVT_PMC,
	VAPIC_LVT_LINT0,
	VAPIC_LVT_LINT1,
	VAPIC_LVT_ERROR,
	VAPIC_LVT_N
};

/* Delivery modes, ICR and LVT bits 10:8 (SDM Vol. 3A 11.6.1). */
enum vapic_dm {
	VAPIC_DM_FIXED = 0,
	VAPIC_DM_LOWEST = 1,
	VAPIC_DM_SMI = 2,
	VAPIC_DM_NMI = 4,
	VAPIC_DM_INIT = 5,
	VAPIC_DM_SIPI = 6,
};

/* Destination shorthands, ICR bits 19:18. */
enum vapic_shorthand {
	VAPIC_SH_NONE,
	VAPIC_SH_SELF,
	VAPIC_SH_ALL,		/* including self */
	VAPIC_SH_OTHERS,	/* all excluding self */
};

/* An IPI the guest asked for by writing ICR low; the hypervisor routes it. */
struct vapic_ipi {
	uint8_t mode;		/* enum vapic_dm as written; the caller drops modes it lacks */
	uint8_t vector;		/* fixed/lowest: vector; SIPI: start page */
	uint8_t shorthand;	/* enum vapic_shorthand */
	bool logical;		/* dest is a logical (LDR) destination, else an APIC ID */
	bool x2apic;		/* dest has x2APIC's 32 bits (broadcast 0xFFFFFFFF), else 8 */
	uint32_t dest;		/* ICR bits 63:56 in xAPIC mode, 63:32 in x2APIC mode */
	bool level;		/* an IOAPIC's level-triggered pin: its EOI goes back (TMR) */
};

/* What vapic_pmi() did. */
enum vapic_pmi {
	VAPIC_PMI_NONE,		/* LVTPC masked, or a mode not modelled: nothing delivered */
	VAPIC_PMI_FIXED,	/* its vector was offered to the IRR */
	VAPIC_PMI_NMI,		/* the caller must inject an NMI */
};

/* What vapic_msr_write() did. */
enum vapic_msr {
	VAPIC_MSR_GP,		/* the WRMSR raises #GP and changes nothing */
	VAPIC_MSR_OK,
	VAPIC_MSR_IPI,		/* done, and *ipi is to be sent */
};

struct vapic {
	uint32_t id;		/* the ID register (8 bits in xAPIC mode): routing uses it */
	uint32_t initial_id;	/* CPUID's initial APIC ID, the x2APIC ID; restored by a reset */
	uint64_t base_msr;	/* IA32_APIC_BASE */
	bool no_x2apic;		/* CPUID hides x2APIC mode (EXTD reserved); resets keep it */
	unsigned nmi_pending;	/* NMIs waiting: 2 at most, 1 while NMIs are blocked */
	uint32_t tpr, ldr, dfr, spiv, icr_lo, icr_hi;
	uint32_t esr;		/* what the guest reads */
	uint32_t esr_pending;	/* errors since the last ESR write */
	uint32_t lvt[VAPIC_LVT_N];
	uint32_t irr[8], isr[8], tmr[8];
	int level_eoi;		/* a level-triggered vector the last EOI retired, for the IOAPIC; or -1 */
	uint32_t timer_initial, timer_dcr;
	bool timer_armed;
	uint64_t timer_start;	/* guest TSC at which the count was timer_count */
	uint32_t timer_count;
};

/*
 * Power-up state (SDM Vol. 3A 11.4.7.1): enabled in xAPIC mode at APIC_DEFAULT_BASE; APIC ID 0 is
 * the bootstrap processor; x2APIC mode offered.
 */
void vapic_init(struct vapic *a, uint32_t id);

/*
 * An INIT IPI (SDM Vol. 3A 11.4.7.3, 11.12.5.1): the registers go back to their power-up values
 * but IA32_APIC_BASE (so x2APIC mode) and the APIC ID stay.
 */
void vapic_init_ipi(struct vapic *a);

/*
 * IA32_APIC_BASE. vapic_set_base() returns false when the write must raise #GP: reserved bits,
 * including those at and above maxphyaddr and EXTD when no_x2apic, and the transitions SDM Vol.
 * 3A 11.12.5 forbids (EXTD without EN; x2APIC to xAPIC; disabled to x2APIC). Clearing the enable
 * bit disables the APIC in hardware and returns it to its power-up state (SDM Vol. 3A 11.4.3);
 * setting it again enables it in that state, in xAPIC mode. The base may move (the page is
 * emulated where nothing else is mapped).
 */
uint64_t vapic_get_base(const struct vapic *a);
bool vapic_set_base(struct vapic *a, uint64_t val, unsigned maxphyaddr);
/* Whether the APIC is enabled in IA32_APIC_BASE: CPUID.1:EDX.APIC follows it (SDM Vol. 3A 11.4.3). */
bool vapic_hw_enabled(const struct vapic *a);
/* Whether the APIC is in x2APIC mode (IA32_APIC_BASE.EXTD, SDM Vol. 3A 11.12.1). */
bool vapic_x2apic(const struct vapic *a);
/* Whether guest-physical gpa is in the register page of this APIC, enabled in xAPIC mode. */
bool vapic_page(const struct vapic *a, uint64_t gpa);

/*
 * Guest MMIO at APIC_DEFAULT_BASE + off, at guest TSC now. Registers are 32-bit at
 * 16-byte aligned offsets (SDM Vol. 3A 11.4.1). A 1, 2 or 4-byte read inside the
 * first dword of a register returns those bytes; any other read returns 0.
 * Only 4-byte writes at 16-byte aligned offsets take effect. Reserved offsets set
 * ESR bit 7 (illegal register address); writes to read-only registers are
 * ignored. vapic_write() returns true and fills *ipi when the write asks for an IPI.
 */
uint32_t vapic_read(struct vapic *a, unsigned off, unsigned size, uint64_t now);
bool vapic_write(struct vapic *a, unsigned off, unsigned size, uint32_t val, uint64_t now,
		 struct vapic_ipi *ipi);

/*
 * x2APIC mode's RDMSR and WRMSR of msr (VAPIC_MSR_FIRST..VAPIC_MSR_LAST) at guest TSC now, by
 * SDM Vol. 3A table 11-6. Both #GP (false, VAPIC_MSR_GP) outside x2APIC mode (11.12.2), for an
 * MSR with no register, a read of a write-only one (EOI, SELF IPI), a write of a read-only one,
 * and a write that sets a reserved bit (bits 63:32 of all but the ICR, 11.12.1.3; a non-zero EOI
 * or ESR write). Writing the ICR or SELF IPI fills *ipi (VAPIC_MSR_IPI).
 */
bool vapic_msr_read(struct vapic *a, uint32_t msr, uint64_t now, uint64_t *val);
enum vapic_msr vapic_msr_write(struct vapic *a, uint32_t msr, uint64_t val, uint64_t now,
			       struct vapic_ipi *ipi);

/*
 * Whether this APIC is a destination of ipi (never while disabled); self: it is the sender's.
 * An APIC in x2APIC mode matches its x2APIC ID, or its logical ID derived from it (SDM Vol. 3A
 * 11.12.10); an 8-bit destination (xAPIC ICR, I/O APIC) reaches it as the same number.
 */
bool vapic_is_target(const struct vapic *a, const struct vapic_ipi *ipi, bool self);

/* A fixed, edge-triggered interrupt arrives (IPI or device). */
void vapic_set_irr(struct vapic *a, uint8_t vector);

/*
 * An interrupt message (IPI or IOAPIC) for this APIC: fixed and lowest priority go to the IRR
 * (a level-triggered one sets TMR, so that its EOI sets level_eoi), NMI latches the NMI.
 * Returns false for a mode the caller must handle itself (INIT, SIPI) or drops (SMI).
 */
bool vapic_accept(struct vapic *a, const struct vapic_ipi *ipi);

/* Highest IRR vector the VCPU may take now, or -1 (guest RFLAGS.IF is the caller's). */
int vapic_pending(const struct vapic *a);

/* The hypervisor injected vector: it moves from IRR to ISR. */
void vapic_ack(struct vapic *a, uint8_t vector);

/*
 * The timer counts guest TSC ticks divided by the divide configuration: its input
 * clock is the guest TSC, 1:1. vapic_timer_update() delivers expirations up to now
 * (a periodic timer that missed several periods fires once) and re-arms.
 * vapic_timer_deadline() is the guest TSC of the next expiry that would deliver
 * an interrupt, or VAPIC_NO_DEADLINE.
 */
void vapic_timer_update(struct vapic *a, uint64_t now);
uint64_t vapic_timer_deadline(const struct vapic *a);

/* A counter overflowed with its PMI bit set: deliver through LVTPC (NMI mode latches an NMI). */
enum vapic_pmi vapic_pmi(struct vapic *a);

/*
 * An NMI arrives (IPI, LVTPC, IOAPIC). A CPU delivers one NMI and latches one more while the
 * first is handled (SDM Vol. 3A 6.7.1); here NMIs are delivered at the next VM entry, so two
 * may wait, the one a CPU would already be delivering and the latched one. More merge. A
 * disabled APIC takes none.
 */
void vapic_nmi(struct vapic *a);
/* NMIs are blocked (a handler runs until its IRET): only the latched one waits. */
void vapic_nmi_blocked(struct vapic *a);
/* Takes one pending NMI for injection: true if there was one. */
bool vapic_take_nmi(struct vapic *a);
/* An NMI or an interrupt the VCPU may take is pending: a halted VCPU wakes. */
bool vapic_has_event(const struct vapic *a);

#endif
