/* Unit tests for pmu/pmu.c: trapped WRMSR of the vPMU's MSRs and the exit hooks that the exit fast path runs. */
#include <string.h>

#include "tests/unit/unit.h"
#include "pmu/vpmu.c"
#include "pmu/vpmu_msr.c"
#include "pmu/pmu.c"

#define EN_ALL	(EVTSEL_EN | EVTSEL_OS | EVTSEL_USR)

struct vcpu {
	struct pmu_vcpu pmu;
};

/* What the backend was asked to do. */
static unsigned syncs, programs, entries, exits;

struct pmu_hw_info pmu_hw;

struct pmu_vcpu *vcpu_pmu_state(struct vcpu *v)
{
	return &v->pmu;
}

void printk(const char *fmt, ...)
{
	(void)fmt;
}

void vcpu_pmu_raise_pmi(struct vcpu *v)
{
	(void)v;
}

unsigned vcpu_pmu_cpl(struct vcpu *v)
{
	(void)v;
	return 3;
}

/* A soft backend in miniature: the counting state follows the vPMU as soft_programmed() keeps it. */
static void fake_programmed(struct vcpu *v)
{
	struct pmu_vcpu *pv = &v->pmu;

	programs++;
	pv->vpmu_events = vpmu_active(&pv->vpmu, 0) | vpmu_active(&pv->vpmu, 3);
	pv->active = pv->vpmu_events;
}

static void fake_sync(struct vcpu *v)
{
	(void)v;
	syncs++;
}

static void fake_before_entry(struct vcpu *v)
{
	(void)v;
	entries++;
}

static void fake_after_exit(struct vcpu *v)
{
	(void)v;
	exits++;
}

const struct pmu_backend_ops pmu_soft_ops = {
	.name = "fake",
	.programmed = fake_programmed,
	.sync = fake_sync,
	.before_entry = fake_before_entry,
	.after_exit = fake_after_exit,
};
const struct pmu_backend_ops pmu_arch_ops;

/* pv.c's side: no paravirtual counters in these tests. */
void pv_init(const struct pmu_backend_ops *o, unsigned width)
{
	(void)o;
	(void)width;
}

int64_t pv_hypercall(struct vcpu *v, uint64_t nr, const uint64_t args[3])
{
	(void)v;
	(void)nr;
	(void)args;
	return 0;
}

void pv_switch_in(struct vcpu *v)
{
	(void)v;
}

void pv_switch_out(struct vcpu *v)
{
	(void)v;
}

uint32_t pv_amode(struct vcpu *v, uint64_t evtsel[PV_PMU_COUNTERS])
{
	(void)v;
	(void)evtsel;
	return 0;
}

uint64_t pv_overflow(struct vcpu *v, uint64_t overflowed)
{
	(void)v;
	return overflowed;
}

static struct pmu_domain pd;

static void vcpu_new(struct vcpu *v)
{
	memset(v, 0, sizeof(*v));
	pmu_vcpu_init(&v->pmu, &pd, 0);
	syncs = programs = entries = exits = 0;
}

/*
 * A write to an event select that leaves EN clear changes what no counter counts: the value is
 * kept (RDMSR returns it) with no sync or reprogramming; any other write is both.
 */
static void test_wrmsr(void)
{
	struct vcpu v;
	uint64_t val = 0;

	vcpu_new(&v);
	check(pmu_wrmsr(&v, MSR_IA32_PERFEVTSEL0, ARCH_EVENT_INST_RETIRED | EVTSEL_USR) == VPMU_OK &&
	      pmu_rdmsr(&v, MSR_IA32_PERFEVTSEL0, &val) == VPMU_OK &&
	      val == (ARCH_EVENT_INST_RETIRED | EVTSEL_USR) && programs == 0 && syncs == 1,
	      "an event select written with EN clear: kept, not reprogrammed (the read syncs)");
	check(pmu_wrmsr(&v, MSR_IA32_PERFEVTSEL0, 1ull << 32) == VPMU_GP && programs == 0 &&
	      pmu_rdmsr(&v, MSR_IA32_PERFEVTSEL0, &val) == VPMU_OK &&
	      val == (ARCH_EVENT_INST_RETIRED | EVTSEL_USR),
	      "a reserved bit: #GP, the old value stays");
	check(pmu_wrmsr(&v, MSR_IA32_PERFEVTSEL0, ARCH_EVENT_INST_RETIRED | EN_ALL) == VPMU_OK &&
	      programs == 1 && syncs == 3 && v.pmu.active,
	      "EN set: synced and reprogrammed, the counter counts");
	check(pmu_wrmsr(&v, MSR_IA32_PERFEVTSEL0, 0) == VPMU_OK && programs == 2 && !v.pmu.active,
	      "EN cleared: reprogrammed, nothing counts");
	check(pmu_wrmsr(&v, MSR_IA32_PERF_GLOBAL_CTRL, 1) == VPMU_OK && programs == 3,
	      "GLOBAL_CTRL: reprogrammed");
}

/* The exit fast path runs the hooks itself and the run loop after it: a run is accounted once. */
static void test_hooks(void)
{
	struct vcpu v;

	vcpu_new(&v);
	pmu_before_entry(&v);
	pmu_after_exit(&v);
	check(!v.pmu.run_counts && entries == 0 && exits == 0,
	      "nothing counts: no entry or exit work");
	pmu_wrmsr(&v, MSR_IA32_PERFEVTSEL0, ARCH_EVENT_INST_RETIRED | EN_ALL);
	pmu_before_entry(&v);
	check(v.pmu.run_counts && entries == 1, "a counter counts: the entry hook runs");
	pmu_after_exit(&v);
	pmu_after_exit(&v);
	check(!v.pmu.run_counts && exits == 1, "the run ends once, however often it is asked");
	check(!pmu_exit_light(&v.pmu), "a vPMU counter: not for the fast path");
}

int main(void)
{
	pmu_backend = PMU_BACKEND_SOFT;
	ops = &pmu_soft_ops;
	pd.cfg = (struct vpmu_config){ .enabled = true, .version = 2, .num_gp = 4, .num_fixed = 3,
				       .width = 48 };
	test_wrmsr();
	test_hooks();
	return unit_summary();
}
