/* The soft PMU backend: exact instruction and branch counts by single-stepping, cycles from the TSC. */
#include "lib/cpu.h"
#include "hv/vcpu_pmu.h"
#include "pmu/backend.h"
#include "pmu/pmu.h"

#define EV_BIT(ev)	(1u << (ev))
#define STEP_EVENTS	(EV_BIT(VPMU_EV_INSTRUCTIONS) | EV_BIT(VPMU_EV_BRANCHES))
#define CYCLE_EVENTS	(EV_BIT(VPMU_EV_CORE_CYCLES) | EV_BIT(VPMU_EV_REF_CYCLES))

/* Cycles of both kinds at cpl; returns the PMI mask. Core and reference cycles both follow the TSC. */
static uint64_t count_cycles(struct vcpu *v, uint64_t ticks, unsigned cpl)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	struct vpmu *p = &pv->vpmu;

	/* Only where a counter counts cycles (active: vPMU and a-mode counters). */
	if (pv->active & CYCLE_EVENTS)
		pv_count_cycles(pv, ticks, cpl);
	/* Paravirtual a-mode counters alone (a thread's cycles): no vPMU counter to look at. */
	if (!(pv->vpmu_events & CYCLE_EVENTS))
		return 0;
	return vpmu_count(p, VPMU_EV_CORE_CYCLES, ticks, cpl) |
	       vpmu_count(p, VPMU_EV_REF_CYCLES, ticks, cpl);
}

/*
 * Stepping is needed while an enabled counter counts instructions or branches at any ring, and
 * while a cycle counter counts one ring only (each step then tells which ring its cycles were in).
 * CPL 0 needs it only when something counts instructions or branches there: otherwise the
 * kernel runs unstepped, and the stepper catches its ways back out (hv/step.c), which is all a
 * ring-filtered cycle counter needs too (each run then stays in one ring).
 */
static void soft_programmed(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	uint32_t kernel = vpmu_active(&pv->vpmu, 0), user = vpmu_active(&pv->vpmu, 3);
	uint32_t amode = pv_active(v), was = pv->active;

	pv->active = kernel | user | amode;
	/*
	 * Counting starts again: an exit stamped before it stopped (its handling not accounted,
	 * nothing counted then) is not this VCPU's work now, nor the idle stretch since.
	 */
	if (!was)
		pv->exit_tsc = 0;
	pv->vpmu_events = kernel | user;
	pv->pv_guard = amode & STEP_EVENTS;
	pv->stepping = (pv->active & STEP_EVENTS) || ((kernel ^ user) & CYCLE_EVENTS);
	pv->step_ring0 = (kernel | pv_active_at(v, 0)) & STEP_EVENTS;
	pv->step_batch = pv->acct == PMU_ACCT_GUEST && !pv->pv_guard &&
			 !(pv->active & CYCLE_EVENTS);
	vcpu_pmu_set_stepping(v, pv->stepping, pv->step_ring0);
}

/* Counts are kept current at every exit: nothing to gather before a read. */
static void soft_sync(struct vcpu *v)
{
	(void)v;
}

/*
 * vcpu mode's model of the hypervisor's work (docs/virtual-pmu.md): its instructions are its TSC
 * ticks (one per instruction in Bochs with one CPU, an estimate elsewhere), and one in
 * HV_INSNS_PER_BRANCH of them a branch: the ratio of branch instructions (jumps, calls,
 * returns) in perfvisor.elf's own code, 4525 of 23037 in a static count, 1 in 5.1.
 */
#define HV_INSNS_PER_BRANCH	5

/* The hypervisor's instructions and branches of a span of ticks, after `before` ticks of it. */
static void count_hv_work(struct vcpu *v, uint64_t before, uint64_t ticks, unsigned cpl,
			  uint64_t *pmi)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	/* Whole branches of the running total, so no remainder is lost between exits. */
	uint64_t branches = (before + ticks) / HV_INSNS_PER_BRANCH - before / HV_INSNS_PER_BRANCH;
	uint32_t on = vpmu_active(&pv->vpmu, cpl);

	if (on & EV_BIT(VPMU_EV_INSTRUCTIONS))
		pv->hv_counted += ticks;
	if (on & EV_BIT(VPMU_EV_BRANCHES))
		pv->hv_counted_branches += branches;
	pv_count(v, VPMU_EV_INSTRUCTIONS, ticks, cpl);
	pv_count(v, VPMU_EV_BRANCHES, branches, cpl);
	*pmi |= vpmu_count(&pv->vpmu, VPMU_EV_INSTRUCTIONS, ticks, cpl) |
		vpmu_count(&pv->vpmu, VPMU_EV_BRANCHES, branches, cpl);
}

/* account_hv_time() with a span to account: out of line, guest accounting saves no registers. */
static __attribute__((noinline)) void account_hv_span(struct vcpu *v, struct pmu_vcpu *pv,
						      unsigned cpl)
{
	uint64_t ticks = rdtsc() - pv->exit_tsc, pmi;

	pmi = count_cycles(v, ticks, cpl);
	if (pv->acct == PMU_ACCT_VCPU)
		count_hv_work(v, pv->hv_ticks, ticks, cpl, &pmi);
	pv->hv_ticks += ticks;
	pv->exit_tsc = 0;
	pmu_deliver_overflow(v, pmi);
}

/* vcpu and hybrid accounting: the hypervisor's handling of the last exit, up to now, was this VCPU's work. */
static inline void account_hv_time(struct vcpu *v, struct pmu_vcpu *pv, unsigned cpl)
{
	if (pv->acct != PMU_ACCT_GUEST && pv->exit_tsc && pv->active)
		account_hv_span(v, pv, cpl);
}

static void soft_before_entry(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	unsigned cpl;
	uint64_t until;

	/* Nothing counts: the exit path stays as short as without a PMU. */
	if (!pv->active)
		return;
	cpl = vcpu_pmu_cpl(v);
	account_hv_time(v, pv, cpl);
	/*
	 * A cycle counter overflows on time: end the run there (skid: one VM exit's latency).
	 * Paravirtual a-mode counters never overflow.
	 */
	if (pv->vpmu_events & CYCLE_EVENTS) {
		until = vpmu_until_overflow(&pv->vpmu, VPMU_EV_CORE_CYCLES, cpl);
		if (vpmu_until_overflow(&pv->vpmu, VPMU_EV_REF_CYCLES, cpl) < until)
			until = vpmu_until_overflow(&pv->vpmu, VPMU_EV_REF_CYCLES, cpl);
		if (until != UINT64_MAX)
			vcpu_pmu_limit_run(v, until);
	}
	pv->entry_cpl = cpl;
	pv->entry_tsc = rdtsc();
}

static void soft_after_exit(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);

	if (!pv->active)
		return;
	pv->exit_tsc = rdtsc();
	pmu_deliver_overflow(v, count_cycles(v, pv->exit_tsc - pv->entry_tsc, pv->entry_cpl));
}

/*
 * The hooks of a light PMU (pmu_exit_light()) that counts: only paravirtual a-mode counters, of
 * cycles (instructions or branches would step), so no overflow, PMI or run limit. What
 * soft_after_exit() and soft_before_entry() do then, with no lookup or indirect call.
 */
void pmu_light_after_exit(struct pmu_vcpu *pv)
{
	pv->run_counts = false;
	pv->exit_tsc = rdtsc();
	pv_count_cycles(pv, pv->exit_tsc - pv->entry_tsc, pv->entry_cpl);
}

void pmu_light_before_entry(struct vcpu *v, struct pmu_vcpu *pv, unsigned cpl)
{
	pv->run_counts = true;
	account_hv_time(v, pv, cpl);
	pv->entry_cpl = cpl;
	pv->entry_tsc = rdtsc();
}

/* The counters' programming is the VCPU's own: what programmed() derived still holds. */
static void soft_switch_in(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);

	pv->exit_tsc = 0;
	vcpu_pmu_set_stepping(v, pv->stepping, pv->step_ring0);
}

/* Time waiting for a PCPU is nobody's work: the vcpu-mode span ends at the switch. */
static void soft_switch_out(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);

	account_hv_time(v, pv, pv->entry_cpl);
}

static void soft_retired_block(struct vcpu *v, uint64_t n, uint64_t branches, unsigned cpl)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	uint64_t pmi;

	if (!(pv->active & STEP_EVENTS))
		return;
	pmi = vpmu_count(&pv->vpmu, VPMU_EV_INSTRUCTIONS, n, cpl);

	pv_count(v, VPMU_EV_INSTRUCTIONS, n, cpl);
	if (branches) {
		pv_count(v, VPMU_EV_BRANCHES, branches, cpl);
		pmi |= vpmu_count(&pv->vpmu, VPMU_EV_BRANCHES, branches, cpl);
	}
	pv->retired += n;
	pmu_deliver_overflow(v, pmi);
}

static void soft_retired(struct vcpu *v, const struct soft_insn *insn, unsigned cpl)
{
	soft_retired_block(v, 1, insn && insn->branch, cpl);
}

/*
 * How far the stepper may let the guest run unseen: up to the next overflow of an instructions
 * counter (the block is cut there, so the PMI comes after exactly that instruction; a block
 * holds one branch at most, at its end, so branch counters need no cut, but a counted loop
 * run whole holds one a turn). Paravirtual a-mode counters never overflow; their page is shut
 * while a block runs (pmu_pv_guard()).
 */
static uint64_t soft_step_room(struct vcpu *v, unsigned cpl)
{
	return vpmu_until_overflow(&vcpu_pmu_state(v)->vpmu, VPMU_EV_INSTRUCTIONS, cpl);
}

static uint64_t soft_step_branch_room(struct vcpu *v, unsigned cpl)
{
	return vpmu_until_overflow(&vcpu_pmu_state(v)->vpmu, VPMU_EV_BRANCHES, cpl);
}

const struct pmu_backend_ops pmu_soft_ops = {
	.name = "soft",
	.programmed = soft_programmed,
	.sync = soft_sync,
	.before_entry = soft_before_entry,
	.after_exit = soft_after_exit,
	.switch_in = soft_switch_in,
	.switch_out = soft_switch_out,
	.retired = soft_retired,
	.retired_block = soft_retired_block,
	.step_room = soft_step_room,
	.step_branch_room = soft_step_branch_room,
};
