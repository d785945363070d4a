/* The hypervisor proper, entered once the boot path has a console, descriptor tables, options and memory. */
#ifndef PERFVISOR_HV_HV_H
#define PERFVISOR_HV_HV_H

#include <stdint.h>

struct mb_boot_info;
struct pcpu;

/* The TSC when boot/entry.S began: the start of the boot-cost figure. */
extern uint64_t boot_entry_tsc;

/* cpu_init is the boot path's per-CPU start-up, which each AP runs first (boot/cpu_init.c). */
__attribute__((noreturn)) void hv_main(const struct mb_boot_info *info,
				       void (*cpu_init)(struct pcpu *p));

#endif
