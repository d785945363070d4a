/* The PAPI-shaped layer: presets as event selects on the low level, overflow handlers run late. */
#include <string.h>

#include "guest-stub/lib/papi.h"

static const unsigned preset_event[PAPI_PRESETS] = {
	[PAPI_TOT_INS] = PVC_EV_INSTRUCTIONS,
	[PAPI_TOT_CYC] = PVC_EV_CYCLES,
	[PAPI_BR_INS] = PVC_EV_BRANCHES,
};

int papi_create_eventset(struct papi_eventset *set)
{
	memset(set, 0, sizeof(*set));
	set->self = pvc_open();
	return set->self ? PAPI_OK : PAPI_ESYS;
}

static int index_of(const struct papi_eventset *set, int event)
{
	for (unsigned k = 0; k < set->count; k++)
		if (set->events[k] == event)
			return (int)k;
	return -1;
}

int papi_add_event(struct papi_eventset *set, int event)
{
	unsigned k = set->count;

	if (set->running || event < 0 || event >= PAPI_PRESETS)
		return PAPI_EINVAL;
	if (k == PAPI_MAX_EVENTS || index_of(set, event) >= 0)
		return PAPI_ECNFLCT;
	set->events[k] = event;
	set->control.evtsel[k] = pvc_evtsel(preset_event[event], PVC_USR);
	set->control.ncounters = ++set->count;
	return PAPI_OK;
}

int papi_overflow(struct papi_eventset *set, int event, uint64_t threshold,
		  papi_overflow_handler handler)
{
	int k = index_of(set, event);

	if (set->running || k < 0 || !threshold || threshold >> 48)
		return PAPI_EINVAL;
	if (set->control.imode_mask)
		return PAPI_ECNFLCT;
	set->control.imode_mask |= 1u << k;
	set->control.ireset[k] = pvc_ireset(threshold);
	set->handler = handler;
	return PAPI_OK;
}

int papi_start(struct papi_eventset *set)
{
	if (set->running || !set->count)
		return PAPI_EINVAL;
	if (pvc_control(&set->control) < 0)
		return PAPI_ESYS;
	set->dispatched = 0;
	set->running = true;
	return PAPI_OK;
}

/* Hands the overflows not seen yet to the handler; RIPs older than the kernel's ring are 0. */
static void dispatch(struct papi_eventset *set)
{
	const struct kpmu_thread *t = set->self;
	uint64_t n = t->nrips;

	for (; set->handler && set->dispatched < n; set->dispatched++) {
		uint64_t j = set->dispatched;

		set->handler(set, set->events[__builtin_ctz(set->control.imode_mask)],
			     n - j <= KPMU_RIPS ? t->rips[j % KPMU_RIPS] : 0);
	}
}

/* The set's events from the values of its counters (v[k] for event k). */
static void store(const struct papi_eventset *set, const uint64_t *v, long long *values)
{
	for (unsigned k = 0; k < set->count; k++)
		values[k] = (long long)v[k];
}

int papi_read(struct papi_eventset *set, long long *values)
{
	uint64_t v[PV_NVALUES];

	if (!set->running)
		return PAPI_EINVAL;
	/*
	 * i-mode values are the kernel's: one system call gives every value as of that call. A
	 * set without them is read directly, with no system call.
	 */
	if (set->control.imode_mask) {
		if (pvc_iread(v) < 0)
			return PAPI_ESYS;
	} else {
		pvc_read(set->self, v);
	}
	dispatch(set);
	store(set, v, values);
	return PAPI_OK;
}

int papi_stop(struct papi_eventset *set, long long *values)
{
	uint64_t v[PV_NVALUES];

	if (!set->running)
		return PAPI_EINVAL;
	if (pvc_stop() < 0)
		return PAPI_ESYS;
	set->running = false;
	dispatch(set);
	/* Stopped, the thread's values stay as the stop left them. */
	pvc_read(set->self, v);
	for (unsigned k = 0; k < set->count; k++)
		if (set->control.imode_mask >> k & 1)
			v[k] = pvc_ievents(set->self, k);
	store(set, v, values);
	return PAPI_OK;
}
