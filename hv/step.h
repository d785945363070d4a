/* Exact guest single-stepping for the soft PMU: RFLAGS.TF with #DB interception, hidden from the guest. */
#ifndef PERFVISOR_HV_STEP_H
#define PERFVISOR_HV_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "hv/step_block.h"
#include "hv/step_cache.h"
#include "hv/step_fast.h"
#include "hv/step_pv.h"
#include "pmu/pmu.h"

struct vcpu;

/* Why the debug breakpoints are armed: a TF-clearing instruction, an injected event, a block's end. */
enum step_bp {
	STEP_BP_NONE,
	STEP_BP_INSN,
	STEP_BP_EVENT,
	STEP_BP_BLOCK,
};

struct vcpu_step {
	bool want;		/* the PMU asked for stepping */
	bool ring0_free;	/* ... but not at CPL 0: nothing counted there needs it */
	/*
	 * Ring-0 runs: the guest at CPL 0 runs unstepped, its ways out to CPL 1-3 made to exit
	 * (IRET by virtual-NMI blocking, SYSRET by EFER.SCE clear); set only while it runs.
	 */
	bool ring0;		/* the exception bitmap has #UD for it (ring0_exc: as it was) */
	bool ring0_armed;	/* the guest runs with what follows set; the exit undoes it */
	bool ring0_nmi;		/* the last run: the virtual-NMI blocking was the stepper's */
	bool ring0_sce;		/* the last run: EFER.SCE was cleared by the stepper */
	bool ring0_step;	/* step the next instruction at CPL 0 (a SYSRET that faulted) */
	bool ring0_lost_said;	/* a return to CPL > 0 nothing caught was reported */
	uint32_t ring0_exc;
	uint64_t ring0_runs;	/* entries into CPL 0 code that ran unstepped */
	bool active;		/* TF and #DB interception are on */
	bool insn_valid;	/* insn describes the instruction at RIP at the last entry */
	struct soft_insn insn;
	unsigned insn_cpl;
	uint64_t insn_rip;
	bool insn_if;		/* RFLAGS.IF before it */
	/* A stepped STI's shadow, which the VMCS no longer shows once its trap exited. */
	bool sti_shadow;
	uint64_t sti_shadow_rip;	/* the instruction it covers */
	enum step_bp bp;
	bool bp_error_code;	/* STEP_BP_EVENT: the event pushes an error code */
	unsigned bp_slots;	/* the debug-register slots (bit k: DRk) its breakpoints are in */
	uint64_t bp_dr7;	/* their DR7 enable bits */
	uint64_t steps;		/* instructions retired by single steps */
	uint64_t exits;		/* exits that were the stepping's own: #DB, reads of PV
				 * pages shut while blocks run (hv/step_pv.c), and the
				 * ring-0 runs' NMI-window and #UD exits */
	/* Basic-block counting: the guest runs `block` with TF clear up to a breakpoint. */
	bool block_on;		/* entered with block armed; counted at the next exit */
	unsigned block_cpl;
	struct step_block block;
	uint64_t blocks;	/* blocks run */
	uint64_t block_insns;	/* instructions retired in blocks */
	/*
	 * What the run up to this exit retired as a block with no RDTSC in it, 0 if it was not one:
	 * the guest read no TSC in it (sched_charged_tsc()).
	 */
	uint64_t run_insns;
	bool block_lost_said;	/* an exit at a RIP no block can stop at was reported */
	struct step_fast fast;	/* the block breakpoint's fast path (hv/step_fast.c) */
	struct step_pv pv;	/* its PV page, shut while its a-mode counters run blocks */
	struct step_cache *cache;	/* decoded blocks (hv/step_cache.c), allocated at first use */
	bool cache_failed;	/* no frames for it: blocks are decoded at every entry */
	uint32_t exc_saved;	/* the exception bitmap before stepping started */
};

/* Before every VM entry: start, keep or stop stepping and classify the next instruction. */
void step_before_entry(struct vcpu *v);
/* At every VM exit while stepping, before the exit's handler. */
void step_on_exit(struct vcpu *v);
/* A #DB exit: true when it was the stepping's own (counted), false when it belongs to the guest. */
bool step_handle_db(struct vcpu *v, uint64_t qual);
/* A #UD exit: true when the stepper's cleared EFER.SCE caused it (the instruction is retried). */
bool step_handle_ud(struct vcpu *v);
/* Bochs leaves the single-step bit in the pending debug exceptions at every exit: clears it. */
void step_clear_pending(void);
/* True while the guest sits on the instruction after a stepped STI: interrupts wait. */
bool step_sti_shadow(struct vcpu *v);

#endif
