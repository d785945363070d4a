/* Hostile cases against the PMU: a PMI storm, the paravirtual PMU's hypercalls and page. */
#include "guest-stub/tests/hostile/hostile.h"

/*
 * case=pmi: every counter at period 1 with its interrupt on; the handler re-arms them all and
 * unmasks LVTPC each time, so PMIs come back to back until the handler stops them.
 */
#define PMI_STORM_PMIS		150
#define PMI_STORM_TICKS		50000000ull	/* and at most ~1 s of the guest's TSC */
#define FIXED_ALL_PMI		0xBBBull	/* OS, USR and PMI for the 3 fixed counters */

static volatile unsigned pmis;
static uint64_t pmi_deadline;

void pmi_entry(void);
IRQ_ENTRY(pmi_entry, pmi_handler);

static void pmi_arm(void)
{
	static const uint64_t events[VT_GP] = {
		EV_INSTRUCTIONS, EV_BRANCHES, EV_CORE_CYCLES, EV_REF_CYCLES,
	};

	for (unsigned i = 0; i < VT_GP; i++) {
		rt_wrmsr(MSR_A_PMC0 + i, VT_TOP - 1);
		rt_wrmsr(MSR_PERFEVTSEL0 + i, events[i] | EVTSEL_USR | EVTSEL_OS | EVTSEL_INT |
			 EVTSEL_EN);
	}
	for (unsigned j = 0; j < VT_FIXED; j++)
		rt_wrmsr(MSR_FIXED_CTR0 + j, VT_TOP - 1);
	rt_wrmsr(MSR_FIXED_CTR_CTRL, FIXED_ALL_PMI);
	rt_wrmsr(MSR_GLOBAL_CTRL, VT_ALL_CTRS);
}

IRQ_HANDLER void pmi_handler(void)
{
	rt_wrmsr(MSR_GLOBAL_OVF_CTRL, VT_ALL_CTRS);
	apic_write(APIC_EOI, 0);
	if (++pmis >= PMI_STORM_PMIS || rt_rdtsc() > pmi_deadline) {
		rt_wrmsr(MSR_GLOBAL_CTRL, 0);
		return;
	}
	/*
	 * SDM Vol. 3A 11.5.1: the delivery masked LVTPC; unmask it, then re-arm, so the next PMI
	 * is pending before the IRET.
	 */
	apic_write(APIC_LVT_PMC, VEC_PMI);
	pmi_arm();
}

int case_pmi(void)
{
	uint64_t spins = 0, lvtpc;

	vt_gp_install();
	install_stray_gates();
	rt_idt_set_gate(VEC_PMI, pmi_entry, 0);
	apic_write(APIC_SPIV, APIC_SPIV_ENABLE | 0xFF);
	apic_write(APIC_LVT_PMC, VEC_PMI);
	pmi_deadline = rt_rdtsc() + PMI_STORM_TICKS;
	pmi_arm();
	__asm__ volatile("sti");
	while (pmis < PMI_STORM_PMIS && rt_rdtsc() < pmi_deadline)
		spins++;
	__asm__ volatile("cli");
	rt_wrmsr(MSR_GLOBAL_CTRL, 0);
	lvtpc = apic_read(APIC_LVT_PMC);
	report(pmis > 0, "pmi: %u PMIs back to back, %llu turns of the loop they interrupted",
	       pmis, (unsigned long long)spins);
	report(pmis == PMI_STORM_PMIS || rt_rdtsc() >= pmi_deadline,
	       "pmi: the storm ended by the handler's bound");
	report(lvtpc & APIC_LVT_MASKED, "pmi: the last PMI left LVTPC masked (%#llx)",
	       (unsigned long long)lvtpc);
	vt_pmu_quiet();
	return report_summary();
}


/* The one page of the PV PMU's shared area (a 1-VCPU domain), read-only once set up. */
static uint8_t pv_area[PV_PMU_AREA_STRIDE] __attribute__((aligned(4096)));
#define PV_PAGE		((volatile struct pv_vcpu_area *)pv_area)

static int64_t pv_setup(void)
{
	return hypercall(HC_PMU_SETUP, (uintptr_t)pv_area, 1, 0);
}

/* A control that counts instructions at both rings on counter 0, a-mode. */
static const struct pv_control pv_count_instructions = {
	.ncounters = 1,
	.evtsel = { EVT_INSTRUCTIONS },
};

/* Controls the hypervisor must refuse (-EINVAL), with why. */
static const struct {
	const char *what;
	struct pv_control c;
} pv_bad_controls[] = {
	{ "5 counters", { .ncounters = 5 } },
	{ "2^32 - 1 counters", { .ncounters = UINT32_MAX } },
	{ "an i-mode bit beyond the counters", { .ncounters = 2, .imode_mask = 4,
	  .evtsel = { EVT_INSTRUCTIONS, EVT_INSTRUCTIONS } } },
	{ "i-mode bit 31", { .ncounters = 4, .imode_mask = 1u << 31 } },
	{ "an event select without EN", { .ncounters = 1, .evtsel = { EV_INSTRUCTIONS } } },
	{ "an event select with bit 32", { .ncounters = 1,
	  .evtsel = { EVT_INSTRUCTIONS | 1ull << 32 } } },
	{ "an i-mode reset value of 2^48", { .ncounters = 1, .imode_mask = 1,
	  .evtsel = { EVT_INSTRUCTIONS }, .ireset = { VT_TOP } } },
	{ "an i-mode reset value of 2^64 - 1", { .ncounters = 1, .imode_mask = 1,
	  .evtsel = { EVT_INSTRUCTIONS }, .ireset = { UINT64_MAX } } },
};

/*
 * case=pv: the paravirtual PMU's hypercalls with bad order, controls, areas and pointers; then
 * a write to the read-only shared page, which must end the domain.
 */
int case_pv(uint64_t ram)
{
	static uint64_t values[PV_PMU_COUNTERS];
	static struct pv_control odd_ctl[2];
	/* A control whose last byte lies in the page after RAM. */
	uint64_t past_end = ram - sizeof(struct pv_control) + 1;

	bad_pointers_init(ram);
	expect("pv: RESUME before SETUP", hypercall(HC_PMU_RESUME,
	       (uintptr_t)&pv_count_instructions, 0, 0), -PV_EINVAL);
	expect("pv: ISUSPEND before SETUP", hypercall(HC_PMU_ISUSPEND, (uintptr_t)values, 0, 0),
	       -PV_EINVAL);
	expect("pv: IACK before SETUP", hypercall(HC_PMU_IACK, 0, 0, 0), -PV_EINVAL);
	expect("pv: READ before SETUP", hypercall(HC_PMU_READ, 0, 0, 0), -PV_EINVAL);
	expect("pv: SET_VECTOR 31", hypercall(HC_PMU_SET_VECTOR, 31, 0, 0), -PV_EINVAL);
	expect("pv: SET_VECTOR 256", hypercall(HC_PMU_SET_VECTOR, 256, 0, 0), -PV_EINVAL);
	expect("pv: SET_VECTOR 2^63 + 64", hypercall(HC_PMU_SET_VECTOR, (1ull << 63) + 64, 0, 0),
	       -PV_EINVAL);
	expect("pv: number 0x107", hypercall(HC_PMU_IACK + 1, 0, 0, 0), -PV_ENOSYS);
	expect("pv: number 2^32 + 0x100", hypercall((1ull << 32) + HC_PMU_BASE, 0, 0, 0),
	       -PV_ENOSYS);
	/* SETUP takes a guest-physical page, one per VCPU. */
	expect("pv: SETUP of an unaligned area", hypercall(HC_PMU_SETUP, (uintptr_t)pv_area + 8,
	       1, 0), -PV_EINVAL);
	expect("pv: SETUP for 0 VCPUs", hypercall(HC_PMU_SETUP, (uintptr_t)pv_area, 0, 0),
	       -PV_EINVAL);
	expect("pv: SETUP for 2 VCPUs in a 1-VCPU domain", hypercall(HC_PMU_SETUP,
	       (uintptr_t)pv_area, 2, 0), -PV_EINVAL);
	expect("pv: SETUP for 2^32 + 1 VCPUs", hypercall(HC_PMU_SETUP, (uintptr_t)pv_area,
	       (1ull << 32) + 1, 0), -PV_EINVAL);
	expect("pv: SETUP past RAM", hypercall(HC_PMU_SETUP, ram, 1, 0), -PV_EINVAL);
	expect("pv: SETUP at the APIC page", hypercall(HC_PMU_SETUP, APIC_DEFAULT_BASE, 1, 0),
	       -PV_EINVAL);
	expect("pv: SETUP at 2^64 - 4096", hypercall(HC_PMU_SETUP, UINT64_MAX & ~0xFFFull, 1, 0),
	       -PV_EINVAL);
	expect("pv: SETUP", pv_setup(), 0);
	expect("pv: SETUP again", pv_setup(), -PV_EINVAL);
	expect("pv: SETUP again, elsewhere", hypercall(HC_PMU_SETUP, (uintptr_t)odd_ctl & ~0xFFFull,
	       1, 0), -PV_EINVAL);
	report(PV_PAGE->version == PV_PMU_VERSION && PV_PAGE->size == sizeof(struct pv_vcpu_area),
	       "pv: the page reads version %u, size %u", PV_PAGE->version, PV_PAGE->size);
	for (size_t i = 0; i < ARRAY_SIZE(pv_bad_controls); i++) {
		char what[96];

		snprintf(what, sizeof(what), "pv: RESUME with %s", pv_bad_controls[i].what);
		expect(what, hypercall(HC_PMU_RESUME, (uintptr_t)&pv_bad_controls[i].c, 0, 0),
		       -PV_EINVAL);
	}
	for (size_t i = 0; i < NBAD_PTRS; i++) {
		const struct bad_ptr *bad = &bad_ptrs[i];
		char what[96];

		snprintf(what, sizeof(what), "pv: RESUME, control at %s", bad->what);
		expect(what, hypercall(HC_PMU_RESUME, bad->la, 0, 0), -PV_EFAULT);
		snprintf(what, sizeof(what), "pv: IRESUME, values at %s", bad->what);
		expect(what, hypercall(HC_PMU_IRESUME, (uintptr_t)&pv_count_instructions,
		       bad->la, 0), -PV_EFAULT);
		snprintf(what, sizeof(what), "pv: ISUSPEND, saving to %s", bad->what);
		expect(what, hypercall(HC_PMU_ISUSPEND, bad->la, 0, 0), -PV_EFAULT);
	}
	expect("pv: RESUME, control running past RAM", hypercall(HC_PMU_RESUME, past_end, 0, 0),
	       -PV_EFAULT);
	/* No alignment rule for controls: one at an odd address is taken. */
	memcpy((char *)odd_ctl + 1, &pv_count_instructions, sizeof(pv_count_instructions));
	expect("pv: RESUME, control at an odd address", hypercall(HC_PMU_RESUME,
	       (uintptr_t)odd_ctl + 1, 0, 0), 0);
	expect("pv: READ of counter 4", hypercall(HC_PMU_READ, PV_PMU_COUNTERS, 0, 0), -PV_EINVAL);
	expect("pv: READ of counter 2^64 - 1", hypercall(HC_PMU_READ, UINT64_MAX, 0, 0),
	       -PV_EINVAL);
	report_summary();
	printf("hostile: pv: writing the read-only shared page at %p\n", (void *)pv_area);
	PV_PAGE->flags = 0;
	printf("hostile: pv: still running after writing the read-only page\n");
	return 1;
}

/*
 * case=pvforge: ISUSPEND's save pointer aimed at the read-only page must fail as a write there
 * would. If the hypervisor writes it anyway, PMC0..3 land on the page's control: ncounters = 5,
 * and counter "4", read from ireset[0], counts into the next PCPU's soft counter 0, which
 * other domains' a-mode counts are made of. The domain then keeps counting for turns loops.
 */
int case_pvforge(uint64_t turns)
{
	const struct pv_control c = {
		.ncounters = 1,
		.evtsel = { EVT_INSTRUCTIONS },
		.ireset = { EVT_INSTRUCTIONS },
	};

	vt_gp_install();
	expect("pvforge: SETUP", pv_setup(), 0);
	expect("pvforge: RESUME", hypercall(HC_PMU_RESUME, (uintptr_t)&c, 0, 0), 0);
	vt_wrmsr(MSR_A_PMC0, 5);
	vt_wrmsr(MSR_A_PMC0 + 1, EVT_INSTRUCTIONS);
	expect("pvforge: ISUSPEND, saving into the read-only shared page",
	       hypercall(HC_PMU_ISUSPEND, (uintptr_t)&PV_PAGE->active, 0, 0), -PV_EFAULT);
	expect("pvforge: the page's control keeps its counter count", PV_PAGE->active.ncounters,
	       c.ncounters);
	for (uint64_t i = 0; i < turns; i++)
		__asm__ volatile("" : : : "memory");
	return report_summary();
}

/*
 * One a-mode window: HC_PMU_READ, k turns of a 2-instruction loop, HC_PMU_READ. Each VMCALL
 * counts before it reads, so the difference is the 2 MOVs, 2k, then MOV, XOR and the VMCALL.
 */
static uint64_t pv_window(uint64_t k)
{
	uint64_t delta;

	__asm__ volatile("mov %[nr], %%eax\n\t"
			 "xor %%edi, %%edi\n\t"
			 "vmcall\n\t"
			 "mov %%rax, %%r8\n\t"
			 "mov %[k], %%rcx\n"
			 "1:\tdec %%rcx\n\t"
			 "jnz 1b\n\t"
			 "mov %[nr], %%eax\n\t"
			 "xor %%edi, %%edi\n\t"
			 "vmcall\n\t"
			 "sub %%r8, %%rax"
			 : "=&a"(delta)
			 : [nr] "i"(HC_PMU_READ), [k] "r"(k)
			 : "rcx", "rdi", "r8", "memory");
	return delta;
}

#define PV_WINDOW_EXTRA		5

/* case=pvcount: a well-behaved paravirtual domain whose a-mode counts must be exact. */
#define PV_ROUNDS_MAX		64

int case_pvcount(uint64_t rounds, uint64_t k)
{
	static const struct pv_control nothing;
	uint64_t got[PV_ROUNDS_MAX];

	if (rounds > PV_ROUNDS_MAX)
		rounds = PV_ROUNDS_MAX;
	expect("pvcount: SETUP", pv_setup(), 0);
	expect("pvcount: RESUME", hypercall(HC_PMU_RESUME, (uintptr_t)&pv_count_instructions, 0, 0),
	       0);
	for (uint64_t r = 0; r < rounds; r++)
		got[r] = pv_window(k);
	/* Counting stops before printing: stepping newlib's printf would take long. */
	expect("pvcount: RESUME with no counters", hypercall(HC_PMU_RESUME, (uintptr_t)&nothing, 0,
	       0), 0);
	for (uint64_t r = 0; r < rounds; r++)
		report(got[r] == 2 * k + PV_WINDOW_EXTRA,
		       "pvcount: a-mode window %llu: %llu instructions (want %llu)",
		       (unsigned long long)r, (unsigned long long)got[r],
		       (unsigned long long)(2 * k + PV_WINDOW_EXTRA));
	return report_summary();
}
