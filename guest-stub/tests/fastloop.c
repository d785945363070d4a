/* The exit fast path from a guest: its answers, its exit counts, and slices that still end. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"
#include "include/perfvisor/hypercall.h"
#include "include/x86/pmu_msr.h"

/* Hypercalls in the long loop: about 130 instructions each, many slices of 1 ms. */
#define LOOPS		200000
/*
 * A gap in the guest's TSC (tsc=host) longer than this is the other domain's slice: one
 * iteration costs at most a few thousand ticks even on the ordinary exit path (make bench:
 * every exit below 5,000), while a slice of 1 ms is 1 ms of TSC, over 10^5 ticks on any
 * platform perfvisor runs on (Bochs: one tick per instruction at ~10^8 per second).
 */
#define GAP_TICKS	50000
#define SIGNATURE_EBX	0x66726570	/* "perf" at CPUID 0x40000000 (hv/exit_cpuid.c) */

static inline int64_t vmcall0(uint64_t nr)
{
	int64_t ret;

	__asm__ volatile("vmcall" : "=a"(ret) : "a"(nr) : "memory");
	return ret;
}

int main(void)
{
	uint64_t before, after, t, prev, gaps = 0, wrong = 0;
	struct rt_cpuid_regs r;

	/* Answers of the fast path are the ordinary path's. */
	r = rt_cpuid(0x40000000, 0);
	report(r.ebx == SIGNATURE_EBX, "CPUID 0x40000000 gives the signature (ebx %#x)", r.ebx);
	/* A write that starts nothing stays on the fast path, one that counts leaves it. */
	rt_wrmsr(MSR_IA32_PERFEVTSEL0, 0x1234);
	report(rt_rdmsr(MSR_IA32_PERFEVTSEL0) == 0x1234, "PERFEVTSEL0 reads back what was written");
	rt_wrmsr(MSR_IA32_PERFEVTSEL0, 0);
	/*
	 * Every hypercall is a VM exit, counted as one (HC_VCPU_EXITS, this call included):
	 * at least LOOPS + 1 more exits, whatever else (slice ends, interrupts) came between.
	 */
	before = (uint64_t)vmcall0(HC_VCPU_EXITS);
	prev = rt_rdtsc();
	for (int i = 0; i < LOOPS; i++) {
		wrong += vmcall0(HC_VCPU_ID) != 0;
		t = rt_rdtsc();
		gaps += t - prev > GAP_TICKS;
		prev = t;
	}
	after = (uint64_t)vmcall0(HC_VCPU_EXITS);
	report(!wrong, "HC_VCPU_ID returns VCPU 0 in all %d calls (%llu wrong)", LOOPS,
	       (unsigned long long)wrong);
	report(after - before >= LOOPS + 1, "every hypercall is a counted exit (%llu for %d)",
	       (unsigned long long)(after - before), LOOPS + 1);
	/* The other domain on this PCPU ran in between: the slice timer went on counting. */
	report(gaps >= 2, "the hypercall loop was descheduled %llu times (slices end)",
	       (unsigned long long)gaps);
	return report_summary();
}
