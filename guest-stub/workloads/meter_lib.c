/* counters=pv-a, pv-i and hvm: the user library's counters over the guest kernel's PMU driver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/kernel/pmu.h"
#include "guest-stub/workloads/meter.h"

#define KPMU_ARGS_MAX	32
#define IMODE_PERIOD	(1ull << 47)	/* by default i-mode counters never overflow in a window */

/*
 * iperiod=N: instructions and branches overflow every N events. Not cycles: under hybrid
 * accounting they take the hypervisor's ticks, and a notification's handling outlasts a short
 * period, so the counter would overflow again before the handler returned, for ever.
 */
static uint64_t imode_period = IMODE_PERIOD;

/* Counter k counts papi_events[k]: the PAPI preset, or the event select one layer down. */
static const struct {
	int preset;
	unsigned evtsel_event;
	enum wl_event event;
} papi_events[] = {
	{ PAPI_TOT_INS, PVC_EV_INSTRUCTIONS, WL_INSTRUCTIONS },
	{ PAPI_BR_INS, PVC_EV_BRANCHES, WL_BRANCHES },
	{ PAPI_TOT_CYC, PVC_EV_CYCLES, WL_CYCLES },
};

#define NCOUNTERS	(sizeof(papi_events) / sizeof(papi_events[0]))

/* The driver takes mode=pv|hvm from its arguments: the guest's, with the meter's mode last. */
static bool driver_init(int argc, char **argv, const char *mode)
{
	char *args[KPMU_ARGS_MAX + 1];
	int n = 0;

	for (int i = 0; i < argc && n < KPMU_ARGS_MAX; i++)
		args[n++] = argv[i];
	args[n++] = (char *)mode;
	return kpmu_init(n, args);
}

static bool pv_setup(int argc, char **argv)
{
	return driver_init(argc, argv, "mode=pv");
}

/* pv-i: the paravirtual driver, and iperiod= so that the validation's counts cross overflows. */
static bool imode_setup(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "iperiod=", 8) == 0)
			imode_period = strtoull(argv[i] + 8, NULL, 0);
	return pv_setup(argc, argv);
}

static bool hvm_setup(int argc, char **argv)
{
	return driver_init(argc, argv, "mode=hvm");
}

static bool papi_open(struct wl_meter_state *s)
{
	if (papi_create_eventset(&s->set) != PAPI_OK)
		return false;
	for (unsigned k = 0; k < NCOUNTERS; k++)
		if (papi_add_event(&s->set, papi_events[k].preset) != PAPI_OK)
			return false;
	return true;
}

static void papi_values(struct wl_meter_state *s, const long long *counts,
			uint64_t values[WL_NEVENTS])
{
	uint64_t v[PV_NVALUES];

	pvc_read(s->set.self, v);
	values[WL_TSC] = v[PV_TSC];
	for (unsigned k = 0; k < NCOUNTERS; k++)
		values[papi_events[k].event] = (uint64_t)counts[k];
}

static void papi_start_window(struct wl_meter_state *s)
{
	papi_start(&s->set);
}

/*
 * The direct read, one layer down: a second sample (papi_read() and then the TSC) would put
 * its retries after the first one's, and the read's own length must not vary (microbench.c).
 */
static void papi_read_window(struct wl_meter_state *s, uint64_t values[WL_NEVENTS])
{
	uint64_t v[PV_NVALUES];

	pvc_read(s->set.self, v);
	values[WL_TSC] = v[PV_TSC];
	for (unsigned k = 0; k < NCOUNTERS; k++)
		values[papi_events[k].event] = v[k];
}

/* Everything after the stop's system call is outside the window. */
static void papi_stop_window(struct wl_meter_state *s, uint64_t values[WL_NEVENTS])
{
	long long counts[NCOUNTERS];

	papi_stop(&s->set, counts);
	papi_values(s, counts, values);
}

const struct wl_meter wl_meter_pv_a = {
	.name = "pv-a",
	.ring = KTHREAD_USER,
	.setup = pv_setup,
	.open = papi_open,
	.start = papi_start_window,
	.read = papi_read_window,
	.stop = papi_stop_window,
};

const struct wl_meter wl_meter_hvm = {
	.name = "hvm",
	.ring = KTHREAD_USER,
	.setup = hvm_setup,
	.open = papi_open,
	.start = papi_start_window,
	.read = papi_read_window,
	.stop = papi_stop_window,
};

/* pv-i goes one layer down, to the perfctr-like calls: PAPI samples one event per set. */
static bool imode_open(struct wl_meter_state *s)
{
	struct pv_control *c = &s->control;

	if (papi_create_eventset(&s->set) != PAPI_OK)
		return false;
	memset(c, 0, sizeof(*c));
	c->ncounters = NCOUNTERS;
	c->imode_mask = (1u << NCOUNTERS) - 1;
	for (unsigned k = 0; k < NCOUNTERS; k++) {
		c->evtsel[k] = pvc_evtsel(papi_events[k].evtsel_event, PVC_USR);
		c->ireset[k] = pvc_ireset(papi_events[k].event == WL_CYCLES ? IMODE_PERIOD :
					  imode_period);
	}
	return true;
}

static void imode_start(struct wl_meter_state *s)
{
	pvc_control(&s->control);
}

static void imode_stop(struct wl_meter_state *s, uint64_t values[WL_NEVENTS])
{
	uint64_t v[PV_NVALUES];

	pvc_stop();
	pvc_read(s->set.self, v);
	values[WL_TSC] = v[PV_TSC];
	for (unsigned k = 0; k < NCOUNTERS; k++)
		values[papi_events[k].event] = pvc_ievents(s->set.self, k);
}

const struct wl_meter wl_meter_pv_i = {
	.name = "pv-i",
	.ring = KTHREAD_USER,
	.setup = imode_setup,
	.open = imode_open,
	.start = imode_start,
	.stop = imode_stop,
};
