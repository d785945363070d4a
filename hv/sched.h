/* The VCPU scheduler: per-PCPU round-robin run queues, slices on the VMX preemption timer, migration. */
#ifndef PERFVISOR_HV_SCHED_H
#define PERFVISOR_HV_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hv/vapic.h"

struct vcpu;
struct pcpu;

struct sched_options {
	uint64_t slice_us;		/* slice= */
	bool migrate_random;		/* migrate=random */
	uint64_t seed;			/* seed= */
	uint64_t max_cpus;		/* cpus=: how many PCPUs to use */
};

extern struct sched_options sched_opts;
extern uint64_t tsc_khz;
/* Host TSC when the first VCPU was about to enter its guest (the boot-cost figure). */
extern uint64_t first_entry_tsc;

/* Measures the TSC rate against the PIT, for slices given in microseconds. */
void sched_calibrate_tsc(void);
/*
 * Puts a new domain's n VCPUs on run queues (pinned as pin/npin say, else round robin), or
 * none of them with the reason in why: a pin not online, or no room (MAX_RUNQ per PCPU).
 */
bool sched_place(struct vcpu *const *vcpus, unsigned n, const uint32_t *pin, unsigned npin,
		 char *why, size_t why_size);
/* This PCPU's scheduling loop; ends the run when every domain has ended. */
__attribute__((noreturn)) void sched_run(void);
/* The guest TSC of v now (host TSC + its offset; the exit's while it stands still). */
uint64_t sched_guest_tsc(struct vcpu *v);
/*
 * tsc=vcpu: the guest's TSC stands still from the soft PMU's stepping exit at host TSC exit_tsc
 * to the next VM entry (sched_tsc_thaw()), so its APIC timer cannot run ahead of the stepped code
 * (docs/linux-guest.md, "Counting the kernel"). Under tsc=host nothing stands still. For each
 * exit the stepper counted as its own (v->step.exits moved), on every exit path.
 */
void sched_tsc_freeze(struct vcpu *v, uint64_t exit_tsc);
/* Last before the VM entry (or at a switch out): v's guest TSC runs again from where it stood. */
void sched_tsc_thaw(struct vcpu *v);

/*
 * The TSC offset that makes a guest TSC frozen at host TSC frozen_at read, at host TSC now, what
 * it read then: the time between leaves the guest's clock (modulo 2^64, as the offset is).
 */
static inline uint64_t sched_thawed_offset(uint64_t offset, uint64_t frozen_at, uint64_t now)
{
	return offset - (now - frozen_at);
}

/*
 * The host TSC a stepping exit's guest TSC stands at: the exit's, or, when the run from the
 * entry at host TSC entry retired insns instructions of a block with no RDTSC in it (insns != 0),
 * the entry's plus one tick an instruction if that is earlier. The guest read no TSC since the
 * entry, so it saw nothing later; the rest of the run's guest-mode time (VM entry and exit, the
 * stepping's breakpoints) is the hypervisor's, like its handling (docs/linux-guest.md).
 */
static inline uint64_t sched_charged_tsc(uint64_t entry, uint64_t exit, uint64_t insns)
{
	return insns && insns < exit - entry ? entry + insns : exit;
}
/*
 * After a change of v's domain's EPT (under its ept_lock): a new generation, INVEPT here, and a
 * wait until no other VCPU of the domain can still run with older translations on any PCPU.
 */
void sched_ept_sync(struct vcpu *v);
/* Routes an IPI from a guest's ICR write to its domain's VCPUs. */
void sched_send_ipi(struct vcpu *from, const struct vapic_ipi *ipi);

#endif
