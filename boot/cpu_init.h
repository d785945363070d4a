/* The per-CPU part of start-up that the boot path does for hv/ (on the BSP and on each AP). */
#ifndef PERFVISOR_BOOT_CPU_INIT_H
#define PERFVISOR_BOOT_CPU_INIT_H

struct pcpu;

/* Loads the calling CPU's GDT, TSS (an AP's from the frame allocator) and IDT; GS = p. */
void boot_cpu_init(struct pcpu *p);

#endif
