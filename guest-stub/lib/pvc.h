/* The user library's low level (perfctr-like): a thread's own counters, read with no syscall. */
#ifndef GUEST_STUB_LIB_PVC_H
#define GUEST_STUB_LIB_PVC_H

#include <stdint.h>

#include "guest-stub/kernel/pmu.h"

/* Event selects (SDM Vol. 3B table 20-1), and the rings an event select counts in. */
#define PVC_EV_CYCLES		0x3C
#define PVC_EV_INSTRUCTIONS	0xC0
#define PVC_EV_BRANCHES		0xC4
#define PVC_USR			(1u << 16)
#define PVC_OS			(1u << 17)
#define PVC_EN			(1u << 22)

/* An IA32_PERFEVTSELx value: event (with its umask in bits 15:8) in the rings given. */
static inline uint64_t pvc_evtsel(unsigned event, unsigned rings)
{
	return event | rings | PVC_EN;
}

/* The i-mode reset value that overflows after period events (SDM Vol. 3B 20.2.6: 48 bits). */
static inline uint64_t pvc_ireset(uint64_t period)
{
	return ((1ull << 48) - period) & ((1ull << 48) - 1);
}

/* The caller's counters (made on first use); NULL without the kernel's PMU driver. */
const struct kpmu_thread *pvc_open(void);

/* Counts what c says from now on, every value from zero; 0 or a negative error. */
int pvc_control(const struct pv_control *c);

/*
 * The caller's a-mode counts (values[i], i < PV_PMU_COUNTERS) and virtual TSC (values[PV_TSC])
 * now, from user mode with no system call and no VM exit (seed 003 4.2.3); 0 for counters
 * that are not a-mode. After pvc_stop(): the counts at the stop. Inline: the read is a few
 * dozen instructions, and a call, with the registers it saves, added a quarter.
 */
static inline void pvc_read(const struct kpmu_thread *self, uint64_t values[PV_NVALUES])
{
	static const struct pv_read_ops ops = KPMU_READ_OPS;

	pv_read(&self->counts, &ops, values);
}

/*
 * One value of pvc_read() (counter i, or PV_TSC), inline: the seed's common case of a thread
 * reading one counter, with nothing but the loads, RDPMC or RDTSC, and the retry check.
 */
static inline uint64_t pvc_read_one(const struct kpmu_thread *self, unsigned i)
{
	static const struct pv_read_ops ops = KPMU_READ_OPS;

	return pv_read_one(&self->counts, i, &ops);
}

/*
 * Events of i-mode counter i up to its last suspension: exact after pvc_stop(). While counting,
 * any switch is a suspension: pvc_iread() is the read of a known instant.
 */
uint64_t pvc_ievents(const struct kpmu_thread *self, unsigned i);

/*
 * Every value as of this system call, counting going on: a-mode counters and the TSC as
 * pvc_read() gives them, i-mode ones as pvc_ievents(), all from the one instant; 0 or a
 * negative error.
 */
int pvc_iread(uint64_t values[PV_NVALUES]);

/* i-mode counters start a new period from their reset values. */
int pvc_iresume(void);

/* Counting stops; the values stay readable. */
int pvc_stop(void);

/* This VCPU's VM exits (without single steps) and the driver's hypercalls so far. */
int pvc_probe(struct kpmu_probe *p);

#endif
