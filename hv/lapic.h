/* The host's own local APIC (xAPIC MMIO): IPIs for CPU start-up, EOI, and the host LVTPC. */
#ifndef PERFVISOR_HV_LAPIC_H
#define PERFVISOR_HV_LAPIC_H

#include <stdint.h>

#include "include/x86/apic.h"

extern uint64_t lapic_base;

static inline void lapic_write(unsigned reg, uint32_t val)
{
	*(volatile uint32_t *)(lapic_base + reg) = val;
}

static inline uint32_t lapic_read(unsigned reg)
{
	return *(volatile uint32_t *)(lapic_base + reg);
}

#endif
