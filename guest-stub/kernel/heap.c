/* newlib's malloc lock: one heap for kernel threads on every VCPU. */
#include <reent.h>
#include <stdbool.h>

#include "guest-stub/kernel/internal.h"

/*
 * newlib's malloc calls __malloc_lock/__malloc_unlock around every heap change and may
 * nest them (realloc calls malloc), so the lock is recursive per VCPU. Interrupts stay
 * masked while it is held: a thread preempted inside malloc would stall every other one.
 * These definitions replace newlib's empty ones. CPL 0 only, like rt_irq_save().
 */
static struct rt_spinlock lock;
static volatile int owner = -1;		/* VCPU holding it */
static unsigned depth;
static uint64_t owner_flags;
static bool smp_ready;			/* before kernel_init(): one CPU, no threads */

void heap_init(void)
{
	smp_ready = true;
}

void __malloc_lock(struct _reent *r)
{
	uint64_t flags;
	int me;

	(void)r;
	if (!smp_ready)
		return;
	flags = rt_irq_save();
	me = (int)this_cpu()->id;
	if (owner == me) {
		depth++;
		return;
	}
	rt_spin_lock(&lock);
	owner = me;
	depth = 1;
	owner_flags = flags;
}

void __malloc_unlock(struct _reent *r)
{
	uint64_t flags;

	(void)r;
	if (!smp_ready || --depth)
		return;
	flags = owner_flags;
	owner = -1;
	rt_spin_unlock(&lock);
	rt_irq_restore(flags);
}
