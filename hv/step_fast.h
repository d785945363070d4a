/* The soft PMU's fast path at a block's breakpoint: count it, arm the next cached block, go on. */
#ifndef PERFVISOR_HV_STEP_FAST_H
#define PERFVISOR_HV_STEP_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "hv/insn.h"
#include "hv/step_block.h"

struct vcpu;

/*
 * What the ordinary entry path that armed a block left for the fast path (valid until the
 * next ordinary entry, which plans again). Between the two only blocks run: plain
 * instructions, which change no CPL, mode, control register, debug register or counter
 * programming, so what was derived from those still holds.
 */
struct step_fast {
	bool on;		/* the armed block may end in the fast path */
	unsigned cpl;		/* of every block until the next ordinary entry */
	enum insn_mode mode;
	uint64_t cs_base;
	unsigned free_slots;	/* DR slots the guest's DR7 leaves to the stepper */
	unsigned known_slots;	/* of which the physical DRs hold slot_la (armed since the plan) */
	uint64_t slot_la[4];
	/* Events before the first counter overflows at cpl, when the plan was made. */
	uint64_t insn_room, branch_room;
	/* Counted by the fast path, told to the PMU at the next ordinary exit (step_fast_flush). */
	uint64_t pend_insns, pend_branches;
	/* The page of the last block's RIP, checked since no instruction wrote memory. */
	uint64_t la_page, gpa_page;	/* linear and guest-physical, >> 12 (~0: none) */
	uint64_t timer_end;	/* host TSC at which the preemption timer ends (0: not known yet) */
};

/*
 * Whether a block that retired insns instructions and branches branches may be counted in
 * the fast path, with next (n instructions) to run after it: no counter may overflow in
 * either before the ordinary path sees it (the overflow's PMI is the ordinary path's work).
 */
bool step_fast_fits(const struct step_fast *f, uint64_t insns, uint64_t branches,
		    const struct step_block *next);
/* At an ordinary entry that armed a block at cpl, room instructions before an overflow. */
void step_fast_plan(struct vcpu *v, unsigned cpl, uint64_t room);
/*
 * From vmexit_fast() at an exception exit: true when it was the armed block's breakpoint at
 * the block's end and the fast path counted it and armed the next block (resume the guest).
 * False: nothing was changed, the ordinary path takes the exit.
 */
bool step_fast_block(struct vcpu *v);
/* At every ordinary exit while stepping, first: the fast path's counts go to the PMU. */
void step_fast_flush(struct vcpu *v);

#endif
