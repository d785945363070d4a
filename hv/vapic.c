/* A virtual local APIC per VCPU (xAPIC MMIO or x2APIC MSRs): priorities, timer, IPIs and PMIs. */
#include "hv/vapic.h"

/* SDM Vol. 3A 11.4.8: version 0x14 (xAPIC); Max LVT Entry = six entries minus one, no CMCI. */
#define VERSION		(0x14 | (VAPIC_LVT_N - 1) << 16)

#define SPIV_MASK	0x3ff		/* vector, software enable, focus checking */
#define ICR_LO_MASK	0x000ccfff	/* delivery status (bit 12) always reads 0 */
#define DCR_MASK	0x0b
/*
 * SDM Vol. 3A 11.12.9 (Figure 11-28): x2APIC's ICR has no delivery status; bits 12, 13, 16-17
 * and 20-31 are reserved.
 */
#define X2_ICR_RESERVED	0xfff33000u
/* Read-only LVT bits (Figure 11-8): delivery status, and the LINTs' remote IRR. */
#define LVT_STATUS	(1u << 12)
#define LVT_REMOTE_IRR	(1u << 14)
/* SDM Vol. 3A 11.12.11: the SELF IPI register's bits 31:8 are reserved. */
#define SELF_IPI_VECTOR	0xffu

/* Writable bits of each LVT entry (SDM Vol. 3A Figure 11-8); no TSC-deadline mode (bit 18). */
static const uint32_t lvt_mask[VAPIC_LVT_N] = {
	[VAPIC_LVT_TIMER] = 0x300ff,
	[VAPIC_LVT_THERMAL] = 0x107ff,
	[VAPIC_LVT_PMC] = 0x107ff,
	[VAPIC_LVT_LINT0] = 0x1a7ff,
	[VAPIC_LVT_LINT1] = 0x1a7ff,
	[VAPIC_LVT_ERROR] = 0x100ff,
};

static bool test_vec(const uint32_t *r, unsigned v)
{
	return r[v / 32] >> v % 32 & 1;
}

static void set_vec(uint32_t *r, unsigned v)
{
	r[v / 32] |= 1u << v % 32;
}

static void clear_vec(uint32_t *r, unsigned v)
{
	r[v / 32] &= ~(1u << v % 32);
}

static int highest_vec(const uint32_t *r)
{
	int i;

	for (i = 7; i >= 0; i--)
		if (r[i])
			return i * 32 + 31 - __builtin_clz(r[i]);
	return -1;
}

/*
 * SDM Vol. 3A 11.4.7.1: the registers after power-up or reset; the ID goes back to the initial
 * APIC ID, IA32_APIC_BASE stays.
 */
static void reset_regs(struct vapic *a)
{
	uint64_t base = a->base_msr;
	uint32_t id = a->initial_id;
	bool no_x2apic = a->no_x2apic;
	unsigned i;

	__builtin_memset(a, 0, sizeof(*a));
	a->id = a->initial_id = id;
	a->base_msr = base;
	a->no_x2apic = no_x2apic;
	a->dfr = 0xffffffff;
	a->spiv = 0xff;
	a->level_eoi = -1;
	for (i = 0; i < VAPIC_LVT_N; i++)
		a->lvt[i] = APIC_LVT_MASKED;
}

void vapic_init(struct vapic *a, uint32_t id)
{
	a->initial_id = id;
	a->base_msr = APIC_DEFAULT_BASE | APIC_BASE_ENABLE | (id ? 0 : APIC_BASE_BSP);
	a->no_x2apic = false;
	reset_regs(a);
}

void vapic_init_ipi(struct vapic *a)
{
	uint32_t id = a->id;

	reset_regs(a);
	a->id = id;
}

uint64_t vapic_get_base(const struct vapic *a)
{
	return a->base_msr;
}

bool vapic_hw_enabled(const struct vapic *a)
{
	return a->base_msr & APIC_BASE_ENABLE;
}

bool vapic_x2apic(const struct vapic *a)
{
	return a->base_msr & APIC_BASE_EXTD;
}

/* SDM Vol. 3A 11.12.2: in x2APIC mode the MMIO page is not decoded, as if the APIC were off. */
bool vapic_page(const struct vapic *a, uint64_t gpa)
{
	return vapic_hw_enabled(a) && !vapic_x2apic(a) &&
	       (gpa & ~0xfffull) == (a->base_msr & ~0xfffull);
}

/*
 * SDM Vol. 3A 11.4.4 (Figure 11-5): bits 7:0 and 9 are reserved, as are the base bits at and
 * above MAXPHYADDR, and EXTD without x2APIC in CPUID (11.12.1). EN and EXTD move between the
 * states of 11.12.5 (Figure 11-27).
 */
bool vapic_set_base(struct vapic *a, uint64_t val, unsigned maxphyaddr)
{
	uint64_t reserved = 0x2ff | (a->no_x2apic ? APIC_BASE_EXTD : 0);
	bool en = val & APIC_BASE_ENABLE, extd = val & APIC_BASE_EXTD;

	if (maxphyaddr < 64)
		reserved |= ~0ull << maxphyaddr;
	if (val & reserved)
		return false;
	/* EXTD without EN is invalid; x2APIC goes only to disabled, disabled only to xAPIC. */
	if ((extd && !en) || (vapic_x2apic(a) && en && !extd) || (!vapic_hw_enabled(a) && extd))
		return false;
	/* SDM Vol. 3A 11.4.3: a hardware disable loses the APIC's state (back to power-up). */
	if (vapic_hw_enabled(a) && !en) {
		a->base_msr = val;
		reset_regs(a);
		return true;
	}
	/* SDM Vol. 3A 11.12.5.1: in x2APIC mode the ID is the read-only x2APIC ID. */
	if (extd)
		a->id = a->initial_id;
	a->base_msr = val;
	return true;
}

/*
 * SDM Vol. 3A 11.12.10.2: the logical x2APIC ID is derived from the x2APIC ID: cluster ID[19:4]
 * in bits 31:16, and bit ID[3:0] set in bits 15:0.
 */
static uint32_t x2apic_ldr(const struct vapic *a)
{
	return (a->id >> 4) << 16 | 1u << (a->id & 0xf);
}

static bool deliver_fixed(struct vapic *a, unsigned vector);

/*
 * SDM Vol. 3A 11.5.3: record the error and signal it through the LVT error entry.
 * Only a new error bit signals, so an illegal error vector cannot loop.
 */
static void raise_error(struct vapic *a, uint32_t bit)
{
	if (a->esr_pending & bit)
		return;
	a->esr_pending |= bit;
	if (!(a->lvt[VAPIC_LVT_ERROR] & APIC_LVT_MASKED))
		deliver_fixed(a, a->lvt[VAPIC_LVT_ERROR] & 0xff);
}

/*
 * SDM Vol. 3A 11.4.7.2: a software-disabled APIC takes only INIT, NMI, SMI and
 * SIPI, so fixed interrupts are dropped. Vectors 0-15 are illegal (11.5.2).
 * Returns whether the vector went to the IRR.
 */
static bool deliver_fixed(struct vapic *a, unsigned vector)
{
	if (!(a->spiv & APIC_SPIV_ENABLE))
		return false;
	if (vector < 16) {
		raise_error(a, APIC_ESR_RECV_ILLEGAL);
		return false;
	}
	set_vec(a->irr, vector);
	return true;
}

void vapic_set_irr(struct vapic *a, uint8_t vector)
{
	deliver_fixed(a, vector);
}

/* SDM Vol. 3A 11.8.4: TMR records the trigger mode of an accepted interrupt. */
bool vapic_accept(struct vapic *a, const struct vapic_ipi *ipi)
{
	switch (ipi->mode) {
	case VAPIC_DM_FIXED:
	case VAPIC_DM_LOWEST:
		if (!deliver_fixed(a, ipi->vector))
			return true;
		if (ipi->level)
			set_vec(a->tmr, ipi->vector);
		else
			clear_vec(a->tmr, ipi->vector);
		return true;
	case VAPIC_DM_NMI:
		vapic_nmi(a);	/* SDM Vol. 3A 11.6.1: the vector is ignored */
		return true;
	case VAPIC_DM_SMI:
		return true;	/* no SMM: dropped */
	default:
		return false;
	}
}

/* SDM Vol. 3A 11.8.3.1: PPR is TPR unless the highest in-service class is above it. */
static uint32_t ppr(const struct vapic *a)
{
	int isrv = highest_vec(a->isr);
	uint32_t isr_class = isrv < 0 ? 0 : (uint32_t)isrv & 0xf0;

	return (a->tpr & 0xf0) >= isr_class ? a->tpr : isr_class;
}

/* SDM Vol. 3A 11.8.4: the highest IRR vector goes to the core if its class is above PPR's. */
int vapic_pending(const struct vapic *a)
{
	int irrv = highest_vec(a->irr);

	if (irrv < 0 || ((uint32_t)irrv & 0xf0) <= (ppr(a) & 0xf0))
		return -1;
	return irrv;
}

void vapic_ack(struct vapic *a, uint8_t vector)
{
	if (!test_vec(a->irr, vector))
		return;
	clear_vec(a->irr, vector);
	set_vec(a->isr, vector);
}

/*
 * SDM Vol. 3A 11.8.5: EOI retires the highest-priority in-service interrupt; a level-triggered
 * one (TMR set; it stays set until an edge-triggered one is accepted, 11.8.4) is broadcast to
 * the I/O APICs.
 */
static void eoi(struct vapic *a)
{
	int isrv = highest_vec(a->isr);

	if (isrv < 0)
		return;
	clear_vec(a->isr, isrv);
	if (test_vec(a->tmr, isrv))
		a->level_eoi = isrv;
}

/* SDM Vol. 3A Figure 11-10: DCR bits 3,1:0 = 111b divide by 1, else by 2 << value. */
static unsigned timer_shift(const struct vapic *a)
{
	unsigned v = (a->timer_dcr >> 1 & 4) | (a->timer_dcr & 3);

	return (v + 1) & 7;
}

static uint64_t timer_expiry(const struct vapic *a)
{
	uint64_t ticks = (uint64_t)a->timer_count << timer_shift(a);

	return a->timer_start > UINT64_MAX - ticks ? UINT64_MAX : a->timer_start + ticks;
}

void vapic_timer_update(struct vapic *a, uint64_t now)
{
	uint64_t expiry, period;

	if (!a->timer_armed)
		return;
	expiry = timer_expiry(a);
	if (now < expiry)
		return;
	/* SDM Vol. 3A 11.5.4: the mask stops the interrupt, not the count. */
	if (!(a->lvt[VAPIC_LVT_TIMER] & APIC_LVT_MASKED))
		deliver_fixed(a, a->lvt[VAPIC_LVT_TIMER] & 0xff);
	if (a->lvt[VAPIC_LVT_TIMER] & APIC_LVT_PERIODIC) {
		/* Reload from the initial count; periods missed entirely are skipped. */
		period = (uint64_t)a->timer_initial << timer_shift(a);
		a->timer_start = expiry + (now - expiry) / period * period;
		a->timer_count = a->timer_initial;
	} else {
		a->timer_armed = false;
		a->timer_count = 0;
	}
}

uint64_t vapic_timer_deadline(const struct vapic *a)
{
	if (!a->timer_armed || (a->lvt[VAPIC_LVT_TIMER] & APIC_LVT_MASKED))
		return VAPIC_NO_DEADLINE;
	return timer_expiry(a);
}

/* Current count at now, which vapic_timer_update() has already reached. */
static uint32_t timer_current(const struct vapic *a, uint64_t now)
{
	uint64_t elapsed = now > a->timer_start ? now - a->timer_start : 0;

	if (!a->timer_armed)
		return 0;
	return a->timer_count - (elapsed >> timer_shift(a));
}

enum vapic_pmi vapic_pmi(struct vapic *a)
{
	uint32_t lvt = a->lvt[VAPIC_LVT_PMC];

	if (lvt & APIC_LVT_MASKED)
		return VAPIC_PMI_NONE;
	/* SDM Vol. 3A Figure 11-8 note: delivering a PMI sets the LVTPC mask bit. */
	a->lvt[VAPIC_LVT_PMC] |= APIC_LVT_MASKED;
	switch (lvt >> 8 & 7) {
	case VAPIC_DM_FIXED:
		deliver_fixed(a, lvt & 0xff);
		return VAPIC_PMI_FIXED;
	case VAPIC_DM_NMI:
		/* SDM Vol. 3B 20.6.3 / Vol. 3A 11.5.1: what Linux perf programs. */
		vapic_nmi(a);
		return VAPIC_PMI_NMI;
	default:
		return VAPIC_PMI_NONE;
	}
}

void vapic_nmi(struct vapic *a)
{
	if (vapic_hw_enabled(a) && a->nmi_pending < 2)
		a->nmi_pending++;
}

void vapic_nmi_blocked(struct vapic *a)
{
	if (a->nmi_pending > 1)
		a->nmi_pending = 1;
}

bool vapic_take_nmi(struct vapic *a)
{
	if (!a->nmi_pending)
		return false;
	a->nmi_pending--;
	return true;
}

bool vapic_has_event(const struct vapic *a)
{
	return a->nmi_pending || vapic_pending(a) >= 0;
}

/*
 * SDM Vol. 3A 11.6.2: physical or logical (flat or cluster) destination, 0xFF broadcasts;
 * x2APIC mode (11.12.10): 32-bit IDs, cluster logical IDs, 0xFFFFFFFF broadcasts.
 * A disabled APIC is like none (11.4.3): it receives nothing.
 */
bool vapic_is_target(const struct vapic *a, const struct vapic_ipi *ipi, bool self)
{
	uint32_t ldr = a->ldr >> 24;

	if (!vapic_hw_enabled(a))
		return false;
	switch (ipi->shorthand) {
	case VAPIC_SH_SELF:
		return self;
	case VAPIC_SH_ALL:
		return true;
	case VAPIC_SH_OTHERS:
		return !self;
	}
	if (ipi->dest == (ipi->x2apic ? 0xffffffffu : 0xff))
		return true;
	if (!ipi->logical)
		return ipi->dest == a->id;
	if (vapic_x2apic(a)) {
		ldr = x2apic_ldr(a);
		return (ldr >> 16) == (ipi->dest >> 16) && (ldr & ipi->dest & 0xffff);
	}
	if (ipi->dest > 0xff)
		return false;	/* an xAPIC's logical IDs have 8 bits */
	if (a->dfr >> 28 == 0xf)
		return ldr & ipi->dest;
	return (ldr >> 4) == (ipi->dest >> 4) && (ldr & ipi->dest & 0xf);
}

/* Register value for a read; reserved offsets flag an illegal register address. */
static uint32_t read_reg(struct vapic *a, unsigned reg, uint64_t now)
{
	if (reg >= APIC_ISR && reg < APIC_TMR)
		return a->isr[(reg - APIC_ISR) >> 4];
	if (reg >= APIC_TMR && reg < APIC_IRR)
		return a->tmr[(reg - APIC_TMR) >> 4];
	if (reg >= APIC_IRR && reg < APIC_ESR)
		return a->irr[(reg - APIC_IRR) >> 4];
	if (reg >= APIC_LVT_TIMER && reg < APIC_TIMER_ICR)
		return a->lvt[(reg - APIC_LVT_TIMER) >> 4];
	switch (reg) {
	case APIC_ID:
		return (uint32_t)a->id << 24;
	case APIC_VERSION:
		return VERSION;
	case APIC_TPR:
		return a->tpr;
	case APIC_APR:	/* APR and RRD: not on Pentium 4 and later, Table 11-1 note 1 */
	case APIC_RRD:
	case APIC_EOI:	/* write-only */
		return 0;
	case APIC_PPR:
		return ppr(a);
	case APIC_LDR:
		return a->ldr;
	case APIC_DFR:
		return a->dfr;
	case APIC_SPIV:
		return a->spiv;
	case APIC_ESR:
		return a->esr;
	case APIC_ICR_LO:
		return a->icr_lo;
	case APIC_ICR_HI:
		return a->icr_hi;
	case APIC_TIMER_ICR:
		return a->timer_initial;
	case APIC_TIMER_CCR:
		return timer_current(a, now);
	case APIC_TIMER_DCR:
		return a->timer_dcr;
	default:
		raise_error(a, APIC_ESR_ILLEGAL_REG);
		return 0;
	}
}

uint32_t vapic_read(struct vapic *a, unsigned off, unsigned size, uint64_t now)
{
	unsigned byte = off & 0xf;

	if (off >= 0x1000 || (size != 1 && size != 2 && size != 4) || byte + size > 4)
		return 0;
	vapic_timer_update(a, now);
	return read_reg(a, off - byte, now) >> 8 * byte & (0xffffffffu >> (32 - 8 * size));
}

/* ICR low written: SDM Vol. 3A 11.6.1. Returns whether an IPI goes out. */
static bool send_ipi(struct vapic *a, struct vapic_ipi *ipi)
{
	ipi->mode = a->icr_lo >> 8 & 7;
	ipi->vector = a->icr_lo & 0xff;
	ipi->shorthand = a->icr_lo >> 18 & 3;
	ipi->logical = a->icr_lo & APIC_ICR_LOGICAL;
	ipi->x2apic = vapic_x2apic(a);
	ipi->dest = ipi->x2apic ? a->icr_hi : a->icr_hi >> 24;
	ipi->level = false;
	/* An INIT level de-assert only resynchronizes arbitration IDs (11.4.7.4): not sent. */
	if (ipi->mode == VAPIC_DM_INIT && !(a->icr_lo & APIC_ICR_ASSERT))
		return false;
	if ((ipi->mode == VAPIC_DM_FIXED || ipi->mode == VAPIC_DM_LOWEST) && ipi->vector < 16) {
		raise_error(a, APIC_ESR_SEND_ILLEGAL);
		return false;
	}
	return true;
}

/* A register write of either mode, once the mode's own checks passed; true: *ipi is to be sent. */
static bool write_reg(struct vapic *a, unsigned off, uint32_t val, uint64_t now,
		      struct vapic_ipi *ipi)
{
	unsigned i;

	if (off >= APIC_LVT_TIMER && off < APIC_TIMER_ICR) {
		i = (off - APIC_LVT_TIMER) >> 4;
		a->lvt[i] = val & lvt_mask[i];
		/* SDM Vol. 3A 11.4.7.2: while software-disabled the masks cannot be cleared. */
		if (!(a->spiv & APIC_SPIV_ENABLE))
			a->lvt[i] |= APIC_LVT_MASKED;
		return false;
	}
	switch (off) {
	case APIC_TPR:
		a->tpr = val & 0xff;
		break;
	case APIC_EOI:
		eoi(a);
		break;
	case APIC_LDR:
		a->ldr = val & 0xff000000;
		break;
	case APIC_DFR:
		a->dfr = val | 0x0fffffff;	/* bits 27:0 read as 1s */
		break;
	case APIC_SPIV:
		a->spiv = val & SPIV_MASK;
		if (!(a->spiv & APIC_SPIV_ENABLE))
			for (i = 0; i < VAPIC_LVT_N; i++)
				a->lvt[i] |= APIC_LVT_MASKED;
		break;
	case APIC_ESR:
		/* SDM Vol. 3A 11.5.3: a write latches the errors seen since the last one. */
		a->esr = a->esr_pending;
		a->esr_pending = 0;
		break;
	case APIC_ICR_LO:
		a->icr_lo = val & ICR_LO_MASK;
		return send_ipi(a, ipi);
	case APIC_ICR_HI:
		a->icr_hi = val & 0xff000000;
		break;
	case APIC_TIMER_ICR:
		/* SDM Vol. 3A 11.5.4: an initial count (re)starts the timer; 0 stops it. */
		a->timer_initial = val;
		a->timer_count = val;
		a->timer_start = now;
		a->timer_armed = val != 0;
		break;
	case APIC_TIMER_DCR:
		/* Keep the count reached so far; the new divisor applies from now on. */
		a->timer_count = timer_current(a, now);
		a->timer_start = now;
		a->timer_dcr = val & DCR_MASK;
		break;
	case APIC_ID:
		/* SDM Vol. 3A 11.4.6: writable on some models (KVM's guests expect it); 8 bits. */
		a->id = val >> 24;
		break;
	case APIC_VERSION:
	case APIC_APR:
	case APIC_PPR:
	case APIC_RRD:
	case APIC_TIMER_CCR:
		break;
	default:
		/* ISR, TMR and IRR are read-only; everything else here is reserved. */
		if (off < APIC_ISR || off >= APIC_ESR)
			raise_error(a, APIC_ESR_ILLEGAL_REG);
		break;
	}
	return false;
}

bool vapic_write(struct vapic *a, unsigned off, unsigned size, uint32_t val, uint64_t now,
		 struct vapic_ipi *ipi)
{
	if (off >= 0x1000 || (off & 0xf) || size != 4)
		return false;
	vapic_timer_update(a, now);
	return write_reg(a, off, val, now, ipi);
}

/* What an x2APIC register is (SDM Vol. 3A table 11-6); RSVD: no register at that MSR. */
enum x2_kind { X2_RSVD, X2_RO, X2_WO, X2_RW };

/*
 * The register's kind and, for one software writes, the bits of a WRMSR that are not reserved
 * (a 1 elsewhere, bits 63:32 included, #GPs: 11.12.1.3).
 */
static enum x2_kind x2_reg(unsigned off, uint32_t *defined)
{
	unsigned lvt;

	if ((off >= APIC_ISR && off < APIC_ESR) || off == APIC_ID || off == APIC_VERSION ||
	    off == APIC_PPR || off == APIC_LDR || off == APIC_TIMER_CCR)
		return X2_RO;
	if (off >= APIC_LVT_TIMER && off < APIC_TIMER_ICR) {
		lvt = (off - APIC_LVT_TIMER) >> 4;
		*defined = lvt_mask[lvt] | LVT_STATUS |
			   (lvt == VAPIC_LVT_LINT0 || lvt == VAPIC_LVT_LINT1 ? LVT_REMOTE_IRR : 0);
		return X2_RW;
	}
	switch (off) {
	case APIC_EOI:
		*defined = 0;		/* table 11-6: a non-zero write #GPs */
		return X2_WO;
	case APIC_SELF_IPI:
		*defined = SELF_IPI_VECTOR;
		return X2_WO;
	case APIC_TPR:
		*defined = 0xff;
		return X2_RW;
	case APIC_SPIV:
		*defined = SPIV_MASK;	/* no EOI-broadcast suppression (bit 12, VERSION bit 24) */
		return X2_RW;
	case APIC_ESR:
		*defined = 0;		/* table 11-6: a non-zero write #GPs */
		return X2_RW;
	case APIC_ICR_LO:
		*defined = ~X2_ICR_RESERVED;
		return X2_RW;
	case APIC_TIMER_ICR:
		*defined = 0xffffffff;
		return X2_RW;
	case APIC_TIMER_DCR:
		*defined = DCR_MASK;
		return X2_RW;
	default:
		return X2_RSVD;	/* APR, RRD, DFR, ICR high, CMCI and the unused offsets */
	}
}

bool vapic_msr_read(struct vapic *a, uint32_t msr, uint64_t now, uint64_t *val)
{
	unsigned off = (msr - VAPIC_MSR_FIRST) << 4;
	uint32_t defined;
	enum x2_kind k;

	if (!vapic_x2apic(a) || msr < VAPIC_MSR_FIRST || msr > VAPIC_MSR_LAST)
		return false;
	k = x2_reg(off, &defined);
	if (k == X2_RSVD || k == X2_WO)
		return false;
	vapic_timer_update(a, now);
	switch (off) {
	case APIC_ID:
		*val = a->id;
		break;
	case APIC_LDR:
		*val = x2apic_ldr(a);
		break;
	case APIC_ICR_LO:
		*val = (uint64_t)a->icr_hi << 32 | a->icr_lo;
		break;
	default:
		*val = read_reg(a, off, now);
		break;
	}
	return true;
}

enum vapic_msr vapic_msr_write(struct vapic *a, uint32_t msr, uint64_t val, uint64_t now,
			       struct vapic_ipi *ipi)
{
	unsigned off = (msr - VAPIC_MSR_FIRST) << 4;
	uint32_t defined = 0;
	enum x2_kind k;

	if (!vapic_x2apic(a) || msr < VAPIC_MSR_FIRST || msr > VAPIC_MSR_LAST)
		return VAPIC_MSR_GP;
	k = x2_reg(off, &defined);
	if (k == X2_RSVD || k == X2_RO)
		return VAPIC_MSR_GP;
	/* Only the ICR has 64 bits. */
	if ((off != APIC_ICR_LO && val >> 32) || ((uint32_t)val & ~defined))
		return VAPIC_MSR_GP;
	vapic_timer_update(a, now);
	if (off == APIC_SELF_IPI) {
		/* A fixed, edge-triggered IPI to self; the ICR keeps its value. */
		*ipi = (struct vapic_ipi){ .mode = VAPIC_DM_FIXED, .vector = (uint8_t)val,
					   .shorthand = VAPIC_SH_SELF, .x2apic = true };
		if (ipi->vector < 16) {
			raise_error(a, APIC_ESR_SEND_ILLEGAL);
			return VAPIC_MSR_OK;
		}
		return VAPIC_MSR_IPI;
	}
	if (off == APIC_ICR_LO) {
		a->icr_hi = val >> 32;
		a->icr_lo = (uint32_t)val;
		return send_ipi(a, ipi) ? VAPIC_MSR_IPI : VAPIC_MSR_OK;
	}
	return write_reg(a, off, (uint32_t)val, now, ipi) ? VAPIC_MSR_IPI : VAPIC_MSR_OK;
}
