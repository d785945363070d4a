/* Who owns which control-register bit: the guest, or the host behind the read shadows. */
#ifndef PERFVISOR_HV_EXIT_CR_H
#define PERFVISOR_HV_EXIT_CR_H

#include <stdint.h>

#include "include/x86/cr.h"

/*
 * Host-owned CR0 bits: NE is fixed in VMX operation, PG changes EFER.LMA and the IA-32e entry
 * control, CD/NW would let a guest run the physical CPU uncached (a neighbour's slowdown).
 */
#define CR0_HOST_MASK	(CR0_NE | CR0_PG | CR0_CD | CR0_NW)

/* The CR4 bits guests may set: their CPUID (hv/exit_cpuid.c) offers these features. */
extern uint64_t cr4_guest_bits;

/* Fills cr4_guest_bits from the host CPUID leaves 1 (ECX) and 7 (EBX) and CR4's fixed-1 bits. */
uint64_t cr4_offered(uint32_t l1_ecx, uint32_t l7_ebx, uint64_t fixed1);
/* The CR0 and CR4 the CPU runs the guest with, for the values the guest asked for. */
uint64_t cr0_real(uint64_t guest);
uint64_t cr4_real(uint64_t guest);

#endif
