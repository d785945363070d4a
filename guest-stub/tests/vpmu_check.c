/* Checks each CPUID, MSR and RDPMC rule of the virtual PMU; expect=off: that pmu=off hides it. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/lib/report.h"
#include "guest-stub/lib/vpmu_test.h"
#include "guest-stub/rt/rt.h"
#include "include/x86/cr.h"

#define MSR_PMC(i)		(MSR_PMC0 + (i))
#define MSR_A_PMC(i)		(MSR_A_PMC0 + (i))
#define MSR_PERFEVTSEL(i)	(MSR_PERFEVTSEL0 + (i))
#define MSR_FIXED_CTR(j)	(MSR_FIXED_CTR0 + (j))
#define CPUID_PDCM		(1u << 15)	/* SDM Vol. 2A CPUID.01H:ECX: PERF_CAPABILITIES */

/* Counter values every MSR rule starts from, so a write that should not land shows. */
#define PRESET_GP(i)		(0x5A5A00000000ull + (i))
#define PRESET_FIXED(j)		(0x5A5A00000100ull + (j))

enum reg { EAX, EBX, ECX, EDX };

/* One CPUID field: (leaf's register & mask) must be want. */
struct cpuid_rule {
	const char *name;
	uint32_t leaf;
	enum reg reg;
	uint32_t mask, want;
};

/* SDM Vol. 3B 20.2.1 and 20.2.2 (CPUID leaf 0AH, Vol. 2A table 3-8). */
static const struct cpuid_rule cpuid_on[] = {
	{ "CPUID.0AH EAX[7:0]: version 2", 0xA, EAX, 0xFF, VT_VERSION },
	{ "CPUID.0AH EAX[15:8]: 4 GP counters", 0xA, EAX, 0xFF00, VT_GP << 8 },
	{ "CPUID.0AH EAX[23:16]: GP counters 48 bits wide", 0xA, EAX, 0xFF0000, VT_WIDTH << 16 },
	{ "CPUID.0AH EAX[31:24]: EBX vector of 7 events", 0xA, EAX, 0xFF000000, 7u << 24 },
	/* A set EBX bit: NOT available. Core cycles 0, instructions 1, ref cycles 2, branches 5. */
	{ "CPUID.0AH EBX: cycles, instructions, ref cycles, branches available", 0xA, EBX, 0x27,
	  0 },
	{ "CPUID.0AH EBX: no bit beyond the vector's 7", 0xA, EBX, 0xFFFFFF80, 0 },
	{ "CPUID.0AH EDX[4:0]: 3 fixed counters", 0xA, EDX, 0x1F, VT_FIXED },
	{ "CPUID.0AH EDX[12:5]: fixed counters 48 bits wide", 0xA, EDX, 0x1FE0, VT_WIDTH << 5 },
	{ "CPUID.01H ECX[15] PDCM: PERF_CAPABILITIES exists", 1, ECX, CPUID_PDCM, CPUID_PDCM },
};

static const struct cpuid_rule cpuid_off[] = {
	{ "pmu=off: CPUID.0AH EAX = 0", 0xA, EAX, ~0u, 0 },
	{ "pmu=off: CPUID.0AH EBX = 0", 0xA, EBX, ~0u, 0 },
	{ "pmu=off: CPUID.0AH ECX = 0", 0xA, ECX, ~0u, 0 },
	{ "pmu=off: CPUID.0AH EDX = 0", 0xA, EDX, ~0u, 0 },
	{ "pmu=off: CPUID.01H ECX[15] PDCM clear", 1, ECX, CPUID_PDCM, 0 },
};

enum op { RD, WR, PMC };

/*
 * One access and its outcome: #GP or not, and the value read (RD, PMC) or what the MSR
 * `shows` holds after the write (WR; 0: nothing to read back).
 */
struct rule {
	const char *name;
	enum op op;
	uint32_t idx;		/* MSR, or RDPMC's ECX */
	uint64_t val;		/* written */
	bool gp;
	uint32_t shows;
	uint64_t want;
};

#define READ_GP(n, msr)			{ n, RD, msr, 0, true, 0, 0 }
#define WRITES(n, msr, v, shows, w)	{ n, WR, msr, v, false, shows, w }
#define WRITE_GP(n, msr, v, shows, w)	{ n, WR, msr, v, true, shows, w }
#define RDPMC_READS(n, ecx, w)		{ n, PMC, ecx, 0, false, 0, w }
#define RDPMC_GP(n, ecx)		{ n, PMC, ecx, 0, true, 0, 0 }

/* Each runs on a quiet PMU with the PRESET counter values. */
static const struct rule rules[] = {
	/* SDM Vol. 3B 20.2.6: IA32_PMCx take EAX[31:0] sign-extended to the width, EDX ignored. */
	WRITES("PMC0 write 0x80000000 sign-extends to 0xFFFF80000000", MSR_PMC(0), 0x80000000,
	       MSR_PMC(0), 0xFFFF80000000),
	WRITES("PMC1 write 0x7FFFFFFF stays positive", MSR_PMC(1), 0x7FFFFFFF, MSR_PMC(1),
	       0x7FFFFFFF),
	WRITES("PMC2 write ignores EDX", MSR_PMC(2), 0xFFFF000000000005, MSR_PMC(2), 5),
	WRITES("PMC3 write 0xFFFFFFFF shows as 0xFFFFFFFFFFFF in A_PMC3", MSR_PMC(3), 0xFFFFFFFF,
	       MSR_A_PMC(3), 0xFFFFFFFFFFFF),
	/* SDM Vol. 3B 20.2.6: IA32_A_PMCx take full-width writes; bits beyond the width #GP. */
	WRITES("A_PMC0 full-width write 0x123456789ABC", MSR_A_PMC(0), 0x123456789ABC,
	       MSR_A_PMC(0), 0x123456789ABC),
	WRITES("A_PMC1 full-width write 0xFFFFFFFFFFFF shows in PMC1", MSR_A_PMC(1),
	       0xFFFFFFFFFFFF, MSR_PMC(1), 0xFFFFFFFFFFFF),
	WRITE_GP("A_PMC2 write with bit 48 #GP, counter unchanged", MSR_A_PMC(2), VT_TOP | 0x1234,
		 MSR_A_PMC(2), PRESET_GP(2)),
	WRITE_GP("A_PMC3 write with bit 63 #GP, counter unchanged", MSR_A_PMC(3), 1ull << 63 | 1,
		 MSR_A_PMC(3), PRESET_GP(3)),
	/* SDM Vol. 3B 20.2.2: fixed counters are width bits; wider values #GP. */
	WRITES("FIXED_CTR0 full-width write 0xFFFFFFFFFFFF", MSR_FIXED_CTR(0), 0xFFFFFFFFFFFF,
	       MSR_FIXED_CTR(0), 0xFFFFFFFFFFFF),
	WRITE_GP("FIXED_CTR1 write with bit 48 #GP, counter unchanged", MSR_FIXED_CTR(1),
		 VT_TOP | 7, MSR_FIXED_CTR(1), PRESET_FIXED(1)),
	WRITE_GP("FIXED_CTR2 write with bit 63 #GP, counter unchanged", MSR_FIXED_CTR(2),
		 1ull << 63 | 7, MSR_FIXED_CTR(2), PRESET_FIXED(2)),
	/* Vol. 4 table 2-2: PERFEVTSELx bits 63:32 reserved; 20.2.3: AnyThread (21) from v3 on. */
	WRITES("PERFEVTSEL0 takes every bit of 31:0 but AnyThread", MSR_PERFEVTSEL(0), 0xFFDFFFFF,
	       MSR_PERFEVTSEL(0), 0xFFDFFFFF),
	WRITE_GP("PERFEVTSEL1 bit 32 #GP", MSR_PERFEVTSEL(1), 1ull << 32 | 0x4300C0,
		 MSR_PERFEVTSEL(1), 0),
	WRITE_GP("PERFEVTSEL2 bit 63 #GP", MSR_PERFEVTSEL(2), 1ull << 63 | 0x4300C0,
		 MSR_PERFEVTSEL(2), 0),
	WRITE_GP("PERFEVTSEL3 AnyThread (bit 21) #GP in version 2", MSR_PERFEVTSEL(3),
		 EVTSEL_ANY | 0x4300C0, MSR_PERFEVTSEL(3), 0),
	/* SDM Vol. 3B 20.2.2: 4 bits per fixed counter, the rest reserved; 20.2.3: AnyThread. */
	WRITES("FIXED_CTR_CTRL takes OS, USR and PMI of 3 counters", MSR_FIXED_CTR_CTRL, 0xBBB,
	       MSR_FIXED_CTR_CTRL, 0xBBB),
	WRITE_GP("FIXED_CTR_CTRL bit 12 (no 4th fixed counter) #GP", MSR_FIXED_CTR_CTRL,
		 1ull << 12 | 1, MSR_FIXED_CTR_CTRL, 0),
	WRITE_GP("FIXED_CTR_CTRL bit 63 #GP", MSR_FIXED_CTR_CTRL, 1ull << 63 | 1,
		 MSR_FIXED_CTR_CTRL, 0),
	WRITE_GP("FIXED_CTR_CTRL AnyThread (bit 2) #GP in version 2", MSR_FIXED_CTR_CTRL,
		 FIXED_ANY | FIXED_OS, MSR_FIXED_CTR_CTRL, 0),
	WRITE_GP("FIXED_CTR_CTRL AnyThread (bit 10) #GP in version 2", MSR_FIXED_CTR_CTRL,
		 (FIXED_ANY | FIXED_OS) << 8, MSR_FIXED_CTR_CTRL, 0),
	/* SDM Vol. 3B 20.2.2: one GLOBAL_CTRL enable per counter, the rest reserved. */
	WRITES("GLOBAL_CTRL takes 4 GP and 3 fixed enables", MSR_GLOBAL_CTRL, 0x70000000F,
	       MSR_GLOBAL_CTRL, 0x70000000F),
	WRITE_GP("GLOBAL_CTRL bit 4 (no PMC4) #GP", MSR_GLOBAL_CTRL, 0x1F, MSR_GLOBAL_CTRL, 0),
	WRITE_GP("GLOBAL_CTRL bit 35 (no FIXED_CTR3) #GP", MSR_GLOBAL_CTRL, 1ull << 35 | 1,
		 MSR_GLOBAL_CTRL, 0),
	WRITE_GP("GLOBAL_CTRL bit 63 #GP", MSR_GLOBAL_CTRL, 1ull << 63 | 1, MSR_GLOBAL_CTRL, 0),
	/* Vol. 4 table 2-2: GLOBAL_STATUS and PERF_CAPABILITIES are read-only. */
	WRITE_GP("GLOBAL_STATUS write of 0 #GP", MSR_GLOBAL_STATUS, 0, MSR_GLOBAL_STATUS, 0),
	WRITE_GP("GLOBAL_STATUS write of bit 0 #GP", MSR_GLOBAL_STATUS, 1, MSR_GLOBAL_STATUS, 0),
	WRITE_GP("PERF_CAPABILITIES write #GP", MSR_PERF_CAPABILITIES, PERF_CAP_FW_WRITE,
		 MSR_PERF_CAPABILITIES, PERF_CAP_FW_WRITE),
	/* Vol. 4 table 2-2: OVF_CTRL has a bit per counter, OvfBuf (62) and CondChgd (63). */
	WRITES("GLOBAL_OVF_CTRL takes every counter's bit and bits 62, 63", MSR_GLOBAL_OVF_CTRL,
	       0xC00000070000000F, MSR_GLOBAL_STATUS, 0),
	WRITE_GP("GLOBAL_OVF_CTRL bit 4 (no PMC4) #GP", MSR_GLOBAL_OVF_CTRL, 0x11, 0, 0),
	WRITE_GP("GLOBAL_OVF_CTRL bit 35 (no FIXED_CTR3) #GP", MSR_GLOBAL_OVF_CTRL,
		 1ull << 35 | 1, 0, 0),
	/* SDM Vol. 2B RDMSR/WRMSR: the MSRs of counters CPUID.0AH does not report #GP. */
	READ_GP("PMC4 (0xC5) read #GP", MSR_PMC(4)),
	WRITE_GP("PMC4 (0xC5) write #GP", MSR_PMC(4), 0, 0, 0),
	READ_GP("PERFEVTSEL4 (0x18A) read #GP", MSR_PERFEVTSEL(4)),
	WRITE_GP("PERFEVTSEL4 (0x18A) write #GP", MSR_PERFEVTSEL(4), 0, 0, 0),
	READ_GP("A_PMC4 (0x4C5) read #GP", MSR_A_PMC(4)),
	WRITE_GP("A_PMC4 (0x4C5) write #GP", MSR_A_PMC(4), 0, 0, 0),
	READ_GP("FIXED_CTR3 (0x30C) read #GP", MSR_FIXED_CTR(3)),
	WRITE_GP("FIXED_CTR3 (0x30C) write #GP", MSR_FIXED_CTR(3), 0, 0, 0),
	/* SDM Vol. 2B RDPMC: ECX[30] selects the fixed counters; an index beyond them #GP. */
	RDPMC_READS("RDPMC 0 reads PMC0", 0, PRESET_GP(0)),
	RDPMC_READS("RDPMC 1 reads PMC1", 1, PRESET_GP(1)),
	RDPMC_READS("RDPMC 2 reads PMC2", 2, PRESET_GP(2)),
	RDPMC_READS("RDPMC 3 reads PMC3", 3, PRESET_GP(3)),
	RDPMC_READS("RDPMC 0x40000000 reads FIXED_CTR0", RDPMC_FIXED, PRESET_FIXED(0)),
	RDPMC_READS("RDPMC 0x40000001 reads FIXED_CTR1", RDPMC_FIXED | 1, PRESET_FIXED(1)),
	RDPMC_READS("RDPMC 0x40000002 reads FIXED_CTR2", RDPMC_FIXED | 2, PRESET_FIXED(2)),
	RDPMC_GP("RDPMC 4 #GP", 4),
	RDPMC_GP("RDPMC 0x40000003 #GP", RDPMC_FIXED | 3),
	RDPMC_GP("RDPMC 0x10000 (type 1) #GP", 0x10000),
	RDPMC_GP("RDPMC 0x20000000 (type 2000H, not offered) #GP", 0x20000000),
	RDPMC_GP("RDPMC 0x80000000 #GP", 0x80000000),
	RDPMC_GP("RDPMC 0x40010000 #GP", RDPMC_FIXED | 0x10000),
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static void check_cpuid(const struct cpuid_rule *r, size_t n)
{
	for (; n--; r++) {
		struct rt_cpuid_regs c = rt_cpuid(r->leaf, 0);
		uint32_t regs[] = { c.eax, c.ebx, c.ecx, c.edx }, got = regs[r->reg] & r->mask;

		report(got == r->want, "%s (%#x)", r->name, got);
	}
}

static void preset(void)
{
	vt_pmu_quiet();
	for (unsigned i = 0; i < VT_GP; i++)
		vt_wrmsr(MSR_A_PMC(i), PRESET_GP(i));
	for (unsigned j = 0; j < VT_FIXED; j++)
		vt_wrmsr(MSR_FIXED_CTR(j), PRESET_FIXED(j));
}

static void check_rule(const struct rule *r)
{
	uint64_t got = 0;
	bool done;

	preset();
	switch (r->op) {
	case RD:
		done = vt_rdmsr(r->idx, &got);
		break;
	case PMC:
		done = vt_rdpmc(r->idx, &got);
		break;
	default:
		done = vt_wrmsr(r->idx, r->val);
		if (r->shows)
			got = vt_read(r->shows);
		break;
	}
	if (done == r->gp)
		report(false, "%s: %s", r->name, done ? "no #GP" : "#GP");
	else if (r->op == WR ? !r->shows : r->gp)
		report(true, "%s", r->name);	/* a #GP as wanted, nothing to read back */
	else
		report(got == r->want, "%s (%#llx)", r->name, (unsigned long long)got);
}

/* SDM Vol. 3A table 10-1: GLOBAL_CTRL enables the GP counters at power-on, the rest is 0. */
static void check_reset(void)
{
	for (size_t i = 0; i < vt_nmsrs; i++) {
		uint64_t got = 0;
		bool done = vt_rdmsr(vt_msrs[i].msr, &got);

		report(done && got == vt_msrs[i].reset, "%s reads %#llx at reset (%s%#llx)",
		       vt_msrs[i].name, (unsigned long long)vt_msrs[i].reset,
		       done ? "" : "#GP, ", (unsigned long long)got);
	}
}

/*
 * SDM Vol. 3B 20.2.2: a counter that wraps sets its GLOBAL_STATUS bit and counts on from 0;
 * a set GLOBAL_OVF_CTRL bit clears that status bit and no other.
 */
static void check_overflow(void)
{
	uint64_t status, pmc, fixed;

	vt_pmu_quiet();
	vt_wrmsr(MSR_A_PMC0, VT_TOP - 1);
	vt_wrmsr(MSR_PERFEVTSEL0, EVTSEL_EN | EVTSEL_OS | EV_INSTRUCTIONS);
	vt_window(MSR_GLOBAL_CTRL, 1);
	vt_wrmsr(MSR_FIXED_CTR0, VT_TOP - 1);
	vt_wrmsr(MSR_FIXED_CTR_CTRL, FIXED_OS);
	vt_window(MSR_GLOBAL_CTRL, GLOBAL_FIXED(0));
	status = vt_read(MSR_GLOBAL_STATUS);
	report(status == (1 | GLOBAL_FIXED(0)),
	       "PMC0 and FIXED_CTR0 wrapping set GLOBAL_STATUS bits 0 and 32 (%#llx)",
	       (unsigned long long)status);
	pmc = vt_read(MSR_PMC0);
	fixed = vt_read(MSR_FIXED_CTR0);
	report(pmc == VT_WINDOW - 1 && fixed == VT_WINDOW - 1,
	       "from 2^48 - 1 PMC0 and FIXED_CTR0 wrap and count on: %llu and %llu of %d",
	       (unsigned long long)pmc, (unsigned long long)fixed, VT_WINDOW - 1);
	vt_wrmsr(MSR_GLOBAL_OVF_CTRL, 1);
	status = vt_read(MSR_GLOBAL_STATUS);
	report(status == GLOBAL_FIXED(0),
	       "GLOBAL_OVF_CTRL bit 0 clears GLOBAL_STATUS bit 0 only (%#llx)",
	       (unsigned long long)status);
	vt_wrmsr(MSR_GLOBAL_OVF_CTRL, GLOBAL_FIXED(0));
	status = vt_read(MSR_GLOBAL_STATUS);
	report(!status, "GLOBAL_OVF_CTRL bit 32 clears GLOBAL_STATUS bit 32 (%#llx)",
	       (unsigned long long)status);
}

/*
 * An emulated WRMSR retires under the counters it found, as on Intel hardware: the one that
 * enables a counter is not counted by it, the one that disables it is (kvm-unit-tests x86/pmu.c
 * counts the disabling GLOBAL_CTRL WRMSR in EXTRA_INSNS, not the enabling one). After the
 * enabling WRMSR, RDPMC reads 1 (the XOR before it); from that RDPMC through the disabling
 * WRMSR 6 more count: RDPMC, 2 MOVs, 2 XORs, WRMSR.
 */
static void check_retire_order(void)
{
	uint32_t ecx = MSR_GLOBAL_CTRL, lo = 1, hi = 0, first;
	uint64_t last;

	vt_pmu_quiet();
	vt_wrmsr(MSR_PERFEVTSEL0, EVTSEL_EN | EVTSEL_OS | EV_INSTRUCTIONS);
	__asm__ volatile("wrmsr\n\t"
			 "xor %%ecx, %%ecx\n\t"
			 "rdpmc\n\t"
			 "mov %%eax, %%esi\n\t"
			 "mov %4, %%ecx\n\t"
			 "xor %%eax, %%eax\n\t"
			 "xor %%edx, %%edx\n\t"
			 "wrmsr"
			 : "+c"(ecx), "+a"(lo), "+d"(hi), "=S"(first)
			 : "i"(MSR_GLOBAL_CTRL)
			 : "memory");
	last = vt_read(MSR_PMC0);
	report_value("the enabling WRMSR is not counted: RDPMC right after it", first, 1);
	report_value("the disabling WRMSR is counted: RDPMC through it", last - first, 6);
}

/*
 * README, soft backend: what cannot be counted exactly never counts. Events CPUID.0AH:EBX
 * shows unavailable (SDM Vol. 3B table 20-1), and CMASK, EDGE (20.2.1.1), which compare
 * per-cycle counts; INV inverts the CMASK comparison (with CMASK 0 it is ignored).
 */
static const struct never {
	const char *name;
	uint64_t evtsel;
} never[] = {
	{ "LLC references (0x4F2E, EBX bit 3)", 0x4F2E },
	{ "LLC misses (0x412E, EBX bit 4)", 0x412E },
	{ "branch mispredicts (0x00C5, EBX bit 6)", 0x00C5 },
	{ "instructions with CMASK 1", EV_INSTRUCTIONS | 1ull << 24 },
	{ "instructions with INV and CMASK 1", EV_INSTRUCTIONS | 1ull << 23 | 1ull << 24 },
	{ "instructions with EDGE", EV_INSTRUCTIONS | 1ull << 18 },
};

static void check_never(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(never); i++) {
		uint64_t got;

		vt_pmu_quiet();
		vt_wrmsr(MSR_PERFEVTSEL0, EVTSEL_EN | EVTSEL_OS | never[i].evtsel);
		vt_window(MSR_GLOBAL_CTRL, 1);
		got = vt_read(MSR_PMC0);
		report(!got, "%s never counts (%llu)", never[i].name, (unsigned long long)got);
	}
}

/*
 * README, soft backend: core and reference cycles come from the TSC while the VCPU is in guest
 * mode, so over a window they advance, by no more than the TSC did.
 */
static void check_cycles(void)
{
	uint64_t tsc, core, ref;

	vt_pmu_quiet();
	vt_wrmsr(MSR_FIXED_CTR_CTRL, (FIXED_OS | FIXED_USR) << 4 | (FIXED_OS | FIXED_USR) << 8);
	tsc = rt_rdtsc();
	vt_window(MSR_GLOBAL_CTRL, GLOBAL_FIXED(1) | GLOBAL_FIXED(2));
	tsc = rt_rdtsc() - tsc;
	core = vt_read(MSR_FIXED_CTR0 + 1);
	ref = vt_read(MSR_FIXED_CTR0 + 2);
	report(core && core <= tsc && ref && ref <= tsc,
	       "FIXED_CTR1, FIXED_CTR2 count cycles: %llu and %llu, TSC %llu",
	       (unsigned long long)core, (unsigned long long)ref, (unsigned long long)tsc);
}

/*
 * The OS/USR split, read with RDPMC only (it works at both CPLs): 4 counters are read, then
 * BRACKET_NOPS NOPs run, then they are read again in the same order. Between a counter's two
 * reads retire its first RDPMC and the 2 instructions after it, the other 3 reads (3 each),
 * the NOPs, and the MOV before its second RDPMC: BRACKET instructions.
 */
#define BRACKET_NOPS	100
#define BRACKET_READS	4
#define BRACKET		(BRACKET_NOPS + 3 * BRACKET_READS)

void bracket(uint32_t *first, uint32_t *last);

__asm__(".text\n"
	"bracket:\n\t"
	"mov $0, %ecx\n\trdpmc\n\tmov %eax, 0(%rdi)\n\t"
	"mov $1, %ecx\n\trdpmc\n\tmov %eax, 4(%rdi)\n\t"
	"mov $2, %ecx\n\trdpmc\n\tmov %eax, 8(%rdi)\n\t"
	"mov $0x40000000, %ecx\n\trdpmc\n\tmov %eax, 12(%rdi)\n\t"
	".rept " VT_STR(BRACKET_NOPS) "\n\tnop\n\t.endr\n\t"
	"mov $0, %ecx\n\trdpmc\n\tmov %eax, 0(%rsi)\n\t"
	"mov $1, %ecx\n\trdpmc\n\tmov %eax, 4(%rsi)\n\t"
	"mov $2, %ecx\n\trdpmc\n\tmov %eax, 8(%rsi)\n\t"
	"mov $0x40000000, %ecx\n\trdpmc\n\tmov %eax, 12(%rsi)\n\t"
	"ret\n");

static uint32_t bracket_first[BRACKET_READS], bracket_last[BRACKET_READS];

/* The bracket's counters: USR bit 16 counts at CPL 1-3, OS bit 17 at 0 (SDM Vol. 3B 20.2.1.1). */
static void program_rings(void)
{
	vt_pmu_quiet();
	vt_wrmsr(MSR_PERFEVTSEL(0), EVTSEL_EN | EVTSEL_USR | EV_INSTRUCTIONS);
	vt_wrmsr(MSR_PERFEVTSEL(1), EVTSEL_EN | EVTSEL_OS | EV_INSTRUCTIONS);
	vt_wrmsr(MSR_PERFEVTSEL(2), EVTSEL_EN | EVTSEL_OS | EVTSEL_USR | EV_INSTRUCTIONS);
	/* SDM Vol. 3B 20.2.2: the fixed counter's field, bit 1 for CPL > 0. */
	vt_wrmsr(MSR_FIXED_CTR_CTRL, FIXED_USR);
	vt_wrmsr(MSR_GLOBAL_CTRL, 0x7 | GLOBAL_FIXED(0));
}

static void check_rings(unsigned cpl)
{
	static const char *const what[BRACKET_READS] = {
		"USR-only PMC0", "OS-only PMC1", "OS+USR PMC2", "USR-only FIXED_CTR0",
	};
	/* Counters of the ring the bracket runs at count it all, the others nothing. */
	bool user = cpl == 3, counts[BRACKET_READS] = { user, !user, true, user };

	for (unsigned k = 0; k < BRACKET_READS; k++) {
		uint32_t got = bracket_last[k] - bracket_first[k];

		report(got == (counts[k] ? BRACKET : 0), "%s at CPL %u: %u of %u instructions",
		       what[k], cpl, got, counts[k] ? BRACKET : 0);
	}
	vt_pmu_quiet();
}

static uint64_t user_values[2];

/* CPL 3: which of RDPMC 0 and RDPMC 0x40000000 worked, as bits 0 and 1. */
static int user_rdpmc(void *arg)
{
	(void)arg;
	return vt_rdpmc(0, &user_values[0]) | vt_rdpmc(RDPMC_FIXED, &user_values[1]) << 1;
}

static int user_bracket(void *arg)
{
	(void)arg;
	bracket(bracket_first, bracket_last);
	return 0;
}

static int run_user(int (*fn)(void *))
{
	return kthread_join(kthread_create(fn, NULL, KTHREAD_USER, 0));
}

static void set_pce(bool on)
{
	uint64_t cr4;

	__asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
	cr4 = on ? cr4 | CR4_PCE : cr4 & ~CR4_PCE;
	__asm__ volatile("mov %0, %%cr4" : : "r"(cr4) : "memory");
}

/* SDM Vol. 2B RDPMC: at CPL > 0 only with CR4.PCE set, else #GP. */
static void check_user(void)
{
	/* The longest time slice there is: no timer interrupt inside a user bracket. */
	char *kargv[] = { "quantum=4294967295" };
	int worked;

	kernel_init(1, kargv);
	preset();
	set_pce(false);
	worked = run_user(user_rdpmc);
	report(!(worked & 1), "RDPMC 0 at CPL 3 with CR4.PCE clear #GP");
	report(!(worked & 2), "RDPMC 0x40000000 at CPL 3 with CR4.PCE clear #GP");
	set_pce(true);
	worked = run_user(user_rdpmc);
	report((worked & 1) && user_values[0] == PRESET_GP(0),
	       "RDPMC 0 at CPL 3 with CR4.PCE set reads PMC0 (%s%#llx)",
	       worked & 1 ? "" : "#GP, ", (unsigned long long)user_values[0]);
	report((worked & 2) && user_values[1] == PRESET_FIXED(0),
	       "RDPMC 0x40000000 at CPL 3 with CR4.PCE set reads FIXED_CTR0 (%s%#llx)",
	       worked & 2 ? "" : "#GP, ", (unsigned long long)user_values[1]);
	if (worked != 3)
		return;	/* the bracket's own RDPMCs would fault */
	program_rings();
	run_user(user_bracket);
	check_rings(3);
}

static int check_off(void)
{
	uint64_t val;

	check_cpuid(cpuid_off, ARRAY_SIZE(cpuid_off));
	for (size_t i = 0; i < vt_nmsrs; i++) {
		report(!vt_rdmsr(vt_msrs[i].msr, &val), "pmu=off: %s read #GP", vt_msrs[i].name);
		report(!vt_wrmsr(vt_msrs[i].msr, 0), "pmu=off: %s write #GP", vt_msrs[i].name);
	}
	report(!vt_rdpmc(0, &val), "pmu=off: RDPMC 0 #GP");
	report(!vt_rdpmc(RDPMC_FIXED, &val), "pmu=off: RDPMC 0x40000000 #GP");
	return report_summary();
}

int main(int argc, char **argv)
{
	vt_gp_install();
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "expect=off"))
			return check_off();
	/* Before anything writes a PMU MSR. */
	check_reset();
	check_cpuid(cpuid_on, ARRAY_SIZE(cpuid_on));
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++)
		check_rule(&rules[i]);
	check_overflow();
	check_retire_order();
	check_never();
	check_cycles();
	program_rings();
	bracket(bracket_first, bracket_last);
	check_rings(0);
	check_user();
	return report_summary();
}
