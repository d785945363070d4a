/* CPUID exits: the host's answers, filtered to what the guest platform really offers, plus perfvisor's own leaves. */
#include "lib/cpu.h"
#include "lib/string.h"
#include "hv/cpuid_table.h"
#include "hv/domain.h"
#include "hv/sched.h"
#include "hv/vmexit.h"
#include "include/perfvisor/hypercall.h"

/* The leaves a hypervisor may define (SDM Vol. 2A CPUID: invalid on hardware). */
#define HV_LEAF_FIRST	0x40000000
#define HV_LEAF_LAST	0x400000FF

_Static_assert(sizeof(((struct dom_config *)0)->name) == sizeof(struct cpuid_regs),
	       "HV_CPUID_NAME carries the whole domain name");

#define X1_EDX_NX		(1u << 20)

/* Every feature register goes through the table of hv/cpuid_table.c. */
static void filter_features(struct vcpu *v, uint32_t leaf, uint32_t sub, struct cpuid_regs *r)
{
	bool vpmu = v->pmu.vpmu.cfg->enabled;

	cpuid_filter(leaf, sub, CPUID_EBX, vpmu, &r->ebx);
	cpuid_filter(leaf, sub, CPUID_ECX, vpmu, &r->ecx);
	cpuid_filter(leaf, sub, CPUID_EDX, vpmu, &r->edx);
}

void exit_cpuid(struct vcpu *v, uint64_t qual)
{
	uint32_t leaf = (uint32_t)v->gpr[GPR_RAX], sub = (uint32_t)v->gpr[GPR_RCX];
	struct cpuid_regs r = cpuid(leaf, sub);

	(void)qual;
	filter_features(v, leaf, sub, &r);
	switch (leaf) {
	case 0:
		/* SDM Vol. 4 table 2-2: MISC_ENABLE bit 22 limits the basic leaves to 2. */
		if ((v->msr.misc_enable & MISC_ENABLE_LIMIT_CPUID) && r.eax > 2)
			r.eax = 2;
		break;
	case 1:
		/* Initial APIC ID and the number of logical processors (SDM Vol. 2A, EBX). */
		r.ebx = (r.ebx & 0xFFFF) | ((uint32_t)v->dom->nvcpus << 16) | ((uint32_t)v->id << 24);
		r.edx &= vapic_hw_enabled(&v->apic) ? ~0u : ~(1u << 9);	/* SDM Vol. 3A 11.4.3 */
		r.ecx &= v->dom->cfg.x2apic ? ~0u : ~(1u << 21);	/* x2apic=off */
		break;
	case 4:
		/* Cores sharing the package: the domain's VCPUs. */
		r.eax = (r.eax & 0x03FFFFFF) | ((uint32_t)(v->dom->nvcpus - 1) << 26);
		break;
	case 5: case 6: case 0xD:
		/* No MONITOR, power management or XSAVE. */
		r.eax = r.ebx = r.ecx = r.edx = 0;
		break;
	case 0xA:
		/* The domain's virtual PMU (zero with pmu=off). */
		pmu_cpuid(v, &r.eax, &r.ebx, &r.ecx, &r.edx);
		break;
	case 7:
		/* Subleaf 0 EAX: no subleaf after 0; subleaf 1 EAX: features, none offered. */
		r.eax = 0;
		break;
	case 0x80000001:
		/* SDM Vol. 4 table 2-2: MISC_ENABLE bit 34 hides XD. */
		if (v->msr.misc_enable & MISC_ENABLE_XD_DISABLE)
			r.edx &= ~X1_EDX_NX;
		break;
	case 0x15:
		/*
		 * SDM Vol. 2A CPUID leaf 15H, Vol. 3A 11.5.4: with the TSC/crystal ratio enumerated
		 * the APIC timer counts at the core crystal clock. The virtual one counts at the
		 * TSC's rate (hv/vapic.c), so the crystal is the TSC: ratio 1/1 at its frequency
		 * (beyond 32 bits of Hz, not enumerated). The host's answer (Bochs: a 3.5 GHz TSC over
		 * a 24 MHz crystal, while its TSC runs at 50 MHz) made Linux's tick 146 times shorter
		 * than it meant and its TSC 70 times slower than it took it for.
		 */
		r.eax = r.ebx = tsc_khz * 1000 <= UINT32_MAX;
		r.ecx = r.eax ? (uint32_t)(tsc_khz * 1000) : 0;
		r.edx = 0;
		break;
	case 0x16:
		/* Base, maximum and bus (reference) frequency in MHz: the TSC's (leaf 15H). */
		r.eax = r.ebx = r.ecx = (uint32_t)(tsc_khz / 1000);
		r.edx = 0;
		break;
	case 0xB: case 0x1F:
		/* Topology: the x2APIC ID is the VCPU's APIC ID. */
		r.edx = v->id;
		break;
	case HV_CPUID_SIGNATURE:
		/* The hypervisor's signature, "perfvisor", as KVM and Xen publish theirs. */
		r.eax = HV_CPUID_NAME;
		r.ebx = 0x66726570;	/* "perf" */
		r.ecx = 0x6f736976;	/* "viso" */
		r.edx = 0x00000072;	/* "r" */
		break;
	case HV_CPUID_NAME:
		/* The domain's name, NUL-padded, in EAX EBX ECX EDX: guests label their results. */
		memcpy(&r, v->dom->cfg.name, sizeof(r));
		break;
	default:
		/* Other hypervisors' leaves (KVM's features at 0x40000001): none of them here. */
		if (leaf >= HV_LEAF_FIRST && leaf <= HV_LEAF_LAST)
			r.eax = r.ebx = r.ecx = r.edx = 0;
		break;
	}
	v->gpr[GPR_RAX] = r.eax;
	v->gpr[GPR_RBX] = r.ebx;
	v->gpr[GPR_RCX] = r.ecx;
	v->gpr[GPR_RDX] = r.edx;
	vcpu_advance_rip(v);
}
