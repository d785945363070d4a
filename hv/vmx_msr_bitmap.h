/* The VMX MSR bitmap, derived from hv/msr_table.c: which RDMSR/WRMSR exit and which run untouched. */
#ifndef PERFVISOR_HV_VMX_MSR_BITMAP_H
#define PERFVISOR_HV_VMX_MSR_BITMAP_H

#include <stdbool.h>
#include <stdint.h>

#define VMX_MSR_BITMAP_SIZE	4096

/*
 * Fills bm: every MSR exits but the table's MSR_PASS rows (read and write) and reads of
 * IA32_TSC (they honour the TSC offset, SDM Vol. 3C 27.3; writes must exit). False if a
 * MSR_PASS row lies outside the two ranges the bitmap covers (it would exit, then #GP).
 */
bool vmx_msr_bitmap_fill(uint8_t bm[VMX_MSR_BITMAP_SIZE]);

/* Whether bm lets RDMSR (write false) or WRMSR (true) of msr run without an exit. */
bool vmx_msr_bitmap_passes(const uint8_t bm[VMX_MSR_BITMAP_SIZE], uint32_t msr, bool write);

#endif
