/* Path lengths of trapped operations, measured with RDTSC (exact instruction counts in Bochs with one CPU). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "guest-stub/rt/rt.h"
#include "hv/include/perfvisor_hypercall.h"

#define REPS		301
#define PERFEVTSEL0	0x186
#define PMC0		0xC1

static uint64_t samples[REPS];

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One line per figure: the RDTSC-to-RDTSC span minus the span of an empty measurement. */
static void report(const char *name, uint64_t empty)
{
	qsort(samples, REPS, sizeof(samples[0]), cmp_u64);
	printf("{\"figure\": \"%s\", \"min\": %llu, \"median\": %llu, \"max\": %llu}\n", name,
	       (unsigned long long)(samples[0] - empty),
	       (unsigned long long)(samples[REPS / 2] - empty),
	       (unsigned long long)(samples[REPS - 1] - empty));
}

#define MEASURE(body)							\
	for (int i = 0; i < REPS; i++) {				\
		uint64_t t0 = rt_rdtsc();				\
		body;							\
		samples[i] = rt_rdtsc() - t0;				\
	}

static uint64_t vmcall0(uint64_t nr)
{
	uint64_t ret;

	__asm__ volatile("vmcall" : "=a"(ret) : "a"(nr) : "memory");
	return ret;
}

int main(void)
{
	uint64_t empty;

	MEASURE(__asm__ volatile("" ::: "memory"));
	qsort(samples, REPS, sizeof(samples[0]), cmp_u64);
	empty = samples[REPS / 2];
	MEASURE(vmcall0(HC_VCPU_ID));
	report("null-hypercall", empty);
	MEASURE(rt_rdmsr(PMC0));
	report("rdmsr-pmc0", empty);
	MEASURE(rt_wrmsr(PERFEVTSEL0, 0));
	report("wrmsr-perfevtsel0", empty);
	MEASURE(rt_cpuid(0, 0));
	report("cpuid", empty);
	return 0;
}
