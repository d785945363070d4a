/* A modelled Intel architectural PMU (version 2+) for unit tests: MSRs that count, fault, log. */
#ifndef PERFVISOR_TESTS_UNIT_PMU_MODEL_H
#define PERFVISOR_TESTS_UNIT_PMU_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "include/x86/pmu_msr.h"

#define MODEL_MAX_GP	8
#define MODEL_MAX_FIXED	4
#define MODEL_LOG_LEN	4096
/* Log entries that are not MSR writes: the VMCS GLOBAL_CTRL pair set, the host LVTPC written. */
#define MODEL_LOG_VMCS	0xFFFF0000u
#define MODEL_LOG_LVTPC	0xFFFF0001u
/* Bits of IA32_PERF_CAPABILITIES besides FW_WRITE (LBR format, PEBS fields): to be ignored. */
#define MODEL_CAPS_OTHER	0x4C3ull

/* What CPUID.0AH and IA32_PERF_CAPABILITIES say of the modelled PMU. */
struct model_cfg {
	unsigned version, num_gp, gp_width, num_fixed, fixed_width;
	bool has_caps;		/* IA32_PERF_CAPABILITIES exists (CPUID.01H:ECX.PDCM) */
	bool fw_write;		/* and its bit 13: IA32_A_PMCx take full-width writes */
};

/* The IA32_PERF_GLOBAL_CTRL pair of one VMCS, loaded at VM entry and at VM exit once set. */
struct model_vmcs {
	bool set;
	uint64_t guest, host;
};

struct model_write {
	uint32_t msr;
	uint64_t val;
};

static struct model {
	struct model_cfg cfg;
	uint64_t evtsel[MODEL_MAX_GP], pmc[MODEL_MAX_GP];
	uint64_t fixed_ctrl, fixed[MODEL_MAX_FIXED];
	uint64_t global_ctrl, global_status;
	struct model_vmcs *vmcs;	/* the current VMCS, NULL: none loaded */
	uint8_t lvtpc_vector;
	bool lvtpc_masked;
	bool pmi_pending;		/* delivered to the CPU, not yet taken by the test */
	unsigned pmis, pmis_lost;	/* delivered; raised while LVTPC was masked */
	unsigned faults;		/* accesses that raised #GP */
	uint32_t fault_msr;		/* the last of them */
	unsigned hot_writes;		/* a counter set up while GLOBAL_CTRL enabled it */
	struct model_write log[MODEL_LOG_LEN];
	unsigned nlog;
} model;

static uint64_t model_mask(unsigned width)
{
	return ~0ull >> (64 - width);
}

/* The counters, as IA32_PERF_GLOBAL_* bits. */
static uint64_t model_ctrs(void)
{
	return ((1ull << model.cfg.num_gp) - 1) |
	       ((1ull << model.cfg.num_fixed) - 1) << GLOBAL_FIXED_SHIFT;
}

/* Power-on: all zero but GLOBAL_CTRL, whose GP enables are set (SDM Vol. 3A table 10-1). */
static void model_reset(const struct model_cfg *cfg)
{
	__builtin_memset(&model, 0, sizeof(model));
	model.cfg = *cfg;
	model.global_ctrl = (1ull << cfg->num_gp) - 1;
	model.lvtpc_masked = true;
}

static void model_log(uint32_t msr, uint64_t val)
{
	if (model.nlog < MODEL_LOG_LEN)
		model.log[model.nlog++] = (struct model_write){ msr, val };
}

static int model_fault(uint32_t msr)
{
	model.faults++;
	model.fault_msr = msr;
	return -1;
}

/* Set-up of a counter written while GLOBAL_CTRL lets it count: the order the backend must avoid. */
static void model_touch(uint64_t bits)
{
	if (model.global_ctrl & bits)
		model.hot_writes++;
}

static int model_rdmsr(uint32_t msr, uint64_t *val)
{
	const struct model_cfg *c = &model.cfg;

	if (msr - MSR_IA32_PERFEVTSEL0 < c->num_gp)
		*val = model.evtsel[msr - MSR_IA32_PERFEVTSEL0];
	else if (msr - MSR_IA32_PMC0 < c->num_gp)
		*val = model.pmc[msr - MSR_IA32_PMC0];
	else if (msr - MSR_IA32_A_PMC0 < c->num_gp && c->fw_write)
		*val = model.pmc[msr - MSR_IA32_A_PMC0];
	else if (msr - MSR_IA32_FIXED_CTR0 < c->num_fixed)
		*val = model.fixed[msr - MSR_IA32_FIXED_CTR0];
	else if (msr == MSR_IA32_FIXED_CTR_CTRL && c->num_fixed)
		*val = model.fixed_ctrl;
	else if (msr == MSR_IA32_PERF_GLOBAL_CTRL)
		*val = model.global_ctrl;
	else if (msr == MSR_IA32_PERF_GLOBAL_STATUS)
		*val = model.global_status;
	else if (msr == MSR_IA32_PERF_GLOBAL_OVF_CTRL)
		*val = 0;
	else if (msr == MSR_IA32_PERF_CAPABILITIES && c->has_caps)
		*val = MODEL_CAPS_OTHER | (c->fw_write ? PERF_CAP_FW_WRITE : 0);
	else
		return model_fault(msr);
	return 0;
}

/* WRMSR as the SDM describes it (Vol. 3B 20.2.1-20.2.6, Vol. 4 table 2-2); #GP on reserved bits. */
static int model_wrmsr(uint32_t msr, uint64_t val)
{
	const struct model_cfg *c = &model.cfg;
	uint64_t fields = (1ull << FIXED_CTRL_SHIFT(c->num_fixed)) - 1;
	unsigned i;

	model_log(msr, val);
	if ((i = msr - MSR_IA32_PERFEVTSEL0) < c->num_gp) {
		if (val & (EVTSEL_RESERVED | (c->version < 3 ? EVTSEL_ANY : 0)))
			return model_fault(msr);
		model_touch(1ull << i);
		model.evtsel[i] = val;
	} else if ((i = msr - MSR_IA32_PMC0) < c->num_gp) {
		/* Legacy write: EAX, sign-extended from bit 31 to the width. */
		model_touch(1ull << i);
		model.pmc[i] = (uint64_t)(int64_t)(int32_t)val & model_mask(c->gp_width);
	} else if ((i = msr - MSR_IA32_A_PMC0) < c->num_gp) {
		if (!c->fw_write || (val & ~model_mask(c->gp_width)))
			return model_fault(msr);
		model_touch(1ull << i);
		model.pmc[i] = val;
	} else if ((i = msr - MSR_IA32_FIXED_CTR0) < c->num_fixed) {
		if (val & ~model_mask(c->fixed_width))
			return model_fault(msr);
		model_touch(1ull << (GLOBAL_FIXED_SHIFT + i));
		model.fixed[i] = val;
	} else if (msr == MSR_IA32_FIXED_CTR_CTRL && c->num_fixed) {
		if (val & (~fields | (c->version < 3 ? fields & 0x4444444444444444ull : 0)))
			return model_fault(msr);
		model_touch(model_ctrs() >> GLOBAL_FIXED_SHIFT << GLOBAL_FIXED_SHIFT);
		model.fixed_ctrl = val;
	} else if (msr == MSR_IA32_PERF_GLOBAL_CTRL) {
		if (val & ~model_ctrs())
			return model_fault(msr);
		model.global_ctrl = val;
	} else if (msr == MSR_IA32_PERF_GLOBAL_OVF_CTRL) {
		if (val & ~(model_ctrs() | GLOBAL_OVF_BUF | GLOBAL_COND_CHGD))
			return model_fault(msr);
		model.global_status &= ~val;
	} else {
		/* GLOBAL_STATUS and PERF_CAPABILITIES are read-only; the rest do not exist. */
		return model_fault(msr);
	}
	return 0;
}

/* RDPMC (SDM Vol. 2B): ECX selects a GP counter, or with bit 30 a fixed one; others #GP. */
static int model_rdpmc(uint32_t ecx, uint64_t *val)
{
	const struct model_cfg *c = &model.cfg;

	if (ecx < c->num_gp)
		*val = model.pmc[ecx];
	else if ((ecx & RDPMC_FIXED) && (ecx & ~RDPMC_FIXED) < c->num_fixed)
		*val = model.fixed[ecx & ~RDPMC_FIXED];
	else
		return model_fault(ecx);
	return 0;
}

/* One counter advances by n: a wrap sets its status bit and, with INT, asks for a PMI. */
static bool model_count(unsigned bit, uint64_t *val, unsigned width, uint64_t n, bool intr)
{
	bool wrapped = n > model_mask(width) - *val;

	*val = (*val + n) & model_mask(width);
	if (wrapped)
		model.global_status |= 1ull << bit;
	return wrapped && intr;
}

/*
 * Code runs: `instructions`, `branches` of them, over `cycles` (core and reference alike), at
 * cpl. In the guest (in_guest) it runs between a VM entry, which loads the current VMCS's guest
 * GLOBAL_CTRL, and a VM exit, which loads its host value; else in the hypervisor (CPL 0), with
 * GLOBAL_CTRL as it is. A PMI goes through LVTPC, which masks itself (SDM Vol. 3A 11.5.1).
 */
static void model_run(uint64_t instructions, uint64_t branches, uint64_t cycles, unsigned cpl,
		      bool in_guest)
{
	const struct model_cfg *c = &model.cfg;
	bool load = in_guest && model.vmcs && model.vmcs->set, pmi = false;

	if (load) {
		/* SDM Vol. 3C 27.2.2, 27.3.1.1: VM entry fails on reserved bits of either value. */
		if ((model.vmcs->guest | model.vmcs->host) & ~model_ctrs())
			model_fault(MSR_IA32_PERF_GLOBAL_CTRL);
		model.global_ctrl = model.vmcs->guest & model_ctrs();
	}
	for (unsigned i = 0; i < c->num_gp; i++) {
		uint64_t sel = model.evtsel[i], n;

		if (!(model.global_ctrl >> i & 1) || !(sel & EVTSEL_EN) ||
		    !(sel & (cpl ? EVTSEL_USR : EVTSEL_OS)))
			continue;
		switch (sel & (EVTSEL_EVENT_MASK | EVTSEL_UMASK)) {
		case ARCH_EVENT_INST_RETIRED:
			n = instructions;
			break;
		case ARCH_EVENT_BRANCH_RETIRED:
			n = branches;
			break;
		case ARCH_EVENT_CORE_CYCLES:
		case ARCH_EVENT_REF_CYCLES:
			n = cycles;
			break;
		default:
			n = 0;
		}
		pmi |= model_count(i, &model.pmc[i], c->gp_width, n, sel & EVTSEL_INT);
	}
	for (unsigned j = 0; j < c->num_fixed; j++) {
		uint64_t field = model.fixed_ctrl >> FIXED_CTRL_SHIFT(j);

		if (!(model.global_ctrl >> (GLOBAL_FIXED_SHIFT + j) & 1) ||
		    !(field & (cpl ? FIXED_CTRL_USR : FIXED_CTRL_OS)))
			continue;
		pmi |= model_count(GLOBAL_FIXED_SHIFT + j, &model.fixed[j], c->fixed_width,
				   j ? cycles : instructions, field & FIXED_CTRL_PMI);
	}
	if (pmi && model.lvtpc_masked) {
		model.pmis_lost++;
	} else if (pmi) {
		model.pmi_pending = true;
		model.pmis++;
		model.lvtpc_masked = true;
	}
	if (load)
		model.global_ctrl = model.vmcs->host & model_ctrs();
}

#endif
