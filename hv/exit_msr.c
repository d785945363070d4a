/* RDMSR/WRMSR exits: the vPMU, then the MSRs of hv/msr_table.c; the rest #GP as on hardware. */
#include "lib/cpu.h"
#include "hv/domain.h"
#include "hv/irq.h"
#include "hv/msr_table.h"
#include "hv/sched.h"
#include "hv/vmexit.h"
#include "hv/vmx.h"
#include "hv/vmx_ops.h"

/* The guest's MAXPHYADDR (CPUID.80000008H:EAX[7:0], SDM Vol. 2A), 36 without that leaf. */
static unsigned maxphyaddr(void)
{
	if (cpuid(0x80000000, 0).eax < 0x80000008)
		return 36;
	return cpuid(0x80000008, 0).eax & 0xFF;
}

/* SDM Vol. 3A 11.12.5 and Vol. 4 table 2-2: each PAT entry must be a valid memory type. */
static bool pat_valid(uint64_t pat)
{
	for (unsigned i = 0; i < 8; i++) {
		uint8_t t = (pat >> (8 * i)) & 0xFF;

		if (t == 2 || t == 3 || t > 7)
			return false;
	}
	return true;
}

/* What the emulated MSRs depend on: the domain's virtual PMU, RDTSCP or RDPID offered. */
static struct msr_env env_of(struct vcpu *v)
{
	static int tsc_aux = -1;

	/* The guest sees RDTSCP and RDPID when the host has them (hv/cpuid_table.c). */
	if (tsc_aux < 0)
		tsc_aux = (cpuid(0x80000001, 0).edx & (1u << 27)) || (cpuid(7, 0).ecx & (1u << 22));
	return (struct msr_env){ .vpmu = v->pmu.vpmu.cfg->enabled, .tsc_aux = tsc_aux };
}

/* Returns false when the access must raise #GP. */
static bool msr_read(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	struct msr_env env = env_of(v);
	enum msr_result r = msr_emul_read(&v->msr, &env, msr, val);

	if (r != MSR_NOT_EMUL)
		return r == MSR_OK;
	if (msr >= VAPIC_MSR_FIRST && msr <= VAPIC_MSR_LAST) {
		bool ok;

		spin_lock(&v->lock);
		ok = vapic_msr_read(&v->apic, msr, sched_guest_tsc(v), val);
		spin_unlock(&v->lock);
		return ok;
	}
	switch (msr) {
	case MSR_IA32_APIC_BASE:
		*val = vapic_get_base(&v->apic);
		return true;
	case MSR_IA32_FEATURE_CONTROL:
		*val = 1;	/* locked, VMX off: guests get no VT-x */
		return true;
	case MSR_IA32_BIOS_SIGN_ID:
		*val = 0;
		return true;
	case MSR_IA32_TSC_AUX:
		/* The VCPU's own value is in the hardware MSR while it is loaded (hv/vcpu.c). */
		*val = rdmsr(MSR_IA32_TSC_AUX);
		return true;
	case MSR_IA32_PAT:
		*val = vmread(VMCS_GUEST_PAT);
		return true;
	case MSR_EFER:
		*val = vmread(VMCS_GUEST_EFER);
		return true;
	default:
		return false;
	}
}

static bool msr_write(struct vcpu *v, uint32_t msr, uint64_t val)
{
	struct msr_env env = env_of(v);
	enum msr_result r = msr_emul_write(&v->msr, &env, msr, val);

	if (r != MSR_NOT_EMUL)
		return r == MSR_OK;
	if (msr >= VAPIC_MSR_FIRST && msr <= VAPIC_MSR_LAST) {
		struct vapic_ipi ipi;
		enum vapic_msr done;

		/* SDM Vol. 3A 11.12.1.2: x2APIC mode's registers, never the host's x2APIC. */
		spin_lock(&v->lock);
		done = vapic_msr_write(&v->apic, msr, val, sched_guest_tsc(v), &ipi);
		spin_unlock(&v->lock);
		if (done != VAPIC_MSR_GP)
			irq_apic_write_done(v, done == VAPIC_MSR_IPI ? &ipi : NULL);
		return done != VAPIC_MSR_GP;
	}
	switch (msr) {
	case MSR_IA32_TSC:
		/* The guest sets its own TSC: only its offset changes (SDM Vol. 3C 27.3). */
		v->tsc_offset += msr_tsc_write(&v->msr, val, sched_guest_tsc(v));
		vmwrite(VMCS_TSC_OFFSET, v->tsc_offset);
		return true;
	case MSR_IA32_TSC_ADJUST:
		v->tsc_offset += msr_tsc_adjust_write(&v->msr, val);
		vmwrite(VMCS_TSC_OFFSET, v->tsc_offset);
		return true;
	case MSR_IA32_TSC_AUX:
		wrmsr(MSR_IA32_TSC_AUX, val);
		return true;
	case MSR_IA32_APIC_BASE: {
		bool ok;

		/* SDM Vol. 3A 11.4.3-11.4.4, 11.12.5: enable, disable, relocate, x2APIC mode. */
		spin_lock(&v->lock);
		ok = vapic_set_base(&v->apic, val, maxphyaddr());
		spin_unlock(&v->lock);
		return ok;
	}
	case MSR_IA32_BIOS_SIGN_ID:
		return true;
	case MSR_IA32_PAT:
		if (!pat_valid(val))
			return false;
		vmwrite(VMCS_GUEST_PAT, val);
		return true;
	case MSR_EFER: {
		uint64_t old = vmread(VMCS_GUEST_EFER);
		bool paging = vcpu_guest_cr0() & (1ull << 31);

		/* SDM Vol. 4 table 2-2: reserved bits #GP; LME cannot change while paging is on. */
		if (val & ~(EFER_SCE | EFER_LME | EFER_LMA | EFER_NXE))
			return false;
		if (paging && ((val ^ old) & EFER_LME))
			return false;
		/* LMA is read-only: the processor sets it when paging turns on (exit_cr.c). */
		vmwrite(VMCS_GUEST_EFER, (val & ~EFER_LMA) | (old & EFER_LMA));
		return true;
	}
	default:
		return false;
	}
}

void exit_rdmsr(struct vcpu *v, uint64_t qual)
{
	uint32_t msr = (uint32_t)v->gpr[GPR_RCX];
	enum vpmu_result r;
	uint64_t val;

	(void)qual;
	r = pmu_rdmsr(v, msr, &val);
	if (r == VPMU_GP || (r == VPMU_NOT_PMU && !msr_read(v, msr, &val))) {
		vcpu_inject_gp(v);
		return;
	}
	v->gpr[GPR_RAX] = (uint32_t)val;
	v->gpr[GPR_RDX] = val >> 32;
	vcpu_advance_rip(v);
}

void exit_wrmsr(struct vcpu *v, uint64_t qual)
{
	uint64_t val = (v->gpr[GPR_RDX] << 32) | (uint32_t)v->gpr[GPR_RAX];
	uint32_t msr = (uint32_t)v->gpr[GPR_RCX];
	enum vpmu_result r;

	(void)qual;
	r = pmu_wrmsr_check(v, msr, val);
	if (r == VPMU_GP || (r == VPMU_NOT_PMU && !msr_write(v, msr, val))) {
		vcpu_inject_gp(v);
		return;
	}
	/*
	 * The WRMSR retires under the counters it found: the one that enables a counter is not
	 * counted by it, the one that disables it is (what kvm-unit-tests x86/pmu.c EXTRA_INSNS
	 * and KVM's pmu_counters_test assume of Intel hardware; docs/soft-pmu.md).
	 */
	vcpu_advance_rip(v);
	if (r == VPMU_OK)
		pmu_wrmsr(v, msr, val);
}
