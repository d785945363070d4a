/* perfctr-xen's paravirtual counters: a-mode by Sum/Start offsets, i-mode by save/restore with a virtual interrupt. */
#include "hv/vcpu_pmu.h"
#include "pmu/backend.h"
#include "include/perfvisor/pmu_read.h"
#include "pmu/pmu.h"
#include "include/x86/pmu_msr.h"
#include "pmu/pv.h"
#include "lib/inject.h"
#include "lib/cpu.h"

/* The vPMU counters i-mode lives in, and the soft physical counters, are 48 bits. */
#define WIDTH		48
#define WIDTH_MASK	((1ull << WIDTH) - 1)

/*
 * Where a-mode counter i's physical value is (seed 003 4.2.1). A backend with counter registers
 * reads GP counter i, phys_width bits; one without (hw_phys NULL) has soft counters, one set
 * per VCPU (struct pv_domain): unlike real ones shared by a PCPU, they never count another
 * domain's events, which the page would show. Sum/Start make them per thread. Guests read
 * them from the page.
 */
static uint64_t (*hw_phys)(struct vcpu *v, unsigned i);
static unsigned phys_width = WIDTH;
static uint64_t phys_mask = WIDTH_MASK;	/* phys_width bits: a difference of two Phys */

static uint64_t *soft_phys_of(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);

	return pv->pd->pv.soft_phys[pv->id];
}

void pv_init(const struct pmu_backend_ops *ops, unsigned width)
{
	hw_phys = ops ? ops->pv_phys : 0;
	/* The ABI's values are 48-bit numbers: wider counters are read modulo 2^48, which keeps
	 * every difference exact and HC_PMU_READ's result clear of the error codes. */
	phys_width = hw_phys && width < WIDTH ? width : WIDTH;
	phys_mask = pv_wrap(~0ull, phys_width);
}

/* The VCPU's own page of the shared area, NULL before HC_PMU_SETUP. */
static struct pv_vcpu_area *page_of(const struct pmu_vcpu *pv)
{
	char *base = (char *)__atomic_load_n(&pv->pd->pv.area, __ATOMIC_ACQUIRE);

	return base ? (struct pv_vcpu_area *)(base + pv->id * PV_PMU_AREA_STRIDE) :
		      (struct pv_vcpu_area *)0;
}

static struct pv_vcpu_area *area_of(struct vcpu *v)
{
	return page_of(vcpu_pmu_state(v));
}

/* The control v runs, as validated (its page's copy is the guest's to read). */
static struct pv_control *ctl_of(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);

	return &pv->pd->pv.ctl[pv->id];
}

/* The a-mode counters of a control: in use and not interrupt-mode. */
static uint32_t amode_mask(const struct pv_control *c)
{
	return ((1u << c->ncounters) - 1) & ~c->imode_mask;
}

/* What an event select counts at cpl, by the vPMU's rules: nothing if the domain denies it. */
static int amode_event(struct vcpu *v, uint64_t sel, unsigned cpl)
{
	int ev = vpmu_evtsel_event(sel, cpl);

	if (ev != VPMU_EV_NONE &&
	    (vcpu_pmu_state(v)->vpmu.cfg->unavailable & vpmu_event_ebx_bit[ev]))
		return VPMU_EV_NONE;
	return ev;
}

/* This VCPU's soft counters, looked up once per switch; NULL with counter registers. */
static const uint64_t *soft_row(struct vcpu *v)
{
	return hw_phys ? (const uint64_t *)0 : soft_phys_of(v);
}

static uint64_t phys(struct vcpu *v, unsigned i)
{
	return hw_phys ? hw_phys(v, i) : soft_phys_of(v)[i];
}

/* Phys of the counters in mask, indexed by counter: the soft row, or the registers read into buf. */
static const uint64_t *phys_row(struct vcpu *v, uint64_t mask, uint64_t buf[PV_PMU_COUNTERS])
{
	if (!hw_phys)
		return soft_row(v);
	for (; mask; mask &= mask - 1)
		buf[__builtin_ctzll(mask)] = hw_phys(v, (unsigned)__builtin_ctzll(mask));
	return buf;
}

/* Soft counters: mirrors the VCPU's values (row, from soft_row()) into the page it reads them from. */
static void publish_row(struct pv_vcpu_area *a, const uint64_t *row)
{
	if (!row)
		return;
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
		a->soft_phys[i] = row[i];
}

/* What readers add to Phys (include/perfvisor/pmu.h): Sum_vcpu - Start_vcpu of value i. */
static void publish_offset(struct pv_vcpu_area *a, unsigned i)
{
	const struct pv_counter *c = i == PV_TSC ? &a->tsc : &a->ctr[i];

	a->offset[i] = c->sum_vcpu - c->start_vcpu;
}

void pv_switch_in(struct vcpu *v)
{
	struct pv_vcpu_area *a = area_of(v);
	uint64_t buf[PV_PMU_COUNTERS], stale[PV_PMU_COUNTERS];
	const uint64_t *row, *start;
	uint32_t amode;

	if (!a)
		return;
	/* Start_vcpu = Phys at the (re)start of the VCPU on this PCPU, its control programmed. */
	a->tsc.start_vcpu = vcpu_pmu_guest_tsc(v);
	amode = amode_mask(ctl_of(v));
	row = phys_row(v, amode, buf);
	start = row;
	/* inject=pv-stale-start: the validation suite's breakage of this very sample. */
	if (inject_on(INJECT_PV_STALE_START)) {
		for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
			stale[i] = a->ctr[i].start_vcpu;
		start = stale;
	}
	/*
	 * A constant bound, no bit scan: a test per counter, and the stores. Sum_vcpu changed at
	 * the switch-out, Start_vcpu now: the offsets follow them until the next.
	 */
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++) {
		if (!(amode >> i & 1))
			continue;
		a->ctr[i].start_vcpu = start[i];
		a->offset[i] = a->ctr[i].sum_vcpu - start[i];
	}
	publish_offset(a, PV_TSC);
	publish_row(a, hw_phys ? (const uint64_t *)0 : row);
}

void pv_switch_out(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	struct pv_vcpu_area *a = area_of(v);
	const uint64_t *soft = pv->pd->pv.soft_phys[pv->id];
	uint32_t m;

	/* inject=pv-skip-sum: the validation suite's deliberate breakage of this very step. */
	if (!a || inject_on(INJECT_PV_SKIP_SUM))
		return;
	/* Sum_vcpu += Phys - Start_vcpu: the thread's events of this stretch of the VCPU. */
	a->tsc.sum_vcpu += vcpu_pmu_guest_tsc(v) - a->tsc.start_vcpu;
	/* The counters in use only (the low ones, as a rule), each a read and an add. */
	m = amode_mask(&pv->pd->pv.ctl[pv->id]);
	if (hw_phys) {
		for (unsigned i = 0; m; i++, m >>= 1)
			if (m & 1)
				a->ctr[i].sum_vcpu += (hw_phys(v, i) - a->ctr[i].start_vcpu) &
						      phys_mask;
		return;
	}
	for (struct pv_counter *ctr = a->ctr; m; m >>= 1, ctr++, soft++)
		if (m & 1)
			ctr->sum_vcpu += (*soft - ctr->start_vcpu) & phys_mask;
}

/* The a-mode counters of pv's control that count each event at CPL 0 and above. */
static uint8_t (*counting_of(const struct pmu_vcpu *pv))[VPMU_EV_COUNT]
{
	return pv->pd->pv.counting[pv->id];
}

/* v's control changed: which counters count what, decoded once. */
static void derive_counting(struct vcpu *v)
{
	uint8_t (*cnt)[VPMU_EV_COUNT] = counting_of(vcpu_pmu_state(v));
	const struct pv_control *c = ctl_of(v);

	__builtin_memset(cnt, 0, sizeof(uint8_t[2][VPMU_EV_COUNT]));
	for (unsigned ring = 0; ring < 2; ring++) {
		for (uint32_t m = amode_mask(c); m; m &= m - 1) {
			unsigned i = __builtin_ctz(m);
			int ev = amode_event(v, c->evtsel[i], ring ? 3 : 0);

			if (ev != VPMU_EV_NONE)
				cnt[ring][ev] |= 1u << i;
		}
	}
}

/* n more events for the a-mode counters in m (not 0) of pv's control. */
static void count_amode(struct pmu_vcpu *pv, uint32_t m, uint64_t n)
{
	struct pv_vcpu_area *a = page_of(pv);
	uint64_t *row;

	/*
	 * A counter register cannot take an exact add (a legacy write keeps 32 bits): Phys* can,
	 * through Sum_vcpu, as if the register had counted them.
	 */
	if (hw_phys) {
		for (; m; m &= m - 1) {
			a->ctr[__builtin_ctz(m)].sum_vcpu += n;
			a->offset[__builtin_ctz(m)] += n;
		}
		return;
	}
	/* The page shows each soft counter as it changes (setup() showed them all). */
	row = pv->pd->pv.soft_phys[pv->id];
	for (; m; m &= m - 1) {
		unsigned i = __builtin_ctz(m);

		row[i] = (row[i] + n) & WIDTH_MASK;
		a->soft_phys[i] = row[i];
	}
}

void pv_count(struct vcpu *v, int ev, uint64_t n, unsigned cpl)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	uint32_t m;

	/* VPMU_EV_NONE, or no event at all, is counted by no counter (as vpmu_count()). */
	if ((unsigned)ev >= VPMU_EV_COUNT)
		return;
	/* A control is set only once the area is: no counter counts before it. */
	m = counting_of(pv)[cpl != 0][ev];
	if (m)
		count_amode(pv, m, n);
}

void pv_count_cycles(struct pmu_vcpu *pv, uint64_t ticks, unsigned cpl)
{
	const uint8_t *cnt = counting_of(pv)[cpl != 0];
	/* A counter counts one event: in the union it takes the ticks once, as by either kind. */
	uint32_t m = cnt[VPMU_EV_CORE_CYCLES] | cnt[VPMU_EV_REF_CYCLES];

	if (m)
		count_amode(pv, m, ticks);
}

uint32_t pv_active_at(struct vcpu *v, unsigned cpl)
{
	const uint8_t *cnt = counting_of(vcpu_pmu_state(v))[cpl != 0];
	uint32_t events = 0;

	for (int ev = 0; ev < VPMU_EV_COUNT; ev++)
		if (cnt[ev])
			events |= 1u << ev;
	return events;
}

uint32_t pv_active(struct vcpu *v)
{
	return pv_active_at(v, 0) | pv_active_at(v, 3);
}

uint32_t pv_amode(struct vcpu *v, uint64_t evtsel[PV_PMU_COUNTERS])
{
	const struct pv_control *c;

	if (!area_of(v))
		return 0;
	c = ctl_of(v);
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
		evtsel[i] = c->evtsel[i];
	return amode_mask(c);
}

/*
 * i-mode counters live in the VCPU's vPMU general counters, saved and restored on every switch:
 * those of the old control (`old`) go back to the guest's trap-and-emulate use, cleared; the new
 * control's are loaded. Counters in neither stay the guest's as they are.
 */
static void load_imode(struct vcpu *v, uint32_t old, const struct pv_control *c,
		       const uint64_t *values)
{
	struct vpmu *p = &vcpu_pmu_state(v)->vpmu;

	for (uint32_t m = old; m; m &= m - 1) {
		p->evtsel[__builtin_ctz(m)] = 0;
		p->pmc[__builtin_ctz(m)] = 0;
	}
	for (uint32_t m = c->imode_mask; m; m &= m - 1) {
		unsigned i = __builtin_ctz(m);

		p->evtsel[i] = c->evtsel[i] | EVTSEL_INT;
		p->pmc[i] = (values ? values[i] : c->ireset[i]) & WIDTH_MASK;
		p->global_ctrl |= 1ull << i;
	}
}

/* A control the hardware would take, on counters the VCPU has (on the arch backend, real ones). */
static bool control_valid(struct vcpu *v, const struct pv_control *c)
{
	if (c->ncounters > PV_PMU_COUNTERS || c->ncounters > vcpu_pmu_state(v)->vpmu.cfg->num_gp ||
	    (c->imode_mask >> c->ncounters))
		return false;
	for (unsigned i = 0; i < c->ncounters; i++)
		/* As IA32_PERFEVTSELx: bits 63:32 and AnyThread are reserved below version 3. */
		if ((c->evtsel[i] >> 32) || (c->evtsel[i] & EVTSEL_ANY) ||
		    !(c->evtsel[i] & EVTSEL_EN) ||
		    (c->ireset[i] & ~WIDTH_MASK))
			return false;
	return true;
}

/* Byte for byte, a word at a time: the control is 9 of them, with no padding. */
static bool same_control(const struct pv_control *a, const struct pv_control *b)
{
	uint64_t x, y, diff = 0;

#pragma GCC unroll 9
	for (unsigned i = 0; i < sizeof(*a); i += 8) {
		__builtin_memcpy(&x, (const char *)a + i, 8);
		__builtin_memcpy(&y, (const char *)b + i, 8);
		diff |= x ^ y;
	}
	return !diff;
}

/*
 * A control other than the one the VCPU runs, or one with i-mode counters to start (at values,
 * or their reset values when NULL): validated, it becomes the VCPU's and programs the counters.
 */
static int64_t load_control(struct vcpu *v, struct pv_vcpu_area *a, const struct pv_control *c,
			    const uint64_t *values)
{
	struct pv_control *ctl = ctl_of(v);
	uint32_t old;

	if (!control_valid(v, c))
		return -PV_EINVAL;
	/* The counters are about to change: the backend's live values first, by the old control. */
	pmu_sync(v);
	if (!same_control(c, ctl))
		a->active_seq++;
	old = ctl->imode_mask;
	*ctl = *c;
	derive_counting(v);
	if (!inject_on(INJECT_PV_STALE_ACTIVE))
		a->active = *c;
	load_imode(v, old, c, values);
	pmu_reprogrammed(v);
	return 0;
}

/*
 * Sum_vcpu = 0, Start_vcpu = Phys (programmed) for the TSC and the a-mode counters (amode): the
 * thread's own count restarts here. The offsets readers add are Sum_vcpu - Start_vcpu = -Phys;
 * the page already shows the soft counters (pv_count()).
 */
static void restart(struct vcpu *v, const struct pmu_vcpu *pv, struct pv_vcpu_area *a,
		    uint32_t amode)
{
	uint64_t buf[PV_PMU_COUNTERS], tsc = vcpu_pmu_guest_tsc(v);
	const uint64_t *row;

	a->resumes++;
	a->tsc.sum_vcpu = 0;
	a->tsc.start_vcpu = tsc;
	a->offset[PV_TSC] = -tsc;
	row = hw_phys ? phys_row(v, amode, buf) : pv->pd->pv.soft_phys[pv->id];
	/* Unrolled: constant offsets, a select per counter and no branch. */
#pragma GCC unroll 4
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++) {
		uint64_t start = amode >> i & 1 ? row[i] : 0;

		a->ctr[i].sum_vcpu = 0;
		a->ctr[i].start_vcpu = start;
		a->offset[i] = -start;
	}
}

/*
 * resume() for any control but the one the VCPU runs, or with i-mode counters: copied first
 * (from g, or through the page tables when NULL), and only the copy is looked at (the guest may
 * change its own meanwhile). Out of line: the common resume needs none of its stack.
 */
static __attribute__((noinline)) int64_t resume_load(struct vcpu *v, struct pv_vcpu_area *a,
						     const struct pv_control *g, uint64_t ctl_la,
						     uint64_t values_la)
{
	uint64_t values[PV_PMU_COUNTERS];
	struct pv_control c;

	if (g)
		__builtin_memcpy(&c, g, sizeof(c));
	else if (!vcpu_pmu_read_guest(v, &c, ctl_la, sizeof(c)))
		return -PV_EFAULT;
	if (values_la && !vcpu_pmu_read_guest(v, values, values_la, sizeof(values)))
		return -PV_EFAULT;
	if (!same_control(&c, ctl_of(v)) || c.imode_mask)
		return load_control(v, a, &c, values_la ? values : (const uint64_t *)0);
	return 0;
}

/* HC_PMU_RESUME / HC_PMU_IRESUME: a thread's control and i-mode values become the VCPU's. */
static int64_t resume(struct vcpu *v, uint64_t ctl_la, uint64_t values_la)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	struct pv_vcpu_area *a = page_of(pv);
	struct pv_control *ctl = &pv->pd->pv.ctl[pv->id];
	const struct pv_control *g;
	int64_t r;

	if (!a)
		return -PV_EINVAL;
	/*
	 * The control the VCPU runs was valid when it came; without i-mode counters to load again,
	 * the same one again changes no programming: only Sum/Start restart. It is compared where
	 * the guest keeps it (the walk there remembered).
	 */
	g = vcpu_pmu_guest_bytes(v, ctl_la, sizeof(*g));
	if (values_la || ctl->imode_mask || !g || !same_control(g, ctl)) {
		r = resume_load(v, a, g, ctl_la, values_la);
		if (r)
			return r;
	}
	restart(v, pv, a, amode_mask(ctl));
	return 0;
}

/* The overflow counts not yet taken by the guest; reading them takes them (seed 003 4.2.2). */
static int64_t take_pending(struct pv_vcpu_area *a)
{
	uint32_t pending = a->overflow_pending;

	a->overflow_pending = 0;
	return pending;
}

/*
 * HC_PMU_ISUSPEND: the i-mode counters stop, their values go back to the thread, with the
 * overflows it has not been told of yet (the guest marks the thread pending). They stay the
 * control's, stopped, until the next RESUME: counting in a-mode instead would count for nobody.
 */
static int64_t isuspend(struct vcpu *v, uint64_t save_la)
{
	struct pv_vcpu_area *a = area_of(v), before;
	struct vpmu *p = &vcpu_pmu_state(v)->vpmu;
	uint64_t values[PV_PMU_COUNTERS];
	struct pv_control *ctl;
	int64_t pending;

	if (!a)
		return -PV_EINVAL;
	pmu_sync(v);
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
		values[i] = p->pmc[i];
	/*
	 * The hypervisor's write does not check that the guest may write there: aimed at the
	 * VCPU's own page, read-only to the guest, it is undone and fails as the guest's would.
	 */
	before = *a;
	if (!vcpu_pmu_write_guest(v, save_la, values, sizeof(values)))
		return -PV_EFAULT;
	if (__builtin_memcmp(a, &before, sizeof(before))) {
		*a = before;
		return -PV_EFAULT;
	}
	ctl = ctl_of(v);
	for (uint32_t m = ctl->imode_mask; m; m &= m - 1)
		p->evtsel[__builtin_ctz(m)] = 0;
	pmu_reprogrammed(v);
	pending = inject_on(INJECT_PV_KEEP_PENDING) ? a->overflow_pending : take_pending(a);
	return inject_on(INJECT_PV_DROP_PENDING) ? 0 : pending;
}

static int64_t setup(struct vcpu *v, uint64_t gpa, uint64_t nvcpus)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	struct pv_domain *d = &pv->pd->pv;
	const char *why;
	struct pv_vcpu_area *base;

	if (nvcpus > PV_MAX_VCPUS)
		return -PV_EINVAL;
	/* VCPUs of one domain may call at once on several PCPUs: exactly one maps the area. */
	if (__atomic_exchange_n(&d->claimed, 1, __ATOMIC_ACQ_REL))
		return -PV_EINVAL;
	base = vcpu_pmu_map_area(v, gpa, (unsigned)nvcpus, &why);
	if (!base) {
		__atomic_store_n(&d->claimed, 0, __ATOMIC_RELEASE);
		return -PV_EINVAL;
	}
	for (unsigned k = 0; k < nvcpus; k++) {
		struct pv_vcpu_area *a = (struct pv_vcpu_area *)((char *)base + k * PV_PMU_AREA_STRIDE);

		__builtin_memset(a, 0, sizeof(*a));
		__builtin_memset(&d->ctl[k], 0, sizeof(d->ctl[k]));
		__builtin_memset(d->counting[k], 0, sizeof(d->counting[k]));
		a->version = PV_PMU_VERSION;
		a->size = sizeof(*a);
		a->vcpu_id = k;
		/* With counter registers, guests read them by RDPMC (rdpmc_index). */
		a->flags = hw_phys ? 0 : PV_FLAG_SOFT_PHYS;
		a->width = phys_width;
		a->wrap = pv_wrap(~0ull, phys_width);
		for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
			a->rdpmc_index[i] = i;
		/* From here on each soft counter's page shows it as it changes. */
		publish_row(a, hw_phys ? (const uint64_t *)0 : d->soft_phys[k]);
	}
	d->nvcpus = (unsigned)nvcpus;
	__atomic_store_n(&d->area, base, __ATOMIC_RELEASE);
	pv_switch_in(v);
	return 0;
}

/* HC_PMU_READ: Phys* of a-mode counter i, the VCPU-level value (seed 003, equation 3). */
static int64_t read_star(struct vcpu *v, uint64_t i)
{
	struct pv_vcpu_area *a = area_of(v);

	if (!a || i >= PV_PMU_COUNTERS || !(amode_mask(ctl_of(v)) >> i & 1))
		return -PV_EINVAL;
	return (int64_t)pv_wrap(a->ctr[i].sum_vcpu + phys(v, (unsigned)i) - a->ctr[i].start_vcpu,
				phys_width);
}

int64_t pv_resume(struct vcpu *v, uint64_t ctl_la)
{
	return pmu_backend == PMU_BACKEND_OFF ? -PV_ENOSYS : resume(v, ctl_la, 0);
}

int64_t pv_hypercall(struct vcpu *v, uint64_t nr, const uint64_t args[3])
{
	struct pv_vcpu_area *a;

	if (pmu_backend == PMU_BACKEND_OFF)
		return -PV_ENOSYS;
	switch (nr) {
	case HC_PMU_SETUP:
		return setup(v, args[0], args[1]);
	case HC_PMU_RESUME:
		return pv_resume(v, args[0]);
	case HC_PMU_IRESUME:
		return resume(v, args[0], args[1]);
	case HC_PMU_ISUSPEND:
		return isuspend(v, args[0]);
	case HC_PMU_SET_VECTOR:
		if (args[0] < 32 || args[0] > 255)
			return -PV_EINVAL;
		vcpu_pmu_state(v)->pd->pv.vector = (uint8_t)args[0];
		return 0;
	case HC_PMU_IACK:
		a = area_of(v);
		return a ? take_pending(a) : -PV_EINVAL;
	case HC_PMU_READ:
		return read_star(v, args[0]);
	default:
		return -PV_ENOSYS;
	}
}

uint64_t pv_overflow(struct vcpu *v, uint64_t overflowed)
{
	struct pv_vcpu_area *a = area_of(v);
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	const struct pv_control *c;
	uint64_t mine;

	if (!a)
		return overflowed;
	c = ctl_of(v);
	mine = overflowed & c->imode_mask;
	if (!mine)
		return overflowed;
	/*
	 * Each overflow re-arms the counter with its reset value: a sampling period per interrupt.
	 * What counted past zero stays (the reload is the reset value plus the overshoot), and an
	 * overshoot of whole periods is that many more overflows, each counted.
	 */
	for (uint64_t m = mine; m; m &= m - 1) {
		unsigned i = __builtin_ctzll(m);
		uint64_t period = WIDTH_MASK - (c->ireset[i] & WIDTH_MASK) + 1;
		uint64_t over = pv->vpmu.pmc[i];

		pv->vpmu.pmc[i] = ((c->ireset[i] & WIDTH_MASK) + over % period) & WIDTH_MASK;
		pv->vpmu.global_status &= ~(1ull << i);
		a->overflows += 1 + over / period;
		a->overflow_pending = pv_pending_add(a->overflow_pending, i, 1 + over / period);
	}
	if (pv->pd->pv.vector)
		vcpu_pmu_raise_vector(v, pv->pd->pv.vector);
	return overflowed & ~mine;
}
