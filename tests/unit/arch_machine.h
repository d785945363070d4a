/* A machine for arch-backend unit tests: VCPUs on one modelled PCPU, hv/'s PMU seam, guest runs. */
#ifndef PERFVISOR_TESTS_UNIT_ARCH_MACHINE_H
#define PERFVISOR_TESTS_UNIT_ARCH_MACHINE_H

#include <string.h>

#include "tests/unit/pmu_model.h"
#include "pmu/vpmu.c"
#include "pmu/vpmu_msr.c"
#include "pmu/pv.c"
#include "pmu/pmu.c"
#include "pmu/backend_arch.c"

/*
 * A VCPU as the tests see it: PMU state, its VMCS's GLOBAL_CTRL pair and RDPMC exiting, CPL,
 * interrupts it was given, and its domain's RAM (linear = physical; NULL: none).
 */
struct vcpu {
	struct pmu_vcpu pmu;
	struct model_vmcs vmcs;
	bool rdpmc_exiting;
	unsigned cpl;
	unsigned guest_pmis;
	uint8_t raised;		/* the last vector raised (PV i-mode overflows) */
	uint8_t *ram;
	uint64_t ram_size;
	unsigned dom_vcpus;	/* VCPUs of its domain */
};

struct pmu_hw_info pmu_hw;
const struct pmu_backend_ops pmu_soft_ops = { .name = "soft" };
/* The guest TSC, one for all VCPUs: it advances as they run. */
static uint64_t guest_tsc;
/* The seam used against its rule: RDPMC exiting changed while the VCPU's VMCS was not current. */
static unsigned vmcs_misuse;
/* A CPU whose RDPMC exiting cannot be cleared (allowed-0 setting 1). */
static bool rdpmc_exiting_fixed;

void printk(const char *fmt, ...)
{
	(void)fmt;
}

/* The seam of hv/vcpu_pmu.h, as hv/vcpu_pmu.c does it, on the model. */
unsigned vcpu_pmu_cpl(struct vcpu *v)
{
	return v->cpl;
}

void vcpu_pmu_raise_pmi(struct vcpu *v)
{
	v->guest_pmis++;
}

void vcpu_pmu_set_global_ctrl(struct vcpu *v, uint64_t guest, uint64_t host)
{
	v->vmcs = (struct model_vmcs){ true, guest, host };
	model_log(MODEL_LOG_VMCS, guest);
}

void vcpu_pmu_set_rdpmc_exiting(struct vcpu *v, bool on)
{
	if (model.vmcs != &v->vmcs)
		vmcs_misuse++;
	v->rdpmc_exiting = on || rdpmc_exiting_fixed;
}

void hv_pmu_host_lvtpc(uint8_t vector, bool masked)
{
	model.lvtpc_vector = vector;
	model.lvtpc_masked = masked;
	model_log(MODEL_LOG_LVTPC, vector);
}

struct pmu_vcpu *vcpu_pmu_state(struct vcpu *v)
{
	return &v->pmu;
}

bool vcpu_pmu_read_guest(struct vcpu *v, void *dst, uint64_t la, uint64_t len)
{
	if (la > v->ram_size || len > v->ram_size - la)
		return false;
	memcpy(dst, v->ram + la, len);
	return true;
}

/* Never in place here: pv.c copies every control (its other way, which the copy above serves). */
const void *vcpu_pmu_guest_bytes(struct vcpu *v, uint64_t la, uint64_t len)
{
	(void)v;
	(void)la;
	(void)len;
	return NULL;
}

bool vcpu_pmu_write_guest(struct vcpu *v, uint64_t la, const void *src, uint64_t len)
{
	if (la > v->ram_size || len > v->ram_size - la)
		return false;
	memcpy(v->ram + la, src, len);
	return true;
}

/* hv/vcpu_pmu.c's rules: page-aligned, one page per VCPU of the domain, inside its RAM. */
void *vcpu_pmu_map_area(struct vcpu *v, uint64_t gpa, unsigned nvcpus, const char **why)
{
	if (gpa & 0xFFF || nvcpus != v->dom_vcpus || gpa > v->ram_size ||
	    (uint64_t)nvcpus * 4096 > v->ram_size - gpa) {
		*why = "bad area";
		return NULL;
	}
	return v->ram + gpa;
}

uint64_t vcpu_pmu_guest_tsc(struct vcpu *v)
{
	(void)v;
	return guest_tsc;
}

void vcpu_pmu_raise_vector(struct vcpu *v, uint8_t vector)
{
	v->raised = vector;
}

/* The physical MSRs are the model's. */
int pmu_hw_rdmsr(uint32_t msr, uint64_t *val)
{
	return model_rdmsr(msr, val);
}

int pmu_hw_wrmsr(uint32_t msr, uint64_t val)
{
	return model_wrmsr(msr, val);
}

/* --- Harness: a machine, VCPUs on its one PCPU, guest and hypervisor execution. --- */

static const struct model_cfg hw48 = { 2, 4, 48, 3, 48, true, true };

/* The model at power-on, the probe's view of it, the backend chosen and this PCPU set up. */
static void machine(const struct model_cfg *cfg)
{
	model_reset(cfg);
	pmu_hw = (struct pmu_hw_info){
		.version = cfg->version, .num_gp = cfg->num_gp, .gp_width = cfg->gp_width,
		.num_fixed = cfg->num_fixed, .fixed_width = cfg->fixed_width, .works = true,
	};
	pmu_init(PMU_CHOICE_AUTO);
	pmu_cpu_init();
	guest_tsc = 0;
	vmcs_misuse = 0;
	rdpmc_exiting_fixed = false;
}

/* A fresh VCPU of domain d (all events allowed), at CPL 3, no RAM, RDPMC exiting (hv/vcpu.c). */
static void vcpu_new(struct vcpu *v, struct pmu_domain *d, enum pmu_acct acct)
{
	memset(v, 0, sizeof(*v));
	memset(d, 0, sizeof(*d));	/* as hv/ allocates domains: no PV area */
	pmu_domain_init(d, ~0ull, acct);
	pmu_vcpu_init(&v->pmu, d, 0);
	v->cpl = 3;
	v->rdpmc_exiting = true;
}

/* The scheduler's switch hooks (hv/sched.c), with the VCPU's VMCS current meanwhile. */
static void load(struct vcpu *v)
{
	model.vmcs = &v->vmcs;
	pmu_switch_in(v);
}

static void unload(struct vcpu *v)
{
	pmu_switch_out(v);
	model.vmcs = NULL;
}

/* A host PMI exits to the hypervisor, which hands it to the PMU and EOIs (hv/exit_irq.c). */
static void take_pmi(struct vcpu *v)
{
	if (!model.pmi_pending || model.lvtpc_vector != PMU_HOST_PMI_VECTOR)
		return;
	model.pmi_pending = false;
	pmu_host_pmi(v);
}

/* The guest runs from a VM entry to a VM exit; a PMI ends it (runs end where counters wrap). */
static void run(struct vcpu *v, uint64_t insns, uint64_t branches, uint64_t cycles)
{
	model_run(insns, branches, cycles, v->cpl, true);
	guest_tsc += cycles;
	take_pmi(v);
}

/* The hypervisor handles an exit of v (CPL 0, between a VM exit and the next entry). */
static void hv_work(struct vcpu *v, uint64_t insns, uint64_t branches, uint64_t cycles)
{
	model_run(insns, branches, cycles, 0, false);
	guest_tsc += cycles;
	take_pmi(v);
}

/* The guest's RDMSR / WRMSR of a PMU MSR, trapped (hv/exit_msr.c). */
static uint64_t rd(struct vcpu *v, uint32_t msr)
{
	uint64_t val = 0xdead;

	if (pmu_rdmsr(v, msr, &val) != VPMU_OK)
		return 0xdead;
	return val;
}

static bool wr(struct vcpu *v, uint32_t msr, uint64_t val)
{
	return pmu_wrmsr(v, msr, val) == VPMU_OK;
}

#endif
