/* The ACPI tables a domain finds in its RAM: RSDP, RSDT, XSDT, FADT with FACS and DSDT, MADT. */
#ifndef PERFVISOR_HV_ACPI_H
#define PERFVISOR_HV_ACPI_H

#include <stdint.h>

/* ACPI 6.5 5.2.5.1: the RSDP is found on a 16-byte boundary in 0xE0000-0xFFFFF. */
#define ACPI_AREA	0xE0000ul
#define ACPI_AREA_END	0x100000ul

/*
 * Writes the tables into [ACPI_AREA, ACPI_AREA_END) of ram (guest-physical 0..ram_size):
 * one enabled local APIC per VCPU (APIC ID = VCPU index), one I/O APIC, a hardware-reduced
 * FADT (no PM timer or SCI: nothing behind them). Returns NULL, or why not (ram untouched).
 */
const char *acpi_build(void *ram, uint64_t ram_size, unsigned nvcpus);

#endif
