/* perfvisor's paravirtual PMU ABI (perfctr-xen style), shared by the hypervisor and guests: fixed widths, versioned. */
#ifndef PERFVISOR_PMU_ABI_H
#define PERFVISOR_PMU_ABI_H

#include <stdint.h>

#include "include/perfvisor/hypercall.h"

#define PV_PMU_VERSION		3	/* 3: offset[], wrap; 2: pending counts */
#define PV_PMU_COUNTERS		4	/* per thread: the guest's 4 general counters */
#define PV_PMU_AREA_STRIDE	4096	/* one page per VCPU in the shared area */

/*
 * Hypercalls (VMCALL, see include/perfvisor/hypercall.h for registers and errors). i-mode counter values
 * are 48-bit, a-mode ones `width`-bit (the page), returned and taken as unsigned 64-bit numbers.
 *
 * HC_PMU_SETUP(area, nvcpus): the shared area is nvcpus consecutive pages of guest RAM at the
 *   page-aligned guest-physical address area, one struct pv_vcpu_area per VCPU (VCPU k at
 *   area + k * 4096); nvcpus must be the domain's VCPU count. The hypervisor fills them and
 *   maps them read-only for the guest (seed 003 figure 6b). Once per domain.
 * HC_PMU_RESUME(ctl): the calling VCPU now counts for the thread whose control is *ctl: its
 *   a-mode counters (and the TSC) restart with sum_vcpu = 0, start_vcpu = phys (seed 003 4.2.1).
 *   The guest samples start*_thread right after the call returns. Skippable when the control
 *   is unchanged since the last resume on this VCPU (active_seq tells). A control uses at most
 *   the guest's general counters (CPUID.0AH; on a real PMU, no more than the hardware has).
 * HC_PMU_ISUSPEND(save): i-mode counters stop (they stay the control's until the next resume);
 *   their values go to save[PV_PMU_COUNTERS], which must be memory the guest may write (not the
 *   area: -EFAULT); returns the overflow counts (below) the suspended thread has not been told
 *   of (the guest keeps them pending).
 * HC_PMU_IRESUME(ctl, values): load the control (as RESUME) and start the i-mode counters at
 *   values[i]; each counts up and interrupts when it wraps past 2^48 - 1.
 * HC_PMU_SET_VECTOR(vector): the domain's overflow interrupt vector (32..255).
 * HC_PMU_READ(i): a-mode counter i's phys* (the VCPU-level value), for comparison with the
 *   direct read (benchmarks); -EINVAL for a counter the active control has not in a-mode.
 * HC_PMU_IACK(): returns and clears the overflow counts of the running thread, from the overflow
 *   interrupt's handler (0: the thread that overflowed was suspended before the interrupt).
 */
#define HC_PMU_SETUP		(HC_PMU_BASE + 0)
#define HC_PMU_RESUME		(HC_PMU_BASE + 1)
#define HC_PMU_ISUSPEND		(HC_PMU_BASE + 2)
#define HC_PMU_IRESUME		(HC_PMU_BASE + 3)
#define HC_PMU_SET_VECTOR	(HC_PMU_BASE + 4)
#define HC_PMU_READ		(HC_PMU_BASE + 5)
#define HC_PMU_IACK		(HC_PMU_BASE + 6)

/*
 * Overflows not yet told to the guest (overflow_pending, and what ISUSPEND and IACK return): a
 * count per i-mode counter, 8 bits each (counter i in bits 8i+7:8i), saturating at 255. Two
 * overflows before the guest acknowledges are two notifications, as a sampling profiler needs;
 * the page's `overflows` total shows whether a count ever saturated.
 */
#define PV_PENDING_BITS		8
#define PV_PENDING_MAX		((1u << PV_PENDING_BITS) - 1)

_Static_assert(PV_PMU_COUNTERS * PV_PENDING_BITS <= 32, "pending counts fit 32 bits");

static inline uint32_t pv_pending_count(uint32_t pending, unsigned i)
{
	return pending >> (i * PV_PENDING_BITS) & PV_PENDING_MAX;
}

/* pending with n more overflows of counter i. */
static inline uint32_t pv_pending_add(uint32_t pending, unsigned i, uint64_t n)
{
	uint64_t c = pv_pending_count(pending, i) + n;

	if (c > PV_PENDING_MAX)
		c = PV_PENDING_MAX;
	pending &= ~(PV_PENDING_MAX << (i * PV_PENDING_BITS));
	return pending | (uint32_t)c << (i * PV_PENDING_BITS);
}

/* The counts of a and b added, counter by counter. */
static inline uint32_t pv_pending_merge(uint32_t a, uint32_t b)
{
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
		a = pv_pending_add(a, i, pv_pending_count(b, i));
	return a;
}

/* A thread's counter control: what each counter counts, and which are interrupt-mode. */
struct pv_control {
	uint32_t ncounters;			/* counters 0..ncounters-1 are in use */
	uint32_t imode_mask;			/* bit i: counter i is an i-mode counter */
	uint64_t evtsel[PV_PMU_COUNTERS];	/* IA32_PERFEVTSELx values, EN set; INT is ignored */
	uint64_t ireset[PV_PMU_COUNTERS];	/* i-mode: value loaded after each overflow */
};

/* Sum/Start of one counter on one VCPU (seed 003, figure 4). */
struct pv_counter {
	uint64_t sum_vcpu;	/* events of the current thread before the VCPU's last resume */
	uint64_t start_vcpu;	/* phys when the VCPU was last resumed on its PCPU */
};

/*
 * Values of flags. Without PV_FLAG_SOFT_PHYS (a real PMU) a-mode counter i is the physical
 * general counter rdpmc_index[i]: the guest's RDPMC of it does not exit while the active control
 * has an a-mode counter, and returns the raw register for the other indexes too (read the
 * trap-and-emulate counters with RDMSR then). One register has one user: while counter i is in
 * the active control's a-mode set, the guest's own IA32_PMCi does not count.
 */
#define PV_FLAG_SOFT_PHYS	(1u << 0)	/* no counter register: phys is soft_phys[i] */

/*
 * One VCPU's page, read-only for the guest. A thread on VCPU k reads page k (k from its
 * smp_id) and computes, for counter i (seed 003 4.2.1):
 *   phys  = soft_phys[i] (PV_FLAG_SOFT_PHYS) or RDPMC(rdpmc_index[i]), a number mod 2^width
 *   phys* = ctr[i].sum_vcpu + (phys - ctr[i].start_vcpu) = offset[i] + phys
 *   log   = sum_thread + (phys* - start*_thread), the difference modulo 2^width (& wrap)
 * and the same for the TSC with phys = RDTSC and offset[PV_PMU_COUNTERS], 64 bits. The read is
 * optimistic: if tsc.start_vcpu or the thread's count of resumptions changed during it, the
 * thread was switched, moved or descheduled: read again (include/perfvisor/pmu_read.h).
 * offset[] and wrap are the reader's precomputed values: while the VCPU runs, offset[i] =
 * ctr[i].sum_vcpu - ctr[i].start_vcpu (mod 2^64) for its a-mode counters and the TSC, and
 * wrap = 2^width - 1.
 */
struct pv_vcpu_area {
	uint32_t version;		/* PV_PMU_VERSION */
	uint32_t size;			/* sizeof(struct pv_vcpu_area) */
	uint32_t vcpu_id;
	uint32_t flags;			/* PV_FLAG_* */
	uint32_t width;			/* physical counter width in bits (48 soft; 40, 48) */
	uint32_t overflow_pending;	/* i-mode overflows not yet seen by the guest: PV_PENDING */
	uint64_t active_seq;		/* bumped by every RESUME/IRESUME that changed the control */
	uint64_t resumes;		/* RESUME and IRESUME hypercalls on this VCPU */
	uint64_t overflows;		/* i-mode overflows on this VCPU */
	struct pv_counter tsc;
	struct pv_counter ctr[PV_PMU_COUNTERS];
	uint64_t soft_phys[PV_PMU_COUNTERS];
	uint32_t rdpmc_index[PV_PMU_COUNTERS];
	struct pv_control active;	/* the control loaded now */
	uint64_t offset[PV_PMU_COUNTERS + 1];	/* sum_vcpu - start_vcpu: ctr[i], then tsc */
	uint64_t wrap;			/* 2^width - 1 */
};

_Static_assert(sizeof(struct pv_control) == 72, "pv_control is ABI");
_Static_assert(sizeof(struct pv_counter) == 16, "pv_counter is ABI");
_Static_assert(sizeof(struct pv_vcpu_area) == 296, "pv_vcpu_area is ABI: no padding");
_Static_assert(sizeof(struct pv_vcpu_area) <= PV_PMU_AREA_STRIDE, "one page per VCPU");

#endif
