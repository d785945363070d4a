/* pmu/backend_arch.c on a modelled PMU: MSR order, VCPU switches, accounting, overflow, widths. */
#include "tests/unit/unit.h"
#include "tests/unit/arch_machine.h"

#define TOP		(1ull << 48)	/* 2^48: the guest's counters wrap here */
#define SEL(code)	((code) | EVTSEL_EN | EVTSEL_OS | EVTSEL_USR)
#define INST		SEL(ARCH_EVENT_INST_RETIRED)
#define BRANCH		SEL(ARCH_EVENT_BRANCH_RETIRED)
#define CYCLES		SEL(ARCH_EVENT_CORE_CYCLES)
#define FIXED_ALL	(FIXED_CTRL_OS | FIXED_CTRL_USR)
#define STATUS		MSR_IA32_PERF_GLOBAL_STATUS

/* n guest instructions, each a branch of one cycle, in runs of at most `chunk`. */
static void run_long(struct vcpu *v, uint64_t n, uint64_t chunk)
{
	while (n) {
		uint64_t k = n < chunk ? n : chunk;

		run(v, k, k, k);
		n -= k;
	}
}

/* Index of the first / last log entry for msr at or after `from` (-1: none). */
static int log_first(uint32_t msr, unsigned from)
{
	for (unsigned i = from; i < model.nlog; i++)
		if (model.log[i].msr == msr)
			return (int)i;
	return -1;
}

static int log_last(uint32_t msr, unsigned from)
{
	int last = -1;

	for (unsigned i = from; i < model.nlog; i++)
		if (model.log[i].msr == msr)
			last = (int)i;
	return last;
}

/* The last log entry at or after `from` that sets up a counter (event select, value, fixed). */
static int log_last_setup(unsigned from)
{
	int last = -1;

	for (unsigned i = from; i < model.nlog; i++) {
		uint32_t m = model.log[i].msr;

		if (m - MSR_IA32_PERFEVTSEL0 < MODEL_MAX_GP || m - MSR_IA32_PMC0 < MODEL_MAX_GP ||
		    m - MSR_IA32_A_PMC0 < MODEL_MAX_GP ||
		    m - MSR_IA32_FIXED_CTR0 < MODEL_MAX_FIXED || m == MSR_IA32_FIXED_CTR_CTRL)
			last = (int)i;
	}
	return last;
}

/* Nothing counts, nothing is set to count, no status: what a switch-out must leave. */
static bool model_idle(void)
{
	uint64_t sels = 0;

	for (unsigned i = 0; i < model.cfg.num_gp; i++)
		sels |= model.evtsel[i] & EVTSEL_EN;
	return !model.global_ctrl && !sels && !model.fixed_ctrl && !model.global_status;
}

/* Loads v counting instructions on GP 0, cycles on GP `cyc`, and fixed counters 0 and 1. */
static void load_inst_cycles(struct vcpu *v, unsigned cyc)
{
	load(v);
	wr(v, MSR_IA32_PERFEVTSEL0, INST);
	wr(v, MSR_IA32_PERFEVTSEL0 + cyc, CYCLES);
	wr(v, MSR_IA32_FIXED_CTR_CTRL, FIXED_ALL | FIXED_ALL << 4);
	wr(v, MSR_IA32_PERF_GLOBAL_CTRL, 0x300000001ull | 1ull << cyc);
}

/* --- The tests. --- */

static void test_choice(void)
{
	struct model_cfg v1 = hw48, narrow = hw48;

	machine(&hw48);
	check(pmu_backend == PMU_BACKEND_ARCH, "pmu=auto with a working PMU: arch backend");
	pmu_init(PMU_CHOICE_ARCH);
	check(pmu_backend == PMU_BACKEND_ARCH, "pmu=arch with a working PMU: arch backend");
	pmu_init(PMU_CHOICE_SOFT);
	check(pmu_backend == PMU_BACKEND_SOFT, "pmu=soft: soft backend even with a PMU");
	pmu_init(PMU_CHOICE_OFF);
	check(pmu_backend == PMU_BACKEND_OFF, "pmu=off: no backend");
	pmu_hw.works = false;
	pmu_hw.why_not = "it does not count";
	pmu_init(PMU_CHOICE_ARCH);
	check(pmu_backend == PMU_BACKEND_SOFT, "pmu=arch without a working PMU: soft backend");
	v1.version = 1;
	machine(&v1);
	check(pmu_backend == PMU_BACKEND_SOFT, "version 1 (no GLOBAL_CTRL to switch): soft");
	narrow.gp_width = 31;
	machine(&narrow);
	check(pmu_backend == PMU_BACKEND_SOFT, "31-bit counters: soft backend");
}

static void test_guest_view(void)
{
	struct model_cfg small = { 2, 2, 40, 1, 40, true, true }, big = hw48;
	struct pmu_domain d;
	struct vcpu v;
	uint32_t a, b, c, e;

	machine(&small);
	pmu_hw.unavailable_events = 1u << 5;	/* no branches retired */
	vcpu_new(&v, &d, PMU_ACCT_GUEST);
	pmu_cpuid(&v, &a, &b, &c, &e);
	check((a >> 8 & 0xff) == 2 && (e & 0x1f) == 1,
	      "guest sees the hardware's 2 GP and 1 fixed counters, not 4 and 3 (%#x %#x)", a, e);
	check((a >> 16 & 0xff) == 48 && (e >> 5 & 0xff) == 48, "guest counters are 48 bits wide");
	check(b & (1u << 5), "an event the hardware lacks is unavailable to the guest");
	load(&v);
	check(!wr(&v, MSR_IA32_PERFEVTSEL0 + 2, INST) && !wr(&v, MSR_IA32_FIXED_CTR0 + 1, 0),
	      "guest writes beyond the hardware's counters #GP");
	check(wr(&v, MSR_IA32_PERFEVTSEL0, BRANCH) && !(model.evtsel[0] & EVTSEL_EN),
	      "an unavailable event leaves the physical counter off");
	check(model.faults == 0, "no MSR beyond the hardware's counters touched (%u faults)",
	      model.faults);
	unload(&v);
	big.num_gp = 8;
	machine(&big);
	vcpu_new(&v, &d, PMU_ACCT_GUEST);
	pmu_cpuid(&v, &a, &b, &c, &e);
	check((a >> 8 & 0xff) == 4, "8 hardware counters: the guest still sees 4");
}

static void test_cpu_init(void)
{
	struct model_cfg nocaps = hw48;

	machine(&hw48);
	model_reset(&hw48);
	model.evtsel[0] = INST;		/* as a probe or firmware might leave it */
	model.global_status = 1;
	pmu_cpu_init();
	check(model.nlog && model.log[0].msr == MSR_IA32_PERF_GLOBAL_CTRL && !model.log[0].val,
	      "cpu_init: GLOBAL_CTRL = 0 is the first write");
	check(model.hot_writes == 0 && model_idle() && !model.global_status,
	      "cpu_init: every counter off and status clear, none touched while enabled");
	check(model.lvtpc_vector == PMU_HOST_PMI_VECTOR && !model.lvtpc_masked &&
	      log_last(MODEL_LOG_LVTPC, 0) == (int)model.nlog - 1,
	      "cpu_init: host LVTPC = vector 0xF0, unmasked, last");
	check(model.faults == 0 && arch_fw_write, "cpu_init: full-width writes found, no fault");
	nocaps.has_caps = false;
	machine(&nocaps);
	check(model.faults == 1 && model.fault_msr == MSR_IA32_PERF_CAPABILITIES && !arch_fw_write,
	      "no IA32_PERF_CAPABILITIES: its #GP means legacy writes");
}

/* Disable before reprogramming, enable last, on every path that writes counters. */
static void test_order(void)
{
	struct pmu_domain d;
	struct vcpu v;
	unsigned from;
	int setup;

	machine(&hw48);
	vcpu_new(&v, &d, PMU_ACCT_VCPU);
	load_inst_cycles(&v, 1);
	run(&v, 10, 1, 10);
	unload(&v);
	from = model.nlog;
	load(&v);
	setup = log_last_setup(from);
	check(model.log[from].msr == MSR_IA32_PERF_GLOBAL_CTRL && !model.log[from].val,
	      "switch-in: GLOBAL_CTRL = 0 first");
	check(setup > (int)from && log_first(MODEL_LOG_VMCS, from) > setup,
	      "switch-in: VMCS GLOBAL_CTRL pair set after every counter is set up");
	check(model.log[model.nlog - 1].msr == MSR_IA32_PERF_GLOBAL_CTRL &&
	      model.log[model.nlog - 1].val == 0x300000003ull,
	      "switch-in, vcpu mode: GLOBAL_CTRL = the guest's enables is the last write");
	check(v.vmcs.guest == 0x300000003ull && v.vmcs.host == 0x300000003ull,
	      "vcpu mode: VMCS guest and host GLOBAL_CTRL both the guest's (%#llx %#llx)",
	      (unsigned long long)v.vmcs.guest, (unsigned long long)v.vmcs.host);
	run(&v, 10, 1, 10);
	from = model.nlog;
	wr(&v, MSR_IA32_PERFEVTSEL0 + 2, BRANCH);
	wr(&v, MSR_IA32_PERF_GLOBAL_CTRL, 0x300000007ull);
	check(model.log[from].msr == MSR_IA32_PERF_GLOBAL_CTRL && !model.log[from].val &&
	      model.log[model.nlog - 1].msr == MSR_IA32_PERF_GLOBAL_CTRL &&
	      model.log[model.nlog - 1].val == 0x300000007ull,
	      "guest WRMSR while counting in the hypervisor: stop first, restart last");
	rd(&v, MSR_IA32_PMC0);
	check(model.hot_writes == 0, "no counter set up while enabled (%u)", model.hot_writes);
	from = model.nlog;
	unload(&v);
	check(model.log[from].msr == MSR_IA32_PERF_GLOBAL_CTRL && !model.log[from].val &&
	      model.hot_writes == 0 && model_idle(),
	      "switch-out: GLOBAL_CTRL = 0 first, then every counter off");
	vcpu_new(&v, &d, PMU_ACCT_GUEST);
	load(&v);
	wr(&v, MSR_IA32_PERFEVTSEL0, INST);
	unload(&v);
	from = model.nlog;
	load(&v);
	check(log_last(MSR_IA32_PERF_GLOBAL_CTRL, from) == (int)from &&
	      model.log[model.nlog - 1].msr == MODEL_LOG_VMCS && !model.global_ctrl,
	      "switch-in, guest mode: counting stays off until the VM entry loads it");
	check(model.faults == 0, "order tests: no MSR fault (%u)", model.faults);
	unload(&v);
}

static void test_counting(void)
{
	struct pmu_domain d;
	struct vcpu v;
	uint64_t val = 0;

	machine(&hw48);
	vcpu_new(&v, &d, PMU_ACCT_GUEST);
	load(&v);
	wr(&v, MSR_IA32_PERFEVTSEL0, INST);
	wr(&v, MSR_IA32_PERFEVTSEL0 + 1, INST & ~EVTSEL_OS);
	wr(&v, MSR_IA32_PERFEVTSEL0 + 2, BRANCH & ~EVTSEL_USR);
	wr(&v, MSR_IA32_PERFEVTSEL0 + 3, CYCLES | (1ull << EVTSEL_CMASK_SHIFT));
	wr(&v, MSR_IA32_FIXED_CTR_CTRL, FIXED_ALL | FIXED_CTRL_USR << 4);
	wr(&v, MSR_IA32_PERF_GLOBAL_CTRL, 0x30000000full);
	run(&v, 1000, 100, 3000);
	v.cpl = 0;
	run(&v, 200, 20, 500);
	check(rd(&v, MSR_IA32_PMC0) == 1200, "instructions at every ring: 1200");
	check(rd(&v, MSR_IA32_PMC0 + 1) == 1000, "instructions at USR only: 1000");
	check(rd(&v, MSR_IA32_PMC0 + 2) == 20, "branches at OS only: 20");
	check(rd(&v, MSR_IA32_PMC0 + 3) == 0 && !(model.evtsel[3] & EVTSEL_EN),
	      "CMASK set: counts nothing, as on the soft backend");
	check(rd(&v, MSR_IA32_FIXED_CTR0) == 1200 && rd(&v, MSR_IA32_FIXED_CTR0 + 1) == 3000,
	      "fixed: instructions 1200, cycles at USR only 3000");
	check(pmu_rdpmc(&v, 0, true, &val) == VPMU_OK && val == 1200, "RDPMC 0 reads 1200");
	check(v.rdpmc_exiting && !vmcs_misuse && !model_rdpmc(0, &val) && val != 1200,
	      "no paravirtual counter: RDPMC exits (the register holds an armed value, %#llx)",
	      (unsigned long long)val);
	wr(&v, MSR_IA32_PERF_GLOBAL_CTRL, 0x300000000ull | 0xe);
	run(&v, 500, 50, 500);
	check(rd(&v, MSR_IA32_PMC0) == 1200 && v.vmcs.guest == 0x300000006ull,
	      "guest GLOBAL_CTRL bit 0 clear: counter 0 stops (VMCS guest %#llx)",
	      (unsigned long long)v.vmcs.guest);
	wr(&v, MSR_IA32_PMC0 + 1, 5);
	run(&v, 7, 0, 7);
	check(rd(&v, MSR_IA32_PMC0 + 1) == 5, "a guest write takes effect (USR-only, at CPL 0)");
	v.cpl = 3;
	run(&v, 7, 0, 7);
	check(rd(&v, MSR_IA32_PMC0 + 1) == 12, "and counts on from the written value: 12");
	check(model.faults == 0 && model.hot_writes == 0, "counting: no fault, no hot write");
	unload(&v);
}

/* Two VCPUs of two domains alternate on one PCPU: each counts its own events only. */
static void test_switch(void)
{
	struct pmu_domain da, db;
	struct vcpu a, b;
	bool leaked = false;

	machine(&hw48);
	vcpu_new(&a, &da, PMU_ACCT_GUEST);
	vcpu_new(&b, &db, PMU_ACCT_VCPU);
	load(&a);
	wr(&a, MSR_IA32_PERFEVTSEL0, INST);
	wr(&a, MSR_IA32_PERFEVTSEL0 + 1, CYCLES);
	wr(&a, MSR_IA32_FIXED_CTR_CTRL, FIXED_ALL);
	wr(&a, MSR_IA32_PERF_GLOBAL_CTRL, 0x100000003ull);
	unload(&a);
	load(&b);
	wr(&b, MSR_IA32_PERFEVTSEL0, BRANCH);
	wr(&b, MSR_IA32_A_PMC0, 1000);
	unload(&b);
	for (unsigned i = 0; i < 10; i++) {
		load(&a);
		run(&a, 100, 10, 300);
		hv_work(&a, 50, 5, 80);
		unload(&a);
		/* The scheduler's own work between VCPUs: nobody's. */
		model_run(1000, 100, 1000, 0, false);
		leaked |= !model_idle();
		load(&b);
		run(&b, 30, 7, 90);
		hv_work(&b, 20, 3, 40);
		unload(&b);
		model_run(1000, 100, 1000, 0, false);
		leaked |= !model_idle();
	}
	check(!leaked, "between VCPUs nothing counts");
	check(a.pmu.vpmu.pmc[0] == 1000 && a.pmu.vpmu.pmc[1] == 3000 && a.pmu.vpmu.fixed[0] == 1000,
	      "A (guest mode) counted its own instructions, cycles, fixed instructions: "
	      "%llu %llu %llu", (unsigned long long)a.pmu.vpmu.pmc[0],
	      (unsigned long long)a.pmu.vpmu.pmc[1], (unsigned long long)a.pmu.vpmu.fixed[0]);
	check(b.pmu.vpmu.pmc[0] == 1100, "B (vcpu mode) counted its own branches, guest and "
	      "hypervisor: %llu", (unsigned long long)b.pmu.vpmu.pmc[0]);
	check(!b.pmu.vpmu.pmc[1] && !b.pmu.vpmu.fixed[0],
	      "B's counters it never programmed stay 0 (A's were live on the same PCPU)");
	check(model.faults == 0 && model.hot_writes == 0, "switches: no fault, no hot write");
}

/* Every physical counter reads 0, through RDMSR and RDPMC (what a next VCPU could read). */
static bool model_zero(void)
{
	uint64_t val, any = 0;

	for (unsigned i = 0; i < model.cfg.num_gp; i++) {
		model_rdpmc(i, &val);
		any |= val | model.pmc[i];
	}
	for (unsigned j = 0; j < model.cfg.num_fixed; j++) {
		model_rdpmc(RDPMC_FIXED | j, &val);
		any |= val | model.fixed[j];
	}
	return !any;
}

/* Switch-out leaves no counter value behind for the next VCPU (or domain) to read. */
static void test_switch_clears(void)
{
	struct pmu_domain da, db;
	struct vcpu a, b;

	machine(&hw48);
	vcpu_new(&a, &da, PMU_ACCT_GUEST);
	vcpu_new(&b, &db, PMU_ACCT_GUEST);
	load_inst_cycles(&a, 3);
	run(&a, 12345, 678, 23456);
	check(!model_zero(), "A's counters are live while it runs");
	unload(&a);
	check(model_idle() && model_zero(), "after A's switch-out every counter reads 0");
	load(&b);
	run(&b, 100, 10, 100);
	check(model_zero() && !b.pmu.vpmu.pmc[0] && !b.pmu.vpmu.fixed[0],
	      "B (nothing programmed) reads 0 from every index");
	unload(&b);
	load(&a);
	run(&a, 5, 1, 7);
	unload(&a);
	check(a.pmu.vpmu.pmc[0] == 12350 && a.pmu.vpmu.pmc[3] == 23463 &&
	      a.pmu.vpmu.fixed[0] == 12350 && a.pmu.vpmu.fixed[1] == 23463,
	      "A's own counts survive the clearing (restored from its vPMU): %llu %llu",
	      (unsigned long long)a.pmu.vpmu.pmc[0], (unsigned long long)a.pmu.vpmu.pmc[3]);
}

/* The VMware modes: what hypervisor work on the VCPU's exits adds. */
static void test_accounting(void)
{
	static const struct {
		enum pmu_acct acct;
		const char *name;
		uint64_t inst, br, cyc;
	} modes[] = {
		{ PMU_ACCT_GUEST, "guest", 2000, 200, 6000 },
		{ PMU_ACCT_VCPU, "vcpu", 2500, 250, 8000 },
		{ PMU_ACCT_HYBRID, "hybrid", 2000, 200, 8000 },
	};

	for (unsigned m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct pmu_domain d;
		struct vcpu v;
		uint64_t got[5];

		machine(&hw48);
		vcpu_new(&v, &d, modes[m].acct);
		load(&v);
		wr(&v, MSR_IA32_PERFEVTSEL0, INST);
		wr(&v, MSR_IA32_PERFEVTSEL0 + 1, BRANCH);
		wr(&v, MSR_IA32_PERFEVTSEL0 + 2, CYCLES);
		wr(&v, MSR_IA32_PERFEVTSEL0 + 3, INST & ~EVTSEL_OS);
		wr(&v, MSR_IA32_FIXED_CTR_CTRL, FIXED_ALL | FIXED_ALL << 4);
		wr(&v, MSR_IA32_PERF_GLOBAL_CTRL, 0x30000000full);
		run(&v, 1000, 100, 3000);
		hv_work(&v, 500, 50, 2000);
		run(&v, 1000, 100, 3000);
		for (unsigned i = 0; i < 3; i++)
			got[i] = rd(&v, MSR_IA32_PMC0 + i);
		got[3] = rd(&v, MSR_IA32_FIXED_CTR0);
		got[4] = rd(&v, MSR_IA32_FIXED_CTR0 + 1);
		check(got[0] == modes[m].inst && got[1] == modes[m].br && got[2] == modes[m].cyc &&
		      got[3] == modes[m].inst && got[4] == modes[m].cyc,
		      "acct=%s: instructions %llu, branches %llu, cycles %llu, fixed %llu %llu",
		      modes[m].name, (unsigned long long)got[0], (unsigned long long)got[1],
		      (unsigned long long)got[2], (unsigned long long)got[3],
		      (unsigned long long)got[4]);
		check(rd(&v, MSR_IA32_PMC0 + 3) == 2000,
		      "acct=%s: a USR-only counter never sees the hypervisor (CPL 0)",
		      modes[m].name);
		unload(&v);
	}
}

/* A guest counter armed n events before its wrap, with or without INT: what one run gives. */
static void test_overflow(void)
{
	struct pmu_domain d;
	struct vcpu v;

	machine(&hw48);
	vcpu_new(&v, &d, PMU_ACCT_GUEST);
	load(&v);
	wr(&v, MSR_IA32_PMC0, (uint32_t)-100);
	wr(&v, MSR_IA32_PERFEVTSEL0, INST | EVTSEL_INT);
	run(&v, 99, 0, 99);
	check(model.pmis == 0 && v.guest_pmis == 0, "INT: no PMI after 99 of 100 events");
	run(&v, 1, 0, 1);
	check(model.pmis == 1 && v.guest_pmis == 1, "INT: the 100th event gives one host PMI, "
	      "one guest PMI (%u %u)", model.pmis, v.guest_pmis);
	check(!model.lvtpc_masked && !model.global_status,
	      "host PMI: physical GLOBAL_STATUS cleared, LVTPC unmasked again");
	check(rd(&v, MSR_IA32_PMC0) == 0 && rd(&v, STATUS) == 1,
	      "guest counter wrapped to 0, GLOBAL_STATUS bit 0 set");
	run(&v, 50, 0, 50);
	check(rd(&v, MSR_IA32_PMC0) == 50 && v.guest_pmis == 1, "counts on to 50, no more PMIs");
	wr(&v, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);

	/* INT clear: the status bit, no guest PMI (the host PMI still folds the count). */
	wr(&v, MSR_IA32_PERFEVTSEL0 + 1, BRANCH);
	wr(&v, MSR_IA32_A_PMC0 + 1, TOP - 3);
	run(&v, 10, 3, 10);
	check(v.guest_pmis == 1 && rd(&v, STATUS) == 2 && rd(&v, MSR_IA32_PMC0 + 1) == 0,
	      "INT clear: wrap sets GLOBAL_STATUS bit 1, no guest PMI");

	/* A fixed counter with its PMI bit. */
	wr(&v, MSR_IA32_FIXED_CTR0 + 1, TOP - 10);
	wr(&v, MSR_IA32_FIXED_CTR_CTRL, (FIXED_ALL | FIXED_CTRL_PMI) << 4);
	wr(&v, MSR_IA32_PERF_GLOBAL_CTRL, 0x200000003ull);
	run(&v, 9, 0, 9);
	check(v.guest_pmis == 1, "fixed counter: no PMI after 9 of 10 cycles");
	run(&v, 1, 0, 1);
	check(v.guest_pmis == 2 && (rd(&v, STATUS) & (1ull << 33)),
	      "fixed counter: the 10th cycle gives a guest PMI, GLOBAL_STATUS bit 33");
	wr(&v, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 0x200000003ull);

	/* Two counters wrap in one run: one guest PMI for both. */
	wr(&v, MSR_IA32_A_PMC0, TOP - 5);
	wr(&v, MSR_IA32_FIXED_CTR0 + 1, TOP - 5);
	run(&v, 5, 0, 5);
	check(v.guest_pmis == 3 && rd(&v, STATUS) == 0x200000001ull,
	      "two counters wrap together: one guest PMI, both status bits");
	wr(&v, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 0x200000003ull);

	/* The guest reads before the host PMI is taken: one guest PMI all the same. */
	wr(&v, MSR_IA32_A_PMC0, TOP - 2);
	model_run(2, 0, 0, 3, true);
	check(rd(&v, STATUS) == 1 && v.guest_pmis == 4,
	      "a read folds the wrap in before the host PMI");
	take_pmi(&v);
	check(v.guest_pmis == 4 && !model.lvtpc_masked,
	      "the late host PMI finds nothing new: still one guest PMI");
	wr(&v, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);

	/* An emulated instruction (a VM exit, no retirement in the guest) is the last one. */
	wr(&v, MSR_IA32_A_PMC0, TOP - 1);
	pmu_retired(&v, NULL, 3);
	check(v.guest_pmis == 5 && rd(&v, MSR_IA32_PMC0) == 0 && rd(&v, STATUS) == 1,
	      "an emulated instruction wraps the counter: guest PMI");
	check(model.pmis_lost == 0 && model.faults == 0 && model.hot_writes == 0,
	      "overflow: no PMI lost to a masked LVTPC, no fault, no hot write");
	unload(&v);
}

/* Emulated instructions count where the hardware could not see them. */
static void test_retired(void)
{
	static const struct soft_insn stepped;
	static const enum pmu_acct accts[] = { PMU_ACCT_GUEST, PMU_ACCT_VCPU, PMU_ACCT_HYBRID };
	static const uint64_t want[] = { 1, 0, 1 };

	for (unsigned m = 0; m < 3; m++) {
		struct pmu_domain d;
		struct vcpu v;

		machine(&hw48);
		vcpu_new(&v, &d, accts[m]);
		load(&v);
		wr(&v, MSR_IA32_PERFEVTSEL0, INST);
		wr(&v, MSR_IA32_PERFEVTSEL0 + 1, INST & ~EVTSEL_OS);
		pmu_retired(&v, NULL, 0);
		pmu_retired(&v, &stepped, 0);
		check(rd(&v, MSR_IA32_PMC0) == want[m] && rd(&v, MSR_IA32_PMC0 + 1) == 0,
		      "acct mode %u: an emulated CPL-0 instruction adds %llu (a stepped one 0)", m,
		      (unsigned long long)want[m]);
		unload(&v);
	}
}

/* Physical widths 48 and 40, with and without full-width writes: the guest always sees 48. */
static void test_widths(void)
{
	static const struct {
		const char *name;
		struct model_cfg cfg;
		uint64_t chunk;
	} hosts[] = {
		{ "48-bit, full-width writes", { 2, 4, 48, 3, 48, true, true }, 1ull << 40 },
		{ "40-bit, full-width writes", { 2, 4, 40, 3, 40, true, true }, 1ull << 36 },
		{ "40-bit GP, 48-bit fixed", { 2, 4, 40, 3, 48, true, true }, 1ull << 36 },
		{ "48-bit, legacy writes", { 2, 4, 48, 3, 48, true, false }, 1ull << 29 },
		{ "40-bit, legacy writes", { 2, 4, 40, 3, 40, true, false }, 1ull << 29 },
		{ "40-bit, no PERF_CAPABILITIES", { 2, 4, 40, 3, 40, false, false }, 1ull << 29 },
	};

	for (unsigned h = 0; h < sizeof(hosts) / sizeof(hosts[0]); h++) {
		const char *name = hosts[h].name;
		uint64_t chunk = hosts[h].chunk, far = (1ull << 42) + 7, faults;
		unsigned w = hosts[h].cfg.gp_width;
		struct pmu_domain d;
		struct vcpu v;
		bool wide = false, negative;

		machine(&hosts[h].cfg);
		faults = model.faults;
		vcpu_new(&v, &d, PMU_ACCT_GUEST);
		load(&v);

		/* Near the wrap: -5 in any width. */
		wr(&v, MSR_IA32_PERFEVTSEL0, INST | EVTSEL_INT);
		wr(&v, MSR_IA32_A_PMC0, TOP - 5);
		check(model.pmc[0] == model_mask(w) - 4, "%s: TOP - 5 armed as -5 in %u bits", name,
		      w);
		run(&v, 4, 0, 4);
		check(v.guest_pmis == 0 && rd(&v, MSR_IA32_PMC0) == TOP - 1,
		      "%s: 4 events: TOP - 1, no PMI", name);
		run(&v, 1, 0, 1);
		check(v.guest_pmis == 1 && rd(&v, MSR_IA32_PMC0) == 0 && rd(&v, STATUS) == 1,
		      "%s: the 5th event wraps the guest counter with one PMI", name);
		wr(&v, MSR_IA32_PERF_GLOBAL_OVF_CTRL, 1);

		/* Far from the wrap: re-armed at each physical overflow, the guest PMI exact. */
		wr(&v, MSR_IA32_A_PMC0, TOP - far);
		if (!arch_fw_write)
			check(model.pmc[0] == model_mask(w) + 1 - (1ull << 31),
			      "%s: TOP - 2^42 - 7 armed 2^31 ahead, as far as a legacy write goes",
			      name);
		run_long(&v, far / 2, chunk);
		negative = model.pmc[0] >> (w - 1);
		check(negative && rd(&v, MSR_IA32_PMC0) == TOP - far + far / 2,
		      "%s: halfway read exactly from a negative physical value", name);
		run_long(&v, far - far / 2 - 1, chunk);
		check(v.guest_pmis == 1 && rd(&v, MSR_IA32_PMC0) == TOP - 1 && !rd(&v, STATUS),
		      "%s: 2^42 + 6 events: TOP - 1, no guest PMI after %u host PMIs", name,
		      model.pmis);
		run(&v, 1, 0, 1);
		check(v.guest_pmis == 2 && rd(&v, MSR_IA32_PMC0) == 0,
		      "%s: event 2^42 + 7 wraps it with one guest PMI", name);

		/* Alone, without INT/PMI, from 0 past the physical range: exact, no guest PMI. */
		wr(&v, MSR_IA32_PERFEVTSEL0 + 1, BRANCH);
		wr(&v, MSR_IA32_PERF_GLOBAL_CTRL, 2);
		run_long(&v, (1ull << 41) + 3, chunk);
		check(rd(&v, MSR_IA32_PMC0 + 1) == (1ull << 41) + 3 && v.guest_pmis == 2,
		      "%s: GP counter without INT counts 2^41 + 3 exactly", name);
		wr(&v, MSR_IA32_FIXED_CTR_CTRL, FIXED_ALL);
		wr(&v, MSR_IA32_PERF_GLOBAL_CTRL, 0x100000000ull);
		run_long(&v, (1ull << 41) + 3, 1ull << 36);
		check(rd(&v, MSR_IA32_FIXED_CTR0) == (1ull << 41) + 3 && v.guest_pmis == 2,
		      "%s: fixed counter without PMI counts 2^41 + 3 exactly", name);

		for (unsigned i = 0; i < model.nlog; i++)
			wide |= model.log[i].msr - MSR_IA32_A_PMC0 < MODEL_MAX_GP;
		check(wide == hosts[h].cfg.fw_write, "%s: IA32_A_PMCx written %s", name,
		      hosts[h].cfg.fw_write ? "(offered)" : "never (not offered)");
		check(model.faults == faults && model.pmis_lost == 0 && model.hot_writes == 0,
		      "%s: no fault, no lost PMI, no hot write", name);
		unload(&v);
	}
}

int main(void)
{
	test_choice();
	test_guest_view();
	test_cpu_init();
	test_order();
	test_counting();
	test_switch();
	test_switch_clears();
	test_accounting();
	test_overflow();
	test_retired();
	test_widths();
	return unit_summary();
}
