/* How a workload thread counts its events: one interface over the matrix's counter modes. */
#ifndef GUEST_STUB_WORKLOADS_METER_H
#define GUEST_STUB_WORKLOADS_METER_H

#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/lib/papi.h"

/* The events of the validation matrix: all four are counted at once in every window. */
enum wl_event { WL_TSC, WL_INSTRUCTIONS, WL_BRANCHES, WL_CYCLES, WL_NEVENTS };

extern const char *const wl_event_names[WL_NEVENTS];

/* A thread's own measuring state, whichever the meter. */
struct wl_meter_state {
	struct papi_eventset set;	/* pv-a, hvm: the PAPI layer's event set */
	struct pv_control control;	/* pv-i: the perfctr layer's control */
	uint64_t tsc;			/* raw-msr, none: the TSC at start */
};

/*
 * A counter mode. A thread calls open() once, then start(), runs its code, and stop(), which
 * gives the events between the two; every thread has its own logical counts, whatever the
 * switches in between. start() and stop() execute the same instructions every time, so a
 * window's own cost cancels out when two windows are subtracted (workloads.h). read(), where
 * there is one, is the direct read of a running window.
 */
struct wl_meter {
	const char *name;	/* counters=NAME in the guest's arguments, and in the results */
	enum kthread_ring ring;	/* the ring its threads run in */
	/* From main after kernel_init(); false: unusable here. */
	bool (*setup)(int argc, char **argv);
	bool (*open)(struct wl_meter_state *s);
	void (*start)(struct wl_meter_state *s);
	void (*read)(struct wl_meter_state *s, uint64_t values[WL_NEVENTS]);
	void (*stop)(struct wl_meter_state *s, uint64_t values[WL_NEVENTS]);
};

/*
 * The user library over the guest kernel's PMU driver (guest-stub/lib, guest-stub/kernel/pmu.c),
 * counting in user mode as PAPI does. pv-a: a-mode counters, paravirtual (seed 003 4.2.1);
 * pv-i: the same events on i-mode counters that never reach their period (4.2.2); hvm: the
 * driver's trap-and-emulate backend, MSRs switched per thread (4.2.5).
 */
extern const struct wl_meter wl_meter_pv_a, wl_meter_pv_i, wl_meter_hvm;

/*
 * raw-msr: the guest programs the virtual PMU's MSRs itself, with no PMU driver in its
 * kernel: trap-and-emulate as for an unmodified single-task OS. Its threads are kernel threads
 * and keep interrupts off from start() to stop(), so no thread switch falls in a window; the
 * hypervisor's domain switches do, and its save/restore of the VCPU's counters is what counts.
 */
extern const struct wl_meter wl_meter_raw_msr;

/*
 * Without a PMU (natively under QEMU TCG): the TSC only, read directly. Chosen by
 * wl_meter_select() when the asked mode's setup fails, so the workloads still run.
 */
extern const struct wl_meter wl_meter_tsc;

/*
 * The meter counters= names (default pv-a), set up; wl_meter_tsc, after saying so, when that
 * mode finds no PMU to use; NULL for an unknown name.
 */
const struct wl_meter *wl_meter_select(int argc, char **argv);

#endif
