/* Physical PMU MSR access for the arch backend, through the fault-tolerant accessors of boot/. */
#include "lib/cpu.h"
#include "pmu/pmu_hw.h"

int pmu_hw_rdmsr(uint32_t msr, uint64_t *val)
{
	return rdmsr_safe(msr, val);
}

int pmu_hw_wrmsr(uint32_t msr, uint64_t val)
{
	return wrmsr_safe(msr, val);
}
