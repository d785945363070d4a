/* Unit tests for pmu/vpmu.c and pmu/vpmu_msr.c: CPUID.0AH, PMU MSRs, RDPMC, counting, overflow. */
#include "tests/unit/unit.h"
#include "pmu/vpmu.c"
#include "pmu/vpmu_msr.c"

#define TOP	(1ull << 48)	/* 2^width */
#define EN_ALL	(EVTSEL_EN | EVTSEL_OS | EVTSEL_USR)

static const struct vpmu_config cfg = {
	.enabled = true, .version = 2, .num_gp = 4, .num_fixed = 3, .width = 48,
	.unavailable = 0x58,
};
static const struct vpmu_config cfg_small = {
	.enabled = true, .version = 2, .num_gp = 3, .num_fixed = 2, .width = 48,
};
static const struct vpmu_config cfg_off = {
	.enabled = false, .version = 2, .num_gp = 4, .num_fixed = 3, .width = 48,
};

static uint64_t rd(struct vpmu *p, uint32_t msr)
{
	uint64_t val = 0xdead;

	vpmu_rdmsr(p, msr, &val);
	return val;
}

static void test_cpuid(void)
{
	uint32_t a, b, c, d;

	vpmu_cpuid(&cfg, &a, &b, &c, &d);
	check(a == 0x07300402, "CPUID.0AH:EAX = version 2, 4 GP, 48 bits, EBX length 7 (%#x)", a);
	check(b == 0x58, "CPUID.0AH:EBX = the unavailable events");
	check(c == 0, "CPUID.0AH:ECX = 0");
	check(d == 0x603, "CPUID.0AH:EDX = 3 fixed counters of 48 bits (%#x)", d);
	vpmu_cpuid(&cfg_off, &a, &b, &c, &d);
	check(!a && !b && !c && !d, "pmu=off: CPUID.0AH all zero");
}

static void test_reset(void)
{
	struct vpmu p;
	uint64_t sum = 0;
	unsigned i;

	__builtin_memset(&p, 0xff, sizeof(p));
	vpmu_reset(&p, &cfg);
	for (i = 0; i < cfg.num_gp; i++)
		sum |= rd(&p, MSR_IA32_PERFEVTSEL0 + i) | rd(&p, MSR_IA32_PMC0 + i);
	for (i = 0; i < cfg.num_fixed; i++)
		sum |= rd(&p, MSR_IA32_FIXED_CTR0 + i);
	check(sum == 0, "reset: event selects and counters are 0");
	check(rd(&p, MSR_IA32_FIXED_CTR_CTRL) == 0 && rd(&p, MSR_IA32_PERF_GLOBAL_STATUS) == 0,
	      "reset: FIXED_CTR_CTRL and GLOBAL_STATUS are 0");
	check(rd(&p, MSR_IA32_PERF_GLOBAL_CTRL) == 0xf,
	      "reset: GLOBAL_CTRL enables the GP counters only");
	check(vpmu_active(&p, 0) == 0 && vpmu_active(&p, 3) == 0, "reset: nothing counts");
}

/* One WRMSR on a fresh VCPU, then RDMSR of the same MSR. */
static const struct msr_case {
	const char *what;
	uint32_t msr;
	uint64_t val;
	enum vpmu_result wr, rd;
	uint64_t back;		/* what RDMSR returns after (the reset value when the write #GPs) */
} msr_cases[] = {
	{ "PERF_CAPABILITIES reads FW_WRITE alone", 0x345, 0x2000, VPMU_GP, VPMU_OK, 0x2000 },
	{ "PERF_CAPABILITIES write of 0 #GP", 0x345, 0, VPMU_GP, VPMU_OK, 0x2000 },
	{ "PERFEVTSEL takes any event", 0x186, 0x0153ffd1, VPMU_OK, VPMU_OK, 0x0153ffd1 },
	{ "PERFEVTSEL3 is the last", 0x189, 0x4300c0, VPMU_OK, VPMU_OK, 0x4300c0 },
	{ "PERFEVTSEL bit 32 #GP", 0x186, 1ull << 32, VPMU_GP, VPMU_OK, 0 },
	{ "PERFEVTSEL bit 63 #GP", 0x186, 1ull << 63, VPMU_GP, VPMU_OK, 0 },
	{ "PERFEVTSEL AnyThread #GP below version 3", 0x186, 0x6300c0, VPMU_GP, VPMU_OK, 0 },
	{ "PERFEVTSEL4 #GP with 4 counters", 0x18a, 0, VPMU_GP, VPMU_GP, 0 },
	{ "PMC0 sign-extends 0x80000000", 0xc1, 0x80000000, VPMU_OK, VPMU_OK, 0xffff80000000 },
	{ "PMC0 keeps 0x7fffffff", 0xc1, 0x7fffffff, VPMU_OK, VPMU_OK, 0x7fffffff },
	{ "PMC0 ignores EDX", 0xc1, 0xffffffff00000005, VPMU_OK, VPMU_OK, 5 },
	{ "PMC4 #GP with 4 counters", 0xc5, 0, VPMU_GP, VPMU_GP, 0 },
	{ "A_PMC3 takes 48 bits", 0x4c4, TOP - 1, VPMU_OK, VPMU_OK, TOP - 1 },
	{ "A_PMC0 bit 48 #GP", 0x4c1, TOP | 1, VPMU_GP, VPMU_OK, 0 },
	{ "A_PMC0 bit 63 #GP", 0x4c1, 1ull << 63, VPMU_GP, VPMU_OK, 0 },
	{ "A_PMC4 #GP with 4 counters", 0x4c5, 0, VPMU_GP, VPMU_GP, 0 },
	{ "FIXED_CTR2 takes 48 bits", 0x30b, TOP - 2, VPMU_OK, VPMU_OK, TOP - 2 },
	{ "FIXED_CTR0 bit 48 #GP", 0x309, TOP, VPMU_GP, VPMU_OK, 0 },
	{ "FIXED_CTR_CTRL takes OS, USR, PMI of 3", 0x38d, 0xbbb, VPMU_OK, VPMU_OK, 0xbbb },
	{ "FIXED_CTR_CTRL AnyThread #GP", 0x38d, 0x400, VPMU_GP, VPMU_OK, 0 },
	{ "FIXED_CTR_CTRL field 3 #GP", 0x38d, 0x1000, VPMU_GP, VPMU_OK, 0 },
	{ "GLOBAL_CTRL takes every counter", 0x38f, 0x70000000f, VPMU_OK, VPMU_OK, 0x70000000f },
	{ "GLOBAL_CTRL bit 4 #GP", 0x38f, 0x10, VPMU_GP, VPMU_OK, 0xf },
	{ "GLOBAL_CTRL bit 35 #GP", 0x38f, 1ull << 35, VPMU_GP, VPMU_OK, 0xf },
	{ "GLOBAL_CTRL bit 62 #GP", 0x38f, 1ull << 62, VPMU_GP, VPMU_OK, 0xf },
	{ "GLOBAL_STATUS is read-only", 0x38e, 0, VPMU_GP, VPMU_OK, 0 },
	{ "OVF_CTRL takes counters, 62, 63; reads 0", 0x390, 0xc00000070000000f, VPMU_OK,
	  VPMU_OK, 0 },
	{ "OVF_CTRL bit 4 #GP", 0x390, 0x10, VPMU_GP, VPMU_OK, 0 },
	{ "OVF_CTRL bit 61 #GP", 0x390, 1ull << 61, VPMU_GP, VPMU_OK, 0 },
	{ "MSR 0x10 is not the PMU's", 0x10, 0, VPMU_NOT_PMU, VPMU_NOT_PMU, 0 },
	{ "MSR 0x18e is not the PMU's", 0x18e, 0, VPMU_NOT_PMU, VPMU_NOT_PMU, 0 },
	{ "MSR 0xc9 is not the PMU's", 0xc9, 0, VPMU_NOT_PMU, VPMU_NOT_PMU, 0 },
	{ "MSR 0x4c9 is not the PMU's", 0x4c9, 0, VPMU_NOT_PMU, VPMU_NOT_PMU, 0 },
	{ "MSR 0x30c is not the PMU's", 0x30c, 0, VPMU_NOT_PMU, VPMU_NOT_PMU, 0 },
};

static void test_msrs(void)
{
	const struct msr_case *c;
	struct vpmu p;
	uint64_t val;
	enum vpmu_result wr, rdr;

	for (c = msr_cases; c < msr_cases + sizeof(msr_cases) / sizeof(*c); c++) {
		vpmu_reset(&p, &cfg);
		val = 0;
		wr = vpmu_wrmsr(&p, c->msr, c->val);
		rdr = vpmu_rdmsr(&p, c->msr, &val);
		check(wr == c->wr && rdr == c->rd && (c->rd != VPMU_OK || val == c->back),
		      "%s (write %d read %d %#llx)", c->what, wr, rdr, (unsigned long long)val);
	}
}

static void test_counts_from_config(void)
{
	struct vpmu p;
	uint64_t val;

	vpmu_reset(&p, &cfg_small);
	check(vpmu_wrmsr(&p, 0x30a, 0) == VPMU_OK && vpmu_wrmsr(&p, 0x30b, 0) == VPMU_GP,
	      "3+2 counters: FIXED_CTR2 #GP");
	check(vpmu_wrmsr(&p, 0x38d, 0x33) == VPMU_OK && vpmu_wrmsr(&p, 0x38d, 0x300) == VPMU_GP,
	      "3+2 counters: FIXED_CTR_CTRL field 2 #GP");
	check(vpmu_wrmsr(&p, 0x38f, 0x300000007) == VPMU_OK &&
	      vpmu_wrmsr(&p, 0x38f, 0x400000000) == VPMU_GP && vpmu_wrmsr(&p, 0x38f, 8) == VPMU_GP,
	      "3+2 counters: GLOBAL_CTRL bits 3 and 34 #GP");
	check(rd(&p, MSR_IA32_PERF_GLOBAL_CTRL) == 0x300000007, "a #GP write leaves GLOBAL_CTRL");
	check(vpmu_rdpmc(&p, 0x40000002, 0, false, &val) == VPMU_GP &&
	      vpmu_rdpmc(&p, 2, 0, false, &val) == VPMU_OK, "3+2 counters: RDPMC 4000_0002H #GP");
}

static void test_off(void)
{
	static const uint32_t msrs[] = {
		0x186, 0xc1, 0x4c1, 0x309, 0x345, 0x38d, 0x38e, 0x38f, 0x390,
	};
	struct vpmu p;
	uint64_t val;
	unsigned i, gp = 0;

	vpmu_reset(&p, &cfg_off);
	for (i = 0; i < sizeof(msrs) / sizeof(*msrs); i++)
		gp += vpmu_rdmsr(&p, msrs[i], &val) == VPMU_GP && vpmu_wrmsr(&p, msrs[i], 0) == VPMU_GP;
	check(gp == i, "pmu=off: every PMU MSR #GP on read and write (%u of %u)", gp, i);
	check(vpmu_rdmsr(&p, 0x10, &val) == VPMU_NOT_PMU, "pmu=off: other MSRs are not the PMU's");
	check(vpmu_rdpmc(&p, 0, 0, true, &val) == VPMU_GP, "pmu=off: RDPMC #GP");
	p.evtsel[0] = ARCH_EVENT_INST_RETIRED | EN_ALL;
	check(rd(&p, MSR_IA32_PERF_GLOBAL_CTRL) == 0xdead && p.global_ctrl == 0 &&
	      vpmu_active(&p, 0) == 0 && vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 5, 0) == 0 &&
	      p.pmc[0] == 0, "pmu=off: nothing counts");
}

static const struct rdpmc_case {
	const char *what;
	uint32_t ecx;
	unsigned cpl;
	bool pce;
	enum vpmu_result res;
	uint64_t val;
} rdpmc_cases[] = {
	{ "RDPMC 0 reads PMC0 (48 bits)", 0, 0, false, VPMU_OK, 0xffff80000000 },
	{ "RDPMC 3 reads PMC3", 3, 0, false, VPMU_OK, 0x103 },
	{ "RDPMC 4 #GP with 4 counters", 4, 0, false, VPMU_GP, 0 },
	{ "RDPMC 4000_0000H reads FIXED_CTR0", 0x40000000, 0, false, VPMU_OK, 0x200 },
	{ "RDPMC 4000_0002H reads FIXED_CTR2", 0x40000002, 0, false, VPMU_OK, 0x202 },
	{ "RDPMC 4000_0003H #GP with 3 fixed", 0x40000003, 0, false, VPMU_GP, 0 },
	{ "RDPMC ECX bit 31 #GP", 0x80000000, 0, false, VPMU_GP, 0 },
	{ "RDPMC type 2000H (metrics) #GP", 0x20000000, 0, false, VPMU_GP, 0 },
	{ "RDPMC type 1 #GP", 0x10000, 0, false, VPMU_GP, 0 },
	{ "RDPMC index bit 8 #GP", 0x100, 0, false, VPMU_GP, 0 },
	{ "RDPMC at CPL 3 without CR4.PCE #GP", 0, 3, false, VPMU_GP, 0 },
	{ "RDPMC at CPL 1 without CR4.PCE #GP", 0, 1, false, VPMU_GP, 0 },
	{ "RDPMC at CPL 3 with CR4.PCE", 0x40000001, 3, true, VPMU_OK, 0x201 },
};

static void test_rdpmc(void)
{
	const struct rdpmc_case *c;
	struct vpmu p;
	uint64_t val;
	enum vpmu_result res;
	unsigned i;

	vpmu_reset(&p, &cfg);
	vpmu_wrmsr(&p, MSR_IA32_PMC0, 0x80000000);
	for (i = 1; i < cfg.num_gp; i++)
		vpmu_wrmsr(&p, MSR_IA32_A_PMC0 + i, 0x100 + i);
	for (i = 0; i < cfg.num_fixed; i++)
		vpmu_wrmsr(&p, MSR_IA32_FIXED_CTR0 + i, 0x200 + i);
	for (c = rdpmc_cases; c < rdpmc_cases + sizeof(rdpmc_cases) / sizeof(*c); c++) {
		val = 0;
		res = vpmu_rdpmc(&p, c->ecx, c->cpl, c->pce, &val);
		check(res == c->res && (res != VPMU_OK || val == c->val), "%s (%d %#llx)", c->what,
		      res, (unsigned long long)val);
	}
}

/* Which events a GP counter programmed with evtsel counts at CPL 0 and CPL 3. */
static const struct decode_case {
	const char *what;
	uint64_t evtsel;
	uint32_t at0, at3;	/* vpmu_active() */
} decode_cases[] = {
	{ "0xC0 instructions, OS+USR", ARCH_EVENT_INST_RETIRED | EN_ALL, 1, 1 },
	{ "0xC4 branches, OS only", ARCH_EVENT_BRANCH_RETIRED | EVTSEL_EN | EVTSEL_OS, 2, 0 },
	{ "0x3C core cycles, USR only", ARCH_EVENT_CORE_CYCLES | EVTSEL_EN | EVTSEL_USR, 0, 4 },
	{ "0x3C/01 reference cycles", ARCH_EVENT_REF_CYCLES | EN_ALL, 8, 8 },
	{ "neither OS nor USR counts nowhere", ARCH_EVENT_INST_RETIRED | EVTSEL_EN, 0, 0 },
	{ "EN clear counts nowhere", ARCH_EVENT_INST_RETIRED | EVTSEL_OS | EVTSEL_USR, 0, 0 },
	{ "0xC0/01 is not instructions", 0x01c0 | EN_ALL, 0, 0 },
	{ "LLC misses are not counted", ARCH_EVENT_LLC_MISS | EN_ALL, 0, 0 },
	{ "branch misses are not counted", ARCH_EVENT_BRANCH_MISS | EN_ALL, 0, 0 },
	{ "CMASK stops counting", ARCH_EVENT_INST_RETIRED | EN_ALL | 1ull << 24, 0, 0 },
	/* SDM Vol. 3B 20.2.1.1: with CMASK 0 the INV flag is ignored. */
	{ "INV with CMASK 0 is ignored", ARCH_EVENT_INST_RETIRED | EN_ALL | EVTSEL_INV, 1, 1 },
	{ "INV with CMASK 1 stops counting", ARCH_EVENT_INST_RETIRED | EN_ALL | EVTSEL_INV |
	  1ull << 24, 0, 0 },
	{ "EDGE stops counting", ARCH_EVENT_INST_RETIRED | EN_ALL | EVTSEL_EDGE, 0, 0 },
	{ "INT and PC do not change counting", ARCH_EVENT_INST_RETIRED | EN_ALL | EVTSEL_INT |
	  EVTSEL_PC, 1, 1 },
};

static void test_decode(void)
{
	const struct decode_case *c;
	struct vpmu p;
	uint32_t at0, at1, at3;

	for (c = decode_cases; c < decode_cases + sizeof(decode_cases) / sizeof(*c); c++) {
		vpmu_reset(&p, &cfg);
		vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0 + 2, c->evtsel);
		at0 = vpmu_active(&p, 0);
		at1 = vpmu_active(&p, 1);
		at3 = vpmu_active(&p, 3);
		check(at0 == c->at0 && at1 == c->at3 && at3 == c->at3, "%s (%#x %#x %#x)", c->what,
		      at0, at1, at3);
	}
}

static void test_counting(void)
{
	struct vpmu p;
	uint64_t pmis;

	vpmu_reset(&p, &cfg);
	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0, ARCH_EVENT_INST_RETIRED | EVTSEL_EN | EVTSEL_OS);
	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0 + 1, ARCH_EVENT_INST_RETIRED | EVTSEL_EN | EVTSEL_USR);
	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0 + 2, ARCH_EVENT_INST_RETIRED | EN_ALL);
	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0 + 3, ARCH_EVENT_BRANCH_RETIRED | EN_ALL);
	pmis = vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 10, 0);
	pmis |= vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 100, 3);
	pmis |= vpmu_count(&p, VPMU_EV_BRANCHES, 7, 2);
	check(rd(&p, 0xc1) == 10, "OS-only counter counts CPL 0 only (%llu)",
	      (unsigned long long)rd(&p, 0xc1));
	check(rd(&p, 0xc2) == 100, "USR-only counter counts CPL 3 only");
	check(rd(&p, 0xc3) == 110, "OS+USR counter counts both");
	check(rd(&p, 0xc4) == 7, "branches counted on their own counter");
	check(pmis == 0 && rd(&p, MSR_IA32_PERF_GLOBAL_STATUS) == 0, "no overflow, no PMI");
	check(vpmu_count(&p, VPMU_EV_NONE, 5, 0) == 0 && rd(&p, 0xc1) == 10 &&
	      rd(&p, 0xc2) == 100 && rd(&p, 0x309) == 0, "VPMU_EV_NONE moves nothing, idle or not");
	check(vpmu_until_overflow(&p, VPMU_EV_NONE, 0) == UINT64_MAX,
	      "VPMU_EV_NONE never overflows");
	vpmu_wrmsr(&p, MSR_IA32_PERF_GLOBAL_CTRL, 0xb);
	vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 5, 0);
	check(rd(&p, 0xc1) == 15 && rd(&p, 0xc3) == 110, "GLOBAL_CTRL bit clear stops a counter");
	check(vpmu_active(&p, 0) == 3 && vpmu_active(&p, 3) == 3, "active: instructions, branches");
	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0, ARCH_EVENT_INST_RETIRED | EVTSEL_OS);
	vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 5, 0);
	check(rd(&p, 0xc1) == 15, "EN clear stops a counter");
}

static void test_fixed(void)
{
	struct vpmu p;

	vpmu_reset(&p, &cfg);
	/* Counter 0 OS, counter 1 USR, counter 2 both. */
	vpmu_wrmsr(&p, MSR_IA32_FIXED_CTR_CTRL, 0x321);
	vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 5, 0);
	check(rd(&p, 0x309) == 0, "fixed counters wait for their GLOBAL_CTRL bit (off at reset)");
	vpmu_wrmsr(&p, MSR_IA32_PERF_GLOBAL_CTRL, 0x700000000);
	vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 5, 0);
	vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 50, 3);
	check(rd(&p, 0x309) == 5, "FIXED_CTR0 counts instructions, OS only");
	vpmu_count(&p, VPMU_EV_CORE_CYCLES, 6, 0);
	vpmu_count(&p, VPMU_EV_CORE_CYCLES, 60, 3);
	check(rd(&p, 0x30a) == 60, "FIXED_CTR1 counts core cycles, USR only");
	vpmu_count(&p, VPMU_EV_REF_CYCLES, 7, 0);
	vpmu_count(&p, VPMU_EV_REF_CYCLES, 70, 3);
	vpmu_count(&p, VPMU_EV_BRANCHES, 1000, 0);
	check(rd(&p, 0x30b) == 77, "FIXED_CTR2 counts reference cycles, both");
	check(vpmu_active(&p, 0) == 0x9 && vpmu_active(&p, 3) == 0xc, "active follows the fields");
	vpmu_wrmsr(&p, MSR_IA32_PERF_GLOBAL_CTRL, 0x300000000);
	vpmu_count(&p, VPMU_EV_REF_CYCLES, 1, 0);
	check(rd(&p, 0x30b) == 77, "GLOBAL_CTRL bit 34 clear stops FIXED_CTR2");
}

static void test_overflow(void)
{
	const uint64_t m = 1000;
	struct vpmu p;
	uint64_t pmis;

	vpmu_reset(&p, &cfg);
	vpmu_wrmsr(&p, MSR_IA32_A_PMC0, TOP - m);
	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0, ARCH_EVENT_INST_RETIRED | EN_ALL);
	check(vpmu_until_overflow(&p, VPMU_EV_INSTRUCTIONS, 3) == m, "until_overflow from 2^48 - M is M");
	pmis = vpmu_count(&p, VPMU_EV_INSTRUCTIONS, m - 1, 3);
	check(pmis == 0 && rd(&p, 0xc1) == TOP - 1 && rd(&p, MSR_IA32_PERF_GLOBAL_STATUS) == 0,
	      "M - 1 events: at 2^48 - 1, no overflow");
	check(vpmu_until_overflow(&p, VPMU_EV_INSTRUCTIONS, 3) == 1, "at 2^48 - 1: 1 event to go");
	pmis = vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 1, 3);
	check(rd(&p, 0xc1) == 0 && rd(&p, MSR_IA32_PERF_GLOBAL_STATUS) == 1,
	      "the M-th event wraps to 0 and sets GLOBAL_STATUS bit 0");
	check(pmis == 0, "no PMI without INT");
	check(vpmu_until_overflow(&p, VPMU_EV_INSTRUCTIONS, 3) == TOP, "at 0: 2^48 events to go");
	vpmu_wrmsr(&p, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);
	check(rd(&p, MSR_IA32_PERF_GLOBAL_STATUS) == 0, "OVF_CTRL clears the status bit");

	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0, ARCH_EVENT_INST_RETIRED | EN_ALL | EVTSEL_INT);
	vpmu_wrmsr(&p, MSR_IA32_A_PMC0, TOP - m);
	check(vpmu_count(&p, VPMU_EV_INSTRUCTIONS, m - 1, 0) == 0, "INT: no PMI before the M-th");
	check(vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 1, 0) == 1, "INT: PMI reported at the M-th");

	/*
	 * Trap-and-emulate keeps the overshoot: the counter goes on past zero as hardware's does
	 * (SDM Vol. 3B 20.2.6), so a guest that reloads with period plus the value finds it there.
	 */
	vpmu_wrmsr(&p, MSR_IA32_A_PMC0, TOP - 3);
	vpmu_wrmsr(&p, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);
	pmis = vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 10, 0);
	check(pmis == 1 && rd(&p, 0xc1) == 7 && rd(&p, MSR_IA32_PERF_GLOBAL_STATUS) == 1,
	      "10 events from 2^48 - 3: overflow, and the 7 past zero stay in the counter");

	vpmu_wrmsr(&p, MSR_IA32_A_PMC0, 5);
	vpmu_wrmsr(&p, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);
	pmis = vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 3 * TOP + 7, 0);
	check(pmis == 1 && rd(&p, 0xc1) == 12 && rd(&p, MSR_IA32_PERF_GLOBAL_STATUS) == 1,
	      "wrapping 3 times: low bits kept, one status bit, reported");
	pmis = vpmu_count(&p, VPMU_EV_INSTRUCTIONS, UINT64_MAX, 0);
	check(pmis == 1 && rd(&p, 0xc1) == 11, "n = 2^64 - 1 wraps past 64 bits right");

	vpmu_wrmsr(&p, MSR_IA32_PMC0, 0x80000000);
	check(vpmu_until_overflow(&p, VPMU_EV_INSTRUCTIONS, 0) == 0x80000000,
	      "PMC0 written with 0x80000000: overflow after 2^31 events");
}

static void test_overflow_many(void)
{
	struct vpmu p;
	uint64_t pmis;

	vpmu_reset(&p, &cfg);
	check(vpmu_until_overflow(&p, VPMU_EV_INSTRUCTIONS, 0) == UINT64_MAX,
	      "until_overflow: no counter, UINT64_MAX");
	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0, ARCH_EVENT_INST_RETIRED | EN_ALL | EVTSEL_INT);
	vpmu_wrmsr(&p, MSR_IA32_A_PMC0, TOP - 50);
	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0 + 1, ARCH_EVENT_INST_RETIRED | EVTSEL_EN | EVTSEL_USR);
	vpmu_wrmsr(&p, MSR_IA32_A_PMC0 + 1, TOP - 3);
	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0 + 2, ARCH_EVENT_BRANCH_RETIRED | EN_ALL);
	vpmu_wrmsr(&p, MSR_IA32_A_PMC0 + 2, TOP - 2);
	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0 + 3, ARCH_EVENT_INST_RETIRED | EN_ALL);
	vpmu_wrmsr(&p, MSR_IA32_A_PMC0 + 3, TOP - 1);
	vpmu_wrmsr(&p, MSR_IA32_PERF_GLOBAL_CTRL, 0x700000007);
	vpmu_wrmsr(&p, MSR_IA32_FIXED_CTR_CTRL, 0xb);
	vpmu_wrmsr(&p, MSR_IA32_FIXED_CTR0, TOP - 20);
	check(vpmu_until_overflow(&p, VPMU_EV_INSTRUCTIONS, 0) == 20,
	      "until_overflow: least of the counters counting at CPL 0");
	check(vpmu_until_overflow(&p, VPMU_EV_INSTRUCTIONS, 3) == 3,
	      "until_overflow: least of the counters counting at CPL 3");
	check(vpmu_until_overflow(&p, VPMU_EV_BRANCHES, 0) == 2, "until_overflow: per event");
	check(vpmu_until_overflow(&p, VPMU_EV_CORE_CYCLES, 0) == UINT64_MAX,
	      "until_overflow: no counter for the event, UINT64_MAX");
	pmis = vpmu_count(&p, VPMU_EV_INSTRUCTIONS, 50, 0);
	check(pmis == 0x100000001 && rd(&p, MSR_IA32_PERF_GLOBAL_STATUS) == 0x100000001,
	      "fixed PMI bit and INT report their counters; others untouched (%#llx)",
	      (unsigned long long)pmis);
}

/*
 * The writes pmu_wrmsr() takes without reprogramming the backend: only an event select whose EN
 * is clear before and after (SDM Vol. 3B 20.2.1.1: such a counter counts nothing either way).
 */
static void test_inert(void)
{
	struct vpmu p;

	vpmu_reset(&p, &cfg);
	check(vpmu_wrmsr_inert(&p, MSR_IA32_PERFEVTSEL0, 0) &&
	      vpmu_wrmsr_inert(&p, MSR_IA32_PERFEVTSEL0 + 3, ARCH_EVENT_INST_RETIRED | EVTSEL_USR),
	      "an idle event select written with EN clear: inert");
	check(!vpmu_wrmsr_inert(&p, MSR_IA32_PERFEVTSEL0, ARCH_EVENT_INST_RETIRED | EN_ALL),
	      "a write that sets EN starts a counter: not inert");
	vpmu_wrmsr(&p, MSR_IA32_PERFEVTSEL0 + 1, ARCH_EVENT_INST_RETIRED | EN_ALL);
	check(!vpmu_wrmsr_inert(&p, MSR_IA32_PERFEVTSEL0 + 1, 0) &&
	      !vpmu_wrmsr_inert(&p, MSR_IA32_PERFEVTSEL0 + 1, ARCH_EVENT_BRANCH_RETIRED | EN_ALL),
	      "a counting select stopped or changed: not inert");
	check(!vpmu_wrmsr_inert(&p, MSR_IA32_PERFEVTSEL0 + 4, 0) &&
	      !vpmu_wrmsr_inert(&p, MSR_IA32_PMC0, 0) &&
	      !vpmu_wrmsr_inert(&p, MSR_IA32_PERF_GLOBAL_CTRL, 0),
	      "a select the PMU lacks, a counter, GLOBAL_CTRL: never inert");
}

int main(void)
{
	test_cpuid();
	test_reset();
	test_msrs();
	test_counts_from_config();
	test_off();
	test_rdpmc();
	test_decode();
	test_counting();
	test_inert();
	test_fixed();
	test_overflow();
	test_overflow_many();
	return unit_summary();
}
