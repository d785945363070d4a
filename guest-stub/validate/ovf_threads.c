/* Guest: threads sample their instructions in i-mode (overflow_pthreads style), told of each. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/workloads/harness.h"
#include "guest-stub/workloads/workloads.h"

#define BUF_DOUBLES	64
#define DEFAULT_ITERS	1000
#define DEFAULT_PERIOD	400	/* instructions per overflow */
#define DEFAULT_THREADS	4

/* The set: the sampled event first, then two a-mode ones (seed 003 5.1.2: FP_INS and TOT_CYC). */
enum { SAMPLED, CYCLES, BRANCHES, EVENTS };

static const int presets[EVENTS] = { PAPI_TOT_INS, PAPI_TOT_CYC, PAPI_BR_INS };

struct ovf_thread {
	struct papi_eventset set;
	long long empty[EVENTS], full[EVENTS];	/* the windows around wl_mbench(.., 0 / n) */
	uint64_t tsc;
	struct wl_kernel_work kernel;	/* what the kernel's paths added to the full window */
	uint64_t notes[2];	/* notifications in each window */
	uint64_t late;		/* of the full window's, found at a suspension (kernel) */
	uint64_t foreign;	/* handler calls for an event set that is not this thread's */
	uint64_t outside;	/* notifications whose RIP was not in this image's code */
	unsigned window;	/* 0: the empty window runs, 1: the full one */
};

static struct wl_options opts;
static uint64_t iterations = DEFAULT_ITERS, period = DEFAULT_PERIOD;
static double bufs[WL_THREADS_MAX][BUF_DOUBLES];
static struct ovf_thread ovf[WL_THREADS_MAX];
extern char __image_start[], __image_end[];

/* Runs in the thread itself, at its papi_read()/papi_stop(): its own set must be the one. */
static void on_overflow(struct papi_eventset *set, int event, uint64_t address)
{
	struct ovf_thread *t =
		(struct ovf_thread *)((char *)set - offsetof(struct ovf_thread, set));
	unsigned k = (unsigned)(t - ovf);

	if (k >= WL_THREADS_MAX || &ovf[k].set != set || event != PAPI_TOT_INS) {
		__atomic_fetch_add(&ovf[0].foreign, 1, __ATOMIC_RELAXED);
		return;
	}
	t->notes[t->window]++;
	/* 0: an older RIP than the kernel keeps; else it must be this image's code. */
	if (address && (address < (uintptr_t)__image_start || address >= (uintptr_t)__image_end))
		t->outside++;
}

static __attribute__((noinline)) void window(struct wl_thread *self, uint64_t n, long long *values)
{
	struct ovf_thread *t = &ovf[self->index];
	struct wl_kernel_work before = wl_kernel_work();

	papi_start(&t->set);
	wl_mbench(bufs[self->index], BUF_DOUBLES - 1, n);
	papi_stop(&t->set, values);
	t->kernel = wl_kernel_work_since(before, wl_kernel_work());
}

/* The workload alone, natively where there is no PMU to sample with. */
static void unsampled(struct wl_thread *self)
{
	wl_mbench(bufs[self->index], BUF_DOUBLES - 1, iterations);
}

static int worker(struct wl_thread *self)
{
	struct ovf_thread *t = &ovf[self->index];
	uint64_t v[PV_NVALUES];

	if (papi_create_eventset(&t->set) != PAPI_OK)
		return 1;
	for (unsigned e = 0; e < EVENTS; e++)
		if (papi_add_event(&t->set, presets[e]) != PAPI_OK)
			return 2;
	if (papi_overflow(&t->set, PAPI_TOT_INS, period, on_overflow) != PAPI_OK)
		return 3;
	window(self, 0, t->empty);
	t->window = 1;
	window(self, iterations, t->full);
	t->late = t->set.self->notified_late;
	pvc_read(t->set.self, v);
	t->tsc = v[PV_TSC];
	return 0;
}

/* Time values carry the kernel work of the full window, which they measure. */
static void emit(const struct wl_thread *th, const char *event, uint64_t got, uint64_t want,
		 bool exact)
{
	wl_emit(&opts, &(struct wl_value){ .workload = "ovf", .event = event, .thread = th,
		.measured = got, .expected = want, .has_expected = exact, .raw = got,
		.kernel = exact ? (struct wl_kernel_work){ 0, 0 } : ovf[th->index].kernel });
}

static void check_thread(const struct wl_thread *th)
{
	const struct ovf_thread *t = &ovf[th->index];
	struct wl_counts e1 = wl_mbench_expect(iterations), e0 = wl_mbench_expect(0);
	/* The empty window's count is all harness, and shorter than a period: no overflow. */
	uint64_t total = (uint64_t)t->empty[SAMPLED] + e1.instructions - e0.instructions;
	uint64_t got = (uint64_t)t->full[SAMPLED];

	if (!wl_check(th->code == 0, "thread %u: event set made (%d)", th->index, th->code))
		return;
	emit(th, "instructions", got, total, true);
	emit(th, "notifications", t->notes[1], total / period, true);
	emit(th, "branches", (uint64_t)(t->full[BRANCHES] - t->empty[BRANCHES]),
	     e1.branches - e0.branches, true);
	emit(th, "cycles", (uint64_t)t->full[CYCLES], 0, false);
	emit(th, "tsc", t->tsc, 0, false);
	wl_check(got == total, "thread %u: i-mode instructions %llu, expected %llu", th->index,
		 (unsigned long long)got, (unsigned long long)total);
	wl_check(t->notes[0] == 0 && t->notes[1] == total / period,
		 "thread %u: %llu overflow notifications (%llu found at a suspension), expected "
		 "%llu", th->index, (unsigned long long)t->notes[1], (unsigned long long)t->late,
		 (unsigned long long)(total / period));
	wl_check(!t->outside, "thread %u: every notification's RIP in the image's code",
		 th->index);
}

int main(int argc, char **argv)
{
	struct wl_thread th[WL_THREADS_MAX] = { 0 };

	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "n=", 2) == 0)
			iterations = strtoull(argv[i] + 2, NULL, 0);
		else if (strncmp(argv[i], "period=", 7) == 0)
			period = strtoull(argv[i] + 7, NULL, 0);
	}
	opts = wl_init("ovf_threads", DEFAULT_THREADS, argc, argv);
	if (opts.meter == &wl_meter_tsc)
		return wl_run_timed(&opts, "ovf_threads", "ovf", unsampled);
	if (opts.meter->ring != KTHREAD_USER) {
		printf("ovf_threads: counters=%s has no overflow interrupts: use pv-a or hvm\n",
		       opts.meter->name);
		return 1;
	}
	for (unsigned k = 0; k < opts.threads; k++)
		th[k].fn = worker;
	wl_run_threads(&opts, th, opts.threads);
	for (unsigned k = 0; k < opts.threads; k++)
		check_thread(&th[k]);
	wl_check(!ovf[0].foreign, "no notification reached another thread's event set");
	return report_summary();
}
