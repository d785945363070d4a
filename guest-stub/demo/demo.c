/* Guest: the demo (make run): threads count their own work while both schedulers move them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/lib/pvc.h"
#include "guest-stub/lib/report.h"
#include "guest-stub/workloads/harness.h"
#include "guest-stub/workloads/workloads.h"

#define BUF_DOUBLES	64	/* a power of two: wl_mbench's index mask is BUF_DOUBLES - 1 */
#define DEFAULT_ITERS	600
#define READS		4	/* direct reads whose VM exits a thread counts */
#define READ_ATTEMPTS	16	/* a timer tick or switch among the reads brings exits: again */
#define READ_CLEAN	4	/* undisturbed attempts enough to find the reads' own exits */
/*
 * What a direct read costs in VM exits. pv-a: none, the counts come from the shared page
 * (seed 003 4.2.3). hvm: one per counter it reads, each RDPMC trapped (SDM Vol. 3C 25.1.3,
 * "RDPMC exiting"), and the three counters of the PAPI set (meter_lib.c).
 */
#define HVM_EXITS_PER_READ	3

enum { EMPTY, FULL, WINDOWS };

struct demo_result {
	uint64_t counts[WINDOWS][WL_NEVENTS];
	int64_t read_exits;	/* fewest exits of READS reads over the undisturbed attempts */
	unsigned attempts, clean;
};

static struct wl_options opts;
static uint64_t iterations = DEFAULT_ITERS;
static double bufs[WL_THREADS_MAX][BUF_DOUBLES];
static struct demo_result results[WL_THREADS_MAX];

/* Not inlined: both windows run the very same instructions around the call. */
static __attribute__((noinline)) void window(struct wl_thread *self, uint64_t n, uint64_t *stop)
{
	opts.meter->start(&self->meter);
	wl_mbench(bufs[self->index], BUF_DOUBLES - 1, n);
	opts.meter->stop(&self->meter, stop);
}

/* tsc.start_vcpu moves when the hypervisor deschedules or moves the VCPU (pmu_read.h). */
static uint64_t vcpu_start(const struct kpmu_thread *t)
{
	return PV_LOAD(&pv_area(t->areas, t->counts.smp_id)->tsc.start_vcpu);
}

/*
 * READS direct reads between two probes of this VCPU's exits. Exits other than the second
 * probe's own and the driver's hypercalls are the reads'; an attempt during which a guest tick,
 * a thread switch or a VCPU switch happened is not counted, as those bring exits of their own.
 */
static void read_exits(struct wl_thread *self, struct demo_result *r)
{
	const volatile struct kthread_uinfo *me = sys_self();
	const struct kpmu_thread *t = self->meter.set.self;
	uint64_t values[WL_NEVENTS];

	r->read_exits = -1;
	opts.meter->start(&self->meter);
	for (r->attempts = 0; r->attempts < READ_ATTEMPTS && r->clean < READ_CLEAN; r->attempts++) {
		uint64_t ticks = me->ticks, resumes = me->resumes, start = vcpu_start(t);
		struct kpmu_probe p0, p1;
		int64_t extra;

		pvc_probe(&p0);
		for (unsigned j = 0; j < READS; j++)
			opts.meter->read(&self->meter, values);
		pvc_probe(&p1);
		extra = (int64_t)(p1.exits - p0.exits - 1 - (p1.hypercalls - p0.hypercalls));
		if (me->ticks != ticks || me->resumes != resumes || vcpu_start(t) != start)
			continue;
		r->clean++;
		/* hvm's page never moves: a slice end only adds exits, so keep the fewest. */
		if (r->read_exits < 0 || extra < r->read_exits)
			r->read_exits = extra;
	}
	opts.meter->stop(&self->meter, values);
}

static int worker(struct wl_thread *self)
{
	struct demo_result *r = &results[self->index];

	window(self, 0, r->counts[EMPTY]);
	window(self, iterations, r->counts[FULL]);
	read_exits(self, r);
	return 0;
}

/* One row of the demo's table: one JSON line (the table script reads it) and one test line. */
static void show(const struct wl_thread *th, const char *event, uint64_t got, uint64_t want,
		 uint64_t raw)
{
	char what[48];

	wl_emit(&opts, &(struct wl_value){ .workload = "demo", .event = event, .thread = th,
		.measured = got, .expected = want, .has_expected = true, .raw = raw });
	snprintf(what, sizeof(what), "thread %u: %s", th->index, event);
	report_value(what, got, want);
}

static void judge(const struct wl_thread *th)
{
	const struct demo_result *r = &results[th->index];
	struct wl_counts e1 = wl_mbench_expect(iterations), e0 = wl_mbench_expect(0);
	uint64_t per_read = strcmp(opts.meter->name, "hvm") == 0 ? HVM_EXITS_PER_READ : 0;

	if (!wl_check(th->code == 0, "thread %u: counters opened", th->index))
		return;
	/* The empty window's count is the code around the loop: the difference is the loop's. */
	show(th, "instructions", r->counts[FULL][WL_INSTRUCTIONS] - r->counts[EMPTY][WL_INSTRUCTIONS],
	     e1.instructions - e0.instructions, r->counts[FULL][WL_INSTRUCTIONS]);
	show(th, "branches", r->counts[FULL][WL_BRANCHES] - r->counts[EMPTY][WL_BRANCHES],
	     e1.branches - e0.branches, r->counts[FULL][WL_BRANCHES]);
	if (!wl_check(r->read_exits >= 0, "thread %u: %u reads undisturbed in %u attempts",
		      th->index, READS, r->attempts))
		return;
	/* raw: how many reads the exits are of. */
	show(th, "read-exits", (uint64_t)r->read_exits, READS * per_read, READS);
}

int main(int argc, char **argv)
{
	struct wl_thread th[WL_THREADS_MAX] = { 0 };

	opts = wl_init("demo", 2, argc, argv);
	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "n=", 2) == 0)
			iterations = strtoull(argv[i] + 2, NULL, 0);
	if (!opts.meter->read || opts.meter == &wl_meter_tsc) {
		printf("demo: counters=%s has no direct read: use pv-a or hvm\n", opts.meter->name);
		return 1;
	}
	for (unsigned k = 0; k < opts.threads; k++)
		th[k].fn = worker;
	wl_run_threads(&opts, th, opts.threads);
	for (unsigned k = 0; k < opts.threads; k++)
		judge(&th[k]);
	return report_summary();
}
