/* The workload guests' common part: start-up, thread placement, test lines, JSON results. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"
#include "guest-stub/workloads/harness.h"

#define WL_CHECK_LEN	160	/* longer than any check's text */

static const struct wl_meter *thread_meter;	/* wl_run_threads()'s, for its threads */

struct wl_options wl_init(const char *guest, unsigned threads, int argc, char **argv)
{
	struct wl_options o = { .threads = threads };

	kernel_init(argc, argv);
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "threads=", 8) == 0)
			o.threads = (unsigned)strtoul(argv[i] + 8, NULL, 0);
		else if (strcmp(argv[i], "migrate=random") == 0)
			o.migrate = true;
		else if (strcmp(argv[i], "expect=more") == 0)
			o.expect_more = true;
	}
	if (o.threads < 1 || o.threads > WL_THREADS_MAX) {
		printf("%s: threads=%u: 1 to %u\n", guest, o.threads, WL_THREADS_MAX);
		rt_exit(1);
	}
	o.meter = wl_meter_select(argc, argv);
	if (!o.meter)
		rt_exit(1);
	printf("%s: counters=%s, %u threads on %u vcpus, %s\n", guest, o.meter->name, o.threads,
	       kernel_ncpus(), o.migrate ? "migrating at random" : "pinned");
	return o;
}

static int thread_main(void *arg)
{
	struct wl_thread *th = arg;
	const volatile struct kthread_uinfo *me = sys_self();

	th->code = thread_meter->open(&th->meter) ? th->fn(th) : -1;
	th->smp_id = me->smp_id;
	th->vcpu_mask = me->vcpu_mask;
	th->resumes = me->resumes;
	th->sample_retry_tsc = me->sample_retry_tsc;
	return th->code;
}

void wl_run_threads(const struct wl_options *o, struct wl_thread *th, unsigned count)
{
	struct kthread *t[WL_THREADS_MAX];

	thread_meter = o->meter;
	for (unsigned k = 0; k < count; k++) {
		th[k].index = k;
		/* Any-CPU threads start on the VCPUs in turn, as the pinned ones are placed. */
		t[k] = kthread_create(thread_main, &th[k], o->meter->ring,
				      o->migrate ? KTHREAD_ANY_CPU : (int)(k % kernel_ncpus()));
		if (!t[k]) {
			printf("harness: out of memory for thread %u\n", k);
			rt_exit(1);
		}
	}
	for (unsigned k = 0; k < count; k++)
		kthread_join(t[k]);
}

bool wl_check(bool ok, const char *fmt, ...)
{
	char what[WL_CHECK_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	report(ok, "%s", what);
	return ok;
}

void wl_emit(const struct wl_options *o, const struct wl_value *v)
{
	char expected[24] = "null", function[64] = "", measured[24];

	if (v->has_expected)
		snprintf(expected, sizeof(expected), "%llu", (unsigned long long)v->expected);
	/* Time is a difference of windows: noise can make it negative, which it then says. */
	snprintf(measured, sizeof(measured), v->has_expected ? "%llu" : "%lld",
		 (unsigned long long)v->measured);
	if (v->function)
		snprintf(function, sizeof(function), ",\"function\":\"%s\"", v->function);
	printf("{\"domain\":\"%s\",\"workload\":\"%s\",\"mode\":\"%s\",\"thread\":%d,\"vcpu\":%d,"
	       "\"vcpus\":%llu,\"resumes\":%llu,\"sample_retry_tsc\":%llu,\"event\":\"%s\"%s,"
	       "\"measured\":%s,\"expected\":%s,\"raw\":%llu,\"window_entries\":%lld,"
	       "\"window_kernel_tsc\":%lld}\n", kernel_domain_name(), v->workload,
	       o->meter->name,
	       v->thread ? (int)v->thread->index : -1, v->thread ? (int)v->thread->smp_id : -1,
	       (unsigned long long)(v->thread ? v->thread->vcpu_mask : 0),
	       (unsigned long long)(v->thread ? v->thread->resumes : 0),
	       (unsigned long long)(v->thread ? v->thread->sample_retry_tsc : 0), v->event, function,
	       measured, expected, (unsigned long long)v->raw,
	       (long long)v->kernel.entries, (long long)v->kernel.tsc);
}

struct wl_kernel_work wl_kernel_work(void)
{
	const volatile struct kthread_uinfo *me = sys_self();

	return (struct wl_kernel_work){ me->window_entries, me->window_kernel_tsc };
}

struct wl_kernel_work wl_kernel_work_since(struct wl_kernel_work a, struct wl_kernel_work b)
{
	return (struct wl_kernel_work){ b.entries - a.entries, b.tsc - a.tsc };
}

static void (*timed_work)(struct wl_thread *self);
static uint64_t timed_tsc[WL_THREADS_MAX];

static int timed_thread(struct wl_thread *self)
{
	uint64_t values[WL_NEVENTS];

	thread_meter->start(&self->meter);
	timed_work(self);
	thread_meter->stop(&self->meter, values);
	timed_tsc[self->index] = values[WL_TSC];
	return 0;
}

int wl_run_timed(const struct wl_options *o, const char *guest, const char *workload,
		 void (*work)(struct wl_thread *self))
{
	struct wl_thread th[WL_THREADS_MAX] = { 0 };

	printf("%s: no PMU: %u threads run the workload timed by the TSC only\n", guest,
	       o->threads);
	timed_work = work;
	for (unsigned k = 0; k < o->threads; k++)
		th[k].fn = timed_thread;
	wl_run_threads(o, th, o->threads);
	for (unsigned k = 0; k < o->threads; k++)
		if (wl_check(th[k].code == 0, "thread %u: ran, timed by the TSC", k))
			wl_emit(o, &(struct wl_value){ .workload = workload, .event = "tsc",
				.thread = &th[k], .measured = timed_tsc[k], .raw = timed_tsc[k] });
	return report_summary();
}
