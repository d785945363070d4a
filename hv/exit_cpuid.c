/* CPUID exits: the host's answers, filtered to what the guest platform really offers, plus perfvisor's own leaves. */
#include "lib/cpu.h"
#include "lib/string.h"
#include "hv/domain.h"
#include "hv/vmexit.h"

#define HV_LEAF_BASE	0x40000000

_Static_assert(sizeof(((struct dom_config *)0)->name) == sizeof(struct cpuid_regs),
	       "leaf 0x40000001 carries the whole domain name");

/* Leaf 1 ECX/EDX features guests must not see (SDM Vol. 2A CPUID, table 3-10/3-11). */
#define L1_ECX_HIDE	((1u << 3) /* MONITOR */ | (1u << 5) /* VMX */ | (1u << 6) /* SMX */ | \
			 (1u << 7) /* EIST */ | (1u << 8) /* TM2 */ | \
			 (1u << 21) /* x2APIC */ | (1u << 24) /* TSC deadline */ | \
			 (1u << 26) /* XSAVE */ | (1u << 27) /* OSXSAVE */ | (1u << 28) /* AVX */)
#define L1_ECX_HYPERVISOR (1u << 31)
#define L1_ECX_PDCM	(1u << 15)
#define L1_EDX_HIDE	((1u << 7) /* MCE */ | (1u << 12) /* MTRR */ | (1u << 14) /* MCA */ | \
			 (1u << 22) /* ACPI thermal */ | (1u << 29) /* TM */ | (1u << 31) /* PBE */)
/* Leaf 7 EBX features that need no VMM support: FSGSBASE, BMI1, SMEP, BMI2, ERMS, ADX, SMAP, CLFLUSHOPT, SHA. */
#define L7_EBX_KEEP	((1u << 0) | (1u << 3) | (1u << 7) | (1u << 8) | (1u << 9) | \
			 (1u << 19) | (1u << 20) | (1u << 23) | (1u << 29))

void exit_cpuid(struct vcpu *v, uint64_t qual)
{
	uint32_t leaf = (uint32_t)v->gpr[GPR_RAX], sub = (uint32_t)v->gpr[GPR_RCX];
	struct cpuid_regs r = cpuid(leaf, sub);

	(void)qual;
	switch (leaf) {
	case 1:
		/* Initial APIC ID and the number of logical processors (SDM Vol. 2A, EBX). */
		r.ebx = (r.ebx & 0xFFFF) | ((uint32_t)v->dom->nvcpus << 16) | ((uint32_t)v->id << 24);
		r.ecx = (r.ecx & ~L1_ECX_HIDE) | L1_ECX_HYPERVISOR;
		/* PDCM: IA32_PERF_CAPABILITIES exists exactly when the virtual PMU does. */
		if (v->pmu.vpmu.cfg->enabled)
			r.ecx |= L1_ECX_PDCM;
		else
			r.ecx &= ~L1_ECX_PDCM;
		r.edx &= ~L1_EDX_HIDE;
		r.edx &= vapic_hw_enabled(&v->apic) ? ~0u : ~(1u << 9);	/* SDM Vol. 3A 11.4.3 */
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
		r.eax = 0;
		r.ebx = sub ? 0 : r.ebx & L7_EBX_KEEP;
		r.ecx = r.edx = 0;
		break;
	case 0xB: case 0x1F:
		/* Topology: the x2APIC ID is the VCPU's APIC ID. */
		r.edx = v->id;
		break;
	case HV_LEAF_BASE:
		/* The hypervisor's signature, "perfvisor", as KVM and Xen publish theirs. */
		r.eax = HV_LEAF_BASE + 1;
		r.ebx = 0x66726570;	/* "perf" */
		r.ecx = 0x6f736976;	/* "viso" */
		r.edx = 0x00000072;	/* "r" */
		break;
	case HV_LEAF_BASE + 1:
		/* The domain's name, NUL-padded, in EAX EBX ECX EDX: guests label their results. */
		memcpy(&r, v->dom->cfg.name, sizeof(r));
		break;
	default:
		if (leaf > HV_LEAF_BASE + 1 && leaf < HV_LEAF_BASE + 0x100)
			r.eax = r.ebx = r.ecx = r.edx = 0;
		break;
	}
	v->gpr[GPR_RAX] = r.eax;
	v->gpr[GPR_RBX] = r.ebx;
	v->gpr[GPR_RCX] = r.ecx;
	v->gpr[GPR_RDX] = r.edx;
	vcpu_advance_rip(v);
}
