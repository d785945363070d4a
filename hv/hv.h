/* The hypervisor proper, entered once the boot path has a console, descriptor tables and the boot information. */
#ifndef PERFVISOR_HV_HV_H
#define PERFVISOR_HV_HV_H

__attribute__((noreturn)) void hv_main(void);

#endif
