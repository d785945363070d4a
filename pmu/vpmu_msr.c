/* What a guest sees of its virtual PMU through CPUID.0AH, RDMSR/WRMSR and RDPMC. */
#include <stddef.h>

#include "include/x86/pmu_msr.h"
#include "lib/inject.h"
#include "pmu/vpmu.h"

/* The kinds of PMU MSR. */
enum reg {
	REG_EVTSEL, REG_PMC, REG_A_PMC, REG_FIXED,
	REG_FIXED_CTRL, REG_STATUS, REG_CTRL, REG_OVF_CTRL, REG_CAPS,
};

/* Every MSR number of a version 2 PMU with full-width writes, in runs (SDM Vol. 4 table 2-2). */
static const struct msr_run {
	uint32_t first;
	unsigned len;
	enum reg reg;
} msr_runs[] = {
	{ MSR_IA32_PERFEVTSEL0, VPMU_MAX_GP, REG_EVTSEL },
	{ MSR_IA32_PMC0, VPMU_MAX_GP, REG_PMC },
	{ MSR_IA32_A_PMC0, VPMU_MAX_GP, REG_A_PMC },
	{ MSR_IA32_FIXED_CTR0, VPMU_MAX_FIXED, REG_FIXED },
	{ MSR_IA32_FIXED_CTR_CTRL, 1, REG_FIXED_CTRL },
	{ MSR_IA32_PERF_GLOBAL_STATUS, 1, REG_STATUS },
	{ MSR_IA32_PERF_GLOBAL_CTRL, 1, REG_CTRL },
	{ MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1, REG_OVF_CTRL },
	{ MSR_IA32_PERF_CAPABILITIES, 1, REG_CAPS },
};

/* A PMU MSR decoded: its kind and, for the per-counter kinds, the counter. */
struct pmu_reg {
	enum reg reg;
	unsigned idx;
};

static bool decode(uint32_t msr, struct pmu_reg *r)
{
	const struct msr_run *run;

	for (run = msr_runs; run < msr_runs + sizeof(msr_runs) / sizeof(msr_runs[0]); run++) {
		if (msr - run->first < run->len) {
			r->reg = run->reg;
			r->idx = msr - run->first;
			return true;
		}
	}
	return false;
}

/* Whether the guest's PMU has the register: counter i only if CPUID.0AH reports more than i. */
static bool present(const struct vpmu_config *cfg, const struct pmu_reg *r)
{
	if (!cfg->enabled)
		return false;
	switch (r->reg) {
	case REG_EVTSEL:
	case REG_PMC:
	case REG_A_PMC:
		return r->idx < cfg->num_gp;
	case REG_FIXED:
		return r->idx < cfg->num_fixed;
	default:
		return true;
	}
}

/* Where the register's value lives; NULL for OVF_CTRL and PERF_CAPABILITIES, which keep none. */
static uint64_t *slot(struct vpmu *p, const struct pmu_reg *r)
{
	switch (r->reg) {
	case REG_EVTSEL:
		return &p->evtsel[r->idx];
	case REG_PMC:
	case REG_A_PMC:
		return &p->pmc[r->idx];
	case REG_FIXED:
		return &p->fixed[r->idx];
	case REG_FIXED_CTRL:
		return &p->fixed_ctrl;
	case REG_STATUS:
		return &p->global_status;
	case REG_CTRL:
		return &p->global_ctrl;
	default:
		return NULL;
	}
}

/* Bits a WRMSR to a writable register must leave clear, or it raises #GP (SDM Vol. 2B WRMSR). */
static uint64_t reserved(const struct vpmu_config *cfg, enum reg reg)
{
	uint64_t ctrs = vpmu_gp_bits(cfg) | vpmu_fixed_bits(cfg);
	uint64_t fields = (1ull << FIXED_CTRL_SHIFT(cfg->num_fixed)) - 1;
	/* SDM Vol. 3B 20.2.3: AnyThread comes with version 3; before it the bits are reserved. */
	bool any_thread = cfg->version >= 3;

	switch (reg) {
	case REG_EVTSEL:
		return EVTSEL_RESERVED | (any_thread ? 0 : EVTSEL_ANY);
	case REG_A_PMC:		/* SDM Vol. 3B 20.2.6: EDX[63:width-32] reserved */
	case REG_FIXED:		/* SDM Vol. 3B 20.2.2: bits beyond the width reserved */
		return ~vpmu_width_mask(cfg);
	case REG_FIXED_CTRL:
		/* One 4-bit field per fixed counter (SDM Vol. 3B 20.2.2), AnyThread in each. */
		return ~fields | (any_thread ? 0 : fields & FIXED_CTRL_ANY * 0x1111111111111111ull);
	case REG_CTRL:
		return ~ctrs;
	case REG_OVF_CTRL:
		/* Vol. 4 table 2-2: a clear bit per counter, and OvfBuf (62), CondChgd (63). */
		return ~(ctrs | GLOBAL_OVF_BUF | GLOBAL_COND_CHGD);
	default:
		return 0;	/* IA32_PMCx take EAX alone */
	}
}

void vpmu_cpuid(const struct vpmu_config *cfg, uint32_t *eax, uint32_t *ebx, uint32_t *ecx,
		uint32_t *edx)
{
	*eax = *ebx = *ecx = *edx = 0;
	if (!cfg->enabled)
		return;
	/* SDM Vol. 3B 20.2.1 and 20.2.2: EBX has 7 event bits, its length in EAX[31:24]. */
	*eax = cfg->version | cfg->num_gp << 8 | cfg->width << 16 | 7u << 24;
	*ebx = cfg->unavailable;
	*edx = cfg->num_fixed | cfg->width << 5;
}

bool vpmu_msr_known(uint32_t msr)
{
	struct pmu_reg r;

	return decode(msr, &r);
}

enum vpmu_result vpmu_rdmsr(struct vpmu *p, uint32_t msr, uint64_t *val)
{
	struct pmu_reg r;
	uint64_t *s;

	if (!decode(msr, &r))
		return VPMU_NOT_PMU;
	if (!present(p->cfg, &r))
		return VPMU_GP;
	s = slot(p, &r);
	/* OVF_CTRL only acts when written; PERF_CAPABILITIES offers full-width writes alone. */
	*val = s ? *s : r.reg == REG_CAPS ? PERF_CAP_FW_WRITE : 0;
	return VPMU_OK;
}

enum vpmu_result vpmu_wrmsr_check(const struct vpmu *p, uint32_t msr, uint64_t val)
{
	struct pmu_reg r;

	if (!decode(msr, &r))
		return VPMU_NOT_PMU;
	/* Vol. 4 table 2-2: GLOBAL_STATUS and PERF_CAPABILITIES are read-only. */
	if (!present(p->cfg, &r) || r.reg == REG_STATUS || r.reg == REG_CAPS)
		return VPMU_GP;
	if (val & reserved(p->cfg, r.reg))
		return VPMU_GP;
	return VPMU_OK;
}

enum vpmu_result vpmu_wrmsr(struct vpmu *p, uint32_t msr, uint64_t val)
{
	enum vpmu_result res = vpmu_wrmsr_check(p, msr, val);
	struct pmu_reg r;

	if (res != VPMU_OK || !decode(msr, &r))
		return res;
	switch (r.reg) {
	case REG_PMC:
		/* SDM Vol. 3B 20.2.6: IA32_PMCx get EAX[31:0] sign-extended. */
		val = (inject_on(INJECT_VPMU_NO_SEXT) ? (uint32_t)val :
		       (uint64_t)(int64_t)(int32_t)(uint32_t)val) & vpmu_width_mask(p->cfg);
		break;
	case REG_OVF_CTRL:
		/* SDM Vol. 3B 20.2.2: each set bit clears that GLOBAL_STATUS bit. */
		p->global_status &= ~val;
		return VPMU_OK;
	default:
		break;
	}
	*slot(p, &r) = val;
	return VPMU_OK;
}

bool vpmu_wrmsr_inert(const struct vpmu *p, uint32_t msr, uint64_t val)
{
	struct pmu_reg r;

	/* SDM Vol. 3B 20.2.1.1: with EN clear before and after, the counter counts nothing. */
	return decode(msr, &r) && r.reg == REG_EVTSEL && present(p->cfg, &r) &&
	       !((p->evtsel[r.idx] | val) & EVTSEL_EN);
}

enum vpmu_result vpmu_rdpmc(struct vpmu *p, uint32_t ecx, unsigned cpl, bool pce, uint64_t *val)
{
	const struct vpmu_config *cfg = p->cfg;
	bool fixed = ecx & RDPMC_FIXED;
	uint32_t idx = ecx & ~RDPMC_FIXED;

	/* SDM Vol. 2B RDPMC: above CPL 0 only with CR4.PCE set; pmu=off has no counter to read. */
	if (!cfg->enabled || (cpl > 0 && !pce))
		return VPMU_GP;
	/*
	 * SDM Vol. 2B RDPMC: ECX[31:16] is the type, 0 (GP) or 4000H (fixed) here, ECX[15:0]
	 * the index below the count CPUID.0AH reports; any other encoding raises #GP.
	 */
	if (idx >= (fixed ? cfg->num_fixed : cfg->num_gp))
		return VPMU_GP;
	*val = fixed ? p->fixed[idx] : p->pmc[idx];
	return VPMU_OK;
}
