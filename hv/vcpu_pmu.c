/* hv/'s side of the PMU seam: CPL, stepping, PMIs and run limits for a VCPU, on behalf of pmu/. */
#include "boot/printk.h"
#include "hv/domain.h"
#include "hv/vcpu.h"
#include "hv/lapic.h"
#include "hv/vcpu_pmu.h"
#include "hv/vmx_caps.h"
#include "hv/vmx_ops.h"
#include "pmu/pmu_msr.h"

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

void vcpu_pmu_set_global_ctrl(struct vcpu *v, uint64_t guest, uint64_t host)
{
	uint64_t entry = vmread(VMCS_ENTRY_CTLS), exit = vmread(VMCS_EXIT_CTLS);

	/* SDM Vol. 3C 25.7.1, 25.8.1: the controls, when both directions are offered. */
	if (vmx_ctl_allowed1(vmx_caps.entry, ENTRY_LOAD_PERF_GLOBAL_CTRL) &&
	    vmx_ctl_allowed1(vmx_caps.exit, EXIT_LOAD_PERF_GLOBAL_CTRL)) {
		vmwrite(VMCS_ENTRY_CTLS, entry | ENTRY_LOAD_PERF_GLOBAL_CTRL);
		vmwrite(VMCS_EXIT_CTLS, exit | EXIT_LOAD_PERF_GLOBAL_CTRL);
		vmwrite(VMCS_GUEST_PERF_GLOBAL_CTRL, guest);
		vmwrite(VMCS_HOST_PERF_GLOBAL_CTRL, host);
		return;
	}
	/* SDM Vol. 3C 25.7.2, 25.8.2: one-entry MSR-load lists (nested hypervisors often lack the controls). */
	v->msr_entry_load.index = MSR_IA32_PERF_GLOBAL_CTRL;
	v->msr_entry_load.value = guest;
	v->msr_exit_load.index = MSR_IA32_PERF_GLOBAL_CTRL;
	v->msr_exit_load.value = host;
	vmwrite(VMCS_ENTRY_MSR_LOAD_ADDR, (uint64_t)&v->msr_entry_load);
	vmwrite(VMCS_ENTRY_MSR_LOAD_COUNT, 1);
	vmwrite(VMCS_EXIT_MSR_LOAD_ADDR, (uint64_t)&v->msr_exit_load);
	vmwrite(VMCS_EXIT_MSR_LOAD_COUNT, 1);
}

void hv_pmu_host_lvtpc(uint8_t vector, bool masked)
{
	lapic_write(LAPIC_LVTPC, vector | (masked ? 1u << 16 : 0));
}

struct pmu_vcpu *vcpu_pmu_state(struct vcpu *v)
{
	return &v->pmu;
}
