/* Unit tests for hv/vapic.c: registers, priorities, IPIs, timer, PMI, APIC base, NMIs, x2APIC. */
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/vapic.c"

static struct vapic_ipi ipi;

static uint32_t rd(struct vapic *a, unsigned off)
{
	return vapic_read(a, off, 4, 0);
}

static bool wr(struct vapic *a, unsigned off, uint32_t val)
{
	return vapic_write(a, off, 4, val, 0, &ipi);
}

static bool wr_at(struct vapic *a, unsigned off, uint32_t val, uint64_t now)
{
	return vapic_write(a, off, 4, val, now, &ipi);
}

static void enabled(struct vapic *a, uint8_t id)
{
	vapic_init(a, id);
	wr(a, 0xf0, 0x1ff);
}

/* ESR as software reads it: write, then read (SDM Vol. 3A 11.5.3). */
static uint32_t esr(struct vapic *a)
{
	wr(a, 0x280, 0);
	return rd(a, 0x280);
}

static bool in_reg(struct vapic *a, unsigned base, unsigned v)
{
	return rd(a, base + v / 32 * 0x10) >> v % 32 & 1;
}

static void test_reset(void)
{
	struct vapic a;
	unsigned i, masked = 0;

	vapic_init(&a, 3);
	check(rd(&a, 0x20) == 0x03000000, "ID 3 in bits 31:24");
	check(rd(&a, 0x30) == 0x00050014, "version 0x14, max LVT entry 5 (six LVTs)");
	check(rd(&a, 0xf0) == 0xff && rd(&a, 0xe0) == 0xffffffff && rd(&a, 0x80) == 0,
	      "SPIV 0xff (disabled), DFR all ones, TPR 0");
	for (i = 0x320; i <= 0x370; i += 0x10)
		masked += rd(&a, i) == 0x10000;
	check(masked == 6, "all six LVTs masked");
	wr(&a, 0x20, 0x07000000);
	check(rd(&a, 0x20) == 0x07000000, "ID is writable (SDM Vol. 3A 11.4.6)");
	check(vapic_set_base(&a, 0xfee00000, 39) && vapic_set_base(&a, 0xfee00800, 39) &&
	      rd(&a, 0x20) == 0x03000000, "a reset restores the initial APIC ID");
}

static void test_spiv(void)
{
	struct vapic a;

	vapic_init(&a, 0);
	wr(&a, 0x340, 0x40);
	check(rd(&a, 0x340) == 0x10040, "software-disabled: LVTPC mask cannot be cleared");
	vapic_set_irr(&a, 0x40);
	check(vapic_pending(&a) == -1 && !in_reg(&a, 0x200, 0x40),
	      "software-disabled: fixed interrupt dropped");
	wr(&a, 0xf0, 0x1ff);
	check(rd(&a, 0x340) == 0x10040, "enabling keeps the LVTs masked");
	wr(&a, 0x340, 0x40);
	check(rd(&a, 0x340) == 0x40, "enabled: LVTPC can be unmasked");
	wr(&a, 0xf0, 0xfff);
	check(rd(&a, 0xf0) == 0x3ff, "SPIV keeps bits 9:0");
	wr(&a, 0xf0, 0x0ff);
	check(rd(&a, 0x340) == 0x10040 && rd(&a, 0x320) == 0x10000, "disabling masks every LVT");
}

static void test_priorities(void)
{
	struct vapic a;

	enabled(&a, 0);
	check(vapic_pending(&a) == -1, "nothing pending");
	vapic_set_irr(&a, 0x31);
	vapic_set_irr(&a, 0x52);
	vapic_set_irr(&a, 0x45);
	check(vapic_pending(&a) == 0x52, "highest vector first");
	check(in_reg(&a, 0x200, 0x31) && in_reg(&a, 0x200, 0x45) && in_reg(&a, 0x200, 0x52),
	      "IRR readable at 0x200-0x270");
	vapic_ack(&a, 0x52);
	check(in_reg(&a, 0x100, 0x52) && !in_reg(&a, 0x200, 0x52), "ack moves IRR to ISR");
	check(rd(&a, 0xa0) == 0x50, "PPR takes the in-service class");
	check(vapic_pending(&a) == -1, "lower class blocked while 0x52 in service");
	vapic_set_irr(&a, 0x5f);
	check(vapic_pending(&a) == -1, "same class blocked too");
	vapic_set_irr(&a, 0x61);
	check(vapic_pending(&a) == 0x61, "higher class nests");
	vapic_ack(&a, 0x61);
	wr(&a, 0xb0, 0);
	check(!in_reg(&a, 0x100, 0x61) && in_reg(&a, 0x100, 0x52),
	      "EOI retires the highest ISR bit first");
	check(vapic_pending(&a) == -1, "0x5f still blocked by 0x52");
	wr(&a, 0xb0, 0);
	check(rd(&a, 0x100 + 0x20) == 0 && vapic_pending(&a) == 0x5f,
	      "second EOI retires 0x52, 0x5f next");
	vapic_ack(&a, 0x5f);
	vapic_ack(&a, 0x45);
	check(vapic_pending(&a) == -1 && in_reg(&a, 0x100, 0x45),
	      "ack of a blocked vector is the caller's call");
	wr(&a, 0xb0, 0);
	wr(&a, 0xb0, 0);
	wr(&a, 0xb0, 0);
	check(vapic_pending(&a) == 0x31 && rd(&a, 0x100 + 0x20) == 0, "extra EOIs are harmless");
	vapic_ack(&a, 0x99);
	check(!in_reg(&a, 0x100, 0x99), "ack of a vector not requested does nothing");
	wr(&a, 0x200 + 0x10, 0xffffffff);
	wr(&a, 0x100 + 0x10, 0xffffffff);
	check(!in_reg(&a, 0x200, 0x20) && !in_reg(&a, 0x100, 0x20) && esr(&a) == 0,
	      "IRR/ISR are read-only, writes are not errors");
}

static void test_tpr(void)
{
	struct vapic a;

	enabled(&a, 0);
	wr(&a, 0x80, 0x15f);
	check(rd(&a, 0x80) == 0x5f && rd(&a, 0xa0) == 0x5f,
	      "TPR keeps 8 bits; PPR = TPR when idle");
	vapic_set_irr(&a, 0x52);
	check(vapic_pending(&a) == -1, "TPR 0x5f masks class 5");
	vapic_set_irr(&a, 0x61);
	check(vapic_pending(&a) == 0x61, "class 6 gets through");
	vapic_ack(&a, 0x61);
	check(rd(&a, 0xa0) == 0x60, "PPR = ISR class 0x60 above TPR 0x5f");
	wr(&a, 0x80, 0x65);
	check(rd(&a, 0xa0) == 0x65, "PPR = TPR 0x65 when its class is not below the ISR's");
	wr(&a, 0xb0, 0);
	wr(&a, 0x80, 0x40);
	check(vapic_pending(&a) == 0x52, "lowering TPR releases 0x52");
	check(rd(&a, 0x90) == 0 && esr(&a) == 0,
	      "APR reads 0 (not on Pentium 4 and later), no error");
}

static void test_esr(void)
{
	struct vapic a;

	enabled(&a, 0);
	vapic_set_irr(&a, 5);
	check(vapic_pending(&a) == -1, "vector 5 is not accepted");
	check(rd(&a, 0x280) == 0, "ESR shows nothing before it is written");
	check(esr(&a) == 0x40, "write then read: receive illegal vector");
	check(esr(&a) == 0, "the next write clears it");
	rd(&a, 0x40);
	wr(&a, 0x3f0, 1);
	check(esr(&a) == 0x80, "reserved offsets: illegal register address");
	wr(&a, 0x370, 0xfe);
	vapic_read(&a, 0x2f0, 4, 0);
	check(vapic_pending(&a) == 0xfe, "an error is signalled through the LVT error entry");
	vapic_read(&a, 0x2f0, 4, 0);
	check(esr(&a) == 0x80, "and latched once");

	/* An illegal error vector raises one more error, not an endless chain. */
	wr(&a, 0x370, 0x05);
	vapic_set_irr(&a, 3);
	check(esr(&a) == 0x40 && vapic_pending(&a) == 0xfe,
	      "illegal LVT error vector: one error, no loop");
}

static const struct {
	const char *name;
	uint32_t hi, lo;
	bool sent;
	struct vapic_ipi want;
	uint32_t esr;
} icr_cases[] = {
	{ "fixed 0x40 to APIC 3", 0x03000000, 0x00000040, true,
	  { 0, 0x40, 0, false, false, 3, false }, 0 },
	{ "fixed, logical 0x0c", 0x0c000000, 0x00000841, true,
	  { 0, 0x41, 0, true, false, 0x0c, false }, 0 },
	{ "INIT assert", 0x01000000, 0x0000c500, true, { 5, 0x00, 0, false, false, 1, false }, 0 },
	{ "INIT level de-assert", 0x01000000, 0x00008500, false, { 0 }, 0 },
	{ "SIPI page 8", 0x01000000, 0x00004608, true, { 6, 0x08, 0, false, false, 1, false }, 0 },
	{ "NMI to all but self", 0, 0x000c0400, true, { 4, 0x00, 3, false, false, 0, false }, 0 },
	{ "self IPI 0x50", 0, 0x00040050, true, { 0, 0x50, 1, false, false, 0, false }, 0 },
	{ "fixed vector 3", 0x01000000, 0x00000003, false, { 0 }, 0x20 },
	{ "lowest priority vector 15", 0xff000000, 0x0000010f, false, { 0 }, 0x20 },
};

static bool same_ipi(const struct vapic_ipi *x, const struct vapic_ipi *y)
{
	return x->mode == y->mode && x->vector == y->vector && x->shorthand == y->shorthand &&
	       x->logical == y->logical && x->x2apic == y->x2apic && x->dest == y->dest &&
	       x->level == y->level;
}

static void test_icr(void)
{
	struct vapic a;
	size_t i;
	bool sent;

	for (i = 0; i < sizeof(icr_cases) / sizeof(icr_cases[0]); i++) {
		enabled(&a, 0);
		memset(&ipi, 0xee, sizeof(ipi));
		check(!wr(&a, 0x310, icr_cases[i].hi), "%s: ICR high write sends nothing",
		      icr_cases[i].name);
		sent = wr(&a, 0x300, icr_cases[i].lo);
		check(sent == icr_cases[i].sent && (!sent || same_ipi(&ipi, &icr_cases[i].want)),
		      "%s: %s", icr_cases[i].name, sent ? "sent" : "not sent");
		check(esr(&a) == icr_cases[i].esr, "%s: ESR 0x%x", icr_cases[i].name,
		      icr_cases[i].esr);
	}
	enabled(&a, 0);
	wr(&a, 0x310, 0xffffffff);
	wr(&a, 0x300, 0xffffffff);
	check(rd(&a, 0x300) == 0x000ccfff && rd(&a, 0x310) == 0xff000000,
	      "ICR keeps its defined bits; delivery status reads 0");
}

static void test_targets(void)
{
	struct vapic a;
	struct vapic_ipi p = { .mode = 0, .vector = 0x40 };

	vapic_init(&a, 2);
	p.dest = 2;
	check(vapic_is_target(&a, &p, false), "physical: own ID");
	p.dest = 3;
	check(!vapic_is_target(&a, &p, false), "physical: other ID");
	p.dest = 0xff;
	check(vapic_is_target(&a, &p, false), "physical: 0xff broadcasts");
	wr(&a, 0xd0, 0x02000000);
	p.logical = true;
	p.dest = 0x03;
	check(vapic_is_target(&a, &p, false), "flat: LDR bit in the mask");
	p.dest = 0x04;
	check(!vapic_is_target(&a, &p, false), "flat: LDR bit not in the mask");
	wr(&a, 0xe0, 0x0fffffff);
	wr(&a, 0xd0, 0x21000000);
	check(rd(&a, 0xe0) == 0x0fffffff, "DFR cluster model");
	p.dest = 0x23;
	check(vapic_is_target(&a, &p, false), "cluster: same cluster, bit set");
	p.dest = 0x31;
	check(!vapic_is_target(&a, &p, false), "cluster: other cluster");
	p.dest = 0x22;
	check(!vapic_is_target(&a, &p, false), "cluster: bit not set");
	p.shorthand = VAPIC_SH_SELF;
	check(vapic_is_target(&a, &p, true) && !vapic_is_target(&a, &p, false), "self shorthand");
	p.shorthand = VAPIC_SH_OTHERS;
	check(!vapic_is_target(&a, &p, true) && vapic_is_target(&a, &p, false),
	      "all-but-self shorthand");
	p.shorthand = VAPIC_SH_ALL;
	check(vapic_is_target(&a, &p, true) && vapic_is_target(&a, &p, false), "all shorthand");
}

static void test_timer_oneshot(void)
{
	struct vapic a;

	enabled(&a, 0);
	check(vapic_timer_deadline(&a) == VAPIC_NO_DEADLINE,
	      "no deadline before the count is written");
	wr(&a, 0x320, 0x30);
	wr(&a, 0x3e0, 0xb);
	wr_at(&a, 0x380, 1000, 100);
	check(vapic_timer_deadline(&a) == 1100, "divide by 1: 1000 ticks from 100 expire at 1100");
	check(vapic_read(&a, 0x390, 4, 600) == 500, "current count 500 at 600");
	vapic_timer_update(&a, 1099);
	check(vapic_pending(&a) == -1, "nothing at 1099");
	vapic_timer_update(&a, 1100);
	check(vapic_pending(&a) == 0x30, "fires at 1100");
	check(vapic_timer_deadline(&a) == VAPIC_NO_DEADLINE && vapic_read(&a, 0x390, 4, 1200) == 0,
	      "one-shot: disarmed, count 0");
	check(rd(&a, 0x380) == 1000, "initial count reads back");
	vapic_ack(&a, 0x30);
	wr(&a, 0xb0, 0);

	wr(&a, 0x3e0, 0x3);
	wr_at(&a, 0x380, 100, 0);
	check(vapic_timer_deadline(&a) == 1600 && vapic_read(&a, 0x390, 4, 160) == 90,
	      "divide by 16: 100 counts = 1600 ticks");
	wr(&a, 0x3e0, 0xffffffff);
	check(rd(&a, 0x3e0) == 0xb, "DCR keeps bits 3, 1, 0");
	wr(&a, 0x3e0, 0x8);
	wr_at(&a, 0x380, 10, 0);
	check(vapic_timer_deadline(&a) == 320, "divide by 32 (1000b)");
	wr(&a, 0x3e0, 0x0);
	wr_at(&a, 0x380, 10, 0);
	check(vapic_timer_deadline(&a) == 20, "divide by 2 at reset (0000b)");

	/* Changing the divisor mid-count keeps the count reached. */
	wr(&a, 0x3e0, 0xb);
	wr_at(&a, 0x380, 1000, 0);
	wr_at(&a, 0x3e0, 0x0, 400);
	check(vapic_read(&a, 0x390, 4, 400) == 600 && vapic_timer_deadline(&a) == 1600,
	      "divisor change at 400: 600 left, now at 2 ticks each");
	wr_at(&a, 0x380, 0, 500);
	check(vapic_timer_deadline(&a) == VAPIC_NO_DEADLINE, "initial count 0 stops the timer");
	vapic_timer_update(&a, 5000);
	check(vapic_pending(&a) == -1 && vapic_read(&a, 0x390, 4, 5000) == 0, "and it never fires");
}

static void test_timer_periodic(void)
{
	struct vapic a;
	int fired = 0;

	enabled(&a, 0);
	wr(&a, 0x320, 0x20031);
	check(rd(&a, 0x320) == 0x20031, "periodic mode bit kept");
	wr(&a, 0x3e0, 0xb);
	wr_at(&a, 0x380, 100, 0);
	vapic_timer_update(&a, 100);
	fired += vapic_pending(&a) == 0x31;
	vapic_ack(&a, 0x31);
	wr(&a, 0xb0, 0);
	check(fired == 1 && vapic_timer_deadline(&a) == 200, "fires at 100, re-armed for 200");
	vapic_timer_update(&a, 350);
	check(vapic_pending(&a) == 0x31 && vapic_timer_deadline(&a) == 400,
	      "late update at 350: fires once, next at 400");
	check(vapic_read(&a, 0x390, 4, 350) == 50, "current count 50 at 350");
	wr(&a, 0x320, 0x40000 | 0x20031);
	check(rd(&a, 0x320) == 0x20031, "TSC-deadline mode (bit 18) is not offered");

	/* Huge now values: no wrap-around anywhere. */
	wr(&a, 0x3e0, 0x3);
	wr_at(&a, 0x380, 0xffffffff, UINT64_MAX - 10);
	check(vapic_timer_deadline(&a) == UINT64_MAX, "deadline saturates at the end of time");
	check(vapic_read(&a, 0x390, 4, 5) == 0xffffffff, "now before the start: full count");
	vapic_timer_update(&a, UINT64_MAX);
	check(vapic_timer_deadline(&a) == UINT64_MAX,
	      "re-armed at the end of time without wrapping");
}

static void test_timer_masked(void)
{
	struct vapic a;

	enabled(&a, 0);
	wr(&a, 0x320, 0x10030);
	wr(&a, 0x3e0, 0xb);
	wr_at(&a, 0x380, 100, 0);
	check(vapic_timer_deadline(&a) == VAPIC_NO_DEADLINE, "masked: no deadline to wake for");
	check(vapic_read(&a, 0x390, 4, 50) == 50, "but it counts");
	wr_at(&a, 0x320, 0x30, 150);
	check(vapic_pending(&a) == -1, "unmasking after a masked expiry delivers nothing stale");

	wr(&a, 0x320, 0x10030 | 0x20000);
	wr_at(&a, 0x380, 100, 0);
	wr_at(&a, 0x320, 0x20030, 250);
	check(vapic_pending(&a) == -1 && vapic_timer_deadline(&a) == 300,
	      "periodic masked through two periods, unmasked at 250: next at 300");
}

static void test_pmi(void)
{
	struct vapic a;

	enabled(&a, 0);
	check(vapic_pmi(&a) == VAPIC_PMI_NONE && vapic_pending(&a) == -1, "masked LVTPC: no PMI");
	wr(&a, 0x340, 0xf0);
	check(vapic_pmi(&a) == VAPIC_PMI_FIXED && vapic_pending(&a) == 0xf0,
	      "PMI delivered as vector 0xf0");
	check(rd(&a, 0x340) == 0x100f0, "delivery set the LVTPC mask bit");
	vapic_ack(&a, 0xf0);
	wr(&a, 0xb0, 0);
	check(vapic_pmi(&a) == VAPIC_PMI_NONE && vapic_pending(&a) == -1,
	      "second PMI blocked until unmasked");
	wr(&a, 0x340, 0xf0);
	check(vapic_pmi(&a) == VAPIC_PMI_FIXED, "unmasking re-arms it");
	wr(&a, 0x340, 0x400);
	check(vapic_pmi(&a) == VAPIC_PMI_NMI && rd(&a, 0x340) == 0x10400,
	      "NMI delivery mode: NMI, then masked");
	wr(&a, 0x340, 0x200);
	check(vapic_pmi(&a) == VAPIC_PMI_NONE && rd(&a, 0x340) == 0x10200,
	      "SMI mode: not modelled, masked");
	wr(&a, 0x340, 0xf0);
	wr(&a, 0xf0, 0xff);
	check(vapic_pmi(&a) == VAPIC_PMI_NONE, "software-disabled APIC: no PMI");
}

static void test_access_sizes(void)
{
	struct vapic a;

	enabled(&a, 0x7e);
	check(vapic_read(&a, 0x23, 1, 0) == 0x7e, "byte read of ID bits 31:24");
	check(vapic_read(&a, 0xf0, 2, 0) == 0x1ff && vapic_read(&a, 0xf1, 1, 0) == 0x01,
	      "16-bit and byte reads of SPIV");
	check(vapic_read(&a, 0x24, 4, 0) == 0 && vapic_read(&a, 0x22, 4, 0) == 0 &&
	      vapic_read(&a, 0x20, 8, 0) == 0 && vapic_read(&a, 0x20, 3, 0) == 0,
	      "reads past the first dword or of odd sizes return 0");
	vapic_write(&a, 0x84, 4, 0x50, 0, &ipi);
	vapic_write(&a, 0x80, 1, 0x50, 0, &ipi);
	check(rd(&a, 0x80) == 0, "unaligned or narrow writes are ignored");
	check(vapic_read(&a, 0x1000, 4, 0) == 0 && vapic_read(&a, ~0u, 4, 0) == 0 &&
	      !vapic_write(&a, 0x1300, 4, 0x40, 0, &ipi) && esr(&a) == 0,
	      "offsets beyond the page are ignored");
}

/* All ones to every register, in order: only defined bits stick. */
static void test_all_ones(void)
{
	static const struct {
		unsigned off;
		uint32_t want;
	} regs[] = {
		{ 0x020, 0xff000000 }, { 0x030, 0x00050014 }, { 0x080, 0xff },
		{ 0x0d0, 0xff000000 }, { 0x0e0, 0xffffffff }, { 0x0f0, 0x3ff },
		{ 0x300, 0x000ccfff }, { 0x310, 0xff000000 }, { 0x320, 0x300ff },
		{ 0x330, 0x107ff },    { 0x340, 0x107ff },    { 0x350, 0x1a7ff },
		{ 0x360, 0x1a7ff },    { 0x370, 0x100ff },    { 0x380, 0xffffffff },
		{ 0x3e0, 0xb },
	};
	struct vapic a;
	unsigned off, good = 0;
	size_t i;

	vapic_init(&a, 1);
	for (off = 0; off < 0x1000; off += 0x10)
		wr(&a, off, 0xffffffff);
	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		bool ok = rd(&a, regs[i].off) == regs[i].want;

		good += ok;
		if (!ok)
			printf("# 0x%03x reads 0x%08x, want 0x%08x\n", regs[i].off,
			       rd(&a, regs[i].off), regs[i].want);
	}
	check(good == sizeof(regs) / sizeof(regs[0]), "all-ones writes keep only defined bits");
	check(esr(&a) == 0x80, "reserved offsets among them flagged");
}

/* SDM Vol. 3A 11.4.3, 11.4.4: IA32_APIC_BASE enable, disable, relocation and reserved bits. */
static void test_apic_base(void)
{
	struct vapic a, b;
	unsigned bad = 0, bit;

	vapic_init(&a, 0);
	vapic_init(&b, 2);
	check(vapic_get_base(&a) == 0xfee00900 && vapic_get_base(&b) == 0xfee00800,
	      "power-up IA32_APIC_BASE: 0xFEE00000, enabled, BSP only on APIC ID 0");
	check(vapic_set_base(&a, vapic_get_base(&a), 39), "writing the value read never #GPs");
	for (bit = 0; bit < 8; bit++)
		bad += !vapic_set_base(&a, 0xfee00900 | 1ull << bit, 39);
	bad += !vapic_set_base(&a, 0xfee00900 | 1ull << 9, 39);
	bad += !vapic_set_base(&a, 0xfee00900 | 1ull << 39, 39);
	bad += !vapic_set_base(&a, 0xfee00900 | 1ull << 63, 39);
	check(bad == 11 && vapic_get_base(&a) == 0xfee00900,
	      "reserved bits 7:0, 9 and at or above MAXPHYADDR raise #GP and change nothing");
	check(!vapic_set_base(&a, 0xfee00500, 39) && vapic_hw_enabled(&a),
	      "EXTD without EN (the invalid state) raises #GP");
	check(vapic_set_base(&a, 0xfee00900 | 1ull << 38, 39), "a base bit below MAXPHYADDR is fine");
	vapic_set_base(&a, 0xfee00900, 39);

	enabled(&a, 0);
	wr(&a, 0x80, 0x20);
	wr(&a, 0x340, 0x400);
	wr(&a, 0x380, 1000);
	vapic_set_irr(&a, 0x40);
	vapic_nmi(&a);
	check(vapic_set_base(&a, 0xfee00100, 39) && !vapic_hw_enabled(&a) &&
	      vapic_get_base(&a) == 0xfee00100, "clearing EN disables the APIC in hardware");
	check(!vapic_page(&a, 0xfee00030), "the register page is not live while disabled");
	vapic_set_irr(&a, 0x50);
	vapic_nmi(&a);
	check(!vapic_has_event(&a), "a disabled APIC drops interrupts and NMIs");
	ipi.shorthand = VAPIC_SH_ALL;
	check(!vapic_is_target(&a, &ipi, false), "a disabled APIC is no IPI destination");
	check(vapic_set_base(&a, 0xfee00900, 39) && vapic_hw_enabled(&a) &&
	      vapic_page(&a, 0xfee00030), "setting EN enables it again");
	check(rd(&a, 0x20) == 0 && rd(&a, 0xf0) == 0xff && rd(&a, 0x80) == 0 &&
	      rd(&a, 0x340) == 0x10000 && rd(&a, 0x380) == 0 && vapic_pending(&a) == -1 &&
	      !a.nmi_pending, "re-enabled in the power-up state: ID kept, SPIV 0xff, TPR 0, "
	      "LVTs masked, timer, IRR and pending NMI cleared");
	check(vapic_set_base(&a, 0xfed40900, 39) && vapic_page(&a, 0xfed40030) &&
	      !vapic_page(&a, 0xfee00030), "the page follows a relocated base");
}

/* SDM Vol. 3A 6.7.1: one NMI pending at most; NMI-mode LVTPC latches it. */
static void test_nmi(void)
{
	struct vapic a;

	enabled(&a, 0);
	check(!vapic_take_nmi(&a) && !vapic_has_event(&a), "no NMI at power-up");
	vapic_nmi(&a);
	check(vapic_has_event(&a), "a pending NMI wakes a halted VCPU");
	vapic_nmi(&a);
	vapic_nmi(&a);
	check(vapic_take_nmi(&a) && vapic_take_nmi(&a) && !vapic_take_nmi(&a),
	      "three NMIs before a delivery: two wait (one delivered, one latched)");
	vapic_nmi(&a);
	vapic_nmi(&a);
	vapic_nmi_blocked(&a);
	check(vapic_take_nmi(&a) && !vapic_take_nmi(&a), "NMIs blocked: one latched");
	wr(&a, 0x340, 0x400);
	check(vapic_pmi(&a) == VAPIC_PMI_NMI && vapic_take_nmi(&a) && vapic_pending(&a) == -1,
	      "LVTPC in NMI mode latches an NMI, no vector");
	wr(&a, 0xf0, 0xff);
	vapic_nmi(&a);
	check(vapic_take_nmi(&a), "a software-disabled APIC still takes NMIs (SDM Vol. 3A 11.4.7.2)");
}

/* x2APIC mode's RDMSR/WRMSR: whether it #GPs; the value read. */
static bool x2_rd(struct vapic *a, unsigned msr, uint64_t *val)
{
	return vapic_msr_read(a, msr, 0, val);
}

static enum vapic_msr x2_wr(struct vapic *a, unsigned msr, uint64_t val)
{
	return vapic_msr_write(a, msr, val, 0, &ipi);
}

/* An enabled APIC switched to x2APIC mode, as a guest does it (SDM Vol. 3A 11.12.1). */
static void x2_enabled(struct vapic *a, uint32_t id)
{
	vapic_init(a, id);
	vapic_set_base(a, vapic_get_base(a) | APIC_BASE_EXTD, 39);
	x2_wr(a, 0x80f, 0x1ff);
}

/* SDM Vol. 3A 11.12.5, Figure 11-27: the IA32_APIC_BASE transitions between the four states. */
static void test_x2apic_transitions(void)
{
	const uint64_t base = 0xfee00000, en = 1 << 11, extd = 1 << 10, bsp = 1 << 8;
	struct vapic a;
	uint64_t v;

	vapic_init(&a, 3);
	check(!x2_rd(&a, 0x802, &v) && x2_wr(&a, 0x808, 0) == VAPIC_MSR_GP,
	      "xAPIC mode: the x2APIC MSRs #GP (11.12.2)");
	check(!vapic_set_base(&a, base | extd, 39) && !vapic_x2apic(&a) && vapic_hw_enabled(&a),
	      "xAPIC to EXTD without EN (invalid): #GP, nothing changes");
	wr(&a, 0x20, 0x07000000);
	wr(&a, 0x80, 0x30);
	check(vapic_set_base(&a, base | en | extd, 39) && vapic_x2apic(&a) && vapic_hw_enabled(&a),
	      "xAPIC to x2APIC: allowed");
	check(x2_rd(&a, 0x802, &v) && v == 3, "the ID becomes the x2APIC ID, the initial one (3)");
	check(x2_rd(&a, 0x808, &v) && v == 0x30, "the other registers keep their values (TPR)");
	check(!vapic_page(&a, 0xfee00030), "x2APIC mode: the MMIO page is not decoded (11.12.2)");
	check(!vapic_set_base(&a, base | en, 39) && vapic_x2apic(&a),
	      "x2APIC to xAPIC: #GP, still x2APIC");
	check(!vapic_set_base(&a, base | extd, 39) && vapic_x2apic(&a),
	      "x2APIC to EXTD without EN: #GP");
	check(vapic_set_base(&a, base | en | extd, 39) && vapic_x2apic(&a),
	      "x2APIC to x2APIC: allowed");
	check(vapic_set_base(&a, base, 39) && !vapic_hw_enabled(&a) && !vapic_x2apic(&a),
	      "x2APIC to disabled: allowed");
	check(!x2_rd(&a, 0x808, &v), "disabled: the x2APIC MSRs #GP");
	check(!vapic_set_base(&a, base | en | extd, 39) && !vapic_hw_enabled(&a),
	      "disabled to x2APIC directly: #GP");
	check(!vapic_set_base(&a, base | extd, 39) && !vapic_hw_enabled(&a),
	      "disabled to EXTD without EN: #GP");
	check(vapic_set_base(&a, base | en, 39) && vapic_hw_enabled(&a) && !vapic_x2apic(&a) &&
	      vapic_page(&a, 0xfee00030), "disabled to xAPIC: allowed, the page is live again");
	check(rd(&a, 0x20) == 0x03000000 && rd(&a, 0x80) == 0 && rd(&a, 0xf0) == 0xff,
	      "back in xAPIC mode in the power-up state: initial ID, TPR 0, SPIV 0xff");

	vapic_init(&a, 0);
	vapic_set_base(&a, base | en | extd | bsp, 39);
	x2_wr(&a, 0x808, 0x40);
	vapic_init_ipi(&a);
	check(vapic_x2apic(&a) && x2_rd(&a, 0x808, &v) && v == 0 && x2_rd(&a, 0x802, &v) && v == 0,
	      "INIT keeps x2APIC mode and the ID, resets the registers (11.12.5.1)");
	vapic_init(&a, 2);
	wr(&a, 0x20, 0x05000000);
	vapic_init_ipi(&a);
	check(rd(&a, 0x20) == 0x05000000 && !vapic_x2apic(&a) && vapic_hw_enabled(&a),
	      "INIT in xAPIC mode keeps the APIC ID (11.4.7.3)");

	/* x2apic=off: CPUID says no x2APIC, so EXTD is a reserved bit (11.12.1). */
	vapic_init(&a, 1);
	a.no_x2apic = true;
	check(!vapic_set_base(&a, base | en | extd, 39) && !vapic_x2apic(&a),
	      "x2APIC not offered: EXTD raises #GP");
	check(vapic_set_base(&a, base, 39) && vapic_set_base(&a, base | en, 39) && a.no_x2apic &&
	      !vapic_set_base(&a, base | en | extd, 39), "a reset keeps it not offered");
}

/* SDM Vol. 3A table 11-6: which MSR is which register, and what each access may do. */
static void test_x2apic_msrs(void)
{
	/* Read-only registers: ID, version, PPR, LDR, ISR, TMR, IRR (first and last), CCR. */
	static const unsigned ro[] = { 0x802, 0x803, 0x80a, 0x80d, 0x810, 0x817, 0x818, 0x81f,
				       0x820, 0x827, 0x839 };
	/* No register: APR, RRD, DFR, ICR high, CMCI (no such LVT here) and unused MSRs. */
	static const unsigned none[] = { 0x800, 0x801, 0x804, 0x807, 0x809, 0x80c, 0x80e, 0x829,
					 0x82f, 0x831, 0x83a, 0x83d, 0x840, 0x8ff };
	/* Read/write registers, with a value that sets one reserved bit each. */
	static const struct { unsigned msr; uint64_t ok, bad; } rw[] = {
		{ 0x808, 0xff, 0x100 },			/* TPR: bits 31:8 */
		{ 0x80f, 0x3ff, 0x1000 },		/* SVR: no EOI-broadcast suppression */
		{ 0x828, 0, 1 },			/* ESR: a non-zero write */
		{ 0x832, 0x300ff | 1 << 12, 1 << 18 },	/* LVT timer: no TSC-deadline mode */
		{ 0x834, 0x107ff, 1 << 17 },		/* LVT PMI */
		{ 0x835, 0x1a7ff | 1 << 14, 1 << 17 },	/* LINT0: remote IRR is read-only */
		{ 0x837, 0x100ff, 1 << 8 },		/* LVT error: no delivery mode */
		{ 0x838, 0xffffffff, 1ull << 32 },	/* initial count: bits 63:32 */
		{ 0x83e, 0xb, 0x4 },			/* divide configuration */
	};
	struct vapic a;
	unsigned bad = 0, i;
	uint64_t v;

	x2_enabled(&a, 0x123);
	check(x2_rd(&a, 0x802, &v) && v == 0x123, "0x802: the 32-bit x2APIC ID");
	check(x2_rd(&a, 0x803, &v) && v == 0x50014, "0x803: the same version as in xAPIC mode");
	check(x2_rd(&a, 0x80d, &v) && v == 0x00120008,
	      "0x80D: LDR derived from ID 0x123: cluster 0x12, bit 1 << 3 (11.12.10.2)");
	for (i = 0; i < sizeof(ro) / sizeof(ro[0]); i++)
		bad += !x2_rd(&a, ro[i], &v) || x2_wr(&a, ro[i], 0) != VAPIC_MSR_GP;
	check(bad == 0, "read-only registers: RDMSR works, WRMSR #GPs");
	check(x2_rd(&a, 0x80d, &v) && v == 0x00120008 && x2_rd(&a, 0x802, &v) && v == 0x123,
	      "a refused LDR or ID write changes nothing");
	bad = 0;
	for (i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		bad += x2_rd(&a, none[i], &v) || x2_wr(&a, none[i], 0) != VAPIC_MSR_GP;
	check(bad == 0, "MSRs with no x2APIC register (DFR, ICR high, APR, ...) #GP both ways");
	check(!x2_rd(&a, 0x80b, &v) && !x2_rd(&a, 0x83f, &v),
	      "write-only EOI and SELF IPI: RDMSR #GPs");
	bad = 0;
	for (i = 0; i < sizeof(rw) / sizeof(rw[0]); i++) {
		if (x2_wr(&a, rw[i].msr, rw[i].ok) != VAPIC_MSR_OK ||
		    x2_wr(&a, rw[i].msr, rw[i].bad) != VAPIC_MSR_GP ||
		    x2_wr(&a, rw[i].msr, rw[i].ok | 1ull << 63) != VAPIC_MSR_GP) {
			printf("# MSR 0x%x\n", rw[i].msr);
			bad++;
		}
	}
	check(bad == 0, "read/write registers: a reserved bit or one of bits 63:32 #GPs");
	check(x2_rd(&a, 0x808, &v) && v == 0xff && x2_rd(&a, 0x83e, &v) && v == 0xb &&
	      x2_rd(&a, 0x832, &v) && v == 0x300ff,
	      "the accepted values are the registers' (read-only delivery status reads 0)");
	check(vapic_msr_write(&a, 0x838, 1000, 0, &ipi) == VAPIC_MSR_OK &&
	      vapic_msr_read(&a, 0x839, 600, &v) && v == 400,
	      "the timer counts as in xAPIC mode (1000 at 0, divide by 1: 400 at 600)");

	vapic_set_irr(&a, 0x61);
	vapic_ack(&a, 0x61);
	check(x2_wr(&a, 0x80b, 1) == VAPIC_MSR_GP && x2_rd(&a, 0x810 + 3, &v) && v == 2,
	      "EOI: a non-zero write #GPs and retires nothing");
	check(x2_wr(&a, 0x80b, 0) == VAPIC_MSR_OK && x2_rd(&a, 0x813, &v) && v == 0,
	      "EOI: writing 0 retires the in-service vector");
	vapic_set_irr(&a, 5);
	check(x2_wr(&a, 0x828, 0) == VAPIC_MSR_OK && x2_rd(&a, 0x828, &v) && v == 0x40,
	      "ESR: writing 0 latches the errors (receive illegal vector)");
}

/* SDM Vol. 3A 11.12.9-11.12.11: the 64-bit ICR, the SELF IPI register, 32-bit destinations. */
static void test_x2apic_ipis(void)
{
	struct vapic a, b, c;
	struct vapic_ipi p = { .mode = 0, .vector = 0x40, .logical = true, .x2apic = false };
	uint64_t v;

	x2_enabled(&a, 0x123);
	memset(&ipi, 0xee, sizeof(ipi));
	check(x2_wr(&a, 0x830, 0x45600000000ull | 0x4041) == VAPIC_MSR_IPI && ipi.mode == 0 &&
	      ipi.vector == 0x41 && !ipi.logical && ipi.x2apic && ipi.dest == 0x456 &&
	      ipi.shorthand == VAPIC_SH_NONE, "ICR: one WRMSR sends to the 32-bit destination");
	check(x2_rd(&a, 0x830, &v) && v == 0x45600004041ull, "ICR reads back all 64 bits");
	check(x2_wr(&a, 0x830, 1 << 12) == VAPIC_MSR_GP &&
	      x2_wr(&a, 0x830, 1 << 13) == VAPIC_MSR_GP &&
	      x2_wr(&a, 0x830, 1 << 16) == VAPIC_MSR_GP &&
	      x2_wr(&a, 0x830, 1u << 31) == VAPIC_MSR_GP,
	      "ICR: bits 12 (no delivery status), 13, 16-17 and 20-31 are reserved");
	check(x2_wr(&a, 0x830, 0xffffffff00080442ull) == VAPIC_MSR_IPI && ipi.mode == 4 &&
	      ipi.shorthand == VAPIC_SH_ALL && ipi.dest == 0xffffffff, "ICR: NMI to all");
	memset(&ipi, 0xee, sizeof(ipi));
	check(x2_wr(&a, 0x83f, 0x50) == VAPIC_MSR_IPI && ipi.mode == 0 && ipi.vector == 0x50 &&
	      ipi.shorthand == VAPIC_SH_SELF && !ipi.level, "SELF IPI: a fixed IPI to self");
	check(x2_rd(&a, 0x830, &v) && v == 0xffffffff00080442ull, "SELF IPI leaves the ICR alone");
	check(x2_wr(&a, 0x83f, 0x150) == VAPIC_MSR_GP, "SELF IPI: bits 31:8 are reserved");
	check(x2_wr(&a, 0x83f, 0x05) == VAPIC_MSR_OK && x2_wr(&a, 0x828, 0) == VAPIC_MSR_OK &&
	      x2_rd(&a, 0x828, &v) && v == 0x20, "SELF IPI of vector 5: not sent, send illegal");

	/* Physical: the 32-bit ID; 0xFFFFFFFF broadcasts, and 0xFF of 8-bit sources. */
	p.logical = false;
	p.x2apic = true;
	p.dest = 0x123;
	check(vapic_is_target(&a, &p, false), "physical: the 32-bit x2APIC ID");
	p.dest = 0x23;
	check(!vapic_is_target(&a, &p, false), "physical: its low 8 bits are another ID");
	p.dest = 0xff;
	check(!vapic_is_target(&a, &p, false), "physical: 0xFF is an ID in x2APIC's format");
	p.dest = 0xffffffff;
	check(vapic_is_target(&a, &p, false), "physical: 0xFFFFFFFF broadcasts");
	p.x2apic = false;
	p.dest = 0xff;
	check(vapic_is_target(&a, &p, false), "physical: an 8-bit 0xFF (I/O APIC) broadcasts");

	/* Logical: cluster 0x12, bit 3 for ID 0x123 (11.12.10.1). */
	p.logical = true;
	p.x2apic = true;
	p.dest = 0x0012000c;
	check(vapic_is_target(&a, &p, false), "logical: its cluster, its bit among others");
	p.dest = 0x00120004;
	check(!vapic_is_target(&a, &p, false), "logical: its cluster, not its bit");
	p.dest = 0x00130008;
	check(!vapic_is_target(&a, &p, false), "logical: another cluster");

	/* kvm-unit-tests' ioapic: an I/O APIC's logical 0x0D reaches x2APIC IDs 0, 2, 3, not 1. */
	x2_enabled(&b, 1);
	x2_enabled(&c, 3);
	p.x2apic = false;
	p.dest = 0x0d;
	check(vapic_is_target(&c, &p, false) && !vapic_is_target(&b, &p, false),
	      "an 8-bit logical destination 0x0D: cluster 0, IDs 0, 2, 3");
	vapic_init(&b, 1);
	wr(&b, 0xd0, 0x0d000000);
	p.x2apic = true;
	p.dest = 0x10d;
	check(!vapic_is_target(&b, &p, false), "an xAPIC's logical ID has 8 bits: 0x10D is not it");
}

int main(void)
{
	test_reset();
	test_spiv();
	test_priorities();
	test_tpr();
	test_esr();
	test_icr();
	test_targets();
	test_timer_oneshot();
	test_timer_periodic();
	test_timer_masked();
	test_pmi();
	test_access_sizes();
	test_all_ones();
	test_apic_base();
	test_nmi();
	test_x2apic_transitions();
	test_x2apic_msrs();
	test_x2apic_ipis();
	return unit_summary();
}
