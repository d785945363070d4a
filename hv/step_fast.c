/* The soft PMU's fast path at a block's breakpoint: count it, arm the next cached block, go on. */
#include "lib/cpu.h"
#include "hv/domain.h"
#include "hv/exit_dr.h"
#include "hv/guest_mem.h"
#include "hv/sched.h"
#include "hv/spec.h"
#include "hv/step.h"
#include "hv/vcpu.h"
#include "hv/vmx_caps.h"
#include "hv/vmx_ops.h"
#include "pmu/pmu.h"
#include "include/x86/dr.h"
#include "include/x86/rflags.h"
#include "include/x86/trap.h"

/*
 * A block's breakpoint is the most common exit while the soft PMU counts (one a block). Its
 * ordinary handling (run_slice(): interrupt delivery, the PMU's hooks, the preemption timer;
 * step_on_exit(), the #DB handler, step_before_entry()) redoes at every block what the entry
 * that planned it already derived. Here only what a block can change is looked at again: where
 * the guest is, and the guest page-table entries that map its code (the cache's lookup checks
 * them). Anything else that might need the hypervisor sends the exit the ordinary way, which
 * then does everything as if this path did not exist.
 */

/* The exit information of a #DB hardware exception (SDM Vol. 3C 25.9.2). */
#define INFO_DB		(INTR_INFO_VALID | INTR_TYPE_HW_EXCEPTION | EXC_DB)
#define INFO_KIND	(INTR_INFO_VALID | 0x7FFu)	/* valid, type, error code, vector */
#define DR6_B0_B3	(DR6_B(0) | DR6_B(1) | DR6_B(2) | DR6_B(3))

bool step_fast_fits(const struct step_fast *f, uint64_t insns, uint64_t branches,
		    const struct step_block *next)
{
	uint64_t insns_after = f->pend_insns + insns;

	/* At the room a counter wraps (vpmu_count()): that exit is the ordinary path's. */
	if (insns_after >= f->insn_room || f->pend_branches + branches >= f->branch_room)
		return false;
	/*
	 * The next block as the ordinary path would arm it: whole (start_block() cuts it to the
	 * room), a RET's target not read, a counted loop not run whole.
	 */
	return next->n <= f->insn_room - insns_after && !next->ret && !next->counted;
}

void step_fast_plan(struct vcpu *v, unsigned cpl, uint64_t room)
{
	struct vcpu_step *s = &v->step;
	struct step_fast *f = &s->fast;

	/*
	 * Without the timer's value saved at exit (SDM Vol. 3C 25.7.1) the fast path could not
	 * keep the slice's end and the guest's timer deadlines.
	 */
	f->on = pmu_step_batch(&v->pmu) && !s->block.whole && s->cache &&
		(vmread(VMCS_EXIT_CTLS) & EXIT_SAVE_PREEMPTION_TIMER);
	if (!f->on)
		return;
	f->cpl = cpl;
	f->mode = guest_code_mode();
	f->cs_base = vmread(VMCS_GUEST_CS_BASE);
	f->free_slots = dr_free_slots(v);
	f->known_slots = s->bp_slots;
	f->insn_room = room;
	f->branch_room = pmu_step_branch_room(v, cpl);
	f->la_page = ~0ull;
	f->timer_end = 0;
}

/* Nothing waits to be delivered: an interrupt or NMI pending, or a window asked for one. */
static bool no_event(struct vcpu *v)
{
	uint32_t irr = 0;

	/* Read without the lock: whoever makes one pending later kicks this PCPU (irq_kick()). */
	for (unsigned i = 0; i < 8; i++)
		irr |= v->apic.irr[i];
	return !irr && !v->apic.nmi_pending &&
	       !(vmread(VMCS_CPU_CTLS) & (CPU_INTR_WINDOW_EXITING | CPU_NMI_WINDOW_EXITING));
}

/* The exit is the armed block's breakpoint, with nothing else for the hypervisor to do. */
static bool quiet_breakpoint(struct vcpu *v)
{
	struct vcpu_step *s = &v->step;
	uint64_t qual = vmread(VMCS_EXIT_QUALIFICATION);

	/* Only the stepper's breakpoints hit (no single step, no guest breakpoint with them). */
	return (vmread(VMCS_EXIT_INTR_INFO) & INFO_KIND) == INFO_DB && s->bp == STEP_BP_BLOCK &&
	       (qual & DR6_B0_B3) && !(qual & ~(uint64_t)s->bp_slots) &&
	       !(vmread(VMCS_IDT_VECTORING_INFO) & INTR_INFO_VALID) &&
	       /* No shadow: start_block() would step the next instruction. */
	       !(vmread(VMCS_GUEST_INTERRUPTIBILITY) &
		 (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOV_SS)) &&
	       !v->resched && v->state == VCPU_RUNNABLE && v->dom->state == DOM_RUNNING &&
	       /* An EPT change waits for this PCPU's flush: the ordinary entry makes it. */
	       __atomic_load_n(&v->dom->ept_gen, __ATOMIC_SEQ_CST) == v->ept.gen &&
	       no_event(v);
}

/*
 * Where the code at la is, as the CPU fetches it (*gpa). The translation of the last block's
 * page still holds for that page while no instruction wrote memory since it was checked: a
 * paging-structure entry changes only by a store, and another processor's store that this one
 * did not invalidate leaves open which translation it uses (SDM Vol. 3A 4.10.4.3, 4.10.5), to
 * a walk as much. Otherwise the cache's remembered walk is checked again (gpt_translate_memo()).
 */
static bool next_gpa(struct vcpu *v, uint64_t la, uint64_t *gpa)
{
	const struct step_fast *f = &v->step.fast;
	const struct step_block *b = &v->step.block;
	struct gpt_result res;

	if (la >> 12 == f->la_page && !b->store_end && !b->call) {
		*gpa = f->gpa_page << 12 | (la & 0xFFF);
		return true;
	}
	if (guest_translate(v, la, GPT_FETCH, &v->step.cache->walk, &res) != GPT_OK)
		return false;
	*gpa = res.gpa;
	return true;
}

/*
 * The next block's breakpoints in the slots the ordinary path's arm() would take (the lowest
 * free ones, in target order); a debug register is written only when it changes, since the
 * physical ones still hold what this VCPU loaded (no other ran here since the plan).
 */
static void arm_next(struct vcpu *v)
{
	struct vcpu_step *s = &v->step;
	struct step_fast *f = &s->fast;
	const struct step_block *b = &s->block;
	uint64_t la[2], dr7 = 0;
	unsigned nt = b->branch ? b->ntargets : 1, slots = 0;

	la[0] = (b->branch ? b->target[0] : b->start + b->off[b->n]) + f->cs_base;
	la[1] = b->target[1] + f->cs_base;
	for (unsigned t = 0; t < nt; t++) {
		unsigned k = __builtin_ctz(f->free_slots & ~slots);

		if (!(f->known_slots >> k & 1) || f->slot_la[k] != la[t]) {
			dr_set_slot(k, la[t]);
			f->slot_la[k] = la[t];
			f->known_slots |= 1u << k;
		}
		slots |= 1u << k;
		dr7 |= 1ull << (2 * k);
	}
	s->bp_slots = slots;
	if (dr7 != s->bp_dr7) {
		s->bp_dr7 = dr7;
		dr_before_entry(v, dr7);
	}
	/* Its start is a target too: RF keeps the breakpoint there from firing now (18.3.1.1). */
	if (b->loops)
		vmwrite(VMCS_GUEST_RFLAGS, vmread(VMCS_GUEST_RFLAGS) | RFLAGS_RF);
}

/*
 * The fast path's time, all of it here. Its span is the hypervisor's, as run_slice() counts an
 * exit's handling up to the next entry. The VMX-preemption timer stood still during it (its
 * value saved at the exit): it is set to end where the ordinary path would have made it end,
 * the slice's end or a timer deadline, host times the first fast exit derives from the value.
 */
static void step_fast_time(struct vcpu *v, uint64_t t_exit, uint64_t timer)
{
	struct step_fast *f = &v->step.fast;
	uint64_t now;
	int64_t left;

	if (!f->timer_end)
		f->timer_end = t_exit + (timer << vmx_caps.preemption_rate);
	now = rdtsc();
	left = (int64_t)(f->timer_end - now);
	/* Past its end: 0 exits before any guest instruction (SDM Vol. 3C 27.7.4). */
	vmwrite(VMCS_PREEMPTION_TIMER, left > 0 ? (uint64_t)left >> vmx_caps.preemption_rate : 0);
	v->hv_tsc += now - t_exit;
	v->entry_tsc = now;
	/* run_slice() adds the whole run up to the next ordinary exit as the guest's. */
	v->run_tsc -= now - t_exit;
}

bool step_fast_block(struct vcpu *v)
{
	uint64_t t_exit = rdtsc(), timer, rip, la, gpa, insns, branches;
	struct vcpu_step *s = &v->step;
	struct step_fast *f = &s->fast;
	const struct step_block *next;

	if (!quiet_breakpoint(v))
		return false;
	/* 0: the slice or a deadline ended the run together with the breakpoint. */
	timer = vmread(VMCS_PREEMPTION_TIMER);
	rip = vmread(VMCS_GUEST_RIP);
	/* At the block's end or a branch target: all of it retired (step_block_retired()). */
	if (!timer || !step_block_retired(&s->block, rip, vmread(VMCS_GUEST_RFLAGS) & RFLAGS_RF, 0,
					  &insns, &branches) || insns != s->block.n)
		return false;
	la = rip + f->cs_base;
	if (!next_gpa(v, la, &gpa))
		return false;
	next = step_cache_find(v, rip, la, f->mode, gpa);
	/* One free slot there is (the plan armed one); two targets need a second. */
	if (!next || !step_fast_fits(f, insns, branches, next) ||
	    (next->branch && next->ntargets == 2 && !(f->free_slots & (f->free_slots - 1))))
		return false;
	/* Committed: from here the exit is this path's. */
	step_clear_pending();
	/* A stepping exit: the guest's TSC stands still through it (tsc=vcpu), thawed last. */
	sched_tsc_freeze(v, sched_charged_tsc(v->entry_tsc, t_exit, s->block.reads_tsc ? 0 : insns));
	f->pend_insns += insns;
	f->pend_branches += branches;
	s->blocks++;
	s->block_insns += insns;
	s->exits++;
	f->la_page = la >> 12;
	f->gpa_page = gpa >> 12;
	s->block = *next;
	arm_next(v);
	step_fast_time(v, t_exit, timer);
	spec_before_entry();
	sched_tsc_thaw(v);
	return true;
}

void step_fast_flush(struct vcpu *v)
{
	struct step_fast *f = &v->step.fast;

	if (!f->pend_insns)
		return;
	pmu_retired_block(v, f->pend_insns, f->pend_branches, f->cpl);
	f->pend_insns = f->pend_branches = 0;
}
