/* Unit tests for hv/msr_table.c: the MSRs a guest may touch and those emulated per VCPU. */
#include "tests/unit/unit.h"
#include "hv/msr_table.c"

static const struct msr_env with_all = { .vpmu = true, .tsc_aux = true };
static const struct msr_env with_none = { .vpmu = false, .tsc_aux = false };

static void table_shape(void)
{
	bool ok = true;

	for (unsigned i = 0; i < msr_table_len; i++) {
		const struct msr_row *r = &msr_table[i];

		ok &= r->first <= r->last && r->name && r->kind != MSR_GP;
		if (i)
			ok &= msr_table[i - 1].last < r->first;
	}
	check(ok, "the %u rows are sorted, disjoint and named", msr_table_len);
}

static void kinds(void)
{
	static const struct { uint32_t msr; enum msr_kind kind; } want[] = {
		{ 0x10, MSR_EMUL }, { 0x1B, MSR_VMCS }, { 0x3B, MSR_EMUL }, { 0x174, MSR_PASS },
		{ 0x176, MSR_PASS }, { 0x179, MSR_EMUL }, { 0x17A, MSR_EMUL }, { 0x1A0, MSR_EMUL },
		{ 0x277, MSR_VMCS }, { 0xC1, MSR_PMU }, { 0x186, MSR_PMU }, { 0x38F, MSR_PMU },
		{ 0xC0000080u, MSR_VMCS }, { 0xC0000082u, MSR_PASS }, { 0xC0000102u, MSR_PASS },
		{ 0xC0000103u, MSR_EMUL }, { 0x800, MSR_APIC }, { 0x802, MSR_APIC },
		{ 0x830, MSR_APIC }, { 0x8FF, MSR_APIC },
	};
	/* Architectural MSRs of features perfvisor does not offer: each must #GP. */
	static const uint32_t gp[] = {
		0x48 /* SPEC_CTRL */, 0x49 /* PRED_CMD */, 0xFE /* MTRRCAP */, 0x10A /* ARCH_CAP */,
		0x10B /* FLUSH_CMD */, 0x17B /* MCG_CTL: MCG_CAP.MCG_CTL_P is 0 */,
		0x1D9 /* DEBUGCTL: VMCS guest state, 0; LBR/BTF not offered by WRMSR */,
		0x400 /* MC0_CTL */, 0x47F /* MC31_MISC */, 0x480 /* VMX_BASIC */,
		0x600 /* DS_AREA */, 0x6E0 /* TSC_DEADLINE */, 0x900 /* past the x2APIC's */,
		0xC0000104u, 0xFFFFFFFFu,
	};
	unsigned bad = 0;

	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct msr_row *r = msr_lookup(want[i].msr);

		if (!r || r->kind != want[i].kind) {
			printf("# MSR 0x%x: wrong kind\n", want[i].msr);
			bad++;
		}
	}
	for (unsigned i = 0; i < sizeof(gp) / sizeof(gp[0]); i++) {
		if (msr_lookup(gp[i])) {
			printf("# MSR 0x%x should #GP\n", gp[i]);
			bad++;
		}
	}
	check(bad == 0, "passthrough, VMCS, emulated, PMU and #GP MSRs are where the SDM puts them");
}

static void misc_enable(void)
{
	struct msr_vcpu m;
	uint64_t v, orig, val;

	msr_vcpu_init(&m);
	msr_emul_read(&m, &with_all, 0x1A0, &orig);
	check(orig == 0x1881, "MISC_ENABLE at reset: fast strings, perfmon, no BTS, no PEBS");
	msr_emul_read(&m, &with_none, 0x1A0, &v);
	check(v == 0x1801, "MISC_ENABLE bit 7 clear without a virtual PMU");
	check(msr_emul_write(&m, &with_all, 0x1A0, orig) == MSR_OK,
	      "a write of the value just read never #GPs");
	/* kvm-unit-tests' msr.c value: its writable bits, the read-only ones kept. */
	val = (0x400c50809ull & ~0x1880ull) | (orig & 0x1880);
	check(msr_emul_write(&m, &with_all, 0x1A0, val) == MSR_OK &&
	      msr_emul_read(&m, &with_all, 0x1A0, &v) == MSR_OK && v == val,
	      "the writable bits are kept (0x%llx)", (unsigned long long)val);
	check(msr_emul_write(&m, &with_all, 0x1A0, 0x1) == MSR_OK &&
	      msr_emul_read(&m, &with_all, 0x1A0, &v) == MSR_OK && v == 0x1881,
	      "the read-only bits ignore writes");
	check(msr_emul_write(&m, &with_all, 0x1A0, orig | 2) == MSR_FAULT &&
	      msr_emul_write(&m, &with_all, 0x1A0, orig | (1ull << 35)) == MSR_FAULT,
	      "a reserved bit #GPs");
}

static void mca(void)
{
	struct msr_vcpu m;
	uint64_t v = 1;

	msr_vcpu_init(&m);
	check(msr_emul_read(&m, &with_all, 0x179, &v) == MSR_OK && v == 0,
	      "MCG_CAP: zero banks, no MCG_CTL");
	check(msr_emul_write(&m, &with_all, 0x179, 0) == MSR_FAULT, "MCG_CAP is read-only");
	check(msr_emul_write(&m, &with_all, 0x17A, 5) == MSR_OK &&
	      msr_emul_read(&m, &with_all, 0x17A, &v) == MSR_OK && v == 5 &&
	      msr_emul_write(&m, &with_all, 0x17A, 0) == MSR_OK,
	      "MCG_STATUS keeps RIPV/EIPV/MCIP/LMCE_S and clears with 0");
	check(msr_emul_write(&m, &with_all, 0x17A, 1u << 4) == MSR_FAULT,
	      "MCG_STATUS reserved bits #GP");
}

static void tsc(void)
{
	struct msr_vcpu m;
	uint64_t v;

	msr_vcpu_init(&m);
	/* SDM Vol. 3B 17.17.3: adjust 100 moves the TSC by 100; TSC 1000 at 400 moves both by 600. */
	check(msr_tsc_adjust_write(&m, 100) == 100 && m.tsc_adjust == 100,
	      "a TSC_ADJUST write moves the TSC by the change");
	check(msr_tsc_write(&m, 1000, 400) == 600 && m.tsc_adjust == 700,
	      "a TSC write moves TSC_ADJUST by the same amount");
	check(msr_tsc_adjust_write(&m, 0) == (uint64_t)-700 &&
	      msr_emul_read(&m, &with_all, 0x3B, &v) == MSR_OK && v == 0,
	      "TSC_ADJUST back to 0 takes the TSC back and reads 0");
}

static void tsc_aux(void)
{
	struct msr_vcpu m;
	uint64_t v;

	msr_vcpu_init(&m);
	check(msr_emul_read(&m, &with_none, 0xC0000103u, &v) == MSR_FAULT &&
	      msr_emul_write(&m, &with_none, 0xC0000103u, 0) == MSR_FAULT,
	      "TSC_AUX #GPs without RDTSCP and RDPID");
	check(msr_emul_read(&m, &with_all, 0xC0000103u, &v) == MSR_NOT_EMUL &&
	      msr_emul_write(&m, &with_all, 0xC0000103u, 0xFFFFFFFF) == MSR_NOT_EMUL,
	      "TSC_AUX is the hardware MSR with RDTSCP");
	check(msr_emul_write(&m, &with_all, 0xC0000103u, 1ull << 32) == MSR_FAULT,
	      "TSC_AUX bits 63:32 are reserved");
}

int main(void)
{
	table_shape();
	kinds();
	misc_enable();
	mca();
	tsc();
	tsc_aux();
	return unit_summary();
}
