/* pmu/pv.c on the arch backend, a modelled PMU: a-mode counters are physical, read by RDPMC. */
#include "tests/unit/unit.h"
#include "tests/unit/arch_machine.h"

#define TOP48		(1ull << 48)	/* the vPMU's counters (i-mode's) wrap here */
#define TICKS		3		/* cycles (and guest TSC ticks) per instruction */
#define RAM_SIZE	(16 * 4096)
/* Guest-physical addresses (= linear: the guest maps its RAM 1:1). */
#define AREA_GPA	0x8000
#define CTL_GPA		0x1000
#define VALUES_GPA	0x1100
#define SAVE_GPA	0x1200
#define SEL(code)	((code) | EVTSEL_EN | EVTSEL_OS | EVTSEL_USR)
#define USR(code)	((code) | EVTSEL_EN | EVTSEL_USR)

/* A domain of one VCPU with its RAM. */
struct dom {
	uint8_t ram[RAM_SIZE] __attribute__((aligned(4096)));
	struct pmu_domain pd;
	struct vcpu v;
};

static struct dom dom0, dom1;
static unsigned rdpmc_calls;

/* Instructions and branches, a-mode, at every ring. */
static const struct pv_control ctl_ab = {
	.ncounters = 2,
	.evtsel = { SEL(ARCH_EVENT_INST_RETIRED), SEL(ARCH_EVENT_BRANCH_RETIRED) },
};

static const struct pv_control nothing;

static struct vcpu *fresh_dom(struct dom *d, enum pmu_acct acct)
{
	vcpu_new(&d->v, &d->pd, acct);
	memset(d->ram, 0, sizeof(d->ram));
	d->v.ram = d->ram;
	d->v.ram_size = RAM_SIZE;
	d->v.dom_vcpus = 1;
	return &d->v;
}

static struct dom *dom_of(struct vcpu *v)
{
	return v == &dom0.v ? &dom0 : &dom1;
}

static struct pv_vcpu_area *area(struct vcpu *v)
{
	return (struct pv_vcpu_area *)(dom_of(v)->ram + AREA_GPA);
}

/* A reader on v: RDPMC as the guest executes it (the hardware's unless it exits), RDTSC. */
static uint64_t g_rdpmc(void *ctx, uint32_t index)
{
	struct vcpu *v = ctx;
	uint64_t val = 0xdead;

	rdpmc_calls++;
	if (!v->rdpmc_exiting)
		model_rdpmc(index, &val);
	else
		pmu_rdpmc(v, index, true, &val);
	return val;
}

static uint64_t g_rdtsc(void *ctx)
{
	(void)ctx;
	return guest_tsc;
}

static struct pv_read_ops ops_of(struct vcpu *v)
{
	return (struct pv_read_ops){ g_rdpmc, g_rdtsc, v };
}

/* A VMCALL of the guest kernel (hv/exit_vmcall.c): it retires (emulated, CPL 0), then the call. */
static int64_t hc(struct vcpu *v, uint64_t nr, uint64_t a0, uint64_t a1)
{
	const uint64_t args[3] = { a0, a1, 0 };
	unsigned cpl = v->cpl;
	int64_t r;

	v->cpl = 0;
	pmu_retired(v, NULL, 0);
	r = pmu_hypercall(v, nr, args);
	v->cpl = cpl;
	return r;
}

static int64_t hc_resume(struct vcpu *v, const struct pv_control *c)
{
	memcpy(dom_of(v)->ram + CTL_GPA, c, sizeof(*c));
	return hc(v, HC_PMU_RESUME, CTL_GPA, 0);
}

/* v's guest runs n instructions at its CPL, every 4th a branch, TICKS cycles each. */
static void grun(struct vcpu *v, uint64_t n)
{
	run(v, n, n / 4, TICKS * n);
}

/*
 * The guest kernel switches thread t in on v: HC_PMU_RESUME with c (NULL: skipped, the control
 * being unchanged), `tail` instructions of the call's way back to the guest, then Start*_thread.
 */
static void thread_in(struct vcpu *v, struct pv_thread_counts *t, const struct pv_control *c,
		      uint64_t tail)
{
	struct pv_read_ops ops = ops_of(v);

	if (c && hc_resume(v, c))
		check(0, "RESUME failed");
	grun(v, tail);
	pv_thread_resume(t, area(v), 0, &ops);
}

static void thread_out(struct vcpu *v, struct pv_thread_counts *t)
{
	struct pv_read_ops ops = ops_of(v);

	pv_thread_suspend(t, &ops);
}

/* The running thread t of v reads its instructions, branches and TSC ticks: are they these? */
__attribute__((format(printf, 6, 7)))
static void check_read(struct vcpu *v, const struct pv_thread_counts *t, uint64_t insns,
		       uint64_t branches, uint64_t ticks, const char *fmt, ...)
{
	struct pv_read_ops ops = ops_of(v);
	uint64_t log[PV_NVALUES];
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	pv_read(t, &ops, log);
	check(log[0] == insns && log[1] == branches && log[PV_TSC] == ticks,
	      "%s (read %llu %llu %llu)", what, (unsigned long long)log[0],
	      (unsigned long long)log[1], (unsigned long long)log[PV_TSC]);
}

/* A machine whose GP counters are `width` bits, holding `base` as some earlier user left them. */
static void machine_at(unsigned width, uint64_t base)
{
	const struct model_cfg cfg = { 2, 4, width, 3, width, true, true };

	machine(&cfg);
	for (unsigned i = 0; i < cfg.num_gp; i++)
		model.pmc[i] = base;
	rdpmc_calls = 0;
}

/*
 * The seed's example scenario (figure 4) on physical counters of `width` bits that start at
 * `base`, just below `bound`: thread 0 of domain 0 runs 100 instructions, is suspended by the
 * guest kernel at T0 (thread 1 runs 1000), resumed at T1 and runs 200, its domain is descheduled
 * at T2 (domain 1 runs 5000 on the same PCPU) and resumed at T3, runs 300; the read at T4 gives
 * the three segments only. Every RESUME's way back (9) is excluded. Counter 0 passes `bound`
 * (2^width: it wraps; 2^(width-1): its sign bit turns) in thread 0's first segment.
 */
static void test_scenario(unsigned width, uint64_t bound)
{
	uint64_t base = bound - 150, mask = (1ull << width) - 1, star;
	struct pv_thread_counts t0 = { 0 }, t1 = { 0 }, u = { 0 };
	struct vcpu *v, *w;

	machine_at(width, base);
	v = fresh_dom(&dom0, PMU_ACCT_GUEST);
	w = fresh_dom(&dom1, PMU_ACCT_GUEST);
	/* Domain 1 ran first with its own thread. */
	load(w);
	check(hc(w, HC_PMU_SETUP, AREA_GPA, 1) == 0 && area(w)->flags == 0 &&
	      area(w)->width == width && area(w)->wrap == mask && area(w)->rdpmc_index[1] == 1,
	      "%u bits: SETUP: counters read by RDPMC, %u bits wide (wrap %#llx)", width, width,
	      (unsigned long long)area(w)->wrap);
	thread_in(w, &u, &ctl_ab, 9);
	grun(w, 50);
	unload(w);
	load(v);
	hc(v, HC_PMU_SETUP, AREA_GPA, 1);
	check(v->rdpmc_exiting, "%u bits: no control yet: RDPMC exits", width);
	thread_in(v, &t0, &ctl_ab, 9);
	check(!v->rdpmc_exiting, "%u bits: a-mode control loaded: RDPMC does not exit", width);
	grun(v, 100);
	check(pv_wrap(model.pmc[0] - base, width) >= bound - base,
	      "%u bits from %#llx: the physical counter passed %#llx under thread 0 (now %#llx)",
	      width, (unsigned long long)base, (unsigned long long)bound,
	      (unsigned long long)model.pmc[0]);
	/* T0 */
	thread_out(v, &t0);
	thread_in(v, &t1, &ctl_ab, 9);
	grun(v, 1000);
	thread_out(v, &t1);
	/* T1 */
	thread_in(v, &t0, &ctl_ab, 9);
	check_read(v, &t0, 100, 25, 300, "%u bits from %#llx: T1: thread 0 has its first segment",
		   width, (unsigned long long)base);
	grun(v, 200);
	/* T2 */
	unload(v);
	load(w);
	grun(w, 5000);
	unload(w);
	/* T3 */
	load(v);
	check(!v->rdpmc_exiting, "%u bits: back on its PCPU, RDPMC still does not exit", width);
	grun(v, 300);
	/* T4 */
	check_read(v, &t0, 600, 150, 600 * TICKS,
		   "%u bits from %#llx: T4: thread 0 counts its 3 segments", width,
		   (unsigned long long)base);
	check(t1.sum[0] == 1000 && t1.sum[1] == 250 && t1.sum[PV_TSC] == 1000 * TICKS,
	      "%u bits from %#llx: thread 1 kept its own 1000", width, (unsigned long long)base);
	/* HC_PMU_READ's VMCALL retires (and counts) before the call reads. */
	star = pv_phys_star(area(v), 0, model.pmc[0]);
	check(hc(v, HC_PMU_READ, 0, 0) == (int64_t)((star + 1) & mask),
	      "%u bits from %#llx: HC_PMU_READ gives Phys* (and its own VMCALL)", width,
	      (unsigned long long)base);
	/* The emulated VMCALL went into Sum_vcpu, not the register: the readers' offset too. */
	check(pv_phys_star(area(v), 0, model.pmc[0]) == ((star + 1) & mask),
	      "%u bits from %#llx: the page's Phys* counts that VMCALL", width,
	      (unsigned long long)base);
	/* Domain 1 back: its thread counts only its own events. */
	unload(v);
	load(w);
	grun(w, 7);
	check_read(w, &u, 5057, 1263, 5057 * TICKS,
		   "%u bits from %#llx: domain 1's thread counts its own", width,
		   (unsigned long long)base);
	unload(w);
	check(rdpmc_calls && !vmcs_misuse && !model.faults && !model.hot_writes &&
	      !model.pmis_lost, "%u bits from %#llx: read by RDPMC; no fault, hot write, lost PMI, "
	      "RDPMC exiting changed with another VMCS current", width, (unsigned long long)base);
}

/*
 * About 2^width (or 2^(width-1)) events after the last RESUME, Phys* wraps (or turns its sign)
 * where no counter does: Sum_vcpu holds them; counts stay exact (seed 003 4.2.1's widths).
 */
static void test_long_run(unsigned width, uint64_t big)
{
	uint64_t mask = (1ull << width) - 1, star;
	struct pv_thread_counts a = { 0 }, b = { 0 };
	struct vcpu *v, *w;

	machine_at(width, 12345);
	v = fresh_dom(&dom0, PMU_ACCT_GUEST);
	w = fresh_dom(&dom1, PMU_ACCT_GUEST);
	load(v);
	hc(v, HC_PMU_SETUP, AREA_GPA, 1);
	thread_in(v, &a, &ctl_ab, 0);
	grun(v, big);
	unload(v);		/* big goes into Sum_vcpu */
	load(w);
	grun(w, 1000);
	unload(w);
	load(v);
	thread_out(v, &a);
	thread_in(v, &b, NULL, 0);
	grun(v, 200);
	star = pv_phys_star(area(v), 0, model.pmc[0]);
	check(star == ((big + 200) & mask) && hc(v, HC_PMU_READ, 0, 0) == (int64_t)(star + 1),
	      "%u bits, %#llx events after RESUME (and its VMCALL): Phys* %#llx, as HC_PMU_READ",
	      width, (unsigned long long)big, (unsigned long long)star);
	check_read(v, &b, 200 + 1, 50, 200 * TICKS,
		   "%u bits, %#llx events after RESUME: B counts its 200 and READ's VMCALL", width,
		   (unsigned long long)big);
	thread_out(v, &b);
	thread_in(v, &a, NULL, 0);
	grun(v, 8);
	check_read(v, &a, big + 8, big / 4 + 2, (big + 8) * TICKS,
		   "%u bits, %#llx events after RESUME: A counts them all", width,
		   (unsigned long long)big);
	unload(v);
}

/* RDPMC stops exiting while the control has a-mode counters, and only then. */
static void test_rdpmc_exiting(void)
{
	const struct pv_control imode_only = {
		.ncounters = 1, .imode_mask = 1, .evtsel = { SEL(ARCH_EVENT_INST_RETIRED) },
		.ireset = { TOP48 - 1000 },
	};
	enum vpmu_result r;
	struct vcpu *v, *w;
	uint64_t val;

	machine(&hw48);
	v = fresh_dom(&dom0, PMU_ACCT_GUEST);
	w = fresh_dom(&dom1, PMU_ACCT_GUEST);
	load(v);
	hc(v, HC_PMU_SETUP, AREA_GPA, 1);
	check(hc_resume(v, &ctl_ab) == 0 && !v->rdpmc_exiting, "RESUME a-mode: RDPMC direct");
	check(hc_resume(v, &nothing) == 0 && v->rdpmc_exiting, "RESUME of no counter: RDPMC exits");
	check(hc_resume(v, &ctl_ab) == 0 && !v->rdpmc_exiting, "RESUME a-mode again: direct");
	check(hc_resume(v, &imode_only) == 0 && v->rdpmc_exiting,
	      "RESUME of an i-mode counter only: RDPMC exits");
	hc_resume(v, &ctl_ab);
	unload(v);
	load(w);
	check(w->rdpmc_exiting && !v->rdpmc_exiting,
	      "another domain without PV keeps exiting (RDPMC exiting is per VMCS)");
	wr(w, MSR_IA32_PERFEVTSEL0, SEL(ARCH_EVENT_INST_RETIRED));
	grun(w, 10);
	r = pmu_rdpmc(w, 0, true, &val);
	check(r == VPMU_OK && val == 10, "the other domain's emulated RDPMC reads its vPMU count "
	      "(%llu)", (unsigned long long)val);
	unload(w);
	load(v);
	check(!v->rdpmc_exiting, "switched in again: still direct");
	check(!vmcs_misuse, "RDPMC exiting changed only with the VCPU's VMCS current");
	unload(v);
}

/* Where RDPMC exiting cannot be cleared, the exits read a-mode counters as the hardware would. */
static void test_rdpmc_fixed(void)
{
	struct pv_thread_counts t = { 0 };
	uint64_t val;
	struct vcpu *v;

	machine_at(40, (1ull << 40) - 50);
	rdpmc_exiting_fixed = true;
	v = fresh_dom(&dom0, PMU_ACCT_GUEST);
	load(v);
	hc(v, HC_PMU_SETUP, AREA_GPA, 1);
	thread_in(v, &t, &ctl_ab, 0);
	grun(v, 100);
	check(v->rdpmc_exiting, "RDPMC exiting fixed to 1: a-mode reads exit");
	check_read(v, &t, 100, 25, 100 * TICKS, "and count exactly across the wrap");
	check(pmu_rdpmc(v, 3, true, &val) == VPMU_OK && val == 0,
	      "RDPMC of counter 3, not in the control: the vPMU's");
	unload(v);
}

/* A control uses the counters the VCPU has: on the arch backend, no more than the hardware's. */
static void test_small_pmu(void)
{
	static const struct model_cfg two = { 2, 2, 48, 3, 48, true, true };
	const struct pv_control three = {
		.ncounters = 3, .evtsel = { SEL(ARCH_EVENT_INST_RETIRED),
		SEL(ARCH_EVENT_INST_RETIRED), SEL(ARCH_EVENT_INST_RETIRED) },
	};
	struct pv_thread_counts t = { 0 };
	struct vcpu *v;

	machine(&two);
	v = fresh_dom(&dom0, PMU_ACCT_GUEST);
	load(v);
	hc(v, HC_PMU_SETUP, AREA_GPA, 1);
	check(hc_resume(v, &three) == -PV_EINVAL, "2 hardware counters: a control of 3 is -EINVAL");
	thread_in(v, &t, &ctl_ab, 0);
	grun(v, 64);
	check_read(v, &t, 64, 16, 64 * TICKS, "2 hardware counters: a control of 2 counts");
	check(!model.faults, "2 hardware counters: no MSR beyond them touched (%u faults)",
	      model.faults);
	unload(v);
}

/*
 * In one VCPU: a-mode counters 0 and 1, i-mode counter 2 with the domain's vector, and the
 * guest's own trap-and-emulate counter 3 and fixed counter 0; the guest's vPMU counter 0 stands
 * still while PV holds counter 0, and counts again once a control without it is loaded.
 */
static void test_mixed(void)
{
	const struct pv_control c = {
		.ncounters = 3, .imode_mask = 4,
		.evtsel = { SEL(ARCH_EVENT_INST_RETIRED), SEL(ARCH_EVENT_BRANCH_RETIRED),
			    USR(ARCH_EVENT_INST_RETIRED) },
		.ireset = { 0, 0, TOP48 - 1000 },
	};
	uint64_t values[PV_PMU_COUNTERS] = { 0, 0, TOP48 - 600 }, save[PV_PMU_COUNTERS], val;
	struct pv_thread_counts t = { 0 };
	struct vcpu *v;

	machine(&hw48);
	v = fresh_dom(&dom0, PMU_ACCT_GUEST);
	load(v);
	/* The guest's own counters, user mode only (its VMCALLs run at CPL 0). */
	wr(v, MSR_IA32_PERFEVTSEL0 + 3, USR(ARCH_EVENT_CORE_CYCLES));
	wr(v, MSR_IA32_FIXED_CTR_CTRL, FIXED_CTRL_USR);
	wr(v, MSR_IA32_PERFEVTSEL0, USR(ARCH_EVENT_INST_RETIRED));
	wr(v, MSR_IA32_A_PMC0, 77);
	wr(v, MSR_IA32_PERF_GLOBAL_CTRL, 0x100000009ull);
	hc(v, HC_PMU_SETUP, AREA_GPA, 1);
	hc(v, HC_PMU_SET_VECTOR, 0xE0, 0);
	memcpy(dom0.ram + CTL_GPA, &c, sizeof(c));
	memcpy(dom0.ram + VALUES_GPA, values, sizeof(values));
	check(hc(v, HC_PMU_IRESUME, CTL_GPA, VALUES_GPA) == 0 && !v->rdpmc_exiting,
	      "IRESUME: 2 a-mode counters and 1 i-mode: RDPMC direct");
	pv_thread_resume(&t, area(v), 0, &(struct pv_read_ops){ g_rdpmc, g_rdtsc, v });
	check(t.mask == (3u | 1u << PV_TSC) && (model.evtsel[0] & EVTSEL_OS) &&
	      !(model.evtsel[0] & EVTSEL_INT) && (model.evtsel[2] & EVTSEL_INT),
	      "counter 0 runs the thread's event select (OS and USR, no INT), counter 2 i-mode's");
	grun(v, 500);
	check(!v->raised && !area(v)->overflow_pending, "500 instructions: no i-mode overflow yet");
	grun(v, 500);
	check(v->raised == 0xE0 && area(v)->overflow_pending == 1u << 2 * PV_PENDING_BITS && area(v)->overflows == 1 &&
	      !v->guest_pmis, "the 600th overflows counter 2: the domain's vector, not the LVTPC");
	/* An instruction emulated at CPL 3 (CPUID, say): a-mode and the guest's counters see it. */
	pmu_retired(v, NULL, 3);
	check_read(v, &t, 1001, 250, 1000 * TICKS, "a-mode counters count on beside it");
	check(rd(v, MSR_IA32_PMC0 + 3) == 1000 * TICKS && rd(v, MSR_IA32_FIXED_CTR0) == 1001,
	      "the guest's counter 3 and fixed counter 0 count (%llu %llu)",
	      (unsigned long long)rd(v, MSR_IA32_PMC0 + 3),
	      (unsigned long long)rd(v, MSR_IA32_FIXED_CTR0));
	check(rd(v, MSR_IA32_PMC0) == 77 && !(rd(v, MSR_IA32_PERF_GLOBAL_STATUS) & 1),
	      "the guest's counter 0 stands still while PV holds it");
	check(hc(v, HC_PMU_ISUSPEND, SAVE_GPA, 0) == 1 << 2 * PV_PENDING_BITS,
	      "ISUSPEND returns the pending count of counter 2");
	memcpy(save, dom0.ram + SAVE_GPA, sizeof(save));
	/* The overflow was seen at the end of the 500: the 400 past zero stay in the reload. */
	check(save[2] == TOP48 - 1000 + 400 + 1 && !(model.evtsel[2] & EVTSEL_EN),
	      "ISUSPEND saves counter 2, re-armed at its reset value plus the 400 past zero "
	      "(and 1 since), stops it");
	check(hc_resume(v, &nothing) == 0 && v->rdpmc_exiting, "a control without counters");
	grun(v, 40);
	check(rd(v, MSR_IA32_PMC0) == 77 + 40 && pmu_rdpmc(v, 0, true, &val) == VPMU_OK &&
	      val == 77 + 40, "the guest's counter 0 counts again, RDMSR and RDPMC alike");
	check(!model.faults && !model.hot_writes && !model.pmis_lost,
	      "mixed: no fault, no hot write, no lost PMI");
	unload(v);
}

/* What the hypervisor does on the VCPU's behalf counts in a-mode as in the vPMU. */
static void test_accounting(void)
{
	static const struct {
		enum pmu_acct acct;
		const char *name;
		uint64_t insns;
	} modes[] = {
		{ PMU_ACCT_GUEST, "guest", 201 },
		{ PMU_ACCT_VCPU, "vcpu", 250 },
		{ PMU_ACCT_HYBRID, "hybrid", 201 },
	};

	for (unsigned m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct pv_thread_counts t = { 0 };
		struct vcpu *v;
		uint64_t log[PV_NVALUES];
		struct pv_read_ops ops;

		machine(&hw48);
		v = fresh_dom(&dom0, modes[m].acct);
		ops = ops_of(v);
		load(v);
		hc(v, HC_PMU_SETUP, AREA_GPA, 1);
		thread_in(v, &t, &ctl_ab, 0);
		grun(v, 100);
		/* An exit: the hypervisor emulates a CPL-3 instruction in 50 of its own. */
		hv_work(v, 50, 0, 50);
		pmu_retired(v, NULL, 3);
		grun(v, 100);
		pv_read(&t, &ops, log);
		check(log[0] == modes[m].insns, "acct=%s: a-mode instructions %llu (want %llu)",
		      modes[m].name, (unsigned long long)log[0],
		      (unsigned long long)modes[m].insns);
		unload(v);
	}
}

int main(void)
{
	for (unsigned width = 40; width <= 48; width += 8) {
		test_scenario(width, 1ull << width);
		test_scenario(width, 1ull << (width - 1));
		test_long_run(width, (1ull << width) - 100);
		test_long_run(width, (1ull << (width - 1)) - 100);
	}
	test_rdpmc_exiting();
	test_rdpmc_fixed();
	test_small_pmu();
	test_mixed();
	test_accounting();
	return unit_summary();
}
