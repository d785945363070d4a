/* The stepper's guard on paravirtual pages: a VCPU's page is unreadable while its blocks run. */
#ifndef PERFVISOR_HV_STEP_PV_H
#define PERFVISOR_HV_STEP_PV_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

/*
 * Blocks a VCPU runs while that VCPU's page of the PV area is shut (STEP_PV_OPEN_STEPS after
 * each read that exited, the page stays open and the VCPU is stepped). One per VCPU; fields
 * other VCPUs of the domain read or write are under the domain's ept_lock.
 */
struct step_pv {
	bool shut;		/* the EPT gives no access to the page */
	bool in_block;		/* a block runs: the page's soft counts lag behind the guest */
	bool wanted;		/* another VCPU's read of the page waits for the block to end */
	unsigned open_left;	/* block chances the page stays open for (stepped instead) */
	uint64_t shut_gen;	/* the domain's EPT generation that shut it */
};

/* Block chances a page stays open after a read exited: the read itself is stepped. */
#define STEP_PV_OPEN_STEPS	1

/*
 * Whether no PCPU can still use a translation of v's domain older than EPT generation gen:
 * every other VCPU of the domain has flushed for it, or runs no guest now and flushes before it
 * does (hv/ept.c's generation handshake). v's own PCPU flushes at its coming entry.
 */
bool step_flushed_everywhere(struct vcpu *v, uint64_t gen);

/*
 * Before a block of v while its a-mode counters count instructions or branches (pmu_pv_guard):
 * true when its page is shut on every PCPU, and then the block counts as running; false: v
 * must be stepped this time (its page is open, or another PCPU may still read it).
 */
bool step_pv_block_start(struct vcpu *v);
/* The block that step_pv_block_start() let run was counted: the page is current again. */
void step_pv_block_end(struct vcpu *v);
/*
 * v's read of the PV area at gpa exited (EPT violation, the instruction not retired): the
 * page opens once its VCPU runs no block, and v runs the instruction again.
 */
void step_pv_fault(struct vcpu *v, uint64_t gpa);

#endif
