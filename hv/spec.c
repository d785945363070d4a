/* Speculative-execution mitigations between domains: what this CPU enumerates and what is done. */
#include "lib/cpu.h"
#include "lib/printk.h"
#include "hv/spec.h"

struct spec_policy spec_policy;
/* A selector of a writable data segment: VERW's memory operand (Intel's MD_CLEAR guidance). */
static uint16_t verw_sel;

struct spec_policy spec_decide(uint32_t cpuid7_edx, uint64_t arch_caps)
{
	struct spec_policy p = { false, false, false };

	if (!(cpuid7_edx & CPUID7_EDX_ARCH_CAPABILITIES))
		arch_caps = 0;
	/* Branch predictions one domain trained must not steer another's (Spectre v2). */
	p.ibpb_on_domain_switch = cpuid7_edx & CPUID7_EDX_IBRS_IBPB;
	/*
	 * L1TF: a guest can read what the L1D holds, so flush it before entering unless the CPU
	 * says it is not affected (RDCL_NO) or does it itself on entry (SKIP_L1DFL_VMENTRY).
	 */
	p.l1d_flush_on_entry = (cpuid7_edx & CPUID7_EDX_L1D_FLUSH) &&
			       !(arch_caps & (ARCH_CAP_RDCL_NO | ARCH_CAP_SKIP_L1DFL_VMENTRY));
	/* MDS: clear the buffers unless unaffected (MDS_NO); an L1D flush clears them too. */
	p.verw_on_entry = (cpuid7_edx & CPUID7_EDX_MD_CLEAR) && !(arch_caps & ARCH_CAP_MDS_NO) &&
			  !p.l1d_flush_on_entry;
	return p;
}

void spec_describe(const struct spec_policy *p, char *buf, size_t size)
{
	snprintk(buf, size, "IBPB at domain switches %s, L1D flush before VM entry %s, VERW before "
		 "VM entry %s", p->ibpb_on_domain_switch ? "yes" : "no (not enumerated)",
		 p->l1d_flush_on_entry ? "yes" : "no", p->verw_on_entry ? "yes" : "no");
}

void spec_init(void)
{
	uint32_t edx = cpuid(0, 0).eax >= 7 ? cpuid(7, 0).edx : 0;
	char line[160];

	__asm__ volatile("mov %%ds, %0" : "=r"(verw_sel));
	spec_policy = spec_decide(edx, edx & CPUID7_EDX_ARCH_CAPABILITIES ?
				  rdmsr(MSR_IA32_ARCH_CAPABILITIES) : 0);
	spec_describe(&spec_policy, line, sizeof(line));
	printk("perfvisor: speculation: %s\n", line);
}

void spec_before_entry(void)
{
	if (spec_policy.l1d_flush_on_entry)
		wrmsr(MSR_IA32_FLUSH_CMD, 1);
	else if (spec_policy.verw_on_entry)
		__asm__ volatile("verw %0" : : "m"(verw_sel) : "cc");
}

void spec_domain_switch(void)
{
	if (spec_policy.ibpb_on_domain_switch)
		wrmsr(MSR_IA32_PRED_CMD, 1);
}
