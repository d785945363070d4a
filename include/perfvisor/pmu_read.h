/* Guest side of the paravirtual counters: thread Sum/Start at switches, the exit-free read. */
#ifndef PERFVISOR_PMU_READ_H
#define PERFVISOR_PMU_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "include/perfvisor/pmu.h"

/*
 * Widths (seed 003, 4.2.1). A physical counter is `width` bits (area->width: 48, or 40 on older
 * CPUs) and wraps to 0 after 2^width - 1; the TSC is 64 bits. Every value of the physical kind
 * (Phys, Start_vcpu, Phys*, Start*_thread) is therefore a number modulo 2^width, and so is every
 * difference of two of them: the reader reduces each difference modulo 2^width (an AND with the
 * page's wrap = 2^width - 1, see pv_wrap_mask()). A difference taken that way is exact as long
 * as fewer than 2^width events separate its two ends, however the counter wrapped in between.
 * Sum_vcpu (64 bits, not reduced by the hypervisor) only ever enters Phys*, modulo 2^width, and
 * so does the page's offset = Sum_vcpu - Start_vcpu taken modulo 2^64: 2^width divides 2^64, so
 * its low width bits are those of the difference. Sum_thread is the true 64-bit count: it adds
 * such differences.
 *
 * Sign extension (pv_sext) is the signed 64-bit view of a width-bit value. Extending both ends
 * and subtracting in 64 bits is NOT enough (0x7fff_ffff_fff0 to 0x8000_0000_0010 would jump by
 * 2^64 - 2^48): wrap the difference instead. The signed view is for i-mode counters, which start
 * at minus their sampling period and have overflowed once they are no longer negative.
 */

/* A thread's values: the PV_PMU_COUNTERS counters, then the TSC. */
#define PV_TSC		PV_PMU_COUNTERS
#define PV_NVALUES	(PV_PMU_COUNTERS + 1)

/*
 * Page fields, which the hypervisor may change between two instructions of a reader or even
 * during one of its loads (a thread moved away in the middle of a read goes on reading its old
 * page, which the hypervisor may write on another PCPU): each is loaded once, whole; the retry
 * loops below decide whether the loads fit together. The thread's own fields (struct
 * pv_thread_counts) the guest kernel writes only while the thread is switched out, never during
 * one of its loads, and every switch-in counts resumes up: plain loads between the barriers of
 * one attempt (pv_read_snap) see them all from one stretch or the attempt is thrown away, and
 * the compiler may fold them into the arithmetic. A page field is read as the Linux kernel's
 * READ_ONCE() does, by a volatile access: the compiler emits it exactly once, and on x86-64 a
 * naturally aligned field of at most 8 bytes is one load, so whole (an atomic load is that
 * too, but GCC 12 also computes its address apart, instructions a read pays per counter).
 */
#define PV_LOAD(p)	(*(const volatile __typeof__(*(p)) *)(p))
_Static_assert(sizeof(void *) == 8, "PV_LOAD's 8-byte loads are whole only on x86-64");

/* v modulo 2^width (width 1..64). */
static inline uint64_t pv_wrap(uint64_t v, unsigned width)
{
	return width >= 64 ? v : v & ((1ull << width) - 1);
}

/* The low width bits of v as a signed number (width 1..63): bit width-1 is the sign. */
static inline int64_t pv_sext(uint64_t v, unsigned width)
{
	uint64_t sign = 1ull << (width - 1);

	return (int64_t)(pv_wrap(v, width) ^ sign) - (int64_t)sign;
}

/* How a reader executes the two instructions it needs (callbacks, so tests can script them). */
struct pv_read_ops {
	uint64_t (*rdpmc)(void *ctx, uint32_t index);	/* not called with PV_FLAG_SOFT_PHYS */
	uint64_t (*rdtsc)(void *ctx);
	void *ctx;
};

/* A thread's state, kept by the guest kernel, readable by the thread (seed 003, figure 4). */
struct pv_thread_counts {
	uint64_t sum[PV_NVALUES];	/* Sum_thread: its events up to its last suspension */
	uint64_t start[PV_NVALUES];	/* Start*_thread: Phys* right after its last resumption */
	uint64_t resumes;		/* its resumptions so far: a read sees one by it */
	const struct pv_vcpu_area *area;	/* page smp_id of the area: what its reads take */
	uint32_t mask;			/* bit i: value i counts in a-mode (PV_TSC always) */
					/* while it counts; 0 after: reads take sum[] */
	int smp_id;			/* the VCPU it last resumed on */
	/* The counters of mask in order, as the generic read walks them: no bit scan. */
	uint8_t nctr, ctr[PV_PMU_COUNTERS];
	/* Its page's PV_FLAG_SOFT_PHYS and wrap, which every page of the area has alike. */
	bool soft;
	uint64_t wrap;
};

/* VCPU k's page of the shared area whose first page is at base. */
static inline const struct pv_vcpu_area *pv_area(const void *base, int k)
{
	return (const struct pv_vcpu_area *)((const char *)base + (long)k * PV_PMU_AREA_STRIDE);
}

/* 2^width - 1 of value i: what its differences are reduced with (the TSC's: 64 bits). */
static inline uint64_t pv_wrap_mask(const struct pv_vcpu_area *a, unsigned i)
{
	return i == PV_TSC ? ~0ull : PV_LOAD(&a->wrap);
}

/* Phys of value i now: RDTSC, the hypervisor's soft counter, or RDPMC. */
static inline uint64_t pv_phys(const struct pv_vcpu_area *a, unsigned i,
			       const struct pv_read_ops *ops)
{
	if (i == PV_TSC)
		return ops->rdtsc(ops->ctx);
	if (PV_LOAD(&a->flags) & PV_FLAG_SOFT_PHYS)
		return PV_LOAD(&a->soft_phys[i]);
	return ops->rdpmc(ops->ctx, PV_LOAD(&a->rdpmc_index[i]));
}

/*
 * Phys* = Sum_vcpu + (Phys - Start_vcpu), modulo 2^width (seed 003, equation 3): the page's
 * offset + Phys.
 */
static inline uint64_t pv_phys_star(const struct pv_vcpu_area *a, unsigned i, uint64_t phys)
{
	return (PV_LOAD(&a->offset[i]) + phys) & pv_wrap_mask(a, i);
}

/* Log = Sum_thread + (Phys* - Start*_thread), a 64-bit count (seed 003, equation 2). */
static inline uint64_t pv_log(const struct pv_thread_counts *t, const struct pv_vcpu_area *a,
			      unsigned i, uint64_t phys_star)
{
	return PV_LOAD(&t->sum[i]) + ((phys_star - PV_LOAD(&t->start[i])) & pv_wrap_mask(a, i));
}

/* Phys* of the values in mask in one pass; whether the loads fit together, the caller checks. */
static inline void pv_stars(const struct pv_vcpu_area *a, uint32_t mask,
			    const struct pv_read_ops *ops, uint64_t star[PV_NVALUES])
{
	for (; mask; mask &= mask - 1) {
		unsigned i = __builtin_ctz(mask);

		star[i] = pv_phys_star(a, i, pv_phys(a, i, ops));
	}
}

/*
 * Phys* of the values in mask, all from one stretch of the VCPU on one PCPU. The hypervisor
 * resamples tsc.start_vcpu whenever it resumes the VCPU and on every RESUME: if it changed
 * meanwhile, the VCPU was descheduled or moved and Phys may not belong with Sum/Start_vcpu.
 * Returns the TSC ticks of the passes taken again, 0 when the first one held: how far the
 * retries moved the sample (read from RDTSC, which the VCPU's clock never runs backwards).
 */
static inline uint64_t pv_sample(const struct pv_vcpu_area *a, uint32_t mask,
				 const struct pv_read_ops *ops, uint64_t star[PV_NVALUES])
{
	uint64_t vcpu_start, first, pass;

	first = ops->rdtsc(ops->ctx);
	pass = first;
	for (;;) {
		vcpu_start = PV_LOAD(&a->tsc.start_vcpu);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		pv_stars(a, mask, ops, star);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (PV_LOAD(&a->tsc.start_vcpu) == vcpu_start)
			return pass - first;
		pass = ops->rdtsc(ops->ctx);
	}
}

/*
 * Guest kernel, switching the thread in on VCPU smp_id right after HC_PMU_RESUME returned (or
 * in place of it, the control being unchanged): Start*_thread = Phys* now. Sampled after the
 * call, this excludes the call's own events after the hypervisor's sample (seed 003,
 * equation 4). A new measurement starts from a zeroed struct.
 */
static inline uint64_t pv_thread_resume(struct pv_thread_counts *t, const void *areas,
					int smp_id, const struct pv_read_ops *ops)
{
	const struct pv_vcpu_area *a = pv_area(areas, smp_id);
	uint32_t n = PV_LOAD(&a->active.ncounters);

	t->resumes++;
	t->smp_id = smp_id;
	t->area = a;
	t->mask = (((1u << n) - 1) & ~PV_LOAD(&a->active.imode_mask)) | 1u << PV_TSC;
	t->soft = PV_LOAD(&a->flags) & PV_FLAG_SOFT_PHYS;
	t->wrap = PV_LOAD(&a->wrap);
	t->nctr = 0;
	for (uint32_t m = t->mask & ((1u << PV_PMU_COUNTERS) - 1); m; m &= m - 1)
		t->ctr[t->nctr++] = (uint8_t)__builtin_ctz(m);
	return pv_sample(a, t->mask, ops, t->start);
}

/*
 * Guest kernel, switching the thread out: Sum_thread += Phys* - Start*_thread. Both return
 * pv_sample()'s: how far its retries moved the thread's TSC sample.
 */
static inline uint64_t pv_thread_suspend(struct pv_thread_counts *t, const struct pv_read_ops *ops)
{
	const struct pv_vcpu_area *a = t->area;
	uint64_t star[PV_NVALUES], moved;

	moved = pv_sample(a, t->mask, ops, star);
	for (uint32_t m = t->mask; m; m &= m - 1) {
		unsigned i = __builtin_ctz(m);

		t->sum[i] = pv_log(t, a, i, star[i]);
	}
	return moved;
}

/* Guest kernel, the thread stopped counting after its last suspension: reads take Sum_thread. */
static inline void pv_thread_stop(struct pv_thread_counts *t)
{
	t->mask = 0;
}

/*
 * Log of value i from Phys, given its page's offset and wrap mask (seed 003, equations 2 and 3
 * at once): Sum_thread + (offset + Phys - Start*_thread) modulo 2^width. Differences modulo a
 * power of two may be reduced once at the end: pv_log() of pv_phys_star(), one AND.
 */
static inline uint64_t pv_log_of(const struct pv_thread_counts *t, uint64_t offset, unsigned i,
				 uint64_t phys, uint64_t wrap)
{
	return t->sum[i] + ((offset + phys - t->start[i]) & wrap);
}

/*
 * What a reader checks around its loads (seed 003, 4.2.3): read again if meanwhile the guest
 * kernel resumed the thread (resumes: it moved it to another VCPU, or switched it out and in) or
 * the hypervisor resumed its VCPU or took a RESUME on it (tsc.start_vcpu of the page it read).
 * Each catches what the other misses: a switch with RESUME skipped, or a move away, changes no
 * page the reader reads; a deschedule changes no thread field. The seed's reader checks smp_id
 * and Start*_thread of the TSC where this one checks resumes, which misses nothing they catch:
 * only pv_thread_resume() writes them (with area, start[], mask, ctr[], soft and wrap; sum[]
 * changes at a suspension, which a resumption follows before the thread runs again), and it
 * counts resumes up. It catches more: a 64-bit count never comes back to a value, while smp_id
 * does after a move away and back, and Start*_thread is the same small number after two
 * RESUMEs that took as long.
 */
struct pv_read_snap {
	uint64_t resumes, vcpu_start;
	const struct pv_vcpu_area *a;
};

static inline void pv_snap_take(struct pv_read_snap *s, const struct pv_thread_counts *t)
{
	s->resumes = t->resumes;
	/* resumes first: area from after a resumption it missed would pass the page's check. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s->a = t->area;
	s->vcpu_start = PV_LOAD(&s->a->tsc.start_vcpu);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
}

static inline int pv_snap_changed(const struct pv_read_snap *s, const struct pv_thread_counts *t)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return t->resumes != s->resumes ||
	       PV_LOAD(&s->a->tsc.start_vcpu) != s->vcpu_start;
}

/*
 * The thread itself, in user mode, with no VM exit: log[i] = its count of value i so far, the
 * a-mode counters and the TSC from one stretch (pv_read_snap), 0 for the other counters. Once
 * it stopped counting (mask 0): its counts at the stop, Sum_thread (0 for values it did not
 * count). mask changes only by the thread's own system calls (each resumption of one control
 * sets the same): it is loaded once, outside the retry. The generic read, for several values:
 * it walks the thread's list of counters and takes the page's kind and wrap as the thread
 * keeps them (pv_thread_resume()), no bit scan and no test per counter.
 */
static inline void pv_read(const struct pv_thread_counts *t, const struct pv_read_ops *ops,
			   uint64_t log[PV_NVALUES])
{
	uint32_t mask = t->mask;
	struct pv_read_snap s;

	if (!mask) {
		for (unsigned i = 0; i < PV_NVALUES; i++)
			log[i] = t->sum[i];
		return;
	}
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
		log[i] = 0;
	do {
		pv_snap_take(&s, t);
		if (!t->soft) {
			for (unsigned k = 0; k < t->nctr; k++) {
				size_t i = t->ctr[k];
				uint64_t phys = ops->rdpmc(ops->ctx, PV_LOAD(&s.a->rdpmc_index[i]));

				log[i] = pv_log_of(t, PV_LOAD(&s.a->offset[i]), i, phys, t->wrap);
			}
		} else {
			for (unsigned k = 0; k < t->nctr; k++) {
				size_t i = t->ctr[k];

				log[i] = pv_log_of(t, PV_LOAD(&s.a->offset[i]), i,
						   PV_LOAD(&s.a->soft_phys[i]), t->wrap);
			}
		}
		/* Counting, the TSC always counts (pv_thread_resume). */
		log[PV_TSC] = pv_log_of(t, PV_LOAD(&s.a->offset[PV_TSC]), PV_TSC,
					ops->rdtsc(ops->ctx), ~0ull);
	} while (pv_snap_changed(&s, t));
}

/*
 * The seed's common case: the thread's count of one value i (a counter, or PV_TSC) inline,
 * as pv_read() gives it, with the same retry. Given ops the compiler can see (a static const,
 * as the guest library's), RDPMC and RDTSC inline too: no indirect call, no loop over values.
 * A value it does not count in a-mode is its Sum_thread: 0, or its count at the stop.
 */
static inline uint64_t pv_read_one(const struct pv_thread_counts *t, unsigned i,
				   const struct pv_read_ops *ops)
{
	struct pv_read_snap s;
	uint64_t log;

	if (!(t->mask >> i & 1))
		return t->sum[i];
	do {
		pv_snap_take(&s, t);
		log = pv_log_of(t, PV_LOAD(&s.a->offset[i]), i, pv_phys(s.a, i, ops),
				pv_wrap_mask(s.a, i));
	} while (pv_snap_changed(&s, t));
	return log;
}

#endif
