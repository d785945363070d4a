/* Per physical CPU state: descriptor tables, VMXON region, run queue, found through GS. */
#ifndef PERFVISOR_HV_PCPU_H
#define PERFVISOR_HV_PCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "hv/runq.h"

#define MAX_PCPUS	8

struct vcpu;
struct domain;

struct pcpu {
	struct pcpu *self;		/* at offset 0: %gs:0 gives the pcpu */
	unsigned index;
	uint32_t apic_id;
	volatile bool online;
	uint64_t vmxon_pa;
	struct vcpu *loaded;		/* whose VMCS is current on this CPU */
	struct vcpu *running;		/* the VCPU this CPU is executing now, if any */
	volatile bool idle;		/* nothing to run: it may halt until a kick */
	const struct domain *last_dom;	/* whose VCPU ran here last (speculation barriers) */
	struct runq rq;			/* the VCPUs assigned here */
	uint64_t switches, migrations_in;
	uint64_t switch_tsc, switch_pmu_tsc;	/* host TSC in switch_in + switch_out; the PMU's part */
	uint64_t idle_tsc;		/* host TSC spent with nothing to run */
	uint64_t idle_halts;		/* idle waits spent in HLT (hv/irq.c) */
};

extern struct pcpu pcpus[MAX_PCPUS];
extern unsigned num_pcpus;

static inline struct pcpu *this_pcpu(void)
{
	struct pcpu *p;

	__asm__ volatile("mov %%gs:0, %0" : "=r"(p));
	return p;
}

#endif
