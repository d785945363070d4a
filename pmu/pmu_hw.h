/* The physical PMU's MSRs as the arch backend reaches them (unit tests link a modelled PMU). */
#ifndef PERFVISOR_PMU_PMU_HW_H
#define PERFVISOR_PMU_PMU_HW_H

#include <stdint.h>

/* 0 on success, -1 if the access raised #GP (nothing read or written). */
int pmu_hw_rdmsr(uint32_t msr, uint64_t *val);
int pmu_hw_wrmsr(uint32_t msr, uint64_t val);

#endif
