/* Unit tests for the soft backend's accounting modes: the hypervisor's instructions and branches in vcpu mode. */
#include <string.h>

#include "tests/unit/unit.h"
#include "pmu/vpmu.c"
#include "pmu/vpmu_msr.c"
#include "pmu/backend_soft.c"

#define EV_INSNS	0xC0	/* SDM Vol. 3B table 20-1: instructions retired */
#define EV_BRANCHES	0xC4	/* branch instructions retired */

struct vcpu {
	struct pmu_vcpu pmu;
	unsigned cpl;
	uint64_t pv_counted[VPMU_EV_COUNT];
};

enum pmu_backend_kind pmu_backend = PMU_BACKEND_SOFT;

static const struct vpmu_config cfg = {
	.enabled = true, .version = 2, .num_gp = 4, .num_fixed = 3, .width = 48,
};

/* The seam of hv/vcpu_pmu.h and pmu/, as far as the soft backend's accounting uses it. */
struct pmu_vcpu *vcpu_pmu_state(struct vcpu *v)
{
	return &v->pmu;
}

unsigned vcpu_pmu_cpl(struct vcpu *v)
{
	return v->cpl;
}

/* What the backend last told the stepper. */
static bool told_on, told_ring0;

void vcpu_pmu_set_stepping(struct vcpu *v, bool on, bool ring0)
{
	(void)v;
	told_on = on;
	told_ring0 = ring0;
}

void vcpu_pmu_limit_run(struct vcpu *v, uint64_t ticks)
{
	(void)v;
	(void)ticks;
}

void pv_count(struct vcpu *v, int ev, uint64_t n, unsigned cpl)
{
	(void)cpl;
	v->pv_counted[ev] += n;
}

/* Both cycle kinds as one (pmu is the first member of struct vcpu here). */
void pv_count_cycles(struct pmu_vcpu *pv, uint64_t ticks, unsigned cpl)
{
	(void)cpl;
	((struct vcpu *)pv)->pv_counted[VPMU_EV_CORE_CYCLES] += ticks;
}

/* The events the paravirtual a-mode counters count at CPL 0 and at CPL 3. */
static uint32_t amode_at[4];

uint32_t pv_active_at(struct vcpu *v, unsigned cpl)
{
	(void)v;
	return amode_at[cpl];
}

uint32_t pv_active(struct vcpu *v)
{
	return pv_active_at(v, 0) | pv_active_at(v, 3);
}

void pmu_deliver_overflow(struct vcpu *v, uint64_t overflowed)
{
	(void)v;
	(void)overflowed;
}

/* PMC0 counts branches, PMC1 instructions, at the rings in `rings` (EVTSEL_OS/USR). */
static void vcpu_new(struct vcpu *v, enum pmu_acct acct, uint64_t rings)
{
	memset(v, 0, sizeof(*v));
	vpmu_reset(&v->pmu.vpmu, &cfg);
	v->pmu.acct = acct;
	vpmu_wrmsr(&v->pmu.vpmu, MSR_IA32_PERFEVTSEL0, EV_BRANCHES | rings | EVTSEL_EN);
	vpmu_wrmsr(&v->pmu.vpmu, MSR_IA32_PERFEVTSEL0 + 1, EV_INSNS | rings | EVTSEL_EN);
	vpmu_wrmsr(&v->pmu.vpmu, MSR_IA32_PERF_GLOBAL_CTRL, 3);
	soft_programmed(v);
}

/* exits VM exits at CPL 0, each handled for a while (a loop of a different length each time). */
static void run(struct vcpu *v, unsigned exits)
{
	v->cpl = 0;
	for (unsigned i = 0; i < exits; i++) {
		soft_before_entry(v);
		soft_after_exit(v);
		for (volatile unsigned k = 0; k < 50 + 13 * i; k++)
			;
	}
	soft_before_entry(v);
}

static void test_vcpu_mode(void)
{
	struct vcpu v;
	uint64_t br, ins, t;

	vcpu_new(&v, PMU_ACCT_VCPU, EVTSEL_OS | EVTSEL_USR);
	run(&v, 200);
	br = v.pmu.vpmu.pmc[0];
	ins = v.pmu.vpmu.pmc[1];
	t = v.pmu.hv_ticks;
	check(t > 0 && ins == t && v.pmu.hv_counted == t,
	      "acct=vcpu: the hypervisor's instructions are its ticks (%llu, %llu ticks, %llu said)",
	      (unsigned long long)ins, (unsigned long long)t,
	      (unsigned long long)v.pmu.hv_counted);
	/* The running total's whole branches: no remainder lost over 200 exits. */
	check(br == t / HV_INSNS_PER_BRANCH && v.pmu.hv_counted_branches == br,
	      "acct=vcpu: its branches are one in %u of them (%llu of %llu, %llu said)",
	      HV_INSNS_PER_BRANCH, (unsigned long long)br, (unsigned long long)t,
	      (unsigned long long)v.pmu.hv_counted_branches);
	check(v.pv_counted[VPMU_EV_INSTRUCTIONS] == ins && v.pv_counted[VPMU_EV_BRANCHES] == br,
	      "acct=vcpu: paravirtual counters get the same instructions and branches");
}

/*
 * A handler stops counting (its exit stamped while counting), the VCPU runs on uncounted, and a
 * later handler starts counting again: the stretch in between is nobody's work.
 */
static void test_restart(void)
{
	struct vcpu v;
	uint64_t before;

	vcpu_new(&v, PMU_ACCT_VCPU, EVTSEL_OS | EVTSEL_USR);
	run(&v, 10);
	soft_after_exit(&v);
	vpmu_wrmsr(&v.pmu.vpmu, MSR_IA32_PERF_GLOBAL_CTRL, 0);
	soft_programmed(&v);
	soft_before_entry(&v);
	before = v.pmu.hv_ticks;
	for (volatile unsigned k = 0; k < 1000000; k++)
		;
	vpmu_wrmsr(&v.pmu.vpmu, MSR_IA32_PERF_GLOBAL_CTRL, 3);
	soft_programmed(&v);
	soft_before_entry(&v);
	check(v.pmu.hv_ticks == before,
	      "acct=vcpu: counting restarted adds nothing of the stretch it was off (%llu ticks)",
	      (unsigned long long)(v.pmu.hv_ticks - before));
}

static void test_other_modes(void)
{
	static const struct {
		enum pmu_acct acct;
		const char *name;
	} modes[] = { { PMU_ACCT_GUEST, "guest" }, { PMU_ACCT_HYBRID, "hybrid" } };
	struct vcpu v;

	for (unsigned m = 0; m < 2; m++) {
		vcpu_new(&v, modes[m].acct, EVTSEL_OS | EVTSEL_USR);
		run(&v, 50);
		check(!v.pmu.vpmu.pmc[0] && !v.pmu.vpmu.pmc[1] && !v.pmu.hv_counted_branches,
		      "acct=%s: the hypervisor's work adds no instruction and no branch (%llu %llu)",
		      modes[m].name, (unsigned long long)v.pmu.vpmu.pmc[1],
		      (unsigned long long)v.pmu.vpmu.pmc[0]);
	}
	/* The hypervisor runs at CPL 0 as the guest's kernel is said to: USR counters miss it. */
	vcpu_new(&v, PMU_ACCT_VCPU, EVTSEL_USR);
	run(&v, 50);
	check(v.pmu.hv_ticks && !v.pmu.vpmu.pmc[0] && !v.pmu.vpmu.pmc[1] &&
	      !v.pmu.hv_counted_branches,
	      "acct=vcpu: USR-only counters see none of the hypervisor's work at CPL 0");
}

/*
 * The stepping decision (docs/soft-pmu.md, "Only the rings that count"): CPL 0 is stepped only
 * when something counts instructions or branches there.
 */
static void test_step_rings(void)
{
	static const struct {
		uint64_t rings;
		uint32_t amode0, amode3;
		bool on, ring0;
		const char *what;
	} cases[] = {
		{ EVTSEL_USR, 0, 0, true, false, "USR only (:u): stepped at CPL 3, not at CPL 0" },
		{ EVTSEL_OS, 0, 0, true, true, "OS only: stepped at CPL 0" },
		{ EVTSEL_OS | EVTSEL_USR, 0, 0, true, true, "OS and USR: stepped everywhere" },
		{ EVTSEL_USR, 1u << VPMU_EV_INSTRUCTIONS, 0, true, true,
		  "USR, with an a-mode instructions counter at CPL 0: stepped at CPL 0" },
		{ EVTSEL_USR, 1u << VPMU_EV_CORE_CYCLES, 0, true, false,
		  "USR, with an a-mode cycles counter at CPL 0 (time, no step needed): not at CPL 0" },
		{ 0, 0, 1u << VPMU_EV_BRANCHES, true, false,
		  "nothing but an a-mode branches counter at CPL 3: not at CPL 0" },
		{ 0, 0, 0, false, false, "nothing counts: no stepping" },
	};
	struct vcpu v;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		amode_at[0] = cases[i].amode0;
		amode_at[3] = cases[i].amode3;
		vcpu_new(&v, PMU_ACCT_GUEST, cases[i].rings);
		if (!cases[i].rings)
			vpmu_wrmsr(&v.pmu.vpmu, MSR_IA32_PERF_GLOBAL_CTRL, 0);
		soft_programmed(&v);
		check(told_on == cases[i].on && told_ring0 == cases[i].ring0 &&
		      v.pmu.step_ring0 == cases[i].ring0, "%s", cases[i].what);
		/* A switch-in tells the stepper the same. */
		told_on = told_ring0 = !cases[i].on;
		soft_switch_in(&v);
		check(told_on == cases[i].on && told_ring0 == cases[i].ring0,
		      "%s, after a switch-in", cases[i].what);
	}
	amode_at[0] = amode_at[3] = 0;
}

/*
 * Blocks' counts in batches (pmu_step_batch(), hv/step_fast.c): only where nothing else moves
 * with the guest's instructions between exits: no cycles (counted at every exit), no a-mode
 * counts in the guest's page, and no hypervisor time charged to a counter (guest accounting).
 */
static void test_step_batch(void)
{
	static const struct {
		enum pmu_acct acct;
		uint32_t amode3;
		bool cycles, batch;
		const char *what;
	} cases[] = {
		{ PMU_ACCT_GUEST, 0, false, true, "instructions and branches, guest accounting" },
		{ PMU_ACCT_VCPU, 0, false, false, "vcpu accounting: the hypervisor's work counts" },
		{ PMU_ACCT_HYBRID, 0, false, false, "hybrid accounting: its cycles count" },
		{ PMU_ACCT_GUEST, 0, true, false, "a cycles counter too" },
		{ PMU_ACCT_GUEST, 1u << VPMU_EV_INSTRUCTIONS, false, false,
		  "an a-mode instructions counter: its page shows the count" },
		{ PMU_ACCT_GUEST, 1u << VPMU_EV_CORE_CYCLES, false, false,
		  "an a-mode cycles counter" },
	};
	struct vcpu v;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		amode_at[3] = cases[i].amode3;
		vcpu_new(&v, cases[i].acct, EVTSEL_OS | EVTSEL_USR);
		if (cases[i].cycles) {
			vpmu_wrmsr(&v.pmu.vpmu, MSR_IA32_FIXED_CTR_CTRL, 3ull << 4);
			vpmu_wrmsr(&v.pmu.vpmu, MSR_IA32_PERF_GLOBAL_CTRL, 3 | 1ull << 33);
			soft_programmed(&v);
		}
		check(v.pmu.stepping && v.pmu.step_batch == cases[i].batch, "batched blocks %s: %s",
		      cases[i].batch ? "allowed" : "not allowed", cases[i].what);
	}
	amode_at[3] = 0;
}

/*
 * The exit fast path's hooks (pmu_light_*()) with only a paravirtual a-mode cycle counter: each
 * guest run's ticks go to it, and in vcpu mode the hypervisor's spans between them too, as the
 * backend's hooks count them.
 */
static void test_light_hooks(enum pmu_acct acct)
{
	struct vcpu v;
	uint64_t guest = 0;

	memset(&v, 0, sizeof(v));
	vpmu_reset(&v.pmu.vpmu, &cfg);
	v.pmu.acct = acct;
	amode_at[0] = amode_at[3] = 1u << VPMU_EV_CORE_CYCLES;
	soft_programmed(&v);
	check(pmu_exit_light(&v.pmu) && v.pmu.active,
	      "light hooks: an a-mode cycle counter is light");
	for (unsigned i = 0; i < 50; i++) {
		pmu_light_before_entry(&v, &v.pmu, 3);
		check(v.pmu.run_counts && v.pmu.entry_cpl == 3, "light hooks: the run counts, at CPL 3");
		for (volatile unsigned k = 0; k < 40 + 7 * i; k++)
			;
		pmu_light_after_exit(&v.pmu);
		guest += v.pmu.exit_tsc - v.pmu.entry_tsc;
		for (volatile unsigned k = 0; k < 30 + 11 * i; k++)
			;
	}
	pmu_light_before_entry(&v, &v.pmu, 3);
	check(acct == PMU_ACCT_GUEST || !v.pmu.exit_tsc,
	      "light hooks: vcpu mode accounts the span up to the entry");
	check(guest > 0 && v.pv_counted[VPMU_EV_CORE_CYCLES] == guest + v.pmu.hv_ticks &&
	      (acct == PMU_ACCT_GUEST) == !v.pmu.hv_ticks,
	      "light hooks, %s: the counter took the guest's %llu ticks and the hypervisor's %llu "
	      "(took %llu)", acct == PMU_ACCT_GUEST ? "guest" : "vcpu", (unsigned long long)guest,
	      (unsigned long long)v.pmu.hv_ticks,
	      (unsigned long long)v.pv_counted[VPMU_EV_CORE_CYCLES]);
	amode_at[0] = amode_at[3] = 0;
}

int main(void)
{
	test_step_rings();
	test_step_batch();
	test_vcpu_mode();
	test_restart();
	test_other_modes();
	test_light_hooks(PMU_ACCT_GUEST);
	test_light_hooks(PMU_ACCT_VCPU);
	return unit_summary();
}
