/* The user library's high level, shaped like PAPI's: presets, event sets, overflow. */
#ifndef GUEST_STUB_LIB_PAPI_H
#define GUEST_STUB_LIB_PAPI_H

#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/lib/pvc.h"

#define PAPI_OK		0
#define PAPI_EINVAL	(-1)	/* a bad argument, or a set in the wrong state */
#define PAPI_ECNFLCT	(-2)	/* no counter left, or the event is in the set already */
#define PAPI_ESYS	(-3)	/* the kernel refused */

/* Preset events, counted in user mode (PAPI's default domain). */
enum papi_preset {
	PAPI_TOT_INS,	/* instructions retired */
	PAPI_TOT_CYC,	/* core cycles */
	PAPI_BR_INS,	/* branch instructions retired */
	PAPI_PRESETS,
};

#define PAPI_MAX_EVENTS	PV_PMU_COUNTERS

struct papi_eventset;

/* Told of each overflow, with the user RIP it found the thread at. */
typedef void (*papi_overflow_handler)(struct papi_eventset *set, int event, uint64_t address);

/* Lives in the caller's memory: user threads have no malloc. */
struct papi_eventset {
	int events[PAPI_MAX_EVENTS];
	unsigned count;
	bool running;
	struct pv_control control;
	const struct kpmu_thread *self;
	papi_overflow_handler handler;
	uint64_t dispatched;	/* notifications handed to the handler so far */
};

int papi_create_eventset(struct papi_eventset *set);
int papi_add_event(struct papi_eventset *set, int event);

/*
 * Samples event every threshold events: it becomes an interrupt-mode counter, one per set.
 * There are no signals here: handler runs for each overflow at the next papi_read() or
 * papi_stop().
 */
int papi_overflow(struct papi_eventset *set, int event, uint64_t threshold,
		  papi_overflow_handler handler);

int papi_start(struct papi_eventset *set);

/*
 * values[k] for the set's k-th event. With a sampled event, one system call: every value as of
 * that call. Without, a direct read with no system call.
 */
int papi_read(struct papi_eventset *set, long long *values);

int papi_stop(struct papi_eventset *set, long long *values);

#endif
