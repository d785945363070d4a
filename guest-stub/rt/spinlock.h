/* Spin locks and interrupt masking for guests that run on several VCPUs at once. */
#ifndef GUEST_STUB_RT_SPINLOCK_H
#define GUEST_STUB_RT_SPINLOCK_H

#include <stdint.h>

#define RT_RFLAGS_IF	(1u << 9)

struct rt_spinlock {
	uint32_t locked;
};

/*
 * XCHG with a memory operand is atomic without a LOCK prefix (SDM Vol. 3A, "Locked Atomic
 * Operations"). Waiters spin on plain reads so the line is not written while held.
 */
static inline void rt_spin_lock(struct rt_spinlock *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static inline void rt_spin_unlock(struct rt_spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

/*
 * Masks interrupts and returns the old RFLAGS, for rt_irq_restore(). A lock that an
 * interrupt handler may also take, or that must not be held across a preemption, is taken
 * with interrupts masked. CPL 0 only: CLI faults in user mode.
 */
static inline uint64_t rt_irq_save(void)
{
	uint64_t flags;

	__asm__ volatile("pushfq; popq %0; cli" : "=r"(flags) : : "memory");
	return flags;
}

static inline void rt_irq_restore(uint64_t flags)
{
	if (flags & RT_RFLAGS_IF)
		__asm__ volatile("sti" : : : "memory");
}

#endif
