/* hv/'s side of the PMU seam: CPL, stepping, PMIs and run limits for a VCPU, on behalf of pmu/. */
#include "boot/printk.h"
#include "hv/domain.h"
#include "hv/vcpu.h"
#include "hv/vcpu_pmu.h"

unsigned vcpu_pmu_cpl(struct vcpu *v)
{
	(void)v;
	return vcpu_cpl();
}

void vcpu_pmu_set_stepping(struct vcpu *v, bool on)
{
	v->step.want = on;
}

/* SDM Vol. 3A 11.5.1 / Vol. 3B 20.6.3: the PMI goes through LVTPC, which masks itself on delivery. */
void vcpu_pmu_raise_pmi(struct vcpu *v)
{
	enum vapic_pmi how;

	spin_lock(&v->lock);
	how = vapic_pmi(&v->apic);
	spin_unlock(&v->lock);
	if (how == VAPIC_PMI_NMI)
		pr_warn("[%s] vcpu %u: PMI as NMI is not emulated; it is dropped\n",
			v->dom->cfg.name, v->id);
}

void vcpu_pmu_limit_run(struct vcpu *v, uint64_t ticks)
{
	if (!v->pmu_run_limit || ticks < v->pmu_run_limit)
		v->pmu_run_limit = ticks ? ticks : 1;
}

struct pmu_vcpu *vcpu_pmu_state(struct vcpu *v)
{
	return &v->pmu;
}
