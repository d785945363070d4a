/* The hypervisor proper, entered once the boot path has a console, descriptor tables, options and memory. */
#ifndef PERFVISOR_HV_HV_H
#define PERFVISOR_HV_HV_H

struct mb_boot_info;

__attribute__((noreturn)) void hv_main(const struct mb_boot_info *info);

#endif
