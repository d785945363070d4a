/* Unit tests for hv/cpuid_table.c: every feature bit follows the table; CPUID and MSRs agree. */
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/cpuid_table.c"
#include "hv/msr_table.c"

static const char *reg_name[] = { "EAX", "EBX", "ECX", "EDX" };

static const struct cpuid_feature *row_of(uint32_t leaf, uint32_t sub, enum cpuid_reg reg,
					  unsigned bit)
{
	for (unsigned i = 0; i < cpuid_feature_count; i++) {
		const struct cpuid_feature *f = &cpuid_features[i];

		if (f->leaf == leaf && f->sub == sub && f->reg == reg && f->bit == bit)
			return f;
	}
	return NULL;
}

/* Every bit of every feature register: shown exactly as its row says, cleared without one. */
static void walk_bits(void)
{
	unsigned wrong = 0, offered = 0;

	for (unsigned i = 0; i < cpuid_feature_reg_count; i++) {
		const struct cpuid_feature_reg *r = &cpuid_feature_regs[i];

		for (unsigned bit = 0; bit < 32; bit++) {
			const struct cpuid_feature *f = row_of(r->leaf, r->sub, r->reg, bit);
			uint32_t host_all = ~0u, host_none = 0, no_pmu = ~0u;
			bool want_all = f && f->offer != CPUID_HIDDEN;
			bool want_none = f && (f->offer == CPUID_ALWAYS || f->offer == CPUID_IF_VPMU);
			bool want_no_pmu = f && (f->offer == CPUID_ALWAYS || f->offer == CPUID_HOST);

			cpuid_filter(r->leaf, r->sub, r->reg, true, &host_all);
			cpuid_filter(r->leaf, r->sub, r->reg, true, &host_none);
			cpuid_filter(r->leaf, r->sub, r->reg, false, &no_pmu);
			offered += want_all;
			if (!!(host_all >> bit & 1) != want_all || !!(host_none >> bit & 1) != want_none ||
			    !!(no_pmu >> bit & 1) != want_no_pmu) {
				printf("# leaf 0x%x.%u %s bit %u (%s) is wrong\n", r->leaf, r->sub,
				       reg_name[r->reg], bit, f ? f->name : "no row");
				wrong++;
			}
		}
	}
	check(wrong == 0, "every bit of the %u feature registers follows the table (%u offered)",
	      cpuid_feature_reg_count, offered);
}

static void rows_well_formed(void)
{
	unsigned bad = 0;

	for (unsigned i = 0; i < cpuid_feature_count; i++) {
		const struct cpuid_feature *f = &cpuid_features[i];
		bool in_reg = false;

		for (unsigned j = 0; j < cpuid_feature_reg_count; j++)
			in_reg |= cpuid_feature_regs[j].leaf == f->leaf &&
				  cpuid_feature_regs[j].sub == f->sub && cpuid_feature_regs[j].reg == f->reg;
		if (!in_reg || f->bit > 31 || row_of(f->leaf, f->sub, f->reg, f->bit) != f ||
		    (f->offer == CPUID_HIDDEN) != (f->why != NULL)) {
			printf("# row %s is malformed\n", f->name);
			bad++;
		}
	}
	check(bad == 0, "each row is one bit of a feature register, and each hidden one says why");
}

/* An offered bit's MSR is in the MSR table and readable; a hidden bit's MSR #GPs. */
static void msrs_agree(void)
{
	struct msr_env env = { .vpmu = true, .tsc_aux = true };
	struct msr_vcpu m;
	unsigned bad = 0, n = 0;

	msr_vcpu_init(&m);
	for (unsigned i = 0; i < cpuid_feature_count; i++) {
		const struct cpuid_feature *f = &cpuid_features[i];
		const struct msr_row *row;
		uint64_t val;

		if (!f->msr)
			continue;
		n++;
		row = msr_lookup(f->msr);
		if (f->offer == CPUID_HIDDEN ? row != NULL :
		    !row || msr_emul_read(&m, &env, f->msr, &val) == MSR_FAULT) {
			printf("# %s (%s) and MSR 0x%x disagree\n", f->name,
			       f->offer == CPUID_HIDDEN ? "hidden" : "offered", f->msr);
			bad++;
		}
	}
	check(bad == 0, "CPUID and the MSR table agree on the %u MSRs features bring", n);
}

static void named_rules(void)
{
	uint32_t v = ~0u;

	cpuid_filter(1, 0, CPUID_EDX, true, &v);
	check(!(v & (1u << 21)), "CPUID.1:EDX.DS is clear (IA32_DS_AREA #GPs)");
	check(!msr_lookup(0x600), "IA32_DS_AREA is not in the MSR table");
	v = ~0u;
	cpuid_filter(7, 0, CPUID_EDX, true, &v);
	check(!(v & ((1u << 26) | (1u << 27) | (1u << 29) | (1u << 31))) && !msr_lookup(0x48) &&
	      !msr_lookup(0x10A), "SPEC_CTRL and ARCH_CAPABILITIES: neither the bits nor the MSRs");
	v = 0;
	cpuid_filter(7, 0, CPUID_EBX, false, &v);
	check(v == (1u << 1), "TSC_ADJUST is offered on any host (emulated)");
	v = ~0u;
	cpuid_filter(1, 0x1234, CPUID_ECX, false, &v);
	check(!(v & (1u << 5)) && (v & (1u << 31)),
	      "leaf 1 is filtered whatever ECX holds (no subleaves): VMX clear, hypervisor set");
	v = 0;
	cpuid_filter(1, 0, CPUID_ECX, false, &v);
	check((v & (1u << 21)) && msr_lookup(0x802) && msr_lookup(0x802)->kind == MSR_APIC,
	      "x2APIC is offered on any host (the virtual APIC's mode), its MSRs are the vAPIC's");
	v = ~0u;
	cpuid_filter(7, 1, CPUID_EBX, true, &v);
	check(v == 0, "leaf 7 subleaf 1 offers nothing");
	v = 0x12345678;
	check(!cpuid_filter(1, 0, CPUID_EBX, true, &v) && v == 0x12345678,
	      "a register that holds no features is left alone");
}

int main(void)
{
	walk_bits();
	rows_well_formed();
	msrs_agree();
	named_rules();
	return unit_summary();
}
