/* The system-call ABI (INT 0x80) and the small library threads call the kernel through. */
#ifndef GUEST_STUB_KERNEL_USER_H
#define GUEST_STUB_KERNEL_USER_H

#include <stddef.h>
#include <stdint.h>

/*
 * INT 0x80, number in RAX, arguments in RDI, RSI, RDX, result in RAX (negative: an error);
 * every other register is preserved. The gate has DPL 3 so user threads (CPL 3) may use it;
 * kernel threads may as well. INT rather than SYSCALL: the CPU switches to the thread's
 * kernel stack itself (TSS.RSP0) and pushes the same frame as for an interrupt.
 */
#define SYSCALL_VECTOR	0x80

enum syscall_nr {
	SYS_WRITE,	/* (const char *buf, size_t len) -> len, printed in one piece */
	SYS_YIELD,	/* () -> 0: to the back of this VCPU's run queue */
	SYS_EXIT,	/* (int code): ends the calling thread; kthread_join() gets code */
	SYS_VCPU,	/* () -> the VCPU the caller runs on */
	SYS_SELF,	/* () -> the caller's struct kthread_uinfo */
	SYS_MOVE,	/* (unsigned vcpu) -> 0: to the back of that VCPU's run queue */
	SYS_PMU,	/* (op, arg) -> the PMU driver's operations (pmu.h), if registered */
	SYS_COUNT,
};

#define SYS_EINVAL	22
#define SYS_ENOSYS	38

/*
 * What a thread can read about itself, from user mode too, without a system call; the
 * kernel updates it each time it switches the thread in. smp_id is perfctr-xen's field
 * (seed 003, 4.2.3): a library indexes per-VCPU data with it.
 */
struct kthread_uinfo {
	uint32_t tid;
	uint32_t smp_id;	/* the VCPU the thread last resumed on */
	uint64_t vcpu_mask;	/* bit n: it has run on VCPU n */
	uint64_t resumes;	/* how many times it was switched in */
	uint64_t ticks;		/* timer interrupts that found it running */
	/* TSC ticks its counts' samples moved by retrying (a VCPU switch came mid-sample) */
	uint64_t sample_retry_tsc;
	/*
	 * Kernel entries (interrupts, system calls) while its counters ran, and the TSC ticks their
	 * paths added to its counting window: from entry.S's stamp to its suspension's sample, from
	 * its resume's sample to the stamp on the way out (the whole path when nothing switched).
	 */
	uint64_t window_entries;
	uint64_t window_kernel_tsc;
};

static inline long syscall3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "memory");
	return ret;
}

static inline long sys_write(const char *buf, size_t len)
{
	return syscall3(SYS_WRITE, (long)buf, (long)len, 0);
}

static inline void sys_yield(void)
{
	syscall3(SYS_YIELD, 0, 0, 0);
}

static inline __attribute__((noreturn)) void sys_exit(int code)
{
	syscall3(SYS_EXIT, code, 0, 0);
	__builtin_unreachable();
}

static inline unsigned sys_vcpu(void)
{
	return (unsigned)syscall3(SYS_VCPU, 0, 0, 0);
}

static inline const volatile struct kthread_uinfo *sys_self(void)
{
	return (const volatile struct kthread_uinfo *)syscall3(SYS_SELF, 0, 0, 0);
}

/* A migration on request: the caller goes on running on VCPU vcpu; -SYS_EINVAL if none. */
static inline long sys_move(unsigned vcpu)
{
	return syscall3(SYS_MOVE, vcpu, 0, 0);
}

/* The privilege level the caller runs at: 0 in kernel threads, 3 in user threads. */
static inline unsigned current_cpl(void)
{
	uint16_t cs;

	__asm__ volatile("mov %%cs, %0" : "=r"(cs));
	return cs & 3;
}

/*
 * printf for threads of either ring: formats into a buffer and prints it with one
 * SYS_WRITE. Integers and strings only: newlib formats floats with shared state and malloc.
 */
int uprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
