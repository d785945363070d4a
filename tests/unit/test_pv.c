/* Unit tests for pmu/pv.c and the guest read protocol of include/perfvisor/pmu_read.h, end to end. */
#include <string.h>

#include "tests/unit/unit.h"
#include "include/perfvisor/pmu_read.h"
#include "pmu/vpmu.c"
#include "pmu/pv.c"
#include "hv/gpt.c"

#define TOP		(1ull << 48)	/* 2^width of pv.c's soft counters */
#define TICKS		3		/* guest TSC ticks per instruction */
#define RAM_SIZE	(16 * 4096)
#define MAX_VCPUS	2
/* Guest-physical addresses (= linear: the guest maps its RAM 1:1). */
#define AREA_GPA	0x8000
#define CTL_GPA		0x1000
#define VALUES_GPA	0x1100
#define SAVE_GPA	0x1200
#define EVTSEL(code)	((code) | EVTSEL_EN | EVTSEL_OS | EVTSEL_USR)

/* The hypervisor's side of a VCPU, as much as pv.c sees through hv/vcpu_pmu.h. */
struct vcpu {
	struct pmu_vcpu pmu;
	struct test_dom *d;
	unsigned pcpu;
	uint8_t raised;		/* the last vector raised */
	unsigned reprogrammed;	/* pmu_reprogrammed() calls */
	uint64_t pmis;		/* overflows pv_overflow() left for the LVTPC */
	struct gpt_memo walk;	/* hv/vcpu_pmu.c's remembered walk to guest bytes */
};

struct test_dom {
	uint8_t ram[RAM_SIZE] __attribute__((aligned(4096)));
	struct pmu_domain pd;
	uint64_t cr3;		/* 4-level paging with its PML4 there; 0: paging off */
	unsigned nvcpus;
	struct vcpu vcpu[MAX_VCPUS];
};

static struct test_dom dom0, dom1;
static uint64_t now;	/* the guest TSC, the same for every VCPU */
static uint64_t phys_base;	/* where a fresh domain's soft counters start */

enum pmu_backend_kind pmu_backend = PMU_BACKEND_SOFT;

bool vcpu_pmu_read_guest(struct vcpu *v, void *dst, uint64_t la, uint64_t len)
{
	if (la > RAM_SIZE || len > RAM_SIZE - la)
		return false;
	memcpy(dst, v->d->ram + la, len);
	return true;
}

static bool no_gpa(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	(void)ctx;
	(void)gpa;
	(void)buf;
	(void)len;
	return false;
}

/* hv/vcpu_pmu.c's: the guest's own page tables walked, the walk remembered (hv/gpt.c). */
const void *vcpu_pmu_guest_bytes(struct vcpu *v, uint64_t la, uint64_t len)
{
	struct gpt_cpu c = { .cr0 = v->d->cr3 ? CR0_PG | CR0_PE : 0, .cr3 = v->d->cr3,
			     .cr4 = v->d->cr3 ? CR4_PAE : 0, .efer = v->d->cr3 ? EFER_LMA : 0,
			     .read_gpa = no_gpa, .ram = v->d->ram, .ram_size = RAM_SIZE };

	return gpt_map_memo(&c, la, len, GPT_READ, &v->walk);
}

bool vcpu_pmu_write_guest(struct vcpu *v, uint64_t la, const void *src, uint64_t len)
{
	if (la > RAM_SIZE || len > RAM_SIZE - la)
		return false;
	memcpy(v->d->ram + la, src, len);
	return true;
}

/* hv/vcpu_pmu.c's rules: page-aligned, one page per VCPU of the domain, inside its RAM. */
/* Runs while the area is being mapped: another VCPU of the domain calling at that moment. */
static void (*during_map)(void);
static unsigned maps;

void *vcpu_pmu_map_area(struct vcpu *v, uint64_t gpa, unsigned nvcpus, const char **why)
{
	maps++;
	if (during_map)
		during_map();
	if (gpa & 0xFFF || nvcpus != v->d->nvcpus || gpa > RAM_SIZE ||
	    (uint64_t)nvcpus * 4096 > RAM_SIZE - gpa) {
		*why = "bad area";
		return NULL;
	}
	return v->d->ram + gpa;
}

uint64_t vcpu_pmu_guest_tsc(struct vcpu *v)
{
	(void)v;
	return now;
}

void vcpu_pmu_raise_vector(struct vcpu *v, uint8_t vector)
{
	v->raised = vector;
}

struct pmu_vcpu *vcpu_pmu_state(struct vcpu *v)
{
	return &v->pmu;
}

void pmu_reprogrammed(struct vcpu *v)
{
	v->reprogrammed++;
}

/* The soft backend's counts are always current: nothing to gather. */
void pmu_sync(struct vcpu *v)
{
	(void)v;
}

/* The guest CPU a reader runs on: its RDTSC and RDPMC, with something scripted to happen. */
struct guest_cpu {
	unsigned rdtsc_calls, rdpmc_calls;
	const uint64_t *pmc;	/* hardware counters RDPMC reads (tests without pv.c) */
	unsigned width;		/* their width; RDPMC returns them sign-extended from it */
	void (*after_rdtsc)(void);	/* once: what happens right after the next RDTSC */
	unsigned rdtsc_skip;		/* RDTSCs to let by before that one */
};

static uint64_t g_rdtsc(void *ctx)
{
	struct guest_cpu *c = ctx;
	void (*then)(void) = c->rdtsc_skip ? NULL : c->after_rdtsc;
	uint64_t tsc = now;

	c->rdtsc_calls++;
	if (c->rdtsc_skip)
		c->rdtsc_skip--;
	else
		c->after_rdtsc = NULL;
	if (then)
		then();
	return tsc;
}

static uint64_t g_rdpmc(void *ctx, uint32_t index)
{
	struct guest_cpu *c = ctx;
	uint64_t v, sign;

	c->rdpmc_calls++;
	if (!c->pmc)
		return 0;
	v = c->pmc[index];
	sign = 1ull << (c->width - 1);
	return v & sign ? v | ~((sign << 1) - 1) : v;
}

/* The guest kernel and a user thread read through different CPUs' scripts. */
static struct guest_cpu kcpu, ucpu;
static const struct pv_read_ops kops = { g_rdpmc, g_rdtsc, &kcpu };
static const struct pv_read_ops uops = { g_rdpmc, g_rdtsc, &ucpu };

/* Instructions and branches, a-mode, at every ring. */
static const struct pv_control ctl_ab = {
	.ncounters = 2,
	.evtsel = { EVTSEL(ARCH_EVENT_INST_RETIRED), EVTSEL(ARCH_EVENT_BRANCH_RETIRED) },
};

/* A domain of n VCPUs, VCPU k on PCPU k, no shared area yet. */
static struct vcpu *fresh_dom(struct test_dom *d, unsigned n)
{
	memset(d, 0, sizeof(*d));
	d->nvcpus = n;
	d->pd.cfg = (struct vpmu_config){ .enabled = true, .version = 2, .num_gp = 4,
					  .num_fixed = 3, .width = 48 };
	for (unsigned k = 0; k < n; k++) {
		struct vcpu *v = &d->vcpu[k];

		vpmu_reset(&v->pmu.vpmu, &d->pd.cfg);
		v->pmu.pd = &d->pd;
		v->pmu.id = k;
		v->d = d;
		v->pcpu = k;
		for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
			d->pd.pv.soft_phys[k][i] = phys_base;
	}
	return d->vcpu;
}

/* A fresh test: the next domains' soft counters at base, the TSC at tsc, no scripts. */
static void fresh(uint64_t base, uint64_t tsc)
{
	phys_base = base;
	now = tsc;
	memset(&kcpu, 0, sizeof(kcpu));
	memset(&ucpu, 0, sizeof(ucpu));
}

static int64_t hc(struct vcpu *v, uint64_t nr, uint64_t a0, uint64_t a1)
{
	const uint64_t args[3] = { a0, a1, 0 };

	return pv_hypercall(v, nr, args);
}

static const void *areas(const struct test_dom *d)
{
	return d->ram + AREA_GPA;
}

static struct pv_vcpu_area *area(struct vcpu *v)
{
	return (struct pv_vcpu_area *)(v->d->ram + AREA_GPA + v->pmu.id * PV_PMU_AREA_STRIDE);
}

static int64_t hc_setup(struct vcpu *v)
{
	return hc(v, HC_PMU_SETUP, AREA_GPA, v->d->nvcpus);
}

static int64_t hc_resume(struct vcpu *v, const struct pv_control *c)
{
	memcpy(v->d->ram + CTL_GPA, c, sizeof(*c));
	return hc(v, HC_PMU_RESUME, CTL_GPA, 0);
}

/* v's guest runs n instructions at CPL 3, every 4th a branch: what the soft backend counts. */
static void run(struct vcpu *v, uint64_t n)
{
	struct vpmu *p = &v->pmu.vpmu;
	uint64_t pmi;

	pv_count(v, VPMU_EV_INSTRUCTIONS, n, 3);
	pv_count(v, VPMU_EV_BRANCHES, n / 4, 3);
	pmi = vpmu_count(p, VPMU_EV_INSTRUCTIONS, n, 3) | vpmu_count(p, VPMU_EV_BRANCHES, n / 4, 3);
	if (pmi)
		v->pmis |= pv_overflow(v, pmi);
	now += TICKS * n;
}

/*
 * The guest kernel switches thread t in on v: HC_PMU_RESUME with c (NULL: skipped, the control
 * being unchanged), `tail` instructions of the call's way back to the guest, then Start*_thread.
 */
static void thread_in(struct vcpu *v, struct pv_thread_counts *t, const struct pv_control *c,
		      uint64_t tail)
{
	if (c && hc_resume(v, c))
		check(0, "RESUME failed");
	run(v, tail);
	pv_thread_resume(t, areas(v->d), (int)v->pmu.id, &kops);
}

/* The guest kernel switches t out of the VCPU it last resumed it on. */
static uint64_t thread_out(struct pv_thread_counts *t)
{
	return pv_thread_suspend(t, &kops);
}

/* The hypervisor moves v to PCPU pcpu (inter-domain switch out, then in). */
static void move(struct vcpu *v, unsigned pcpu)
{
	pv_switch_out(v);
	v->pcpu = pcpu;
	pv_switch_in(v);
}

/* Domain 1: one VCPU on PCPU 0 counting the same events as domain 0, switched out. */
static struct vcpu *other_dom(void)
{
	struct vcpu *w = fresh_dom(&dom1, 1);

	hc_setup(w);
	hc_resume(w, &ctl_ab);
	pv_switch_out(w);
	return w;
}

/* The running thread t reads its instructions, branches and TSC ticks: are they these? */
__attribute__((format(printf, 5, 6)))
static void check_read(const struct pv_thread_counts *t, uint64_t insns, uint64_t branches,
		       uint64_t ticks, const char *fmt, ...)
{
	uint64_t log[PV_NVALUES];
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	pv_read(t, &uops, log);
	check(log[0] == insns && log[1] == branches && log[PV_TSC] == ticks,
	      "%s (read %llu %llu %llu)", what, (unsigned long long)log[0],
	      (unsigned long long)log[1], (unsigned long long)log[PV_TSC]);
}

static void test_wrap_sext(void)
{
	check(pv_wrap(TOP + 5, 48) == 5 && pv_wrap(-3ull, 40) == (1ull << 40) - 3 &&
	      pv_wrap(-3ull, 64) == -3ull, "pv_wrap: modulo 2^48, 2^40, 2^64");
	check(pv_sext(0x7FFFFFFFFFFF, 48) == 0x7FFFFFFFFFFF && pv_sext(0x800000000000, 48) ==
	      -0x800000000000 && pv_sext(0xFFFFFFFFFFFF, 48) == -1, "pv_sext: 48-bit edges");
	check(pv_sext(0xFFFFFFFFF0, 40) == -16 && pv_sext(0x7FFFFFFFFF, 40) == 0x7FFFFFFFFF,
	      "pv_sext: 40-bit edges");
	check(pv_sext(0xFFFF000000000005, 48) == 5 && pv_sext(0xFFFF8000000000F0, 40) == 0xF0,
	      "pv_sext: bits above the width are ignored");
	/* Why differences wrap: sign-extended ends subtracted in 64 bits jump at the sign bit. */
	check(pv_wrap(0x800000000010 - 0x7FFFFFFFFFF0, 48) == 0x20 &&
	      (uint64_t)(pv_sext(0x800000000010, 48) - pv_sext(0x7FFFFFFFFFF0, 48)) != 0x20,
	      "a difference across bit 47 is right modulo 2^48, not from sign-extended ends");
}

/* The hypervisor's Sum/Start_vcpu of counter i, and the offset readers take them by. */
static void set_ctr(struct pv_vcpu_area *page, unsigned i, uint64_t sum, uint64_t start)
{
	page->ctr[i] = (struct pv_counter){ sum, start };
	page->offset[i] = sum - start;
}

/*
 * RDPMC counters of 40 and 48 bits (no pv.c: the test plays the hypervisor's Sum/Start by
 * numbers). The counter and Phys* both start at `first`, below 2^width or below 2^(width-1),
 * so both wrap or cross the sign bit under the thread; its sums stay exact.
 */
static void test_read_rdpmc(unsigned width, uint64_t first)
{
	static struct pv_vcpu_area page;
	uint64_t mask = (1ull << width) - 1, pmc[PV_PMU_COUNTERS] = { 0 }, log[PV_NVALUES];
	struct guest_cpu cpu = { .pmc = pmc, .width = width };
	const struct pv_read_ops ops = { g_rdpmc, g_rdtsc, &cpu };
	struct pv_thread_counts t = { 0 };

	memset(&page, 0, sizeof(page));
	page.width = width;
	page.wrap = mask;
	page.active.ncounters = 1;
	page.rdpmc_index[0] = 2;	/* the thread's counter 0 is hardware counter 2 */
	/*
	 * The VCPU counted `first` events since its last RESUME (RESUMEs skipped), 30 more
	 * before the guest kernel samples Start*_thread.
	 */
	pmc[2] = first;
	set_ctr(&page, 0, first, pmc[2]);
	pmc[2] = (pmc[2] + 30) & mask;
	pv_thread_resume(&t, &page, 0, &ops);
	pmc[2] = (pmc[2] + 500) & mask;
	pv_read(&t, &ops, log);
	check(log[0] == 500, "%u bits from %#llx: 500 events across the wrap (%llu)", width,
	      (unsigned long long)first, (unsigned long long)log[0]);
	/*
	 * Descheduled: Sum_vcpu += 530 (maybe past 2^width: the hypervisor does not reduce it);
	 * others count 2^(width-1) + 77; resumed there.
	 */
	pmc[2] = (pmc[2] + (1ull << (width - 1)) + 77) & mask;
	set_ctr(&page, 0, page.ctr[0].sum_vcpu + 530, pmc[2]);
	pmc[2] = (pmc[2] + 250) & mask;
	pv_read(&t, &ops, log);
	check(log[0] == 750, "%u bits from %#llx: 750 after a deschedule (%llu)", width,
	      (unsigned long long)first, (unsigned long long)log[0]);
	/* Switched out by the guest, then in again after a RESUME (Sum_vcpu = 0). */
	pv_thread_suspend(&t, &ops);
	pmc[2] = (pmc[2] + mask - 5) & mask;
	set_ctr(&page, 0, 0, pmc[2]);
	pv_thread_resume(&t, &page, 0, &ops);
	pmc[2] = (pmc[2] + 1000) & mask;
	pv_read(&t, &ops, log);
	check(t.sum[0] == 750 && log[0] == 1750 && cpu.rdpmc_calls == 6,
	      "%u bits from %#llx: 1750 after a suspension, read by RDPMC of counter 2 (%llu)",
	      width, (unsigned long long)first, (unsigned long long)log[0]);
	/* The one-value read sees the same count, with one RDPMC; 0 for a counter not in a-mode. */
	check(pv_read_one(&t, 0, &ops) == 1750 && cpu.rdpmc_calls == 7 &&
	      pv_read_one(&t, 1, &ops) == 0 && cpu.rdpmc_calls == 7,
	      "%u bits from %#llx: pv_read_one() of counter 0 reads 1750 with one RDPMC", width,
	      (unsigned long long)first);
	/* Stopped after a last suspension: the counts stand, whatever the counter does. */
	pmc[2] = (pmc[2] + 20) & mask;
	pv_thread_suspend(&t, &ops);
	pv_thread_stop(&t);
	pmc[2] = (pmc[2] + 300) & mask;
	pv_read(&t, &ops, log);
	check(log[0] == 1770 && log[1] == 0 && log[PV_TSC] == t.sum[PV_TSC] &&
	      pv_read_one(&t, 0, &ops) == 1770 && pv_read_one(&t, 1, &ops) == 0 &&
	      cpu.rdpmc_calls == 8, "%u bits from %#llx: stopped at 1770, read with no RDPMC",
	      width, (unsigned long long)first);
}

/* A thread that never counted reads zeros, without a page (its area is still NULL). */
static void test_read_never_counted(void)
{
	struct guest_cpu cpu = { 0 };
	const struct pv_read_ops ops = { g_rdpmc, g_rdtsc, &cpu };
	struct pv_thread_counts t = { 0 };
	uint64_t log[PV_NVALUES] = { 1, 1, 1, 1, 1 };

	pv_read(&t, &ops, log);
	check(!log[0] && !log[1] && !log[2] && !log[3] && !log[PV_TSC] &&
	      !pv_read_one(&t, PV_TSC, &ops) && !cpu.rdtsc_calls && !cpu.rdpmc_calls,
	      "never counted: zeros, no RDTSC or RDPMC");
}

/*
 * What readers take from the page: offset = Sum_vcpu - Start_vcpu of the TSC and of each
 * counter the active control has in a-mode, and the wrap of 48-bit soft counters.
 */
static bool offsets_agree(const struct pv_vcpu_area *a)
{
	uint32_t amode = ((1u << a->active.ncounters) - 1) & ~a->active.imode_mask;

	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
		if (amode >> i & 1 && a->offset[i] != a->ctr[i].sum_vcpu - a->ctr[i].start_vcpu)
			return false;
	return a->offset[PV_TSC] == a->tsc.sum_vcpu - a->tsc.start_vcpu && a->wrap == TOP - 1;
}

/*
 * The seed's example scenario on pv.c: thread 0 of domain 0 runs 100 instructions, is suspended
 * by the guest kernel at T0 (thread 1 runs 1000), resumed at T1 and runs 200, its domain is
 * descheduled at T2 (domain 1 runs 5000 on the same PCPU) and resumed at T3 (on PCPU `to`),
 * runs 300; the read at T4 gives the three segments only. Every RESUME's way back (9) is excluded.
 */
static void test_scenario(const char *what, uint64_t base, uint64_t tsc, unsigned to)
{
	struct pv_thread_counts t0 = { 0 }, t1 = { 0 }, u = { 0 };
	struct vcpu *v, *w;
	uint64_t star;

	fresh(base, tsc);
	v = fresh_dom(&dom0, 1);
	w = fresh_dom(&dom1, 1);
	w->pmu.pd->pv.soft_phys[0][0] = (base + TOP / 2 + 12345) & (TOP - 1);	/* elsewhere */
	/* Domain 1 ran first on PCPU 0 with its own thread. */
	check(hc_setup(w) == 0, "%s: domain 1 sets up", what);
	thread_in(w, &u, &ctl_ab, 9);
	run(w, 50);
	pv_switch_out(w);
	pv_switch_in(v);
	check(hc_setup(v) == 0, "%s: domain 0 sets up", what);
	thread_in(v, &t0, &ctl_ab, 9);
	run(v, 100);
	/* T0 */
	thread_out(&t0);
	thread_in(v, &t1, &ctl_ab, 9);
	run(v, 1000);
	thread_out(&t1);
	/* T1 */
	thread_in(v, &t0, &ctl_ab, 9);
	check_read(&t0, 100, 25, 300, "%s: T1: thread 0 has its first segment", what);
	run(v, 200);
	/* T2 */
	pv_switch_out(v);
	pv_switch_in(w);
	run(w, 5000);
	pv_switch_out(w);
	/* T3 */
	v->pcpu = to;
	pv_switch_in(v);
	check(offsets_agree(area(v)), "%s: T3: the page's offsets follow Sum/Start_vcpu", what);
	run(v, 300);
	/* T4 */
	check_read(&t0, 600, 150, 600 * TICKS, "%s: T4: thread 0 counts its 3 segments",
		   what);
	check(t1.sum[0] == 1000 && t1.sum[1] == 250 && t1.sum[PV_TSC] == 1000 * TICKS,
	      "%s: thread 1 kept its own 1000", what);
	star = pv_phys_star(area(v), 0, area(v)->soft_phys[0]);
	check(hc(v, HC_PMU_READ, 0, 0) == (int64_t)star, "%s: HC_PMU_READ gives the same Phys*",
	      what);
	/* Domain 1 back on PCPU 0: its thread counts only its own events. */
	pv_switch_out(v);
	pv_switch_in(w);
	run(w, 7);
	check_read(&u, 5057, 1263, 5057 * TICKS, "%s: domain 1's thread counts its own",
		   what);
	check(ucpu.rdpmc_calls == 0 && ucpu.rdtsc_calls == 3,
	      "%s: soft counters read from the page, each read in one pass", what);
}

/* RESUME restarts the VCPU's offsets; the call's own events after its sample are excluded. */
static void test_compensation(void)
{
	struct pv_thread_counts t = { 0 };
	struct vcpu *v, *w;

	fresh(TOP - 20, 1000);
	w = other_dom();
	v = fresh_dom(&dom0, 1);
	hc_setup(v);
	check(hc_resume(v, &ctl_ab) == 0 && area(v)->active_seq == 1, "RESUME: a new control");
	run(v, 40);
	move(v, 1);
	run(v, 8);
	check(hc_resume(v, &ctl_ab) == 0 && area(v)->ctr[0].sum_vcpu == 0 &&
	      area(v)->ctr[0].start_vcpu == dom0.pd.pv.soft_phys[0][0] &&
	      area(v)->soft_phys[0] == dom0.pd.pv.soft_phys[0][0] && area(v)->tsc.sum_vcpu == 0 &&
	      area(v)->tsc.start_vcpu == now && area(v)->resumes == 2 &&
	      area(v)->active_seq == 1 && v->reprogrammed == 1 && offsets_agree(area(v)) &&
	      area(v)->offset[0] == -area(v)->ctr[0].start_vcpu,
	      "RESUME again: Sum_vcpu = 0, Start_vcpu = Phys (published, offset -Phys), "
	      "active_seq unchanged, the same programming kept");
	/* The call's way back is descheduled half-way and moved to PCPU 0, where others ran. */
	run(v, 5);
	pv_switch_out(v);
	pv_switch_in(w);
	run(w, 77);
	pv_switch_out(w);
	v->pcpu = 0;
	pv_switch_in(v);
	run(v, 6);
	pv_thread_resume(&t, areas(&dom0), 0, &kops);
	run(v, 100);
	check_read(&t, 100, 25, 300, "events of RESUME before Start*_thread are excluded");
}

/*
 * Phys* is a 48-bit number like the counters: after about 2^48 (or 2^47) events since the last
 * RESUME it wraps (or crosses the sign bit) under a thread; counts stay exact, sums pass 2^48.
 */
static void test_long_run(uint64_t big)
{
	struct pv_thread_counts a = { 0 }, b = { 0 };
	struct vcpu *v;
	uint64_t star;

	fresh(0, 0);
	v = fresh_dom(&dom0, 1);
	hc_setup(v);
	thread_in(v, &a, &ctl_ab, 0);
	run(v, big);
	move(v, 1);		/* big goes into Sum_vcpu: Phys* wraps where no counter does */
	thread_out(&a);
	thread_in(v, &b, NULL, 0);
	run(v, 200);
	star = pv_phys_star(area(v), 0, area(v)->soft_phys[0]);
	check(star == ((big + 200) & (TOP - 1)) && hc(v, HC_PMU_READ, 0, 0) == (int64_t)star,
	      "%#llx events after RESUME: Phys* %#llx, as HC_PMU_READ", (unsigned long long)big,
	      (unsigned long long)star);
	check_read(&b, 200, 50, 200 * TICKS, "%#llx events after RESUME: B counts its 200",
		   (unsigned long long)big);
	thread_out(&b);
	thread_in(v, &a, NULL, 0);
	run(v, 8);
	check_read(&a, big + 8, big / 4 + 2, (big + 8) * TICKS,
		   "%#llx events after RESUME: A counts them all", (unsigned long long)big);
}

/* The optimisation of seed 003 4.2.1: RESUME skipped when the control is unchanged. */
static void test_skipped_resume(void)
{
	struct pv_thread_counts a = { 0 }, b = { 0 };
	struct vcpu *v;

	fresh(TOP - 1000, 0);
	v = fresh_dom(&dom0, 1);
	hc_setup(v);
	thread_in(v, &a, &ctl_ab, 3);
	run(v, 100);
	thread_out(&a);
	thread_in(v, &b, NULL, 0);
	run(v, 400);
	move(v, 1);		/* Sum_vcpu is not 0 at the next skipped resume */
	run(v, 320);
	thread_out(&b);
	thread_in(v, &a, NULL, 0);
	run(v, 8);
	check_read(&a, 108, 27, 108 * TICKS, "skipped RESUME: thread A counts its own");
	thread_out(&a);
	thread_in(v, &b, NULL, 0);
	run(v, 4);
	check_read(&b, 724, 181, 724 * TICKS, "skipped RESUME: thread B counts its own");
}

/* Scripts for the middle of a read, right after its RDTSC. */
static struct pv_thread_counts *script_t, script_u;

/* The hypervisor deschedules the VCPU, domain 1 runs on its PCPU, the VCPU goes on on PCPU 1. */
static void deschedule_and_move(void)
{
	struct vcpu *v = &dom0.vcpu[0], *w = &dom1.vcpu[0];

	pv_switch_out(v);
	pv_switch_in(w);
	run(w, 500);
	pv_switch_out(w);
	v->pcpu = 1;
	pv_switch_in(v);
}

/* The guest kernel runs thread u for 50 and switches back, both RESUMEs skipped. */
static void other_thread(void)
{
	struct vcpu *v = &dom0.vcpu[0];

	thread_out(script_t);
	thread_in(v, &script_u, NULL, 0);
	run(v, 50);
	thread_out(&script_u);
	thread_in(v, script_t, NULL, 0);
}

/* The same with RESUMEs (a guest that does not skip them): Start*_thread is 0 again. */
static void other_thread_resumed(void)
{
	struct vcpu *v = &dom0.vcpu[0];

	thread_out(script_t);
	thread_in(v, &script_u, &ctl_ab, 0);
	run(v, 50);
	thread_out(&script_u);
	thread_in(v, script_t, &ctl_ab, 0);
}

/* The guest kernel moves the thread from VCPU 0 to VCPU 1, which RESUMEs it. */
static void to_vcpu1(void)
{
	thread_out(script_t);
	thread_in(&dom0.vcpu[1], script_t, &ctl_ab, 0);
}

/* A read interrupted by `then` is inconsistent once and right on its retry. */
static void test_retry(const char *what, void (*then)(void), unsigned nvcpus)
{
	struct pv_thread_counts t = { 0 };
	struct vcpu *v;

	fresh(TOP / 2 - 300, 5000);
	other_dom();
	v = fresh_dom(&dom0, nvcpus);
	hc_setup(v);
	if (nvcpus > 1)
		pv_switch_in(&dom0.vcpu[1]);
	thread_in(v, &t, &ctl_ab, 0);
	run(v, 600);
	script_t = &t;
	memset(&script_u, 0, sizeof(script_u));
	ucpu.after_rdtsc = then;
	check_read(&t, 600, 150, 600 * TICKS, "%s in the middle of a read: right", what);
	check(ucpu.rdtsc_calls == 2, "%s: the first pass was thrown away (%u passes)", what,
	      ucpu.rdtsc_calls);
}

/* The guest kernel's own sampling retries too: a suspension descheduled half-way stays exact. */
static void test_kernel_retry(void)
{
	struct pv_thread_counts t = { 0 }, u = { 0 };
	struct vcpu *v;
	uint64_t moved;

	fresh(TOP - 100, 0);
	other_dom();
	v = fresh_dom(&dom0, 1);
	hc_setup(v);
	thread_in(v, &t, &ctl_ab, 0);
	run(v, 200);
	kcpu.rdtsc_calls = 0;
	/* The second RDTSC is the pass's own: the first one times the passes. */
	kcpu.rdtsc_skip = 1;
	kcpu.after_rdtsc = deschedule_and_move;
	moved = thread_out(&t);
	check(t.sum[0] == 200 && t.sum[1] == 50 && t.sum[PV_TSC] == 200 * TICKS &&
	      kcpu.rdtsc_calls == 4, "suspension descheduled half-way: Sum_thread exact");
	/* deschedule_and_move ran the other domain for 500 (this clock does not stop for it). */
	check(moved == 500 * TICKS, "the retry moved the sample by the pass taken again: %llu",
	      (unsigned long long)moved);
	thread_in(v, &u, NULL, 0);
	run(v, 10);
	check(thread_out(&u) == 0, "a sample that held at once moved nothing");
}

/* i-mode: counter 1 (branches) interrupts, counter 0 (instructions) stays a-mode. */
static void test_imode(void)
{
	struct pv_control c = ctl_ab;
	uint64_t values[PV_PMU_COUNTERS] = { 0, TOP - 10 }, save[PV_PMU_COUNTERS], overflows;
	struct pv_thread_counts t = { 0 };
	struct vpmu *p;
	struct vcpu *v;

	fresh(0, 0);
	v = fresh_dom(&dom0, 1);
	p = &v->pmu.vpmu;
	hc_setup(v);
	check(hc(v, HC_PMU_SET_VECTOR, 31, 0) == -PV_EINVAL &&
	      hc(v, HC_PMU_SET_VECTOR, 256, 0) == -PV_EINVAL &&
	      hc(v, HC_PMU_SET_VECTOR, 0xE0, 0) == 0, "SET_VECTOR takes 32..255 only");
	c.imode_mask = 2;
	c.ireset[1] = TOP - 100;
	memcpy(dom0.ram + CTL_GPA, &c, sizeof(c));
	memcpy(dom0.ram + VALUES_GPA, values, sizeof(values));
	check(hc(v, HC_PMU_IRESUME, CTL_GPA, VALUES_GPA) == 0, "IRESUME");
	pv_thread_resume(&t, areas(&dom0), 0, &kops);
	check(p->pmc[1] == TOP - 10 && p->evtsel[1] == (c.evtsel[1] | EVTSEL_INT) &&
	      (p->global_ctrl & 2) && !p->evtsel[0] && t.mask == (1u | 1u << PV_TSC),
	      "IRESUME loads counter 1 with INT; the thread's a-mode values are 0 and the TSC");
	run(v, 36);
	check(p->pmc[1] == TOP - 1 && !area(v)->overflow_pending && !v->raised,
	      "9 branches: one short of overflow");
	run(v, 4);
	check(p->pmc[1] == TOP - 100 && area(v)->overflow_pending == 1u << PV_PENDING_BITS &&
	      area(v)->overflows == 1 && v->raised == 0xE0 && !v->pmis && !(p->global_status & 2),
	      "the 10th overflows: re-armed to ireset, counter 1's count 1 pending, the vector");
	check(dom0.pd.pv.soft_phys[0][1] == 0, "the i-mode counter is not counted as an a-mode one");
	check_read(&t, 40, 0, 40 * TICKS, "a-mode counter 0 counts on beside it");
	run(v, 8);
	check(hc(v, HC_PMU_ISUSPEND, SAVE_GPA, 0) == 1 << PV_PENDING_BITS,
	      "ISUSPEND returns the pending count");
	memcpy(save, dom0.ram + SAVE_GPA, sizeof(save));
	check(save[1] == TOP - 98 && pv_sext(save[1], 48) == -98 && !p->evtsel[1],
	      "ISUSPEND saves -98 (not overflowed) and stops counter 1");
	run(v, 40);
	check(p->pmc[1] == TOP - 98 && hc(v, HC_PMU_IACK, 0, 0) == 0,
	      "suspended: counter 1 still, nothing pending");
	values[1] = TOP - 1;
	memcpy(dom0.ram + VALUES_GPA, values, sizeof(values));
	hc(v, HC_PMU_IRESUME, CTL_GPA, VALUES_GPA);
	run(v, 4);
	check(hc(v, HC_PMU_IACK, 0, 0) == 1 << PV_PENDING_BITS && hc(v, HC_PMU_IACK, 0, 0) == 0,
	      "IACK takes the overflow count once");
	/*
	 * 250 branches from the reset value: the 100th overflows, the 200th again, 50 counted past
	 * it stay (the reload is the period plus the overshoot), and the page counts 2 overflows.
	 */
	values[1] = TOP - 100;
	memcpy(dom0.ram + VALUES_GPA, values, sizeof(values));
	hc(v, HC_PMU_IRESUME, CTL_GPA, VALUES_GPA);
	overflows = area(v)->overflows;
	run(v, 4 * 250);
	check(p->pmc[1] == TOP - 50 && area(v)->overflows == overflows + 2 &&
	      hc(v, HC_PMU_IACK, 0, 0) == 2 << PV_PENDING_BITS,
	      "250 events of a period of 100: 2 overflows counted and pending, 50 kept past the "
	      "reset (%#llx)", (unsigned long long)p->pmc[1]);
	/*
	 * Two overflows before the acknowledgement (interrupts held off in the guest) are two
	 * notifications: IACK returns the count 2, not one bit.
	 */
	values[1] = TOP - 10;
	memcpy(dom0.ram + VALUES_GPA, values, sizeof(values));
	hc(v, HC_PMU_IRESUME, CTL_GPA, VALUES_GPA);
	run(v, 4 * 10);
	run(v, 4 * 100);
	check(hc(v, HC_PMU_IACK, 0, 0) == 2 << PV_PENDING_BITS,
	      "two overflows, one after the other, before IACK: the count 2");
	/* A count saturates at PV_PENDING_MAX instead of wrapping into the next counter's. */
	check(pv_pending_add(pv_pending_add(0, 1, 200), 1, 100) == PV_PENDING_MAX << PV_PENDING_BITS &&
	      pv_pending_merge(3u << 16 | 5, 4u << 16 | 1) == (7u << 16 | 6),
	      "pending counts saturate per counter and merge counter by counter");
}

static int64_t racer_result;

static void racer(void)
{
	during_map = NULL;
	racer_result = hc_setup(&dom1.vcpu[1]);
}

/* Two VCPUs call SETUP at once: the second arrives while the first maps the area. */
static void test_setup_race(void)
{
	struct vcpu *v = fresh_dom(&dom1, 2);

	maps = 0;
	racer_result = 1;
	during_map = racer;
	check(hc_setup(v) == 0 && racer_result == -PV_EINVAL && maps == 1,
	      "SETUP raced by a second VCPU: one maps the area, the other gets -EINVAL");
	check(hc_setup(&dom1.vcpu[1]) == -PV_EINVAL && maps == 1,
	      "SETUP after the race: -EINVAL, nothing mapped again");
}

static void test_bad_calls(void)
{
	static const struct {
		const char *what;
		struct pv_control c;
	} bad[] = {
		{ "5 counters", { .ncounters = 5, .evtsel = { EVTSEL(0xC0), EVTSEL(0xC0),
		  EVTSEL(0xC0), EVTSEL(0xC0) } } },
		{ "i-mode counter 2 of 2", { .ncounters = 2, .imode_mask = 4,
		  .evtsel = { EVTSEL(0xC0), EVTSEL(0xC0) } } },
		{ "evtsel bit 32", { .ncounters = 1, .evtsel = { EVTSEL(0xC0) | 1ull << 32 } } },
		{ "evtsel without EN", { .ncounters = 1, .evtsel = { 0xC0 | EVTSEL_USR } } },
		{ "ireset of 49 bits", { .ncounters = 1, .imode_mask = 1,
		  .evtsel = { EVTSEL(0xC0) }, .ireset = { TOP } } },
	};
	struct vcpu *v;

	fresh(0, 0);
	v = fresh_dom(&dom0, 2);
	check(hc_resume(v, &ctl_ab) == -PV_EINVAL && hc(v, HC_PMU_IACK, 0, 0) == -PV_EINVAL &&
	      hc(v, HC_PMU_ISUSPEND, SAVE_GPA, 0) == -PV_EINVAL &&
	      hc(v, HC_PMU_READ, 0, 0) == -PV_EINVAL, "before SETUP: -EINVAL");
	check(hc(v, HC_PMU_SETUP, AREA_GPA + 8, 2) == -PV_EINVAL, "SETUP unaligned: -EINVAL");
	check(hc(v, HC_PMU_SETUP, AREA_GPA, 1) == -PV_EINVAL, "SETUP for 1 of 2 VCPUs: -EINVAL");
	check(hc(v, HC_PMU_SETUP, AREA_GPA, (1ull << 32) + 2) == -PV_EINVAL,
	      "SETUP for 2^32 + 2 VCPUs (2 in 32 bits): -EINVAL");
	check(hc(v, HC_PMU_SETUP, RAM_SIZE - 4096, 2) == -PV_EINVAL &&
	      hc(v, HC_PMU_SETUP, 1ull << 40, 2) == -PV_EINVAL, "SETUP outside RAM: -EINVAL");
	check(hc_setup(v) == 0 && area(v)->version == PV_PMU_VERSION &&
	      area(v)->size == sizeof(struct pv_vcpu_area) && area(v)->width == 48 &&
	      area(v)->wrap == TOP - 1 && area(&dom0.vcpu[1])->wrap == TOP - 1 &&
	      area(v)->flags == PV_FLAG_SOFT_PHYS && area(&dom0.vcpu[1])->vcpu_id == 1 &&
	      area(&dom0.vcpu[1])->rdpmc_index[3] == 3, "SETUP fills every VCPU's page");
	check(hc_setup(v) == -PV_EINVAL, "SETUP twice: -EINVAL");
	hc_resume(v, &ctl_ab);
	test_setup_race();
	for (unsigned k = 0; k < sizeof(bad) / sizeof(*bad); k++) {
		memcpy(dom0.ram + CTL_GPA, &bad[k].c, sizeof(bad[k].c));
		check(hc(v, HC_PMU_RESUME, CTL_GPA, 0) == -PV_EINVAL &&
		      hc(v, HC_PMU_IRESUME, CTL_GPA, VALUES_GPA) == -PV_EINVAL &&
		      !memcmp(&area(v)->active, &ctl_ab, sizeof(ctl_ab)) &&
		      area(v)->resumes == 1, "control with %s: -EINVAL, nothing changed",
		      bad[k].what);
	}
	check(hc(v, HC_PMU_RESUME, RAM_SIZE - 8, 0) == -PV_EFAULT &&
	      hc(v, HC_PMU_IRESUME, CTL_GPA, RAM_SIZE - 8) == -PV_EFAULT &&
	      hc(v, HC_PMU_ISUSPEND, RAM_SIZE, 0) == -PV_EFAULT, "pointers outside RAM: -EFAULT");
	check(hc(v, HC_PMU_READ, PV_PMU_COUNTERS, 0) == -PV_EINVAL &&
	      hc(v, HC_PMU_BASE + 7, 0, 0) == -PV_ENOSYS,
	      "READ of counter 4: -EINVAL; 0x107: -ENOSYS");
	pmu_backend = PMU_BACKEND_OFF;
	check(hc(v, HC_PMU_READ, 0, 0) == -PV_ENOSYS, "pmu=off: -ENOSYS");
	pmu_backend = PMU_BACKEND_SOFT;
}

/*
 * Isolation: a domain's page never shows another domain's events. Domain 1 runs 5000 on v's PCPU
 * while v is descheduled: v's published soft counters and Phys* are as v left them.
 */
static void test_no_leak(void)
{
	struct vcpu *v, *w;
	uint64_t before[PV_PMU_COUNTERS];

	fresh(1000, 0);
	w = other_dom();
	v = fresh_dom(&dom0, 1);
	w->pcpu = v->pcpu;
	hc_setup(v);
	hc_resume(v, &ctl_ab);
	run(v, 40);
	pv_switch_out(v);
	memcpy(before, area(v)->soft_phys, sizeof(before));
	pv_switch_in(w);
	run(w, 5000);
	pv_switch_out(w);
	pv_switch_in(v);
	check(!memcmp(before, area(v)->soft_phys, sizeof(before)) &&
	      before[0] == 1040 && before[1] == 1010,
	      "a neighbour's 5000 instructions do not move the descheduled page (%llu %llu)",
	      (unsigned long long)area(v)->soft_phys[0], (unsigned long long)area(v)->soft_phys[1]);
	check(hc(v, HC_PMU_READ, 0, 0) == 40, "nor Phys* (%lld)", (long long)hc(v, HC_PMU_READ, 0, 0));
}

/*
 * VCPU 1 never switched in since VCPU 0's SETUP: its page shows its soft counters all the same
 * (they start far from 0 here), so its first thread reads what it ran, not minus their start.
 */
static void test_setup_shows_every_row(void)
{
	struct pv_thread_counts t = { 0 };
	struct vcpu *v;

	fresh(TOP / 2 + 12345, 1000);
	v = fresh_dom(&dom0, 2);
	hc_setup(&v[0]);
	check(area(&v[1])->soft_phys[0] == TOP / 2 + 12345 &&
	      area(&v[1])->soft_phys[3] == TOP / 2 + 12345,
	      "SETUP: every VCPU's page shows its soft counters");
	thread_in(&v[1], &t, &ctl_ab, 0);
	run(&v[1], 100);
	check_read(&t, 100, 25, 300, "VCPU 1's first thread reads its own events");
}

/* An 8-byte entry of the guest's page tables, at gpa of d's RAM. */
static void put_pte(struct test_dom *d, uint64_t gpa, uint64_t e)
{
	memcpy(d->ram + gpa, &e, sizeof(e));
}

/*
 * The guest kernel changes its page tables between two resumes, and nothing exits for it: the
 * remembered walk to the control must not be taken, the control the new mapping shows is the
 * one loaded. The same mapping again is compared in place, with no copy and no load.
 */
static void test_resume_remapped(void)
{
	static const struct pv_control ctl_c = {
		.ncounters = 1, .evtsel = { EVTSEL(ARCH_EVENT_CORE_CYCLES) } };
	struct pv_vcpu_area *page;
	struct vcpu *v;
	uint64_t seq;

	fresh(0, 1000);
	v = fresh_dom(&dom0, 1);
	/* 4-level paging: PML4 at 0xa000 down to one table, linear page k on physical page k. */
	dom0.cr3 = 0xa000;
	put_pte(&dom0, 0xa000, 0xb000 | 3);
	put_pte(&dom0, 0xb000, 0xc000 | 3);
	put_pte(&dom0, 0xc000, 0xd000 | 3);
	for (uint64_t k = 0; k < RAM_SIZE / 4096; k++)
		put_pte(&dom0, 0xd000 + k * 8, k << 12 | 3);
	memcpy(dom0.ram + 0x1000, &ctl_ab, sizeof(ctl_ab));
	memcpy(dom0.ram + 0x2000, &ctl_c, sizeof(ctl_c));
	hc_setup(v);
	page = area(v);
	check(!hc(v, HC_PMU_RESUME, 0x1000, 0) && !memcmp(&page->active, &ctl_ab, sizeof(ctl_ab)),
	      "paging: RESUME loads the control its linear address maps to");
	seq = page->active_seq;
	check(!hc(v, HC_PMU_RESUME, 0x1000, 0) && page->active_seq == seq && v->walk.hits == 1 &&
	      v->reprogrammed == 1, "paging: the same control again, by the remembered walk, "
	      "compared in place: nothing loaded");
	put_pte(&dom0, 0xd000 + 1 * 8, 0x2000 | 3);	/* linear 0x1000 now maps ctl_c's page */
	check(!hc(v, HC_PMU_RESUME, 0x1000, 0) && page->active_seq == seq + 1 &&
	      !memcmp(&page->active, &ctl_c, sizeof(ctl_c)) && amode_mask(ctl_of(v)) == 1 &&
	      v->reprogrammed == 2,
	      "paging: a page-table change between two resumes: the control mapped now is loaded");
	dom0.cr3 = 0;
}

/*
 * The exit hooks' cycles (pv_count_cycles()): the ticks go to each a-mode counter of core or
 * reference cycles that counts at the ring, once, as pv_count() of each kind would; a counter
 * of another event, or filtered to the other ring, takes none.
 */
static void test_count_cycles(void)
{
	static const struct pv_control ctl_cyc = {
		.ncounters = 4,
		.evtsel = { EVTSEL(ARCH_EVENT_CORE_CYCLES), EVTSEL(ARCH_EVENT_REF_CYCLES),
			    EVTSEL(ARCH_EVENT_INST_RETIRED),
			    ARCH_EVENT_CORE_CYCLES | EVTSEL_EN | EVTSEL_USR },
	};
	const uint64_t *row;
	struct vcpu *v;

	fresh(1000, 1000);
	v = fresh_dom(&dom0, 1);
	hc_setup(v);
	check(!hc_resume(v, &ctl_cyc), "cycles: RESUME of core, ref, instructions, user core");
	row = dom0.pd.pv.soft_phys[0];
	pv_count_cycles(&v->pmu, 100, 3);
	pv_count_cycles(&v->pmu, 50, 0);
	check(row[0] == 1150 && row[1] == 1150 && row[2] == 1000 && row[3] == 1100,
	      "cycles: core and ref at both rings, not instructions, user-only at CPL 3 (%llu %llu "
	      "%llu %llu)", (unsigned long long)row[0], (unsigned long long)row[1],
	      (unsigned long long)row[2], (unsigned long long)row[3]);
	check(!memcmp(area(v)->soft_phys, row, sizeof(area(v)->soft_phys)),
	      "cycles: the page shows the soft counters as they change");
}

int main(void)
{
	test_wrap_sext();
	test_read_never_counted();
	for (unsigned width = 40; width <= 48; width += 8) {
		test_read_rdpmc(width, (1ull << width) - 100);
		test_read_rdpmc(width, (1ull << (width - 1)) - 100);
	}
	test_scenario("from 0", 0, 0, 0);
	test_scenario("wrapping at 2^48", TOP - 150, 1000, 0);
	test_scenario("across 2^47", TOP / 2 - 150, 1000, 0);
	test_scenario("T3 on PCPU 1, TSC wrapping", TOP - 1300, -2000ull, 1);
	test_compensation();
	test_long_run(TOP - 100);
	test_long_run(TOP / 2 - 100);
	test_skipped_resume();
	test_retry("a deschedule and move to PCPU 1", deschedule_and_move, 1);
	test_retry("a switch to another thread and back", other_thread, 1);
	test_retry("a switch to another thread and back, RESUMEd", other_thread_resumed, 1);
	test_retry("a move to VCPU 1", to_vcpu1, 2);
	test_kernel_retry();
	test_imode();
	test_bad_calls();
	test_no_leak();
	test_resume_remapped();
	test_setup_shows_every_row();
	test_count_cycles();
	return unit_summary();
}
