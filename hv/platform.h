/* The boot-time platform report: CPU, VT-x capabilities and the physical PMU. */
#ifndef PERFVISOR_HV_PLATFORM_H
#define PERFVISOR_HV_PLATFORM_H

#include <stdbool.h>

/* Probes and prints; returns false when VT-x is unusable (the reason has been printed). */
bool platform_report(void);

#endif
