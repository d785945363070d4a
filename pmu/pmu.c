/* The PMU's entry points for hv/: backend choice, per-domain view, and trap-and-emulate of the vPMU MSRs. */
#include "lib/inject.h"
#include "lib/printk.h"
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

/* Why the arch backend cannot run on this machine; NULL when it can. */
static const char *arch_unusable(void)
{
	if (!pmu_hw.works)
		return pmu_hw.why_not;
	/* SDM Vol. 3B 20.2.2: version 2 brings IA32_PERF_GLOBAL_CTRL, which VM entry and exit switch. */
	if (pmu_hw.version < 2)
		return "its version 1 has no IA32_PERF_GLOBAL_CTRL to switch at VM entry and exit";
	/* backend_arch.c sign-extends from the counter width and from bit 31 of legacy writes. */
	if (pmu_hw.gp_width < 32 || pmu_hw.gp_width > 64 ||
	    (pmu_hw.num_fixed && (pmu_hw.fixed_width < 32 || pmu_hw.fixed_width > 64)))
		return "its counters are not 32 to 64 bits wide";
	return (const char *)0;
}

void pmu_init(enum pmu_choice choice)
{
	const char *why_not = arch_unusable();

	if (choice == PMU_CHOICE_OFF) {
		pmu_backend = PMU_BACKEND_OFF;
		ops = (const struct pmu_backend_ops *)0;
		pv_init(ops, 0);
		printk("perfvisor: pmu: off (guests see no PMU)\n");
		return;
	}
	if (choice != PMU_CHOICE_SOFT && !why_not) {
		pmu_backend = PMU_BACKEND_ARCH;
		ops = &pmu_arch_ops;
		pv_init(ops, pmu_hw.gp_width);
		printk("perfvisor: pmu: %s backend (guest counters run on the physical ones)\n",
		       ops->name);
		return;
	}
	if (choice == PMU_CHOICE_ARCH)
		printk("perfvisor: pmu=arch asked for, but %s: using the soft backend\n", why_not);
	pmu_backend = PMU_BACKEND_SOFT;
	ops = &pmu_soft_ops;
	pv_init(ops, 0);
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
	if (pmu_backend == PMU_BACKEND_ARCH) {
		/*
		 * Guest counter i is physical counter i: show no more counters than the hardware
		 * has, and no event it lacks among the 7 of CPUID.0AH:EBX (SDM Vol. 3B 20.2.1.2).
		 */
		if (pmu_hw.num_gp < c->num_gp)
			c->num_gp = pmu_hw.num_gp;
		if (pmu_hw.num_fixed < c->num_fixed)
			c->num_fixed = pmu_hw.num_fixed;
		c->unavailable |= pmu_hw.unavailable_events & 0x7F;
	}
	for (unsigned ev = 0; ev < VPMU_EV_COUNT; ev++)
		if (!(allow & (1ull << ev)))
			c->unavailable |= vpmu_event_ebx_bit[ev];
	pd->acct = inject_on(INJECT_ACCT_AS_GUEST) ? PMU_ACCT_GUEST : acct;
}

void pmu_vcpu_init(struct pmu_vcpu *pv, struct pmu_domain *pd, unsigned id)
{
	vpmu_reset(&pv->vpmu, &pd->cfg);
	pv->pd = pd;
	pv->id = id;
	pv->acct = pd->acct;
}



void pmu_sync(struct vcpu *v)
{
	if (ops)
		ops->sync(v);
}

void pmu_reprogrammed(struct vcpu *v)
{
	if (ops)
		ops->programmed(v);
}

bool pmu_owns_msr(uint32_t msr)
{
	return vpmu_msr_known(msr);
}

enum vpmu_result pmu_rdmsr(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);

	pmu_sync(v);
	return vpmu_rdmsr(&pv->vpmu, msr, val);
}

enum vpmu_result pmu_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	enum vpmu_result r;

	/* No counter starts or stops: no backend has live counts to gather or anything to program. */
	if (vpmu_wrmsr_inert(&pv->vpmu, msr, val))
		return vpmu_wrmsr(&pv->vpmu, msr, val);
	pmu_sync(v);
	r = vpmu_wrmsr(&pv->vpmu, msr, val);
	if (r == VPMU_OK)
		pmu_reprogrammed(v);
	return r;
}

enum vpmu_result pmu_wrmsr_check(struct vcpu *v, uint32_t msr, uint64_t val)
{
	return vpmu_wrmsr_check(&vcpu_pmu_state(v)->vpmu, msr, val);
}

enum vpmu_result pmu_rdpmc(struct vcpu *v, uint32_t ecx, bool pce, uint64_t *val)
{
	uint64_t sels[PV_PMU_COUNTERS];
	enum vpmu_result r;

	pmu_sync(v);
	r = vpmu_rdpmc(&vcpu_pmu_state(v)->vpmu, ecx, vcpu_pmu_cpl(v), pce, val);
	/*
	 * A PV a-mode counter reads as the register it is, also where RDPMC exiting cannot be
	 * cleared (its allowed-0 setting is 1, SDM Vol. 3C A.3.2): direct reads then exit.
	 */
	if (r == VPMU_OK && ops && ops->pv_phys && ecx < PV_PMU_COUNTERS &&
	    (pv_amode(v, sels) >> ecx & 1))
		*val = ops->pv_phys(v, ecx);
	return r;
}

void pmu_cpuid(struct vcpu *v, uint32_t *eax, uint32_t *ebx, uint32_t *ecx, uint32_t *edx)
{
	vpmu_cpuid(vcpu_pmu_state(v)->vpmu.cfg, eax, ebx, ecx, edx);
}

/*
 * The exit hooks account the guest's run between an entry and the next exit: only a run that
 * started with the PMU live has anything to account. Deciding at entry keeps an exit whose
 * handler went first (hv/vmexit.c's fast path) from accounting a run that counted nothing.
 */
void pmu_before_entry(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);

	pv->run_counts = !pmu_exit_quiet(pv);
	if (pv->run_counts && ops->before_entry)
		ops->before_entry(v);
}

void pmu_after_exit(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);

	if (!pv->run_counts)
		return;
	pv->run_counts = false;
	if (ops->after_exit)
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

void pmu_retired_block(struct vcpu *v, uint64_t n, uint64_t branches, unsigned cpl)
{
	if (ops && ops->retired_block)
		ops->retired_block(v, n, branches, cpl);
}

uint64_t pmu_step_room(struct vcpu *v, unsigned cpl)
{
	return ops && ops->step_room ? ops->step_room(v, cpl) : 0;
}

uint64_t pmu_step_branch_room(struct vcpu *v, unsigned cpl)
{
	return ops && ops->step_branch_room ? ops->step_branch_room(v, cpl) : 0;
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
	if (overflowed && pv_overflow(v, overflowed) && !inject_on(INJECT_PMI_DROP))
		vcpu_pmu_raise_pmi(v);
}
