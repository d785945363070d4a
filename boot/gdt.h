/* Per-CPU GDT and TSS: VMX needs a non-null host TR (SDM Vol. 3C 26.2.3), and #DF/NMI need their own stack. */
#ifndef PERFVISOR_BOOT_GDT_H
#define PERFVISOR_BOOT_GDT_H

#include <stdint.h>

#include "lib/cpu.h"

#define SEL_CODE	0x08
#define SEL_DATA	0x10
#define SEL_TSS		0x18

struct tss64 {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed));

struct cpu_tables {
	uint64_t gdt[5];
	struct tss64 tss;
	uint8_t ist_stack[4096] __attribute__((aligned(16)));
};

/* Builds and loads this CPU's GDT and TSS. */
void gdt_load_cpu(struct cpu_tables *t);

#endif
