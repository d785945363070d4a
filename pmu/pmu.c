/* The PMU's entry points for hv/: backend choice, per-domain view, and trap-and-emulate of the vPMU MSRs. */
#include "boot/printk.h"
#include "hv/vcpu_pmu.h"
#include "pmu/backend.h"
#include "pmu/pmu.h"
#include "pmu/pmu_probe.h"

enum pmu_backend_kind pmu_backend;
static const struct pmu_backend_ops *ops;

const char *const pmu_event_names[] = {
	[VPMU_EV_INSTRUCTIONS] = "instructions",
	[VPMU_EV_BRANCHES] = "branches",
	[VPMU_EV_CORE_CYCLES] = "cycles",
	[VPMU_EV_REF_CYCLES] = "ref-cycles",
	[VPMU_EV_COUNT] = (const char *)0,
};

/* LLC references, LLC misses and branch mispredicts: no backend here counts them exactly. */
#define EBX_NEVER_AVAILABLE	((1u << 3) | (1u << 4) | (1u << 6))

void pmu_init(enum pmu_choice choice)
{
	if (choice == PMU_CHOICE_OFF) {
		pmu_backend = PMU_BACKEND_OFF;
		printk("perfvisor: pmu: off (guests see no PMU)\n");
		return;
	}
	if (choice == PMU_CHOICE_ARCH && !pmu_hw.works)
		printk("perfvisor: pmu=arch asked for, but %s: using the soft backend\n",
		       pmu_hw.why_not);
	/* The arch backend is not wired in yet: every choice that counts uses the soft one. */
	pmu_backend = PMU_BACKEND_SOFT;
	ops = &pmu_soft_ops;
	printk("perfvisor: pmu: %s backend (exact instructions and branches by single-stepping, "
	       "cycles from the TSC)\n", ops->name);
}

void pmu_domain_init(struct pmu_domain *pd, uint64_t allow, int acct)
{
	struct vpmu_config *c = &pd->cfg;

	c->enabled = pmu_backend != PMU_BACKEND_OFF;
	c->version = 2;
	c->num_gp = 4;
	c->num_fixed = 3;
	c->width = 48;
	c->unavailable = EBX_NEVER_AVAILABLE;
	for (unsigned ev = 0; ev < VPMU_EV_COUNT; ev++)
		if (!(allow & (1ull << ev)))
			c->unavailable |= vpmu_event_ebx_bit[ev];
	pd->acct = acct;
}

void pmu_vcpu_init(struct pmu_vcpu *pv, struct pmu_domain *pd, unsigned id)
{
	vpmu_reset(&pv->vpmu, &pd->cfg);
	pv->pd = pd;
	pv->id = id;
	pv->acct = pd->acct;
}

int64_t pmu_hypercall(struct vcpu *v, uint64_t nr, const uint64_t args[3])
{
	return pv_hypercall(v, nr, args);
}

void pmu_reprogrammed(struct vcpu *v)
{
	if (ops)
		ops->programmed(v);
}

enum vpmu_result pmu_rdmsr(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);

	if (ops)
		ops->sync(v);
	return vpmu_rdmsr(&pv->vpmu, msr, val);
}

enum vpmu_result pmu_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	enum vpmu_result r;

	if (ops)
		ops->sync(v);
	r = vpmu_wrmsr(&pv->vpmu, msr, val);
	if (r == VPMU_OK)
		pmu_reprogrammed(v);
	return r;
}

enum vpmu_result pmu_rdpmc(struct vcpu *v, uint32_t ecx, bool pce, uint64_t *val)
{
	if (ops)
		ops->sync(v);
	return vpmu_rdpmc(&vcpu_pmu_state(v)->vpmu, ecx, vcpu_pmu_cpl(v), pce, val);
}

void pmu_cpuid(struct vcpu *v, uint32_t *eax, uint32_t *ebx, uint32_t *ecx, uint32_t *edx)
{
	vpmu_cpuid(vcpu_pmu_state(v)->vpmu.cfg, eax, ebx, ecx, edx);
}

void pmu_before_entry(struct vcpu *v)
{
	if (ops)
		ops->before_entry(v);
}

void pmu_after_exit(struct vcpu *v)
{
	if (ops)
		ops->after_exit(v);
}

void pmu_switch_in(struct vcpu *v)
{
	if (ops)
		ops->switch_in(v);
	pv_switch_in(v);
}

void pmu_switch_out(struct vcpu *v)
{
	pv_switch_out(v);
	if (ops)
		ops->switch_out(v);
}

void pmu_retired(struct vcpu *v, const struct soft_insn *insn, unsigned cpl)
{
	if (ops)
		ops->retired(v, insn, cpl);
}

void pmu_host_pmi(struct vcpu *v)
{
	if (ops && ops->host_pmi)
		ops->host_pmi(v);
}

void pmu_cpu_init(void)
{
	if (ops && ops->cpu_init)
		ops->cpu_init();
}

/* Paravirtual i-mode counters take their own vector; the rest go through LVTPC. */
void pmu_deliver_overflow(struct vcpu *v, uint64_t overflowed)
{
	if (overflowed && pv_overflow(v, overflowed))
		vcpu_pmu_raise_pmi(v);
}
