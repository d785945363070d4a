/* The workload guests' common part: start-up, thread placement, test lines, JSON results. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/rt/rt.h"
#include "guest-stub/workloads/harness.h"

static int checks, failures;
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
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%sok %d - ", ok ? "" : "not ", checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return ok;
}

int wl_finish(const char *guest)
{
	printf("%s: %d checks, %d failed\n", guest, checks, failures);
	return failures;
}

void wl_emit(const struct wl_options *o, const struct wl_value *v)
{
	char expected[24] = "null", function[64] = "";

	if (v->has_expected)
		snprintf(expected, sizeof(expected), "%llu", (unsigned long long)v->expected);
	if (v->function)
		snprintf(function, sizeof(function), ",\"function\":\"%s\"", v->function);
	printf("{\"workload\":\"%s\",\"counters\":\"%s\",\"thread\":%d,\"vcpu\":%d,"
	       "\"vcpus\":%llu,\"resumes\":%llu,\"event\":\"%s\"%s,\"measured\":%llu,"
	       "\"expected\":%s,\"raw\":%llu}\n", v->workload, o->meter->name,
	       v->thread ? (int)v->thread->index : -1, v->thread ? (int)v->thread->smp_id : -1,
	       (unsigned long long)(v->thread ? v->thread->vcpu_mask : 0),
	       (unsigned long long)(v->thread ? v->thread->resumes : 0), v->event, function,
	       (unsigned long long)v->measured, expected, (unsigned long long)v->raw);
}
