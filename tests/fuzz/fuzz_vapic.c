/* Fuzz target for hv/vapic.c: MMIO, interrupts, timer and PMIs in any order, at any guest TSC. */
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

static void op_read(struct vapic *a, unsigned off, unsigned size, uint64_t now)
{
	uint32_t v = vapic_read(a, off, size, now);

	if (size < 4)
		FZ_CHECK(!(v >> 8 * size), "%u-byte read 0x%x", size, v);
	if (off == APIC_TIMER_CCR && size == 4)
		FZ_CHECK(v <= a->timer_initial, "current count %u above %u", v, a->timer_initial);
}

static void op_write(struct vapic *a, unsigned off, unsigned size, uint32_t val, uint64_t now)
{
	struct vapic_ipi ipi;
	bool self = val & 1, want;

	if (!vapic_write(a, off, size, val, now, &ipi))
		return;
	FZ_CHECK(off == APIC_ICR_LO && size == 4, "IPI from a write to 0x%x", off);
	FZ_CHECK(ipi.mode <= 7 && ipi.shorthand <= VAPIC_SH_OTHERS, "IPI mode %u", ipi.mode);
	FZ_CHECK(ipi.vector >= 16 || (ipi.mode != VAPIC_DM_FIXED && ipi.mode != VAPIC_DM_LOWEST),
		 "IPI vector %u", ipi.vector);
	want = ipi.shorthand == VAPIC_SH_ALL || (ipi.shorthand == VAPIC_SH_SELF) == self;
	if (ipi.shorthand != VAPIC_SH_NONE)
		FZ_CHECK(vapic_is_target(a, &ipi, self) == want, "shorthand %u", ipi.shorthand);
}

/* The guest TSC moves forward and stops at its end rather than wrap. */
static void advance(uint64_t *now, uint64_t ticks)
{
	*now = *now + ticks < *now ? UINT64_MAX : *now + ticks;
}

/*
 * Input: APIC ID, then operations until the input ends: an opcode byte (bits 2:0 the operation,
 * 4:3 the access size, 5 a byte offset of 2, 6 a timer update afterwards, 7 any offset and size)
 * and its operands.
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
		case 7:
			/* INIT (hv/sched.c deliver_ipi()). */
			vapic_init(&a, fz_u8(&in));
			break;
		}
		if (op & 0x40)
			update(&a, now);
		check_state(&a);
	}
	return 0;
}
