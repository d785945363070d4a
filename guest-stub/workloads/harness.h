/* What the workload guests share: their threads' placement, the test lines and the JSON results. */
#ifndef GUEST_STUB_WORKLOADS_HARNESS_H
#define GUEST_STUB_WORKLOADS_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/workloads/meter.h"

#define WL_THREADS_MAX	8

/* One workload thread: what the guest gives it, its meter, and where it ran. */
struct wl_thread {
	unsigned index;
	int (*fn)(struct wl_thread *self);
	struct wl_meter_state meter;	/* opened before fn runs */
	/* Set when fn returns, from the kernel's struct kthread_uinfo. */
	uint32_t smp_id;	/* the VCPU it ended on */
	uint64_t vcpu_mask;	/* the VCPUs it ran on */
	uint64_t resumes;
	uint64_t sample_retry_tsc;	/* how far its samples' retries moved its TSC */
	int code;		/* fn's return value, -1 when the meter did not open */
};

/* The harness's arguments in the guest's command line, with the kernel's own. */
struct wl_options {
	const struct wl_meter *meter;
	unsigned threads;	/* threads=N, default the guest's */
	bool migrate;		/* migrate=random (the kernel's): threads may change VCPU */
	bool expect_more;	/* expect=more: vcpu accounting adds the hypervisor's work */
};

/* Starts the kernel and picks the meter; exits the guest when either fails. */
struct wl_options wl_init(const char *guest, unsigned threads, int argc, char **argv);

/*
 * Runs th[0..count-1] in the meter's ring and waits for them all. Thread k is pinned to
 * VCPU k % VCPUs (seed 003 5.1.1: taskset), or starts there and may move with migrate=random.
 */
void wl_run_threads(const struct wl_options *o, struct wl_thread *th, unsigned count);

/*
 * report() (guest-stub/lib/report.h) that also returns its verdict, for checks that decide
 * whether the next ones can run; the guest ends with report_summary().
 */
bool wl_check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * One measured value as one JSON object on one line: the domain (its name, or "native"), the
 * mode (the meter), the thread and its VCPU. expected is the exact count, or none
 * (has_expected false) for time.
 */
struct wl_value {
	const char *workload;
	const char *event;
	const char *function;	/* profiles: the function sampled, else NULL */
	const struct wl_thread *thread;	/* NULL: the whole domain */
	uint64_t measured;
	uint64_t expected;
	bool has_expected;
	uint64_t raw;		/* the window as read, before the empty window was taken off */
	/*
	 * Time values: the window's kernel entries and their ticks (struct kthread_uinfo); a
	 * difference of two windows may be negative, and is printed so.
	 */
	struct wl_kernel_work { uint64_t entries, tsc; } kernel;
};

/* The caller's kernel work in counting windows so far (struct kthread_uinfo). */
struct wl_kernel_work wl_kernel_work(void);
/* b - a: the work between two of those. */
struct wl_kernel_work wl_kernel_work_since(struct wl_kernel_work a, struct wl_kernel_work b);

void wl_emit(const struct wl_options *o, const struct wl_value *v);

/*
 * Without a PMU (the TSC meter): runs o->threads threads of work(self), each timed by the
 * TSC, emits one "tsc" value per thread and returns report_summary().
 */
int wl_run_timed(const struct wl_options *o, const char *guest, const char *workload,
		 void (*work)(struct wl_thread *self));

#endif
