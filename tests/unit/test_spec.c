/* Unit tests for hv/spec.c: the speculation mitigations chosen for each CPU enumeration. */
#include <stdio.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "lib/printk.c"
#include "hv/spec.c"

/* printk.c writes to the console; these tests use only its formatting. */
void con_write(const char *s, size_t len)
{
	(void)s;
	(void)len;
}

static bool is(struct spec_policy p, bool ibpb, bool l1d, bool verw)
{
	return p.ibpb_on_domain_switch == ibpb && p.l1d_flush_on_entry == l1d &&
	       p.verw_on_entry == verw;
}

int main(void)
{
	const uint32_t all = CPUID7_EDX_MD_CLEAR | CPUID7_EDX_IBRS_IBPB | CPUID7_EDX_L1D_FLUSH |
			     CPUID7_EDX_ARCH_CAPABILITIES;
	struct spec_policy p;
	char line[160];

	check(is(spec_decide(0, ~0ull), false, false, false),
	      "nothing enumerated (Bochs): nothing done; ARCH_CAPABILITIES ignored without it");
	check(is(spec_decide(CPUID7_EDX_IBRS_IBPB, 0), true, false, false),
	      "IBRS/IBPB: IBPB at domain switches");
	check(is(spec_decide(all & ~CPUID7_EDX_ARCH_CAPABILITIES, 0), true, true, false),
	      "L1D_FLUSH on an affected CPU: flush before entry, which also clears the buffers");
	check(is(spec_decide(all, ARCH_CAP_SKIP_L1DFL_VMENTRY), true, false, true),
	      "SKIP_L1DFL_VMENTRY: no flush, but VERW for MDS");
	check(is(spec_decide(all, ARCH_CAP_RDCL_NO), true, false, true),
	      "RDCL_NO (not affected by L1TF): no flush, VERW for MDS");
	check(is(spec_decide(all, ARCH_CAP_RDCL_NO | ARCH_CAP_MDS_NO), true, false, false),
	      "RDCL_NO and MDS_NO: neither flush nor VERW");
	check(is(spec_decide(CPUID7_EDX_MD_CLEAR, 0), false, false, true),
	      "MD_CLEAR alone: VERW before entry");
	check(is(spec_decide(CPUID7_EDX_MD_CLEAR | CPUID7_EDX_ARCH_CAPABILITIES, ARCH_CAP_MDS_NO),
		     false, false, false), "MD_CLEAR with MDS_NO: no VERW");
	p = spec_decide(0, 0);
	spec_describe(&p, line, sizeof(line));
	check(!strcmp(line, "IBPB at domain switches no (not enumerated), L1D flush before VM "
		      "entry no, VERW before VM entry no"), "the boot line: %s", line);
	return unit_summary();
}
