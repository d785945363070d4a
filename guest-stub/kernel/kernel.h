/* The guest mini-kernel's API: start-up, threads of both rings, interrupts, the switch hooks. */
#ifndef GUEST_STUB_KERNEL_KERNEL_H
#define GUEST_STUB_KERNEL_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/kernel/user.h"

#define KCPU_MAX	8	/* perfvisor's limit of VCPUs per domain */
#define KTHREAD_ANY_CPU	(-1)

/*
 * Takes the kernel's arguments from the guest's command line (others are left to the
 * guest): quantum=TICKS (TSC ticks per time slice, default 20000), migrate=none|random and
 * seed=N (random thread migration at timer ticks). Builds the GDT, TSSs and page tables,
 * starts every VCPU, and starts each VCPU's timer. The caller goes on as the kernel thread
 * "main" with interrupts on. Returns the number of VCPUs.
 */
unsigned kernel_init(int argc, char **argv);

unsigned kernel_ncpus(void);

/* The domain's name under perfvisor (CPUID leaf HV_CPUID_NAME), "native" without it. */
const char *kernel_domain_name(void);

enum kthread_ring {
	KTHREAD_KERNEL,	/* CPL 0 */
	KTHREAD_USER,	/* CPL 3, on its own user stack; reaches the kernel by system calls */
};

struct kthread;

/*
 * Creates a thread that runs fn(arg) and ends with its return value, as if by SYS_EXIT.
 * cpu is the VCPU to start on; a thread given one stays there (pinned), one given
 * KTHREAD_ANY_CPU starts on the next VCPU in turn and may migrate. NULL when out of memory
 * or cpu does not exist. From kernel threads only, like the rest of this file.
 */
struct kthread *kthread_create(int (*fn)(void *), void *arg, enum kthread_ring ring, int cpu);

/* Waits until t has ended, frees it and returns its exit code. One joiner per thread. */
int kthread_join(struct kthread *t);

void kthread_exit(int code) __attribute__((noreturn));
void kthread_yield(void);
/* The caller goes on running on VCPU cpu (a migration on request); false if there is none. */
bool kthread_move(uint64_t cpu);
struct kthread_uinfo *kthread_info(struct kthread *t);

/* The VCPU the caller runs on; in a thread that may migrate it can change right after. */
unsigned kcpu_id(void);

/*
 * The extension point for per-thread state (the PMU driver): called on every thread switch,
 * on the VCPU that switches, with interrupts masked: switch_out(prev) then switch_in(next),
 * just before next runs. trap_enter(current) and trap_leave(current) bracket every interrupt and
 * system call, with the current thread at that moment (it may differ at the two). NULL members
 * and a NULL table (the default) do nothing.
 */
struct kthread_hooks {
	void (*switch_out)(struct kthread *prev);
	void (*switch_in)(struct kthread *next);
	void (*trap_enter)(struct kthread *current);
	void (*trap_leave)(struct kthread *current);
};

void kthread_set_hooks(const struct kthread_hooks *hooks);

/* The vectors a guest may take for itself; the kernel keeps the others. */
#define KIRQ_FIRST	0x30
#define KIRQ_LAST	0xEF

/*
 * Runs handler(vector) with interrupts masked when the vector arrives on any VCPU; the
 * kernel has sent the EOI already. False for a vector outside KIRQ_FIRST..KIRQ_LAST.
 */
bool kernel_irq_register(uint8_t vector, void (*handler)(uint8_t vector));

/*
 * A system call the kernel leaves to a driver (SYS_PMU): fn(RDI, RSI, RDX) runs at CPL 0
 * with interrupts masked, on the caller's kernel stack, and returns RAX. False for a number
 * the kernel implements itself.
 */
bool kernel_syscall_register(unsigned nr, int64_t (*fn)(uint64_t, uint64_t, uint64_t));

/* A fixed IPI to VCPU cpu (its local APIC ID), edge-triggered. */
void kapic_send_ipi(unsigned cpu, uint8_t vector);

/* This VCPU's local APIC ID, read from the APIC itself. */
unsigned kapic_id(void);

#endif
