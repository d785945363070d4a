/* The meter counters= names, and the TSC-only meter used when there is no PMU at all. */
#include <stdio.h>
#include <string.h>

#include "guest-stub/rt/rt.h"
#include "guest-stub/workloads/meter.h"

const char *const wl_event_names[WL_NEVENTS] = {
	[WL_TSC] = "tsc",
	[WL_INSTRUCTIONS] = "instructions",
	[WL_BRANCHES] = "branches",
	[WL_CYCLES] = "cycles",
};

static const struct wl_meter *const meters[] = {
	&wl_meter_pv_a, &wl_meter_pv_i, &wl_meter_hvm, &wl_meter_raw_msr,
};

static bool tsc_setup(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return true;
}

static bool tsc_open(struct wl_meter_state *s)
{
	(void)s;
	return true;
}

/* Interrupts off in the window, as raw-msr: the thread stays on its VCPU. */
static void tsc_start(struct wl_meter_state *s)
{
	__asm__ volatile("cli" : : : "memory");
	s->tsc = rt_rdtsc();
}

static void tsc_stop(struct wl_meter_state *s, uint64_t values[WL_NEVENTS])
{
	memset(values, 0, WL_NEVENTS * sizeof(values[0]));
	values[WL_TSC] = rt_rdtsc() - s->tsc;
	__asm__ volatile("sti" : : : "memory");
}

const struct wl_meter wl_meter_tsc = {
	.name = "none",
	.ring = KTHREAD_KERNEL,
	.setup = tsc_setup,
	.open = tsc_open,
	.start = tsc_start,
	.stop = tsc_stop,
};

const struct wl_meter *wl_meter_select(int argc, char **argv)
{
	const char *name = "pv-a";

	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "counters=", 9) == 0)
			name = argv[i] + 9;
	for (size_t i = 0; i < sizeof(meters) / sizeof(meters[0]); i++) {
		if (strcmp(meters[i]->name, name) != 0)
			continue;
		if (meters[i]->setup(argc, argv))
			return meters[i];
		printf("meter: NO PMU for counters=%s: the workloads run with the TSC only and "
		       "count nothing else\n", name);
		return &wl_meter_tsc;
	}
	printf("meter: unknown counters=%s\n", name);
	return NULL;
}
