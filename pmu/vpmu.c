/* Counting in one VCPU's virtual PMU: power-on state, which counter counts what, and overflow. */
#include "include/x86/pmu_msr.h"
#include "pmu/vpmu.h"

/* Event select | umask of each event a GP counter can count here (SDM Vol. 3B table 20-1). */
static const uint16_t gp_codes[VPMU_EV_COUNT] = {
	[VPMU_EV_INSTRUCTIONS] = ARCH_EVENT_INST_RETIRED,
	[VPMU_EV_BRANCHES] = ARCH_EVENT_BRANCH_RETIRED,
	[VPMU_EV_CORE_CYCLES] = ARCH_EVENT_CORE_CYCLES,
	[VPMU_EV_REF_CYCLES] = ARCH_EVENT_REF_CYCLES,
};

/* CPUID.0AH:EBX bit of each event (SDM Vol. 3B table 20-1): set = not available. */
const uint32_t vpmu_event_ebx_bit[VPMU_EV_COUNT] = {
	[VPMU_EV_CORE_CYCLES] = 1u << 0, [VPMU_EV_INSTRUCTIONS] = 1u << 1,
	[VPMU_EV_REF_CYCLES] = 1u << 2, [VPMU_EV_BRANCHES] = 1u << 5,
};

/* The one event each fixed counter counts (SDM Vol. 3B 20.2.2). */
static const enum vpmu_event fixed_events[VPMU_MAX_FIXED] = {
	VPMU_EV_INSTRUCTIONS, VPMU_EV_CORE_CYCLES, VPMU_EV_REF_CYCLES,
};

void vpmu_reset(struct vpmu *p, const struct vpmu_config *cfg)
{
	__builtin_memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	/* SDM Vol. 3A table 10-1: GLOBAL_CTRL sets bits n-1:0 (the GP counters) and clears the rest. */
	p->global_ctrl = vpmu_gp_bits(cfg);
}

/* What an IA32_PERFEVTSELx value counts at cpl, before GLOBAL_CTRL: VPMU_EV_NONE when nothing. */
enum vpmu_event vpmu_evtsel_event(uint64_t sel, unsigned cpl)
{
	int ev;

	/* SDM Vol. 3B 20.2.1.1: EN, and OS counts at CPL 0, USR at CPL 1-3. */
	if (!(sel & EVTSEL_EN) || !(sel & (cpl ? EVTSEL_USR : EVTSEL_OS)))
		return VPMU_EV_NONE;
	/*
	 * CMASK and EDGE compare or detect per-cycle event counts; counting one instruction at a
	 * time has no cycles to compare, so such a counter cannot be exact and never counts. INV
	 * only inverts the CMASK comparison: with CMASK 0 it is ignored (SDM Vol. 3B 20.2.1.1).
	 */
	if (sel & (EVTSEL_CMASK | EVTSEL_EDGE))
		return VPMU_EV_NONE;
	for (ev = 0; ev < VPMU_EV_COUNT; ev++)
		if ((sel & (EVTSEL_EVENT_MASK | EVTSEL_UMASK)) == gp_codes[ev])
			return ev;
	return VPMU_EV_NONE;
}

static enum vpmu_event gp_event(const struct vpmu *p, unsigned i, unsigned cpl)
{
	return vpmu_evtsel_event(p->evtsel[i], cpl);
}

/* An event the domain's allow-list denies (shown unavailable in CPUID.0AH) counts nothing. */
static enum vpmu_event allowed(const struct vpmu *p, enum vpmu_event ev)
{
	if (ev != VPMU_EV_NONE && (p->cfg->unavailable & vpmu_event_ebx_bit[ev]))
		return VPMU_EV_NONE;
	return ev;
}

/*
 * What the counter at IA32_PERF_GLOBAL_* bit `bit`, which GLOBAL_CTRL enables (enabled_ctrs()),
 * counts at cpl now: VPMU_EV_NONE when nothing. SDM Vol. 3B 20.2.2: the GLOBAL_CTRL bit is
 * ANDed with the counter's own enables.
 */
static inline enum vpmu_event ctr_event(const struct vpmu *p, unsigned bit, unsigned cpl)
{
	unsigned j = bit - GLOBAL_FIXED_SHIFT;

	/* EN clear (a counter not in use, the common case) needs no decoding. */
	if (bit < GLOBAL_FIXED_SHIFT)
		return p->evtsel[bit] & EVTSEL_EN ? allowed(p, gp_event(p, bit, cpl)) : VPMU_EV_NONE;
	/* SDM Vol. 3B 20.2.2: the fixed counter's ENABLE field, bit 0 for CPL 0, bit 1 above. */
	if (p->fixed_ctrl >> FIXED_CTRL_SHIFT(j) & (cpl ? FIXED_CTRL_USR : FIXED_CTRL_OS))
		return allowed(p, fixed_events[j]);
	return VPMU_EV_NONE;
}

/* Whether the counter at GLOBAL bit `bit` interrupts on overflow (INT, or the fixed PMI bit). */
static bool ctr_pmi(const struct vpmu *p, unsigned bit)
{
	if (bit < GLOBAL_FIXED_SHIFT)
		return p->evtsel[bit] & EVTSEL_INT;
	return p->fixed_ctrl >> FIXED_CTRL_SHIFT(bit - GLOBAL_FIXED_SHIFT) & FIXED_CTRL_PMI;
}

/* Where the counter at GLOBAL bit `bit` keeps its value (const in, like strchr: readers too). */
static uint64_t *ctr_value(const struct vpmu *p, unsigned bit)
{
	const uint64_t *v = bit < GLOBAL_FIXED_SHIFT ? &p->pmc[bit] : &p->fixed[bit - GLOBAL_FIXED_SHIFT];

	return (uint64_t *)v;
}

/* Events until the counter at GLOBAL bit `bit` wraps: 2^width - value, 1 from 2^width - 1. */
static uint64_t ctr_room(const struct vpmu *p, unsigned bit)
{
	return vpmu_width_mask(p->cfg) - *ctr_value(p, bit) + 1;
}

/* The counters GLOBAL_CTRL enables (SDM Vol. 3B 20.2.2): only they can count, so only they are looked at. */
static uint64_t enabled_ctrs(const struct vpmu *p)
{
	return p->global_ctrl & (vpmu_gp_bits(p->cfg) | vpmu_fixed_bits(p->cfg));
}

/* The counters, as GLOBAL bits, that count ev at cpl now. */
static uint64_t counting(const struct vpmu *p, enum vpmu_event ev, unsigned cpl)
{
	uint64_t ctrs = enabled_ctrs(p), hits = 0;

	if (ev == VPMU_EV_NONE)
		return 0;
	for (; ctrs; ctrs &= ctrs - 1) {
		unsigned bit = __builtin_ctzll(ctrs);

		if (ctr_event(p, bit, cpl) == ev)
			hits |= 1ull << bit;
	}
	return hits;
}

uint64_t vpmu_count(struct vpmu *p, enum vpmu_event ev, uint64_t n, unsigned cpl)
{
	uint64_t hits = counting(p, ev, cpl), pmis = 0;

	for (; hits; hits &= hits - 1) {
		unsigned bit = __builtin_ctzll(hits);
		uint64_t *v = ctr_value(p, bit);

		/* SDM Vol. 3B 20.2.2: a wrap sets the counter's GLOBAL_STATUS bit, however far. */
		if (n >= ctr_room(p, bit)) {
			p->global_status |= 1ull << bit;
			if (ctr_pmi(p, bit))
				pmis |= 1ull << bit;
		}
		/* 2^width divides 2^64, so a sum that wraps 64 bits still leaves the right low bits. */
		*v = (*v + n) & vpmu_width_mask(p->cfg);
	}
	return pmis;
}

uint32_t vpmu_active(const struct vpmu *p, unsigned cpl)
{
	uint64_t ctrs = enabled_ctrs(p);
	uint32_t evs = 0;

	/* GP counters with EN clear (those not in use) count nothing: a cheap pass drops them. */
	for (unsigned i = 0; i < p->cfg->num_gp; i++)
		if (!(p->evtsel[i] & EVTSEL_EN))
			ctrs &= ~(1ull << i);
	/* One look at each counter left, not one per event. */
	for (; ctrs; ctrs &= ctrs - 1) {
		enum vpmu_event ev = ctr_event(p, __builtin_ctzll(ctrs), cpl);

		if (ev != VPMU_EV_NONE)
			evs |= 1u << ev;
	}
	return evs;
}

uint64_t vpmu_until_overflow(const struct vpmu *p, enum vpmu_event ev, unsigned cpl)
{
	uint64_t hits = counting(p, ev, cpl), least = UINT64_MAX;

	for (; hits; hits &= hits - 1) {
		uint64_t room = ctr_room(p, __builtin_ctzll(hits));

		if (room < least)
			least = room;
	}
	return least;
}
