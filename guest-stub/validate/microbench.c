/* Guest: the seed's microbenchmark (seed 003, 5.1.1) in threads, each count against its formula. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/workloads/harness.h"
#include "guest-stub/workloads/workloads.h"

#define BUF_DOUBLES	64	/* a power of two: wl_mbench's index mask is BUF_DOUBLES - 1 */
#define DEFAULT_ITERS	2000
#define DEFAULT_THREADS	2	/* per domain, as in seed 003 5.1.1 */

/*
 * Per thread, four windows. Two exact ones, around wl_mbench(.., 0) and (.., n): their
 * difference is the loop's count, which the formula gives exactly. Two more end with a direct
 * read just before the stop: the instructions from the read's sample to the stop's system call
 * are always the same, so in both windows the read must fall short of the stop by as much.
 * (A direct read that had to retry counts its retries, which is why the exact windows have none.)
 */
enum { EXACT_EMPTY, EXACT_FULL, READ_EMPTY, READ_FULL, WINDOWS };

struct mb_result {
	uint64_t stop[WINDOWS][WL_NEVENTS];
	uint64_t read[WINDOWS][WL_NEVENTS];
	struct wl_kernel_work kernel[WINDOWS];	/* what the kernel's paths added to the window */
};

static struct wl_options opts;
static uint64_t iterations = DEFAULT_ITERS;
static double bufs[WL_THREADS_MAX][BUF_DOUBLES];
static struct mb_result results[WL_THREADS_MAX];

/* Not inlined: every window runs the very same instructions around the call. */
static __attribute__((noinline)) void window(struct wl_thread *self, uint64_t n, unsigned w,
					     bool direct)
{
	const struct wl_meter *m = opts.meter;
	struct mb_result *r = &results[self->index];
	struct wl_kernel_work before = wl_kernel_work();

	m->start(&self->meter);
	wl_mbench(bufs[self->index], BUF_DOUBLES - 1, n);
	if (direct)
		m->read(&self->meter, r->read[w]);
	m->stop(&self->meter, r->stop[w]);
	r->kernel[w] = wl_kernel_work_since(before, wl_kernel_work());
}

static int worker(struct wl_thread *self)
{
	window(self, 0, EXACT_EMPTY, false);
	window(self, iterations, EXACT_FULL, false);
	if (opts.meter->read) {
		window(self, 0, READ_EMPTY, true);
		window(self, iterations / 2, READ_FULL, true);
	}
	return 0;
}

/*
 * judged: an exact expectation the count must meet (or exceed, with vcpu accounting). Time
 * values carry the kernel work of their windows (the full one's less the empty one's).
 */
static void emit(const struct wl_thread *th, const char *event, uint64_t got, uint64_t want,
		 bool exact, bool judged, uint64_t raw)
{
	const struct mb_result *r = &results[th->index];

	wl_emit(&opts, &(struct wl_value){ .workload = "mbench", .event = event, .thread = th,
		.measured = got, .expected = want, .has_expected = exact, .raw = raw,
		.kernel = exact ? (struct wl_kernel_work){ 0, 0 } :
		wl_kernel_work_since(r->kernel[EXACT_EMPTY], r->kernel[EXACT_FULL]) });
	if (judged)
		wl_check(opts.expect_more ? got >= want : got == want,
			 "thread %u: %s: measured %llu, expected %llu%s", th->index, event,
			 (unsigned long long)got, (unsigned long long)want,
			 opts.expect_more ? " or more" : "");
}

/* Instructions and branches are exact; time has no exact expectation (the report compares it). */
static void check_thread(const struct wl_thread *th)
{
	const struct mb_result *r = &results[th->index];
	struct wl_counts e1 = wl_mbench_expect(iterations), e0 = wl_mbench_expect(0);
	const uint64_t expected[WL_NEVENTS] = {
		[WL_INSTRUCTIONS] = e1.instructions - e0.instructions,
		[WL_BRANCHES] = e1.branches - e0.branches,
	};

	if (!wl_check(th->code == 0, "thread %u: counters opened", th->index))
		return;
	for (unsigned ev = 0; ev < WL_NEVENTS; ev++) {
		bool exact = ev == WL_INSTRUCTIONS || ev == WL_BRANCHES;

		if (opts.meter == &wl_meter_tsc && ev != WL_TSC)
			continue;
		emit(th, wl_event_names[ev], r->stop[EXACT_FULL][ev] - r->stop[EXACT_EMPTY][ev],
		     expected[ev], exact, exact, r->stop[EXACT_FULL][ev]);
	}
	if (!opts.meter->read)
		return;
	for (unsigned ev = WL_INSTRUCTIONS; ev <= WL_BRANCHES; ev++) {
		char name[32];
		uint64_t gap = r->stop[READ_EMPTY][ev] - r->read[READ_EMPTY][ev];

		/* With vcpu accounting the gap holds the hypervisor's work too: shown only. */
		snprintf(name, sizeof(name), "%s-direct", wl_event_names[ev]);
		emit(th, name, r->read[READ_FULL][ev], r->stop[READ_FULL][ev] - gap, true,
		     !opts.expect_more, r->stop[READ_FULL][ev]);
	}
}

int main(int argc, char **argv)
{
	struct wl_thread th[WL_THREADS_MAX] = { 0 };

	opts = wl_init("microbench", DEFAULT_THREADS, argc, argv);
	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "n=", 2) == 0)
			iterations = strtoull(argv[i] + 2, NULL, 0);
	for (unsigned k = 0; k < opts.threads; k++)
		th[k].fn = worker;
	wl_run_threads(&opts, th, opts.threads);
	for (unsigned k = 0; k < opts.threads; k++)
		check_thread(&th[k]);
	return report_summary();
}
