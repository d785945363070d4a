/* The guest kernel's PMU driver (perfctr-xen, seed 003 fig. 3): per-thread counters, SYS_PMU. */
#ifndef GUEST_STUB_KERNEL_PMU_H
#define GUEST_STUB_KERNEL_PMU_H

#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/rt/rt.h"
#include "include/perfvisor/pmu_read.h"

/* SYS_PMU operations: RDI is the operation, RSI its argument; negative results are errors. */
enum kpmu_op {
	KPMU_OPEN,	/* () -> const struct kpmu_thread *: the caller's counters, made once */
	KPMU_CONTROL,	/* (const struct pv_control *) -> 0: count that, every value from zero */
	KPMU_IRESUME,	/* () -> 0: i-mode counters start a new period from their reset values */
	KPMU_STOP,	/* () -> 0: counting stops; the values stay readable */
	KPMU_PROBE,	/* (struct kpmu_probe *) -> 0: VM exits and driver hypercalls so far */
	KPMU_IREAD,	/* (uint64_t [PV_NVALUES]) -> 0: every value as of this call; counting goes on */
};

#define KPMU_EINVAL	22

/* How the driver reaches the counters (guest argument mode=). */
enum kpmu_mode {
	KPMU_MODE_PV,	/* hypercalls and the hypervisor's shared pages (seed 003 4.2) */
	KPMU_MODE_HVM,	/* the virtual PMU's MSRs as on hardware, trapped and emulated (4.2.5) */
};

#define KPMU_RIPS	128	/* user RIPs kept of the last overflow notifications */

/*
 * One thread's counters, written by the kernel and read by the thread itself in user mode:
 * the library computes a-mode values from counts and the per-VCPU page areas + smp_id
 * (pv_read). In hvm mode areas are pages the kernel fills itself, with Sum/Start_vcpu at 0
 * and RDPMC as Phys, so the same formula holds.
 */
struct kpmu_thread {
	struct pv_thread_counts counts;	/* Sum/Start*_thread, a-mode mask, smp_id */
	const void *areas;
	uint32_t mode;			/* enum kpmu_mode */
	uint32_t running;		/* counting; else counts.sum holds the final values */
					/* and counts.mask is 0 */
	struct pv_control control;
	uint64_t ivalues[PV_PMU_COUNTERS];	/* i-mode counters at the last suspension */
	uint32_t pending;		/* overflow counts (PV_PENDING) found by its suspensions */
	uint64_t notified[PV_PMU_COUNTERS];	/* overflow notifications per counter */
	uint64_t notified_late;		/* of those, found at its suspension: told at resume/stop */
	uint64_t nrips;			/* notifications recorded in rips[nrips % KPMU_RIPS] */
	uint64_t rips[KPMU_RIPS];	/* where in user mode each notification found it */
};

/* KPMU_PROBE: evidence for "direct reads cause no VM exit". */
struct kpmu_probe {
	uint64_t exits;		/* this VCPU's VM exits but single steps, this probe's included */
	uint64_t hypercalls;	/* HC_PMU_* calls the driver made on this VCPU */
};

/* Per VCPU: how the driver's switch work went. */
struct kpmu_stats {
	uint64_t resumes;	/* controls loaded: by RESUME/IRESUME, or MSR writes (hvm) */
	uint64_t skips;		/* resumes skipped: the VCPU had that control loaded already */
	uint64_t hypercalls;
	uint64_t overflow_irqs;	/* overflow interrupts taken */
	uint64_t stale_irqs;	/* of which the running thread had no overflow: it came late */
};

/*
 * Events of i-mode counter i up to t's last suspension: each notification is one period, ireset
 * up to the wrap (48 bits, SDM Vol. 3B 20.2.6); the saved value is the rest.
 */
static inline uint64_t kpmu_ievents(const struct kpmu_thread *t, unsigned i)
{
	const uint64_t width_mask = (1ull << 48) - 1;
	uint64_t reset = t->control.ireset[i];

	return t->notified[i] * ((width_mask - reset) + 1) + ((t->ivalues[i] - reset) & width_mask);
}

/* Phys as the kernel and the thread itself sample it: the instructions themselves. */
static inline uint64_t kpmu_rdpmc(void *ctx, uint32_t index)
{
	(void)ctx;
	return rt_rdpmc(index);
}

static inline uint64_t kpmu_rdtsc(void *ctx)
{
	(void)ctx;
	return rt_rdtsc();
}

#define KPMU_READ_OPS	{ kpmu_rdpmc, kpmu_rdtsc, (void *)0 }

/*
 * After kernel_init(): takes mode=pv|hvm, skip=on|off, inject=early-start and
 * inject=skip-by-size (deliberate breakages for the validation suite and docs/tour.md) from the
 * guest's arguments, sets up the shared pages and the overflow vector, and hooks thread
 * switches and SYS_PMU. False (and a message) when the platform lacks what the mode needs.
 */
bool kpmu_init(int argc, char **argv);
enum kpmu_mode kpmu_mode(void);
/* Resume skipping (seed 003 4.2.1), on unless skip=off; returns the setting it replaces. */
bool kpmu_set_skip(bool on);
const struct kpmu_stats *kpmu_stats(unsigned cpu);
/* One line per VCPU: resumes, skips, hypercalls, overflow interrupts. */
void kpmu_report(void);

#endif
