/* Paravirtual counters from the guest: a read three ways, the resume hypercall, thread switches. */
#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/bench/bench.h"
#include "guest-stub/kernel/kernel.h"
#include "guest-stub/kernel/pmu.h"
#include "guest-stub/lib/pvc.h"

/*
 * One a-mode counter of cycles at both rings: the soft backend counts cycles from the TSC
 * without single-stepping, so what is timed runs alone.
 */
static const struct pv_control cycles = {
	.ncounters = 1,
	.evtsel = { PVC_EV_CYCLES | PVC_USR | PVC_OS | PVC_EN },
};

static struct bench_series empty, direct, direct_one, rdpmc, series;
static struct bench_series switch_none, switch_skip, switch_resume;

/* Ring 3: the thread's own count from the library with no VM exit, then a trapped RDPMC. */
static int user_reads(void *arg)
{
	const struct kpmu_thread *self = pvc_open();
	uint64_t values[PV_NVALUES];

	(void)arg;
	if (!self || pvc_control(&cycles))
		return 1;
	BENCH_MEASURE(&direct, pvc_read(self, values); bench_keep_stored(values));
	BENCH_MEASURE(&direct_one, bench_keep(pvc_read_one(self, 0)));
	BENCH_MEASURE(&rdpmc, rt_rdpmc(0));
	return 0;
}

/* Two ring-3 threads on VCPU 0 yield to each other; the first one times the round trips. */
struct yielder {
	struct bench_series *out;	/* NULL: the partner, which yields until told to stop */
	const struct pv_control *control;	/* NULL: not counting */
};

static volatile bool partner_stop;

static int yielder(void *arg)
{
	const struct yielder *y = arg;

	if (y->control && (!pvc_open() || pvc_control(y->control)))
		return 1;
	if (!y->out) {
		while (!partner_stop)
			sys_yield();
		return 0;
	}
	BENCH_MEASURE(y->out, sys_yield());
	partner_stop = true;
	return 0;
}

/* Each round trip is two thread switches, each with the driver's suspend and resume. */
static void thread_switches(struct bench_series *out, const struct pv_control *control, bool skip)
{
	struct yielder timer = { out, control }, partner = { NULL, control };
	struct kthread *a, *b;
	int failed;

	kpmu_set_skip(skip);
	partner_stop = false;
	a = kthread_create(yielder, &timer, KTHREAD_USER, 0);
	b = kthread_create(yielder, &partner, KTHREAD_USER, 0);
	if (!a || !b)
		bench_fail("thread-switch", "out of memory for the yielding threads", 0);
	failed = kthread_join(a);
	failed |= kthread_join(b);
	if (failed)
		bench_fail("thread-switch", "a yielding thread could not count", failed);
}

int main(int argc, char **argv)
{
	struct kthread *t;
	uint64_t base;

	kernel_init(argc, argv);
	if (!kpmu_init(argc, argv))
		bench_fail("pv", "no paravirtual PMU", 0);
	t = kthread_create(user_reads, NULL, KTHREAD_USER, 0);
	if (!t || kthread_join(t))
		bench_fail("read-direct", "the ring-3 thread failed", 0);
	/* Hypercalls are for CPL 0: this kernel thread counts the same way and calls them. */
	if (!pvc_open() || pvc_control(&cycles))
		bench_fail("read-hypercall", "the kernel thread could not count", 0);
	BENCH_MEASURE(&empty, );
	base = bench_median(&empty);
	bench_report("read-direct", &direct, base);
	bench_report("read-direct-one", &direct_one, base);
	bench_report("read-rdpmc", &rdpmc, base);
	BENCH_MEASURE(&series, rt_vmcall(HC_PMU_READ, 0, 0));
	bench_report("read-hypercall", &series, base);
	BENCH_MEASURE(&series, rt_vmcall(HC_PMU_RESUME, (uint64_t)&cycles, 0));
	bench_report("resume-hypercall", &series, base);
	pvc_stop();

	thread_switches(&switch_none, NULL, true);
	thread_switches(&switch_skip, &cycles, true);
	thread_switches(&switch_resume, &cycles, false);
	bench_report("thread-switch-none", &switch_none, base);
	bench_report("thread-switch-skip", &switch_skip, base);
	bench_report("thread-switch-resume", &switch_resume, base);
	kpmu_report();
	return 0;
}
