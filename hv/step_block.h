/* Basic blocks for the soft PMU's stepper: straight-line guest code it lets run to a breakpoint. */
#ifndef PERFVISOR_HV_STEP_BLOCK_H
#define PERFVISOR_HV_STEP_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "hv/insn.h"

/* Instructions in one block at most: the bytes fetched for it stay small. */
#define BLOCK_MAX	32
/* Bytes fetched to decode one block. */
#define BLOCK_BYTES	128

/*
 * A block: n instructions starting at RIP `start`, which retire in order unless an exit stops
 * them. off[i] is where instruction i starts (off[n] where the block ends). The last one may be
 * a direct branch (Jcc, JMP, CALL, LOOP, JrCXZ with a relative target): then `targets` holds
 * where it can go, outside the block or at its start, so an exit at one of them says the whole
 * block retired (at the start, when RF says an instruction completed).
 * Otherwise execution reaches start + off[n], where a breakpoint stops it: the instruction
 * there is the next block's first, or one the stepper must single-step.
 */
struct step_block {
	uint64_t start;
	unsigned n;
	uint16_t off[BLOCK_MAX + 1];
	bool branch;		/* instruction n - 1 is a direct branch */
	bool loops;		/* one of its targets is the block's start: enter with RF set */
	bool ret;		/* the branch is a near RET: its target is the caller's to read */
	bool call;		/* the branch is a CALL: it writes its return address */
	unsigned ret_pop;	/* at RSP + ret_pop at the block's start (64-bit mode) */
	unsigned ntargets;	/* 1 (JMP, CALL) or 2 (conditional: fall-through, taken) */
	uint64_t target[2];
	/*
	 * A counted loop: the block is a whole turn that ends in LOOP, or in DEC r then JNZ, back
	 * to its start, and no other instruction of it writes r. Its turns are then told by r,
	 * so the stepper may let all of them run to the fall-through (step_block_whole()).
	 */
	bool counted;
	bool dec_jnz;		/* DEC r; JNZ (else LOOP) */
	uint8_t ctr;		/* r: register number (SDM Vol. 2A table 2-2), 0-15 */
	uint8_t ctr_bits;	/* 16, 32 or 64: the width DEC or LOOP counts in */
	bool whole;		/* running all its turns, from r = ctr_entry */
	uint64_t ctr_entry;
	/*
	 * Decoded with stores inside: the instructions up to and including the first that may
	 * write memory (0: none may). Only a block whose code pages are write-protected may run
	 * past it (hv/step_cache.c); any other is cut there.
	 */
	unsigned store_end;
	/*
	 * It may read the TSC (an RDTSC, or bytes that end like one): its guest-mode time is not
	 * charged by its instructions (sched_charged_tsc()).
	 */
	bool reads_tsc;
};

/*
 * Decodes the block at rip from bytes[0..len) (what could be fetched there), at most max
 * instructions (the room before a counter overflows; max >= 1 unless no block may run).
 * stores: instructions that may write memory do not end it (b->store_end says where the first
 * is); else the block ends after the first. Returns n; 0 when the instruction at rip must be
 * single-stepped.
 */
unsigned step_block_decode(const uint8_t *bytes, unsigned len, uint64_t rip, enum insn_mode mode,
			   unsigned max, bool stores, struct step_block *b);

/* Cuts b to its first max instructions (a straight block then); returns its n. */
unsigned step_block_cut(struct step_block *b, unsigned max);

/*
 * A block ending in a near RET: `to` is the return address read at RSP + ret_pop. False when
 * the target is inside the block: the RET is dropped from it (to be stepped).
 */
bool step_block_ret_target(struct step_block *b, uint64_t to);

/*
 * A counted loop entered with its register at ctr: true (and b->whole set) when all its turns
 * may run as one block, which they may when there are at least two and they fit the room
 * before the next overflow of an instructions counter (insn_room) and of a branches counter
 * (branch_room: one branch a turn).
 */
bool step_block_whole(struct step_block *b, uint64_t ctr, uint64_t insn_room, uint64_t branch_room);

/*
 * The block stopped with the guest at rip, RFLAGS.RF = rf and, for a whole loop, its register
 * at ctr: how many of its instructions retired (*branches: how many of those were branches).
 * Returns false when rip is no place the block can stop at (then *insns is how many start
 * below rip).
 */
bool step_block_retired(const struct step_block *b, uint64_t rip, bool rf, uint64_t ctr,
			uint64_t *insns, uint64_t *branches);

#endif
