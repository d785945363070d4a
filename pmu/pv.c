/* perfctr-xen's paravirtual counters: a-mode by Sum/Start offsets, i-mode by save/restore with a virtual interrupt. */
#include "hv/vcpu_pmu.h"
#include "pmu/backend.h"
#include "pmu/pmu.h"
#include "pmu/pmu_msr.h"
#include "pmu/pv.h"

#define PV_MAX_PCPUS	8
#define WIDTH		48
#define WIDTH_MASK	((1ull << WIDTH) - 1)

/*
 * The soft backend's physical counters, one set per PCPU: like real counters they count for
 * whichever VCPU runs there and are never saved or restored; Sum/Start make them per thread.
 */
static uint64_t soft_phys[PV_MAX_PCPUS][PV_PMU_COUNTERS];

/* The calling VCPU's own page of the shared area, NULL before HC_PMU_SETUP. */
static struct pv_vcpu_area *area_of(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	char *base = (char *)__atomic_load_n(&pv->pd->pv.area, __ATOMIC_ACQUIRE);

	return base ? (struct pv_vcpu_area *)(base + pv->id * PV_PMU_AREA_STRIDE) :
		      (struct pv_vcpu_area *)0;
}

/* The a-mode counters of the active control: in use and not interrupt-mode. */
static uint32_t amode_mask(const struct pv_vcpu_area *a)
{
	return ((1u << a->active.ncounters) - 1) & ~a->active.imode_mask;
}

static uint64_t phys(struct vcpu *v, unsigned i)
{
	return soft_phys[vcpu_pmu_pcpu(v)][i];
}

/* Mirrors this PCPU's physical values into the page the guest reads them from. */
static void publish(struct vcpu *v, struct pv_vcpu_area *a)
{
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
		a->soft_phys[i] = phys(v, i);
}

void pv_switch_in(struct vcpu *v)
{
	struct pv_vcpu_area *a = area_of(v);

	if (!a)
		return;
	/* Start_vcpu = Phys at the (re)start of the VCPU on this PCPU. */
	a->tsc.start_vcpu = vcpu_pmu_guest_tsc(v);
	for (uint32_t m = amode_mask(a); m; m &= m - 1)
		a->ctr[__builtin_ctz(m)].start_vcpu = phys(v, __builtin_ctz(m));
	publish(v, a);
}

bool pv_inject_skip_sum;

void pv_switch_out(struct vcpu *v)
{
	struct pv_vcpu_area *a = area_of(v);

	/* inject=pv-skip-sum: the validation suite's deliberate breakage of this very step. */
	if (!a || pv_inject_skip_sum)
		return;
	/* Sum_vcpu += Phys - Start_vcpu: the thread's events of this stretch of the VCPU. */
	a->tsc.sum_vcpu += vcpu_pmu_guest_tsc(v) - a->tsc.start_vcpu;
	for (uint32_t m = amode_mask(a); m; m &= m - 1) {
		unsigned i = __builtin_ctz(m);

		a->ctr[i].sum_vcpu += (phys(v, i) - a->ctr[i].start_vcpu) & WIDTH_MASK;
	}
}

void pv_count(struct vcpu *v, int ev, uint64_t n, unsigned cpl)
{
	struct pv_vcpu_area *a = area_of(v);
	bool changed = false;

	if (!a)
		return;
	for (uint32_t m = amode_mask(a); m; m &= m - 1) {
		unsigned i = __builtin_ctz(m);

		if ((int)vpmu_evtsel_event(a->active.evtsel[i], cpl) == ev) {
			soft_phys[vcpu_pmu_pcpu(v)][i] = (phys(v, i) + n) & WIDTH_MASK;
			changed = true;
		}
	}
	if (changed)
		publish(v, a);
}

uint32_t pv_active(struct vcpu *v)
{
	struct pv_vcpu_area *a = area_of(v);
	uint32_t events = 0;

	if (!a)
		return 0;
	for (uint32_t m = amode_mask(a); m; m &= m - 1) {
		uint64_t sel = a->active.evtsel[__builtin_ctz(m)];

		for (unsigned cpl = 0; cpl <= 3; cpl += 3) {
			int ev = vpmu_evtsel_event(sel, cpl);

			if (ev != VPMU_EV_NONE)
				events |= 1u << ev;
		}
	}
	return events;
}

/* i-mode counters live in the VCPU's vPMU general counters: saved and restored on every switch. */
static void load_imode(struct vcpu *v, const struct pv_control *c, const uint64_t *values)
{
	struct vpmu *p = &vcpu_pmu_state(v)->vpmu;

	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++) {
		bool on = i < c->ncounters && (c->imode_mask & (1u << i));

		p->evtsel[i] = on ? c->evtsel[i] | EVTSEL_INT : 0;
		p->pmc[i] = on ? (values ? values[i] : c->ireset[i]) & WIDTH_MASK : 0;
		if (on)
			p->global_ctrl |= 1ull << i;
	}
}

/* A control the hardware would take: valid count, masks and event selects. */
static bool control_valid(const struct pv_control *c)
{
	if (c->ncounters > PV_PMU_COUNTERS || (c->imode_mask >> c->ncounters))
		return false;
	for (unsigned i = 0; i < c->ncounters; i++)
		/* As IA32_PERFEVTSELx: bits 63:32 and AnyThread are reserved below version 3. */
		if ((c->evtsel[i] >> 32) || (c->evtsel[i] & EVTSEL_ANY) ||
		    !(c->evtsel[i] & EVTSEL_EN) ||
		    (c->ireset[i] & ~WIDTH_MASK))
			return false;
	return true;
}

/* HC_PMU_RESUME / HC_PMU_IRESUME: a thread's control and i-mode values become the VCPU's. */
static int64_t resume(struct vcpu *v, uint64_t ctl_la, uint64_t values_la)
{
	struct pv_vcpu_area *a = area_of(v);
	uint64_t values[PV_PMU_COUNTERS];
	struct pv_control c;

	if (!a)
		return -PV_EINVAL;
	if (!vcpu_pmu_read_guest(v, &c, ctl_la, sizeof(c)) ||
	    (values_la && !vcpu_pmu_read_guest(v, values, values_la, sizeof(values))))
		return -PV_EFAULT;
	if (!control_valid(&c))
		return -PV_EINVAL;
	/* The i-mode counters are about to change: the backend's live values first. */
	pmu_sync(v);
	if (__builtin_memcmp(&c, &a->active, sizeof(c)))
		a->active_seq++;
	a->active = c;
	a->resumes++;
	load_imode(v, &c, values_la ? values : (const uint64_t *)0);
	pmu_reprogrammed(v);
	/* Sum_vcpu = 0, Start_vcpu = Phys: the thread's own count restarts from here. */
	a->tsc.sum_vcpu = 0;
	a->tsc.start_vcpu = vcpu_pmu_guest_tsc(v);
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++) {
		a->ctr[i].sum_vcpu = 0;
		a->ctr[i].start_vcpu = phys(v, i);
	}
	publish(v, a);
	return 0;
}

/* The overflows not yet taken by the guest; reading them takes them (seed 003 4.2.2). */
static int64_t take_pending(struct pv_vcpu_area *a)
{
	uint32_t pending = a->overflow_pending;

	a->overflow_pending = 0;
	return pending;
}

/* HC_PMU_ISUSPEND: the i-mode counters stop, their values go back to the thread, with the
 * overflows it has not been told of yet (the guest marks the thread pending). */
static int64_t isuspend(struct vcpu *v, uint64_t save_la)
{
	struct pv_vcpu_area *a = area_of(v);
	struct vpmu *p = &vcpu_pmu_state(v)->vpmu;
	uint64_t values[PV_PMU_COUNTERS];

	if (!a)
		return -PV_EINVAL;
	pmu_sync(v);
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
		values[i] = p->pmc[i];
	if (!vcpu_pmu_write_guest(v, save_la, values, sizeof(values)))
		return -PV_EFAULT;
	for (uint32_t m = a->active.imode_mask; m; m &= m - 1)
		p->evtsel[__builtin_ctz(m)] = 0;
	a->active.imode_mask = 0;
	pmu_reprogrammed(v);
	return take_pending(a);
}

static int64_t setup(struct vcpu *v, uint64_t gpa, uint64_t nvcpus)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	struct pv_domain *d = &pv->pd->pv;
	const char *why;
	struct pv_vcpu_area *base;

	if (d->area || nvcpus > 64)
		return -PV_EINVAL;
	base = vcpu_pmu_map_area(v, gpa, (unsigned)nvcpus, &why);
	if (!base)
		return -PV_EINVAL;
	for (unsigned k = 0; k < nvcpus; k++) {
		struct pv_vcpu_area *a = (struct pv_vcpu_area *)((char *)base + k * PV_PMU_AREA_STRIDE);

		__builtin_memset(a, 0, sizeof(*a));
		a->version = PV_PMU_VERSION;
		a->size = sizeof(*a);
		a->vcpu_id = k;
		a->flags = PV_FLAG_SOFT_PHYS;
		a->width = WIDTH;
		for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
			a->rdpmc_index[i] = i;
	}
	d->nvcpus = (unsigned)nvcpus;
	__atomic_store_n(&d->area, base, __ATOMIC_RELEASE);
	pv_switch_in(v);
	return 0;
}

int64_t pv_hypercall(struct vcpu *v, uint64_t nr, const uint64_t args[3])
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	struct pv_vcpu_area *a;

	if (pmu_backend == PMU_BACKEND_OFF)
		return -PV_ENOSYS;
	switch (nr) {
	case HC_PMU_SETUP:
		return setup(v, args[0], args[1]);
	case HC_PMU_RESUME:
		return resume(v, args[0], 0);
	case HC_PMU_IRESUME:
		return resume(v, args[0], args[1]);
	case HC_PMU_ISUSPEND:
		return isuspend(v, args[0]);
	case HC_PMU_SET_VECTOR:
		if (args[0] < 32 || args[0] > 255)
			return -PV_EINVAL;
		pv->pd->pv.vector = (uint8_t)args[0];
		return 0;
	case HC_PMU_IACK:
		a = area_of(v);
		return a ? take_pending(a) : -PV_EINVAL;
	case HC_PMU_READ:
		a = area_of(v);
		if (!a || args[0] >= PV_PMU_COUNTERS)
			return -PV_EINVAL;
		return (int64_t)((a->ctr[args[0]].sum_vcpu + phys(v, args[0]) -
				  a->ctr[args[0]].start_vcpu) & WIDTH_MASK);
	default:
		return -PV_ENOSYS;
	}
}

uint64_t pv_overflow(struct vcpu *v, uint64_t overflowed)
{
	struct pv_vcpu_area *a = area_of(v);
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	uint64_t mine;

	if (!a)
		return overflowed;
	mine = overflowed & a->active.imode_mask;
	if (!mine)
		return overflowed;
	/* Each overflow re-arms the counter with its reset value: a sampling period per interrupt. */
	for (uint64_t m = mine; m; m &= m - 1) {
		unsigned i = __builtin_ctzll(m);

		pv->vpmu.pmc[i] = a->active.ireset[i] & WIDTH_MASK;
		pv->vpmu.global_status &= ~(1ull << i);
		a->overflows++;
	}
	a->overflow_pending |= (uint32_t)mine;
	if (pv->pd->pv.vector)
		vcpu_pmu_raise_vector(v, pv->pd->pv.vector);
	return overflowed & ~mine;
}
