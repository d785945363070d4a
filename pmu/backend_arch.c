/* Arch PMU backend: a guest's counters are physical ones while its VCPU runs (SDM 3B ch. 20). */
#include <stdbool.h>

#include "hv/vcpu_pmu.h"
#include "pmu/backend.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "include/x86/pmu_msr.h"
#include "pmu/pmu_probe.h"
#include "pmu/pv.h"

/*
 * Guest counter i is physical counter i, fixed counter j physical fixed counter j (pmu_domain_init
 * shows guests no more than the hardware has). While a VCPU is loaded its physical counters are
 * armed: each holds -d, sign-extended from the physical width, where d is the number of events to
 * the guest counter's own 48-bit wrap or, if that is further than one write can reach, to a re-arm
 * point. The vPMU keeps the value it had when armed, so value + d + sign-extended reading is the
 * guest's count now (seed 003, 4.2.1: extend from the physical width, keep the difference). Every
 * physical counter interrupts on overflow, so a host PMI folds and re-arms before a counter can
 * count past its range; guest overflow is decided in the fold, from the events counted.
 *
 * Paravirtual a-mode counters are physical counters too (seed 003 4.2.1): counter i of the
 * running thread's control (pv_amode) is physical counter i with the thread's event select. It is
 * never armed, folded, saved or restored: its value runs on, Sum/Start (pv.c) make it per thread,
 * and guest threads read it with RDPMC, which does not exit while the control has such a counter.
 * One physical counter cannot serve two users: while counter i is in the VCPU's a-mode set it
 * belongs to PV, and the vPMU's counter i is not programmed (its value and status stand still,
 * however the guest programs it; it counts again once a control without it is loaded).
 */

/* Seed 004's hybrid mode: at-retirement events count as in guest mode, the rest as in vcpu mode. */
#define ARCH_RETIRE_EVENTS	((1u << VPMU_EV_INSTRUCTIONS) | (1u << VPMU_EV_BRANCHES))

/* IA32_PERF_CAPABILITIES.FW_WRITE here: IA32_A_PMCx take full-width writes (SDM Vol. 3B 20.2.6). */
static bool arch_fw_write;

/* The probe found these MSRs working: a fault here reads 0 (the unit model counts any). */
static uint64_t arch_rd(uint32_t msr)
{
	uint64_t val;

	return pmu_hw_rdmsr(msr, &val) ? 0 : val;
}

static void arch_wr(uint32_t msr, uint64_t val)
{
	pmu_hw_wrmsr(msr, val);
}

/* The physical counters, as IA32_PERF_GLOBAL_* bits (SDM Vol. 3B 20.2.2). */
static uint64_t arch_hw_bits(void)
{
	return ((1ull << pmu_hw.num_gp) - 1) |
	       ((1ull << pmu_hw.num_fixed) - 1) << GLOBAL_FIXED_SHIFT;
}

static unsigned arch_width(unsigned bit)
{
	return bit < GLOBAL_FIXED_SHIFT ? pmu_hw.gp_width : pmu_hw.fixed_width;
}

/* The bits a physical counter has; more #GP on a full-width write (SDM Vol. 3B 20.2.6). */
static uint64_t arch_mask(unsigned bit)
{
	return ~0ull >> (64 - arch_width(bit));
}

/* A counter reading, bits width-1:0, sign-extended into 64 bits (width 32..64, see pmu_init). */
static int64_t arch_sign_extend(uint64_t val, unsigned width)
{
	return (int64_t)(val << (64 - width)) >> (64 - width);
}

/*
 * The furthest a counter can be armed ahead: an armed value must be negative once sign-extended,
 * so 2^(width-1); through a legacy IA32_PMCx write, which takes bits 31:0 and extends bit 31
 * (SDM Vol. 3B 20.2.6), 2^31. Fixed counters are written at full width (SDM Vol. 3B 20.2.2).
 */
static uint64_t arch_reach(unsigned bit)
{
	if (bit < GLOBAL_FIXED_SHIFT && !arch_fw_write)
		return 1ull << 31;
	return 1ull << (arch_width(bit) - 1);
}

/* One guest counter seen alone: a copy of its vPMU where IA32_PERF_GLOBAL_CTRL enables it only. */
struct arch_ctr {
	struct vpmu one;
	enum vpmu_event ev;	/* what it counts */
	unsigned cpl;		/* a ring it counts at */
};

/*
 * What the counter at GLOBAL bit `bit` of c->one counts, by vpmu.c's own rules (event, rings,
 * allow-list, CMASK/EDGE never counting, INV alone ignored), so both backends count the same
 * things. False: nothing, and the physical counter stays off.
 */
static bool arch_classify(struct arch_ctr *c, unsigned bit)
{
	uint32_t evs;

	c->one.global_ctrl = 1ull << bit;
	c->cpl = 0;
	evs = vpmu_active(&c->one, 0);
	if (!evs) {
		c->cpl = 3;
		evs = vpmu_active(&c->one, 3);
	}
	c->ev = evs ? (enum vpmu_event)__builtin_ctz(evs) : VPMU_EV_NONE;
	return evs;
}

/* The vPMU's counter at GLOBAL bit `bit` seen alone. */
static bool arch_view(struct arch_ctr *c, const struct vpmu *p, unsigned bit)
{
	c->one = *p;
	return arch_classify(c, bit);
}

/* Events from arming to the physical overflow: the guest counter's wrap, or the reach if nearer. */
static uint64_t arch_distance(const struct arch_ctr *c, unsigned bit)
{
	uint64_t room = vpmu_until_overflow(&c->one, c->ev, c->cpl), reach = arch_reach(bit);

	return room < reach ? room : reach;
}

static uint64_t arch_guest_ctrs(const struct vpmu *p)
{
	return vpmu_gp_bits(p->cfg) | vpmu_fixed_bits(p->cfg);
}

/* Counting stops everywhere: the first write of every change (SDM Vol. 3B 20.2.2). */
static void arch_stop(void)
{
	arch_wr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
}

/* The vPMU's counters this backend runs: the guest's, but for PV's a-mode ones. */
static uint64_t arch_vpmu_ctrs(struct vcpu *v)
{
	uint64_t sels[PV_PMU_COUNTERS];

	return arch_guest_ctrs(&vcpu_pmu_state(v)->vpmu) & ~(uint64_t)pv_amode(v, sels);
}

/* Counting is stopped: fold what each armed counter counted into the vPMU, overflows included. */
static void arch_fold(struct vcpu *v)
{
	struct vpmu *p = &vcpu_pmu_state(v)->vpmu;
	uint64_t ctrs = arch_vpmu_ctrs(v), pmis = 0;
	struct arch_ctr c;

	for (; ctrs; ctrs &= ctrs - 1) {
		unsigned bit = __builtin_ctzll(ctrs);
		uint32_t msr = bit < GLOBAL_FIXED_SHIFT ? MSR_IA32_PMC0 + bit :
			       MSR_IA32_FIXED_CTR0 + bit - GLOBAL_FIXED_SHIFT;
		uint64_t n;

		if (!arch_view(&c, p, bit))
			continue;
		/* Armed at -distance: the events since are the reading's distance above that. */
		n = arch_sign_extend(arch_rd(msr), arch_width(bit)) + arch_distance(&c, bit);
		/* vpmu.c wraps at 48 bits, sets GLOBAL_STATUS, says if the guest gets a PMI. */
		pmis |= vpmu_count(&c.one, c.ev, n, c.cpl);
		/* The view now differs from p in GLOBAL_CTRL alone. */
		c.one.global_ctrl = p->global_ctrl;
		*p = c.one;
	}
	pmu_deliver_overflow(v, pmis);
}

/*
 * Counting is stopped: program PV's a-mode counters and arm the others from the vPMU, then say
 * when they count: IA32_PERF_GLOBAL_CTRL is the guest's at VM entry (a-mode counters whatever
 * the vPMU's GLOBAL_CTRL says) and, at VM exit, by accounting mode: guest 0 (counting pauses in
 * the hypervisor), vcpu the guest's (the hypervisor's work on this VCPU counts, at CPL 0 as the
 * hardware sees it), hybrid the guest's cycle counters only. In vcpu and hybrid modes counting
 * restarts now, the last write. Returns the a-mode counters.
 */
static uint32_t arch_arm(struct vcpu *v)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	const struct vpmu *p = &pv->vpmu;
	uint64_t sels[PV_PMU_COUNTERS], armed = 0, retire = 0, fixed_ctrl = 0, guest, host;
	uint32_t amode = pv_amode(v, sels);
	uint64_t ctrs = arch_guest_ctrs(p) & ~(uint64_t)amode;
	struct arch_ctr c;

	/* No interrupt: readers take differences modulo 2^width, which wraps cannot upset. */
	for (uint32_t m = amode; m; m &= m - 1) {
		unsigned i = __builtin_ctz(m);

		c.one = *p;
		c.one.evtsel[i] = sels[i] & ~EVTSEL_INT;
		if (!arch_classify(&c, i)) {
			arch_wr(MSR_IA32_PERFEVTSEL0 + i, 0);
			continue;
		}
		arch_wr(MSR_IA32_PERFEVTSEL0 + i, c.one.evtsel[i]);
		armed |= 1ull << i;
		if ((1u << c.ev) & ARCH_RETIRE_EVENTS)
			retire |= 1ull << i;
	}
	for (; ctrs; ctrs &= ctrs - 1) {
		unsigned bit = __builtin_ctzll(ctrs), j = bit - GLOBAL_FIXED_SHIFT;
		uint64_t start;

		if (!arch_view(&c, p, bit)) {
			if (bit < GLOBAL_FIXED_SHIFT)
				arch_wr(MSR_IA32_PERFEVTSEL0 + bit, 0);
			continue;
		}
		start = -arch_distance(&c, bit);
		if (bit >= GLOBAL_FIXED_SHIFT) {
			arch_wr(MSR_IA32_FIXED_CTR0 + j, start & arch_mask(bit));
			/* The guest's rings; PMI always, so every physical overflow is folded. */
			fixed_ctrl |= ((p->fixed_ctrl >> FIXED_CTRL_SHIFT(j) &
					(FIXED_CTRL_OS | FIXED_CTRL_USR)) | FIXED_CTRL_PMI) <<
				      FIXED_CTRL_SHIFT(j);
		} else {
			if (arch_fw_write)
				arch_wr(MSR_IA32_A_PMC0 + bit, start & arch_mask(bit));
			else
				arch_wr(MSR_IA32_PMC0 + bit, (uint32_t)start);
			arch_wr(MSR_IA32_PERFEVTSEL0 + bit, p->evtsel[bit] | EVTSEL_INT);
		}
		armed |= 1ull << bit;
		if ((1u << c.ev) & ARCH_RETIRE_EVENTS)
			retire |= 1ull << bit;
	}
	if (p->cfg->num_fixed)
		arch_wr(MSR_IA32_FIXED_CTR_CTRL, fixed_ctrl);
	guest = armed & (p->global_ctrl | amode);
	host = pv->acct == PMU_ACCT_GUEST ? 0 : pv->acct == PMU_ACCT_VCPU ? guest : guest & ~retire;
	vcpu_pmu_set_global_ctrl(v, guest, host);
	if (host)
		arch_wr(MSR_IA32_PERF_GLOBAL_CTRL, host);
	return amode;
}

/* IA32_PERF_GLOBAL_STATUS cleared through IA32_PERF_GLOBAL_OVF_CTRL (SDM Vol. 3B 20.2.2). */
static void arch_clear_status(void)
{
	uint64_t status = arch_rd(MSR_IA32_PERF_GLOBAL_STATUS) & arch_hw_bits();

	if (status)
		arch_wr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, status);
}

/*
 * The guest's programming or its PV control changed, or its VCPU arrives: the counters hold the
 * vPMU's values and the thread's a-mode events, which the guest reads without exits.
 */
static void arch_load(struct vcpu *v)
{
	arch_stop();
	vcpu_pmu_set_rdpmc_exiting(v, !arch_arm(v));
}

/* Before a guest read: fold the live counts in; the vPMU's new values need re-arming. */
static void arch_sync(struct vcpu *v)
{
	arch_stop();
	arch_fold(v);
	arch_arm(v);
}

/*
 * Back into the vPMU, and every counter off and zero: nothing of this VCPU counts for the next
 * one, and no value stays behind for it to read (with PV a-mode counters RDPMC does not exit,
 * for any index: VMX has no per-counter RDPMC exiting, SDM Vol. 3C 25.6.2). pv_switch_out()
 * took the a-mode counters' values before; pv_switch_in() samples them afresh.
 */
static void arch_switch_out(struct vcpu *v)
{
	arch_stop();
	arch_fold(v);
	for (unsigned i = 0; i < pmu_hw.num_gp; i++) {
		arch_wr(MSR_IA32_PERFEVTSEL0 + i, 0);
		arch_wr(MSR_IA32_PMC0 + i, 0);
	}
	if (pmu_hw.num_fixed)
		arch_wr(MSR_IA32_FIXED_CTR_CTRL, 0);
	for (unsigned j = 0; j < pmu_hw.num_fixed; j++)
		arch_wr(MSR_IA32_FIXED_CTR0 + j, 0);
	arch_clear_status();
}

/*
 * An instruction that causes a VM exit does not retire in the guest (SDM Vol. 3C 26.1: the exit
 * happens instead), so no counter saw the ones the hypervisor emulates: count them where guest
 * instructions count (guest and hybrid modes; in vcpu mode the counters saw the emulation). An
 * instruction stepped (insn set) ran on the hardware, which counted it.
 */
static void arch_retired(struct vcpu *v, const struct soft_insn *insn, unsigned cpl)
{
	struct pmu_vcpu *pv = vcpu_pmu_state(v);
	struct vpmu own;
	uint64_t pmis;

	if (insn || pv->acct == PMU_ACCT_VCPU)
		return;
	pv_count(v, VPMU_EV_INSTRUCTIONS, 1, cpl);
	/* The vPMU counts it in the counters it runs (GLOBAL_CTRL hides the rest for the count). */
	own = pv->vpmu;
	own.global_ctrl &= arch_vpmu_ctrs(v);
	if (!(vpmu_active(&own, cpl) & (1u << VPMU_EV_INSTRUCTIONS)))
		return;
	arch_stop();
	arch_fold(v);
	own = pv->vpmu;
	own.global_ctrl &= arch_vpmu_ctrs(v);
	pmis = vpmu_count(&own, VPMU_EV_INSTRUCTIONS, 1, cpl);
	own.global_ctrl = pv->vpmu.global_ctrl;
	pv->vpmu = own;
	pmu_deliver_overflow(v, pmis);
	arch_arm(v);
}

/* A physical counter overflowed: fold, re-arm, and take the next PMI (SDM Vol. 3B 20.2.2). */
static void arch_host_pmi(struct vcpu *v)
{
	arch_stop();
	arch_clear_status();
	arch_fold(v);
	arch_arm(v);
	/* SDM Vol. 3A 11.5.1: delivering the PMI set the LVTPC mask bit. */
	hv_pmu_host_lvtpc(PMU_HOST_PMI_VECTOR, false);
}

/* Everything off (at power-on GLOBAL_CTRL enables the GP counters, SDM Vol. 3A table 10-1). */
static void arch_cpu_init(void)
{
	uint64_t caps;

	arch_stop();
	for (unsigned i = 0; i < pmu_hw.num_gp; i++)
		arch_wr(MSR_IA32_PERFEVTSEL0 + i, 0);
	if (pmu_hw.num_fixed)
		arch_wr(MSR_IA32_FIXED_CTR_CTRL, 0);
	arch_clear_status();
	/*
	 * IA32_PERF_CAPABILITIES exists with CPUID.01H:ECX.PDCM; a #GP means no full-width writes.
	 * Every PCPU finds the same before any guest runs.
	 */
	arch_fw_write = !pmu_hw_rdmsr(MSR_IA32_PERF_CAPABILITIES, &caps) &&
			(caps & PERF_CAP_FW_WRITE);
	hv_pmu_host_lvtpc(PMU_HOST_PMI_VECTOR, false);
}

/* a-mode counter i as it runs: IA32_PMCx reads its full width (SDM Vol. 3B 20.2.6). */
static uint64_t arch_pv_phys(struct vcpu *v, unsigned i)
{
	(void)v;
	return arch_rd(MSR_IA32_PMC0 + i) & arch_mask(i);
}

const struct pmu_backend_ops pmu_arch_ops = {
	.name = "arch",
	.programmed = arch_load,
	.sync = arch_sync,
	.switch_in = arch_load,
	.switch_out = arch_switch_out,
	.retired = arch_retired,
	.host_pmi = arch_host_pmi,
	.cpu_init = arch_cpu_init,
	.pv_phys = arch_pv_phys,
};
