/* Fuzz target for hv/vapic.c: MMIO, x2APIC MSRs, interrupts, timer, PMIs, in any order and TSC. */
#include "hv/vapic.c"
#include "tests/fuzz/fakes.h"

static void check_state(const struct vapic *a)
{
	int pending = vapic_pending(a);

	/* SDM Vol. 3A 11.5.2: vectors 0-15 are never accepted, so never in service either. */
	FZ_CHECK(!(a->irr[0] & 0xffff) && !(a->isr[0] & 0xffff), "vector below 16 taken");
	FZ_CHECK(pending == -1 || (pending >= 16 && pending <= 255 && test_vec(a->irr, pending)),
		 "pending %d", pending);
	FZ_CHECK(!((a->esr | a->esr_pending) & ~(APIC_ESR_SEND_ILLEGAL | APIC_ESR_RECV_ILLEGAL |
						   APIC_ESR_ILLEGAL_REG)), "ESR 0x%x", a->esr);
	for (unsigned i = 0; i < VAPIC_LVT_N; i++)
		FZ_CHECK(!(a->lvt[i] & ~(lvt_mask[i] | APIC_LVT_MASKED)) &&
			 (a->spiv & APIC_SPIV_ENABLE || a->lvt[i] & APIC_LVT_MASKED),
			 "LVT %u 0x%x", i, a->lvt[i]);
	FZ_CHECK(!a->timer_armed || a->timer_initial, "armed without a count");
	/* SDM Vol. 3A 11.12.5: EXTD never without EN; x2APIC mode decodes no page, ID read-only. */
	FZ_CHECK(!vapic_x2apic(a) || (vapic_hw_enabled(a) && !a->no_x2apic), "base 0x%llx",
		 (unsigned long long)a->base_msr);
	FZ_CHECK(!vapic_x2apic(a) || (!vapic_page(a, a->base_msr & ~0xfffull) &&
				      a->id == a->initial_id), "x2APIC page or ID");
}

/* What the scheduler does before it runs the VCPU: after it, the next expiry is in the future. */
static void update(struct vapic *a, uint64_t now)
{
	uint64_t deadline;

	vapic_timer_update(a, now);
	deadline = vapic_timer_deadline(a);
	FZ_CHECK(deadline == UINT64_MAX || deadline > now, "deadline %llu at %llu",
		 (unsigned long long)deadline, (unsigned long long)now);
}

/* hv/mmio.c reaches the registers' page only where vapic_page() says it is decoded. */
static bool page_live(const struct vapic *a)
{
	return vapic_page(a, a->base_msr & ~0xfffull);
}

static void op_read(struct vapic *a, unsigned off, unsigned size, uint64_t now)
{
	uint32_t v;

	if (!page_live(a))
		return;
	v = vapic_read(a, off, size, now);

	if (size < 4)
		FZ_CHECK(!(v >> 8 * size), "%u-byte read 0x%x", size, v);
	if (off == APIC_TIMER_CCR && size == 4)
		FZ_CHECK(v <= a->timer_initial, "current count %u above %u", v, a->timer_initial);
}

static void op_write(struct vapic *a, unsigned off, unsigned size, uint32_t val, uint64_t now)
{
	struct vapic_ipi ipi;
	bool self = val & 1, want;

	if (!page_live(a) || !vapic_write(a, off, size, val, now, &ipi))
		return;
	FZ_CHECK(off == APIC_ICR_LO && size == 4, "IPI from a write to 0x%x", off);
	FZ_CHECK(ipi.mode <= 7 && ipi.shorthand <= VAPIC_SH_OTHERS, "IPI mode %u", ipi.mode);
	FZ_CHECK(ipi.vector >= 16 || (ipi.mode != VAPIC_DM_FIXED && ipi.mode != VAPIC_DM_LOWEST),
		 "IPI vector %u", ipi.vector);
	want = ipi.shorthand == VAPIC_SH_ALL || (ipi.shorthand == VAPIC_SH_SELF) == self;
	if (ipi.shorthand != VAPIC_SH_NONE)
		FZ_CHECK(vapic_is_target(a, &ipi, self) == want, "shorthand %u", ipi.shorthand);
}

/* RDMSR/WRMSR of an x2APIC MSR: only in x2APIC mode; a 64-bit ICR or SELF IPI sends. */
static void op_msr(struct vapic *a, uint32_t msr, bool write, uint64_t val, uint64_t now)
{
	struct vapic_ipi ipi;
	enum vapic_msr r;
	uint64_t got;

	if (!write) {
		FZ_CHECK(!vapic_msr_read(a, msr, now, &got) || vapic_x2apic(a), "RDMSR 0x%x", msr);
		return;
	}
	r = vapic_msr_write(a, msr, val, now, &ipi);
	FZ_CHECK(r == VAPIC_MSR_GP || vapic_x2apic(a), "WRMSR 0x%x outside x2APIC mode", msr);
	if (r != VAPIC_MSR_IPI)
		return;
	FZ_CHECK(msr == 0x830 || msr == 0x83f, "IPI from WRMSR 0x%x", msr);
	FZ_CHECK(ipi.x2apic && ipi.mode <= 7 && ipi.shorthand <= VAPIC_SH_OTHERS,
		 "IPI mode %u", ipi.mode);
	FZ_CHECK(ipi.vector >= 16 || (ipi.mode != VAPIC_DM_FIXED && ipi.mode != VAPIC_DM_LOWEST),
		 "IPI vector %u", ipi.vector);
}

/*
 * IA32_APIC_BASE: sub bits 3:2 are EN and EXTD on the default base, bit 4 adds any other bits,
 * bit 5 hides x2APIC first (x2apic=off) unless the APIC is in x2APIC mode already.
 */
static void op_base(struct vapic *a, uint8_t sub, uint64_t junk)
{
	uint64_t val = APIC_DEFAULT_BASE | (uint64_t)(sub >> 2 & 3) << 10 | (sub & 0x10 ? junk : 0);
	bool was_x2apic = vapic_x2apic(a), ok;

	if ((sub & 0x20) && !was_x2apic)
		a->no_x2apic = true;
	ok = vapic_set_base(a, val, 39);
	FZ_CHECK(!ok || vapic_get_base(a) == val, "base 0x%llx taken as 0x%llx",
		 (unsigned long long)val, (unsigned long long)vapic_get_base(a));
	FZ_CHECK(ok || vapic_x2apic(a) == was_x2apic, "a refused write changed the mode");
}

/* The guest TSC moves forward and stops at its end rather than wrap. */
static void advance(uint64_t *now, uint64_t ticks)
{
	*now = *now + ticks < *now ? UINT64_MAX : *now + ticks;
}

/*
 * Input: APIC ID, then operations until the input ends: an opcode byte (bits 2:0 the operation,
 * 4:3 the access size, 5 a byte offset of 2, 6 a timer update afterwards, 7 any offset and size)
 * and its operands. Operation 7 takes a sub-operation byte: bits 1:0 INIT, IA32_APIC_BASE
 * (op_base), RDMSR or WRMSR of MSR 0x800 + offset / 16.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_sequence(data, size);
	struct vapic a;
	uint64_t now = 0;

	vapic_init(&a, fz_u8(&in));
	while (in.n) {
		uint8_t op = fz_u8(&in);
		unsigned off = op & 0x80 ? fz_u16(&in) : fz_u8(&in) << 4u | (op >> 5 & 1u) << 1;
		unsigned size = op & 0x80 ? fz_u8(&in) : 1u << (op >> 3 & 3);

		switch (op & 7) {
		case 0:
			op_read(&a, off, size, now);
			break;
		case 1:
			op_write(&a, off & ~0xfu, 4, fz_u32(&in), now);
			break;
		case 2:
			op_write(&a, off, size, fz_u32(&in), now);
			break;
		case 3:
			vapic_set_irr(&a, fz_u8(&in));
			break;
		case 4: {
			/* The hypervisor injects what is pending, or acks anything. */
			int v = vapic_pending(&a);

			vapic_ack(&a, v >= 0 ? (uint8_t)v : fz_u8(&in));
			break;
		}
		case 5:
			FZ_CHECK(vapic_pmi(&a) <= VAPIC_PMI_NMI, "PMI");
			FZ_CHECK(a.lvt[VAPIC_LVT_PMC] & APIC_LVT_MASKED,
				 "LVTPC unmasked after a PMI");
			break;
		case 6:
			if (op & 0x80) {
				uint64_t ticks = fz_u64(&in);

				advance(&now, ticks >> fz_u8(&in) % 64);
			} else {
				advance(&now, fz_u16(&in));
			}
			break;
		case 7: {
			uint8_t sub = fz_u8(&in);

			if ((sub & 3) == 0)
				vapic_init_ipi(&a);	/* INIT (hv/sched.c deliver_ipi()) */
			else if ((sub & 3) == 1)
				op_base(&a, sub, fz_u64(&in));
			else
				op_msr(&a, VAPIC_MSR_FIRST + off / 16, (sub & 3) == 3,
				       fz_u64(&in), now);
			break;
		}
		}
		if (op & 0x40)
			update(&a, now);
		check_state(&a);
	}
	return 0;
}
