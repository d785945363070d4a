/* Fuzz target for pmu/vpmu.c and pmu/vpmu_msr.c: any sequence of MSR, RDPMC and counting ops. */
#include "pmu/vpmu.c"
#include "pmu/vpmu_msr.c"
#include "tests/fuzz/fakes.h"

#define SENTINEL	0x5a5a5a5a5a5a5a5aull

/* Where the PMU MSRs are; an MSR operand is one of these plus a small offset, or any number. */
static const uint32_t msr_bases[] = {
	MSR_IA32_PMC0, MSR_IA32_PERFEVTSEL0, MSR_IA32_FIXED_CTR0, MSR_IA32_PERF_CAPABILITIES,
	MSR_IA32_FIXED_CTR_CTRL, MSR_IA32_A_PMC0,
};

static uint32_t take_msr(struct fz *in)
{
	uint8_t b = fz_u8(in);

	if (b & 0x80)
		return fz_u32(in);
	return msr_bases[b % 6] + (b >> 3) % 12 - 1;
}

/* Counters stay within the width; GLOBAL_STATUS holds counter bits only; unused slots stay 0. */
static void check_state(const struct vpmu *p)
{
	const struct vpmu_config *c = p->cfg;
	uint64_t mask = vpmu_width_mask(c), ctrs = vpmu_gp_bits(c) | vpmu_fixed_bits(c);

	for (unsigned i = 0; i < VPMU_MAX_GP; i++)
		FZ_CHECK(p->pmc[i] <= mask && (i < c->num_gp || !p->pmc[i]), "PMC%u 0x%llx", i,
			 (unsigned long long)p->pmc[i]);
	for (unsigned i = 0; i < VPMU_MAX_FIXED; i++)
		FZ_CHECK(p->fixed[i] <= mask && (i < c->num_fixed || !p->fixed[i]),
			 "FIXED_CTR%u 0x%llx", i, (unsigned long long)p->fixed[i]);
	FZ_CHECK(!(p->global_status & ~ctrs), "GLOBAL_STATUS 0x%llx",
		 (unsigned long long)p->global_status);
	FZ_CHECK(!(p->global_ctrl & ~ctrs), "GLOBAL_CTRL 0x%llx",
		 (unsigned long long)p->global_ctrl);
}

static void op_rdmsr(struct vpmu *p, uint32_t msr)
{
	struct vpmu before = *p;
	uint64_t val = SENTINEL;
	enum vpmu_result r = vpmu_rdmsr(p, msr, &val);

	FZ_CHECK(r <= VPMU_NOT_PMU && !memcmp(&before, p, sizeof(*p)), "RDMSR 0x%x changed state",
		 msr);
	FZ_CHECK(r == VPMU_OK || val == SENTINEL, "RDMSR 0x%x failed but gave a value", msr);
	FZ_CHECK(r != VPMU_OK || p->cfg->enabled, "RDMSR 0x%x with the PMU off", msr);
}

static void op_wrmsr(struct vpmu *p, uint32_t msr, uint64_t val)
{
	struct vpmu before = *p;
	enum vpmu_result r = vpmu_wrmsr(p, msr, val), rr;
	uint64_t back = SENTINEL;

	rr = vpmu_rdmsr(p, msr, &back);
	if (r != VPMU_OK) {
		FZ_CHECK(!memcmp(&before, p, sizeof(*p)), "WRMSR 0x%x = 0x%llx failed, changed",
			 msr, (unsigned long long)val);
		FZ_CHECK((r == VPMU_NOT_PMU) == (rr == VPMU_NOT_PMU), "MSR 0x%x decoded two ways",
			 msr);
		return;
	}
	FZ_CHECK(rr == VPMU_OK, "WRMSR 0x%x took a value RDMSR cannot read", msr);
	/* Registers that keep what they are given read it back. */
	switch (msr) {
	case MSR_IA32_PERFEVTSEL0 ... MSR_IA32_PERFEVTSEL0 + VPMU_MAX_GP - 1:
	case MSR_IA32_A_PMC0 ... MSR_IA32_A_PMC0 + VPMU_MAX_GP - 1:
	case MSR_IA32_FIXED_CTR0 ... MSR_IA32_FIXED_CTR0 + VPMU_MAX_FIXED - 1:
	case MSR_IA32_FIXED_CTR_CTRL:
	case MSR_IA32_PERF_GLOBAL_CTRL:
		FZ_CHECK(back == val, "MSR 0x%x wrote 0x%llx, reads 0x%llx", msr,
			 (unsigned long long)val, (unsigned long long)back);
		break;
	case MSR_IA32_PMC0 ... MSR_IA32_PMC0 + VPMU_MAX_GP - 1:
		/* SDM Vol. 3B 20.2.6: EAX sign-extended, then as wide as the counter. */
		FZ_CHECK(back == ((uint64_t)(int64_t)(int32_t)val & vpmu_width_mask(p->cfg)),
			 "MSR 0x%x wrote 0x%llx, reads 0x%llx", msr, (unsigned long long)val,
			 (unsigned long long)back);
		break;
	}
}

static void op_rdpmc(struct vpmu *p, uint32_t ecx, unsigned cpl, bool pce)
{
	uint64_t val = SENTINEL;
	enum vpmu_result r = vpmu_rdpmc(p, ecx, cpl, pce, &val);

	FZ_CHECK(r == VPMU_OK || r == VPMU_GP, "RDPMC result %d", r);
	if (r == VPMU_OK)
		FZ_CHECK(val <= vpmu_width_mask(p->cfg) && (cpl == 0 || pce), "RDPMC 0x%x", ecx);
	else
		FZ_CHECK(val == SENTINEL, "RDPMC 0x%x #GP wrote a value", ecx);
}

/*
 * vpmu_until_overflow() agrees with vpmu_count(): one event fewer overflows nothing, that
 * many sets a GLOBAL_STATUS bit.
 */
static void op_until(const struct vpmu *p, enum vpmu_event ev, unsigned cpl)
{
	uint64_t left = vpmu_until_overflow(p, ev, cpl);
	struct vpmu q;

	if (left == UINT64_MAX)
		return;
	FZ_CHECK(left >= 1 && left <= vpmu_width_mask(p->cfg) + 1, "%llu left",
		 (unsigned long long)left);
	q = *p;
	q.global_status = 0;
	vpmu_count(&q, ev, left - 1, cpl);
	FZ_CHECK(!q.global_status, "overflow %llu events early", (unsigned long long)left);
	vpmu_count(&q, ev, 1, cpl);
	FZ_CHECK(q.global_status, "no overflow after %llu events", (unsigned long long)left);
}

static void op_count(struct vpmu *p, enum vpmu_event ev, uint64_t n, unsigned cpl)
{
	uint64_t status = p->global_status, pmis = vpmu_count(p, ev, n, cpl);

	FZ_CHECK(!(pmis & ~p->global_status), "PMI without a status bit");
	FZ_CHECK(!(status & ~p->global_status), "counting cleared a status bit");
	FZ_CHECK((ev >= 0 && ev < VPMU_EV_COUNT) || p->global_status == status,
		 "event %d counted", ev);
}

/*
 * Input: the configuration (enabled, version, counters, width, unavailable events), then
 * operations of an opcode byte and its operands until the input ends.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_sequence(data, size);
	uint8_t b = fz_u8(&in);
	struct vpmu_config cfg = { .enabled = b & 1, .version = 1 + (b >> 1) % 4 };
	struct vpmu p;
	uint32_t eax, ebx, ecx, edx;

	/* One statement each: the order of reads within an initializer list is unspecified. */
	cfg.num_gp = fz_u8(&in) % (VPMU_MAX_GP + 1);
	cfg.num_fixed = fz_u8(&in) % (VPMU_MAX_FIXED + 1);
	cfg.width = 1 + fz_u8(&in) % 63;
	cfg.unavailable = fz_u8(&in);

	vpmu_reset(&p, &cfg);
	vpmu_cpuid(&cfg, &eax, &ebx, &ecx, &edx);
	FZ_CHECK(cfg.enabled || !(eax | ebx | ecx | edx), "CPUID.0AH with the PMU off");
	while (in.n) {
		uint8_t op = fz_u8(&in);
		unsigned cpl = op & 0x80 ? fz_u8(&in) : op >> 5 & 3;
		enum vpmu_event ev = (int8_t)fz_u8(&in) % 8;

		switch (op % 6) {
		case 0:
			op_rdmsr(&p, take_msr(&in));
			break;
		case 1: {
			uint32_t msr = take_msr(&in);

			op_wrmsr(&p, msr, fz_u64(&in));
			break;
		}
		case 2:
			op_rdpmc(&p, fz_u32(&in), cpl, op & 8);
			break;
		case 3:
			op_count(&p, ev, fz_u64(&in), cpl);
			break;
		case 4:
			op_until(&p, ev, cpl);
			break;
		case 5:
			FZ_CHECK(!(vpmu_active(&p, cpl) >> VPMU_EV_COUNT), "active events");
			FZ_CHECK(vpmu_evtsel_event(fz_u64(&in), cpl) < VPMU_EV_COUNT, "event");
			break;
		}
		check_state(&p);
	}
	return 0;
}
