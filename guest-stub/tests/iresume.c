/* i-mode overflow notifications: none dropped across pvc_iresume(), none coalesced while held off. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/kernel/pmu.h"
#include "guest-stub/lib/pvc.h"
#include "guest-stub/lib/report.h"

/*
 * One i-mode counter of instructions at both rings with a period far longer than any stretch
 * the guest kernel runs with interrupts off (its system call and switch paths are a few
 * hundred instructions), so every overflow is one notification. The thread restarts the
 * period with pvc_iresume() after spinning a little less each round: sweeping the spin over
 * the period's last SWEEP instructions puts overflows in user mode, in the system call on its
 * way to the suspension (pending across it: the kernel must tell the thread at its resume),
 * and after it.
 */
#define PERIOD		3000
#define SWEEP		1000
#define STEP		11

/* n iterations of dec; jnz: 2 n instructions. */
static inline void spin(uint64_t n)
{
	__asm__ volatile("1:\tdec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

static uint64_t notified, overflows, late, rounds;
static bool paged;	/* mode pv: the hypervisor's page counts every overflow (an oracle) */

/*
 * The calling thread counts instructions at both rings in one i-mode counter of the given
 * period; *a is its VCPU's page. NULL if it cannot.
 */
static const struct kpmu_thread *sample(uint64_t period, const struct pv_vcpu_area **a)
{
	const struct pv_control c = {
		.ncounters = 1,
		.imode_mask = 1,
		.evtsel = { PVC_EV_INSTRUCTIONS | PVC_USR | PVC_OS | PVC_EN },
		.ireset = { ((1ull << 48) - period) },
	};
	const struct kpmu_thread *self = pvc_open();

	if (!self || pvc_control(&c))
		return NULL;
	*a = pv_area(self->areas, self->counts.smp_id);
	return self;
}

static int sampler(void *arg)
{
	const struct pv_vcpu_area *a;
	const struct kpmu_thread *self = sample(PERIOD, &a);
	uint64_t before;

	(void)arg;
	if (!self)
		return 1;
	paged = self->mode == KPMU_MODE_PV;
	before = a->overflows;
	for (uint64_t s = PERIOD - SWEEP; s < PERIOD; s += STEP, rounds++) {
		spin(s / 2);
		if (pvc_iresume())
			return 1;
	}
	pvc_stop();
	/* One VCPU, this thread alone counting: the page's count is this thread's overflows. */
	overflows = a->overflows - before;
	notified = self->notified[0];
	late = self->notified_late;
	return 0;
}

/*
 * Overflows held off: a kernel thread counts instructions at both rings with a period of
 * HELD_PERIOD and spins HELD_SPIN instructions with interrupts masked, HELD_ROUNDS times. Each
 * spin overflows the counter HELD_SPIN / HELD_PERIOD = 4 or 5 times before the interrupt can be
 * taken; the one interrupt after STI must tell all of them (counts, not a bit). The handler's
 * path is far shorter than a period, so it cannot overflow the counter again by itself.
 */
#define HELD_PERIOD	1000
#define HELD_SPIN	4500
#define HELD_ROUNDS	20

static uint64_t held_notified, held_overflows, held_irqs;

static int held_off(void *arg)
{
	const struct pv_vcpu_area *a;
	const struct kpmu_thread *self = sample(HELD_PERIOD, &a);
	uint64_t before, irqs;

	(void)arg;
	if (!self)
		return 1;
	before = a->overflows;
	irqs = kpmu_stats(0)->overflow_irqs;
	for (unsigned r = 0; r < HELD_ROUNDS; r++) {
		__asm__ volatile("cli" : : : "memory");
		spin(HELD_SPIN / 2);
		__asm__ volatile("sti" : : : "memory");
	}
	pvc_stop();
	held_overflows = a->overflows - before;
	held_notified = self->notified[0];
	held_irqs = kpmu_stats(0)->overflow_irqs - irqs;
	return 0;
}

int main(int argc, char **argv)
{
	struct kthread *t;
	bool ran;

	kernel_init(argc, argv);
	if (!kpmu_init(argc, argv)) {
		report(false, "the paravirtual PMU is there");
		return report_summary();
	}
	t = kthread_create(sampler, NULL, KTHREAD_USER, 0);
	ran = t && !kthread_join(t);
	report(ran, "the sampling thread ran %llu rounds", (unsigned long long)rounds);
	/* The sweep puts some overflows inside the system call, found by its suspension. */
	report(late > 0, "some overflows were pending across a suspension (%llu)",
	       (unsigned long long)late);
	if (paged) {
		report(overflows > 0, "i-mode overflows happened (%llu)",
		       (unsigned long long)overflows);
		report(notified == overflows, "every overflow is one notification: %llu of %llu",
		       (unsigned long long)notified, (unsigned long long)overflows);
	} else {
		report_skip("overflows against the page: mode hvm has no hypervisor page");
	}

	t = kthread_create(held_off, NULL, KTHREAD_KERNEL, 0);
	ran = t && !kthread_join(t);
	report(ran, "held off: the kernel thread ran");
	/*
	 * The spins alone are HELD_ROUNDS * HELD_SPIN instructions: at least that many periods
	 * overflowed, each one notified, with fewer interrupts (several overflows behind each).
	 */
	report(held_notified >= HELD_ROUNDS * HELD_SPIN / HELD_PERIOD,
	       "held off: notifications at least %u: %llu", HELD_ROUNDS * HELD_SPIN / HELD_PERIOD,
	       (unsigned long long)held_notified);
	report(held_irqs < held_notified, "held off: fewer interrupts (%llu) than notifications",
	       (unsigned long long)held_irqs);
	if (paged)
		report(held_notified == held_overflows,
		       "held off: every overflow is one notification: %llu of %llu",
		       (unsigned long long)held_notified, (unsigned long long)held_overflows);
	return report_summary();
}
