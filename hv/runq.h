/* Bounded per-PCPU run queues: add, remove and move VCPUs without ever overfilling, and place a domain. */
#ifndef PERFVISOR_HV_RUNQ_H
#define PERFVISOR_HV_RUNQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/spinlock.h"

/* VCPUs one PCPU's queue holds: MAX_DOMAINS domains of DOM_VCPUS_MAX VCPUs do not fit on one. */
#define MAX_RUNQ	64

struct vcpu;

/* Round-robin queue of the VCPUs assigned to one PCPU; other PCPUs add under the lock. */
struct runq {
	struct spinlock lock;
	struct vcpu *v[MAX_RUNQ];
	unsigned len, next;
};

/* Appends v; false (and nothing changes) when the queue is full. */
bool runq_add(struct runq *q, struct vcpu *v);
/* Takes v off q if it is there. */
void runq_remove(struct runq *q, struct vcpu *v);
/* Moves v from one queue to another with both locked; false (v stays) when `to` is full. */
bool runq_move(struct runq *from, struct runq *to, struct vcpu *v);

/*
 * Chooses a PCPU for each of a domain's n VCPUs. len[p] is how many VCPUs PCPU p's queue holds
 * now and online[p] whether it runs, for p < npcpus <= MAX_PCPUS. npin 0: unpinned, round
 * robin from *next over the online PCPUs with room; npin 1: all on pin[0]; else VCPU i on
 * pin[i]. Returns true with pc[0..n) filled and *next advanced, or false with the reason in
 * why (nothing changes).
 */
bool runq_plan(const unsigned *len, const bool *online, unsigned npcpus, unsigned n,
	       const uint32_t *pin, unsigned npin, unsigned *next, unsigned *pc, char *why,
	       size_t why_size);

#endif
