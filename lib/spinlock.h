/* A test-and-test-and-set spinlock for the few structures the PCPUs share. */
#ifndef PERFVISOR_LIB_SPINLOCK_H
#define PERFVISOR_LIB_SPINLOCK_H

#include "lib/cpu.h"

struct spinlock {
	volatile int locked;
};

static inline void spin_lock(struct spinlock *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (l->locked)
			cpu_relax();
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
