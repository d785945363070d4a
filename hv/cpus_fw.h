/* Finds the CPUs' local APIC IDs in the firmware tables: the ACPI MADT, else the Intel MP table. */
#ifndef PERFVISOR_HV_CPUS_FW_H
#define PERFVISOR_HV_CPUS_FW_H

#include <stdbool.h>
#include <stdint.h>

#define FW_CPUS_MAX	64
#define FW_NOTES_MAX	8

/*
 * Physical memory [pa, pa + size) readable at base. In the hypervisor the low 4 GiB are
 * identity-mapped: base = 0, pa = 0, size = 4 GiB. Nothing outside it is ever read.
 */
struct fw_window {
	const uint8_t *base;
	uint64_t pa;
	uint64_t size;
};

/* A firmware structure that was skipped (or a limit that was hit), and where. */
struct fw_note {
	const char *what;	/* e.g. "ACPI RSDT" */
	const char *why;	/* e.g. "bad checksum" */
	uint64_t pa;		/* where; 0 for a search that found nothing */
};

struct fw_cpus {
	unsigned count;			/* usable CPUs recorded in apic_id[] */
	uint32_t apic_id[FW_CPUS_MAX];
	uint64_t not_enabled;		/* bit i: apic_id[i] is only online-capable (ACPI 6.3+) */
	int bsp_index;			/* index of the boot processor in apic_id[], -1 if unknown */
	uint64_t lapic_base;		/* physical address of the local APIC registers */
	const char *source;		/* "ACPI MADT" or "MP table" */
	unsigned dropped;		/* usable CPUs beyond FW_CPUS_MAX, not recorded */
	unsigned nnotes;		/* notes made; only the first FW_NOTES_MAX are kept */
	struct fw_note notes[FW_NOTES_MAX];
};

/*
 * Search the ACPI MADT, then the MP table, for the usable CPUs. Returns NULL on success,
 * otherwise why nothing was found. Either way out->notes says which structures were
 * skipped and why, and whether the CPU list was truncated.
 */
const char *fw_cpus_find(const struct fw_window *w, struct fw_cpus *out);

#endif
