/* hv/'s side of the PMU seam: CPL, stepping, PMIs and run limits for a VCPU, on behalf of pmu/. */
#include "hv/domain.h"
#include "hv/vcpu.h"
#include "hv/ept.h"
#include "hv/guest_mem.h"
#include "hv/lapic.h"
#include "hv/pcpu.h"
#include "hv/sched.h"
#include "hv/vcpu_pmu.h"
#include "hv/vmx_caps.h"
#include "hv/vmx_ops.h"
#include "include/x86/pmu_msr.h"

unsigned vcpu_pmu_cpl(struct vcpu *v)
{
	(void)v;
	return vcpu_cpl();
}

void vcpu_pmu_set_stepping(struct vcpu *v, bool on, bool ring0)
{
	v->step.want = on;
	v->step.ring0_free = on && !ring0;
}

/*
 * SDM Vol. 3A 11.5.1 / Vol. 3B 20.6.3: the PMI goes through LVTPC, which masks itself on
 * delivery; in NMI mode it is latched as the VCPU's NMI, which irq_deliver() injects.
 */
void vcpu_pmu_raise_pmi(struct vcpu *v)
{
	spin_lock(&v->lock);
	vapic_pmi(&v->apic);
	spin_unlock(&v->lock);
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
	lapic_write(APIC_LVT_PMC, vector | (masked ? APIC_LVT_MASKED : 0));
}

bool vcpu_pmu_read_guest(struct vcpu *v, void *dst, uint64_t la, uint64_t len)
{
	struct gpt_result res;

	return guest_read(v, dst, la, len, GPT_READ, &res) == GPT_OK;
}

const void *vcpu_pmu_guest_bytes(struct vcpu *v, uint64_t la, uint64_t len)
{
	return guest_map(v, la, len, GPT_READ, &v->pmu_walk);
}

bool vcpu_pmu_write_guest(struct vcpu *v, uint64_t la, const void *src, uint64_t len)
{
	struct gpt_result res;

	return guest_write(v, la, src, len, &res) == GPT_OK;
}

/*
 * The area becomes read-only in the EPT (4 KiB pages), and stale writable translations are gone
 * from every PCPU before this returns (sched_ept_sync).
 */
void *vcpu_pmu_map_area(struct vcpu *v, uint64_t gpa, unsigned nvcpus, const char **why)
{
	struct domain *d = v->dom;
	uint64_t len = (uint64_t)nvcpus * 4096;
	void *hva = dom_gpa_to_hva(d, gpa, len);

	if (gpa & 0xFFF || nvcpus != d->nvcpus) {
		*why = "the area must be page-aligned with one page per VCPU";
		return (void *)0;
	}
	if (!hva) {
		*why = "the area is outside the domain's RAM";
		return (void *)0;
	}
	spin_lock(&d->ept_lock);
	if (!ept_map(d->eptp, gpa, d->ram_hpa + gpa, len, EPT_R)) {
		spin_unlock(&d->ept_lock);
		*why = "out of memory for EPT tables";
		return (void *)0;
	}
	d->ro_start = gpa;
	d->ro_end = gpa + len;
	spin_unlock(&d->ept_lock);
	sched_ept_sync(v);
	return hva;
}

uint64_t vcpu_pmu_guest_tsc(struct vcpu *v)
{
	return sched_guest_tsc(v);
}

void vcpu_pmu_raise_vector(struct vcpu *v, uint8_t vector)
{
	spin_lock(&v->lock);
	vapic_set_irr(&v->apic, vector);
	spin_unlock(&v->lock);
}

void vcpu_pmu_set_rdpmc_exiting(struct vcpu *v, bool on)
{
	uint64_t ctls = vmread(VMCS_CPU_CTLS);
	uint64_t want = on ? ctls | CPU_RDPMC_EXITING : ctls & ~(uint64_t)CPU_RDPMC_EXITING;

	(void)v;
	/* SDM Vol. 3C 25.6.2: RDPMC exiting may be 0 only where allowed-0 permits it. */
	if (!on && (vmx_caps.procbased & CPU_RDPMC_EXITING))
		return;
	if (want != ctls)
		vmwrite(VMCS_CPU_CTLS, want);
}

struct pmu_vcpu *vcpu_pmu_state(struct vcpu *v)
{
	return &v->pmu;
}
