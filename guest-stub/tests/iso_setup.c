/* Isolation test guest: two VCPUs race HC_PMU_SETUP (mode=race), or one writes the area while the other sets it up (mode=stale). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/lib/report.h"
#include "include/perfvisor/hypercall.h"
#include "include/perfvisor/pmu.h"

/* One page per VCPU, as HC_PMU_SETUP wants; the kernel maps guest RAM one to one. */
static uint8_t area[2 * PV_PMU_AREA_STRIDE] __attribute__((aligned(4096)));
static volatile unsigned ready, go, setup_done;
static int64_t result[2];
static volatile uint64_t writes_before, writes_after;

static int64_t hc_setup(void)
{
	int64_t ret;

	__asm__ volatile("vmcall" : "=a"(ret) : "a"((uint64_t)HC_PMU_SETUP),
			 "D"((uint64_t)(uintptr_t)area), "S"(2ull) : "memory");
	return ret;
}

/* mode=race: both VCPUs wait for each other, then call SETUP in the same instant. */
static int racer(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;

	__atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < 2)
		;
	result[me] = hc_setup();
	return 0;
}

/*
 * mode=stale: VCPU 1 keeps writing VCPU 1's page while VCPU 0 sets the area up. A write that
 * starts after SETUP returned must fault (the hypervisor ends the domain for it); one that
 * goes through is a stale writable translation left on VCPU 1's PCPU.
 */
static int writer(void *arg)
{
	volatile uint64_t *page = (volatile uint64_t *)(area + PV_PMU_AREA_STRIDE);

	(void)arg;
	__atomic_fetch_add(&ready, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		bool after = __atomic_load_n(&setup_done, __ATOMIC_SEQ_CST);

		page[64] = writes_before + writes_after;
		if (after) {
			writes_after++;
			printf("iso_setup: a write after SETUP returned went through (%llu)\n",
			       (unsigned long long)writes_after);
		} else {
			writes_before++;
		}
	}
	return 0;
}

static int setter(void *arg)
{
	(void)arg;
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < 1)
		;
	/* Let the writer's translation settle in its PCPU's TLB first. */
	while (writes_before < 100000)
		;
	result[0] = hc_setup();
	__atomic_store_n(&setup_done, 1, __ATOMIC_SEQ_CST);
	printf("iso_setup: SETUP returned %lld after %llu writes\n", (long long)result[0],
	       (unsigned long long)writes_before);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned n = kernel_init(argc, argv);
	bool stale = false;
	struct kthread *t[2];

	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "mode=stale"))
			stale = true;
	if (n != 2) {
		report(false, "iso_setup needs 2 VCPUs (has %u)", n);
		return report_summary();
	}
	if (stale) {
		t[1] = kthread_create(writer, NULL, KTHREAD_KERNEL, 1);
		t[0] = kthread_create(setter, NULL, KTHREAD_KERNEL, 0);
		kthread_join(t[0]);
		/* The writer's next write faults and ends the domain: getting here is a failure. */
		for (volatile unsigned long spin = 0; spin < 50000000ul; spin++)
			;
		report(false, "setup: the writer still writes %llu times after SETUP returned",
		       (unsigned long long)writes_after);
		return report_summary();
	}
	for (uintptr_t i = 0; i < 2; i++)
		t[i] = kthread_create(racer, (void *)i, KTHREAD_KERNEL, (int)i);
	for (unsigned i = 0; i < 2; i++)
		kthread_join(t[i]);
	report((result[0] == 0) + (result[1] == 0) == 1 &&
	       (result[0] == -PV_EINVAL) + (result[1] == -PV_EINVAL) == 1,
	       "setup: two VCPUs racing SETUP: one succeeds, the other gets -EINVAL (%lld, %lld)",
	       (long long)result[0], (long long)result[1]);
	return report_summary();
}
