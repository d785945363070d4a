/* Hammers PMU MSRs and RDPMC with seeded garbage, surviving each #GP; then counts exactly. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/lib/vpmu_test.h"
#include "guest-stub/rt/rt.h"

/* Every PMU MSR run with a neighbour below and room for 8 counters above (SDM Vol. 4 table 2-2). */
static const struct msr_range {
	uint32_t first, n;
} ranges[] = {
	{ MSR_PMC0 - 1, 10 },
	{ MSR_PERFEVTSEL0 - 1, 10 },
	{ MSR_FIXED_CTR0 - 1, 6 },
	{ MSR_PERF_CAPABILITIES - 1, 3 },
	{ MSR_FIXED_CTR_CTRL - 1, 6 },
	{ MSR_A_PMC0 - 1, 10 },
};

/* Values a write or RDPMC finds interesting: the edges of the width, sign and reserved bits. */
static const uint64_t edges[] = {
	0, ~0ull, VT_TOP - 1, VT_TOP, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1ull << 63,
};

#define NEDGES		(sizeof(edges) / sizeof(edges[0]))
#define NRANGES		(sizeof(ranges) / sizeof(ranges[0]))
#define MAX_SHOWN	5	/* violations printed in full */

static uint64_t rng_state;

/* xorshift64*: the same seed gives the same run. */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

/*
 * Garbage of several shapes, so that not every write is stopped by the reserved bits: some
 * program real events (instructions, branches, cycles) and start counting, and with it the
 * soft backend's single-stepping, under the hammering.
 */
static uint64_t garbage(void)
{
	static const uint8_t events[] = { 0xC0, 0xC4, 0x3C, 0x2E };

	switch (rng() % 8) {
	case 0:
		return rng();
	case 1:
		return (uint32_t)rng();
	case 2:
		return rng() & (VT_TOP - 1);
	case 3:
		return 1ull << (rng() % 64);
	case 4:
		return edges[rng() % NEDGES];
	case 5:
		return EVTSEL_EN | (rng() & (EVTSEL_OS | EVTSEL_USR | EVTSEL_INT)) |
		       events[rng() % sizeof(events)];
	case 6:
		return (uint32_t)rng() & ~EVTSEL_ANY;
	default:
		return rng() & 0xFFF;
	}
}

static const struct vt_msr *pmu_msr(uint32_t msr)
{
	for (size_t i = 0; i < vt_nmsrs; i++)
		if (vt_msrs[i].msr == msr)
			return &vt_msrs[i];
	return NULL;
}

/* PMCx, A_PMCx and FIXED_CTRx hold 48-bit counts. */
static bool is_counter(uint32_t msr)
{
	return (msr >= MSR_PMC0 && msr < MSR_PMC0 + VT_GP) ||
	       (msr >= MSR_A_PMC0 && msr < MSR_A_PMC0 + VT_GP) ||
	       (msr >= MSR_FIXED_CTR0 && msr < MSR_FIXED_CTR0 + VT_FIXED);
}

/* SDM Vol. 2B RDPMC: type 0 (GP) or 4000H (fixed), index below the count CPUID.0AH gives. */
static bool rdpmc_valid(uint32_t ecx)
{
	uint32_t idx = ecx & ~RDPMC_FIXED;

	return idx < (ecx & RDPMC_FIXED ? VT_FIXED : VT_GP);
}

static struct {
	unsigned reads, writes, rdpmcs, gps;
	unsigned bad_read, bad_write, bad_rdpmc, too_wide;
} st;

static void violation(unsigned *kind, const char *what, uint32_t idx, uint64_t val, bool gp)
{
	(*kind)++;
	if (st.bad_read + st.bad_write + st.bad_rdpmc + st.too_wide <= MAX_SHOWN)
		printf("vpmu_hammer: %s %#x value %#llx: %s\n", what, idx, (unsigned long long)val,
		       gp ? "#GP" : "no #GP");
}

/* One access; the rules it must keep are those that hold whatever the PMU's state. */
static void hammer_one(void)
{
	const struct msr_range *r = &ranges[rng() % NRANGES];
	uint32_t msr = r->first + (uint32_t)(rng() % r->n), ecx;
	const struct vt_msr *m = pmu_msr(msr);
	uint64_t val = 0;
	bool done;

	switch (rng() % 8) {
	case 0: case 1: case 2: case 3:
		st.writes++;
		val = garbage();
		done = vt_wrmsr(msr, val);
		/* Vol. 4 table 2-2: absent and read-only MSRs #GP; 0 is valid in every other. */
		if (done && (!m || m->read_only))
			violation(&st.bad_write, "WRMSR", msr, val, false);
		if (!done && m && !m->read_only && !val)
			violation(&st.bad_write, "WRMSR", msr, val, true);
		break;
	case 4: case 5:
		st.reads++;
		done = vt_rdmsr(msr, &val);
		if (done != !!m)
			violation(&st.bad_read, "RDMSR", msr, val, !done);
		if (done && is_counter(msr) && val >= VT_TOP)
			violation(&st.too_wide, "RDMSR (wider than 48 bits)", msr, val, false);
		break;
	default:
		st.rdpmcs++;
		ecx = rng() & 1 ? (uint32_t)garbage() : (uint32_t)(rng() & (RDPMC_FIXED | 7));
		done = vt_rdpmc(ecx, &val);
		if (done != rdpmc_valid(ecx))
			violation(&st.bad_rdpmc, "RDPMC", ecx, val, !done);
		if (done && val >= VT_TOP)
			violation(&st.too_wide, "RDPMC (wider than 48 bits)", ecx, val, false);
		break;
	}
	if (!done)
		st.gps++;
}

/* After the hammering the PMU must still count exactly: one window on PMC0 and FIXED_CTR0. */
static void check_alive(void)
{
	uint64_t pmc, fixed;

	vt_pmu_quiet();
	vt_wrmsr(MSR_PERFEVTSEL0, EVTSEL_EN | EVTSEL_OS | EV_INSTRUCTIONS);
	vt_wrmsr(MSR_FIXED_CTR_CTRL, FIXED_OS);
	vt_window(MSR_GLOBAL_CTRL, 1 | GLOBAL_FIXED(0));
	pmc = vt_read(MSR_PMC0);
	fixed = vt_read(MSR_FIXED_CTR0);
	report(pmc == VT_WINDOW && fixed == VT_WINDOW,
	       "alive: a window of %d instructions counts %llu on PMC0, %llu on FIXED_CTR0",
	       VT_WINDOW, (unsigned long long)pmc, (unsigned long long)fixed);
}

int main(int argc, char **argv)
{
	unsigned n = 3000;
	uint64_t seed = 1;

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "n=", 2))
			n = (unsigned)strtoul(argv[i] + 2, NULL, 0);
		else if (!strncmp(argv[i], "seed=", 5))
			seed = strtoull(argv[i] + 5, NULL, 0);
	}
	rng_state = seed ? seed : 1;	/* xorshift never leaves 0 */
	vt_gp_install();
	printf("vpmu_hammer: %u accesses, seed %llu\n", n, (unsigned long long)seed);
	for (unsigned i = 0; i < n; i++)
		hammer_one();
	printf("vpmu_hammer: %u RDMSR, %u WRMSR, %u RDPMC, %u #GP recovered\n", st.reads,
	       st.writes, st.rdpmcs, st.gps);
	report(!st.bad_read, "RDMSR #GP exactly outside the 20 PMU MSRs: %u wrong of %u",
	       st.bad_read, st.reads);
	report(!st.bad_write, "WRMSR #GP outside the PMU and on read-only MSRs, never for 0: "
	       "%u wrong of %u", st.bad_write, st.writes);
	report(!st.bad_rdpmc, "RDPMC #GP exactly for bad indexes: %u wrong of %u", st.bad_rdpmc,
	       st.rdpmcs);
	report(!st.too_wide, "every counter value read fits 48 bits: %u wider", st.too_wide);
	check_alive();
	return report_summary();
}
