/* Unit tests for hv/vmx_msr_bitmap.c: the VMX MSR bitmap passes exactly the MSR table's MSR_PASS rows. */
#include <stdio.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/msr_table.c"
#include "hv/vmx_msr_bitmap.c"

static uint8_t bm[VMX_MSR_BITMAP_SIZE];

/* SDM Vol. 3C 25.6.9, written again as the oracle: bit set = the access exits. */
static bool exits(uint32_t msr, bool write)
{
	unsigned off = (write ? 2048 : 0) + (msr >= 0xC0000000u ? 1024 : 0) + (msr & 0x1FFF) / 8;

	return bm[off] >> (msr & 7) & 1;
}

static bool table_passes(uint32_t msr)
{
	const struct msr_row *r = msr_lookup(msr);

	return r && r->kind == MSR_PASS;
}

/* Every MSR the bitmap has a bit for, in both ranges. */
static void agree(void)
{
	static const uint32_t base[] = { 0, 0xC0000000u };
	unsigned wrong_read = 0, wrong_write = 0, passed = 0;

	for (unsigned b = 0; b < 2; b++) {
		for (uint32_t msr = base[b]; msr <= base[b] + 0x1FFF; msr++) {
			bool pass = table_passes(msr);

			if (exits(msr, false) == (pass || msr == MSR_IA32_TSC)) {
				printf("# MSR 0x%x: RDMSR %s\n", msr, pass ? "exits" : "passes");
				wrong_read++;
			}
			if (exits(msr, true) == pass) {
				printf("# MSR 0x%x: WRMSR %s\n", msr, pass ? "exits" : "passes");
				wrong_write++;
			}
			passed += pass;
		}
	}
	check(wrong_read == 0, "RDMSR passes exactly for the table's MSR_PASS rows and IA32_TSC "
	      "(%u differ)", wrong_read);
	check(wrong_write == 0, "WRMSR passes exactly for the table's MSR_PASS rows (%u differ)",
	      wrong_write);
	/* SYSENTER_CS/ESP/EIP, STAR/LSTAR/CSTAR/FMASK, FS_BASE/GS_BASE/KERNEL_GS_BASE. */
	check(passed == 10, "10 MSRs are passed through (%u)", passed);
}

static void rows_covered(void)
{
	unsigned outside = 0;

	for (unsigned i = 0; i < msr_table_len; i++)
		if (msr_table[i].kind == MSR_PASS &&
		    !(msr_table[i].last <= 0x1FFF ||
		      (msr_table[i].first >= 0xC0000000u && msr_table[i].last <= 0xC0001FFFu)))
			outside++;
	check(outside == 0, "every MSR_PASS row lies where the bitmap has bits (else it would "
	      "exit, then #GP)");
}

static void known_bits(void)
{
	unsigned x2apic_pass = 0;

	/* The guest's x2APIC is the virtual APIC: no access may reach the host's (0x800-0x8FF). */
	for (uint32_t msr = 0x800; msr <= 0x8FF; msr++)
		x2apic_pass += vmx_msr_bitmap_passes(bm, msr, false) +
			       vmx_msr_bitmap_passes(bm, msr, true);
	check(x2apic_pass == 0 && bm[0x100] == 0xFF && bm[2048 + 0x11F] == 0xFF,
	      "every RDMSR and WRMSR of an x2APIC MSR exits (%u pass)", x2apic_pass);
	/*
	 * MSRs 0xC0000080-87 share byte 1024 + 0x10 (read) and 3072 + 0x10 (write): EFER exits,
	 * STAR, LSTAR, CSTAR, FMASK pass, 0xC0000085-87 exit: 0b11100001.
	 */
	check(bm[1040] == 0xE1 && bm[3088] == 0xE1, "MSRs 0xC0000080-87: only STAR, LSTAR, CSTAR "
	      "and FMASK pass, in both high quarters (0x%x, 0x%x)", bm[1040], bm[3088]);
	/* IA32_TSC 0x10: byte 2 bit 0 read clear, byte 2050 bit 0 write set. */
	check(!(bm[2] & 1) && (bm[2050] & 1), "IA32_TSC: RDMSR passes, WRMSR exits");
	check(vmx_msr_bitmap_passes(bm, 0x174, true) && !vmx_msr_bitmap_passes(bm, 0x1D9, false) &&
	      !vmx_msr_bitmap_passes(bm, 0x40000000u, false),
	      "vmx_msr_bitmap_passes: SYSENTER_CS write passes, DEBUGCTL and MSRs outside the "
	      "ranges exit");
}

int main(void)
{
	memset(bm, 0, sizeof(bm));
	check(vmx_msr_bitmap_fill(bm), "the bitmap is filled from the table");
	agree();
	rows_covered();
	known_bits();
	return unit_summary();
}
