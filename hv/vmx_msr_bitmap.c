/* The VMX MSR bitmap, derived from hv/msr_table.c: which RDMSR/WRMSR exit and which run untouched. */
#include "hv/msr_table.h"
#include "hv/vmx_msr_bitmap.h"

/* SDM Vol. 3C 25.6.9: MSRs 0-1FFFH and C0000000H-C0001FFFH have a bit; any other always exits. */
static bool covered(uint32_t msr)
{
	return msr <= 0x1FFF || (msr >= 0xC0000000u && msr <= 0xC0001FFFu);
}

/* Read-low, read-high, write-low, write-high quarters of 1024 bytes, one bit per MSR. */
static unsigned byte_of(uint32_t msr, bool write, unsigned *bit)
{
	*bit = msr & 7;
	return (msr >= 0xC0000000u ? 1024 : 0) + (write ? 2048 : 0) + (msr & 0x1FFF) / 8;
}

static void pass(uint8_t *bm, uint32_t msr, bool write)
{
	unsigned bit, byte = byte_of(msr, write, &bit);

	bm[byte] &= (uint8_t)~(1u << bit);
}

bool vmx_msr_bitmap_passes(const uint8_t bm[VMX_MSR_BITMAP_SIZE], uint32_t msr, bool write)
{
	unsigned bit, byte;

	if (!covered(msr))
		return false;
	byte = byte_of(msr, write, &bit);
	return !(bm[byte] >> bit & 1);
}

bool vmx_msr_bitmap_fill(uint8_t bm[VMX_MSR_BITMAP_SIZE])
{
	bool ok = true;

	for (unsigned i = 0; i < VMX_MSR_BITMAP_SIZE; i++)
		bm[i] = 0xFF;
	/* The table's MSR_PASS rows: the VMCS or vcpu_load()/vcpu_put() switch them per VCPU. */
	for (unsigned i = 0; i < msr_table_len; i++) {
		const struct msr_row *r = &msr_table[i];

		if (r->kind != MSR_PASS)
			continue;
		for (uint64_t msr = r->first; msr <= r->last; msr++) {
			if (!covered((uint32_t)msr)) {
				ok = false;
				continue;
			}
			pass(bm, (uint32_t)msr, false);
			pass(bm, (uint32_t)msr, true);
		}
	}
	/* Reading IA32_TSC honours the TSC offset (SDM Vol. 3C 27.3); writing it must trap. */
	pass(bm, MSR_IA32_TSC, false);
	return ok;
}
