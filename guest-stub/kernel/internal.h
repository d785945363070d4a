/* Declarations shared by the kernel's own files: per-VCPU state, threads, frames, the APIC. */
#ifndef GUEST_STUB_KERNEL_INTERNAL_H
#define GUEST_STUB_KERNEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/kernel/stamp.h"
#include "guest-stub/rt/spinlock.h"

/* GDT selectors (gdt.c). SEL_KCODE is the runtime's code selector too, so its gates hold. */
#define SEL_KCODE	0x08
#define SEL_KDATA	0x10
#define SEL_UDATA	(0x18 | 3)	/* RPL 3 */
#define SEL_UCODE	(0x20 | 3)
#define SEL_TSS(cpu)	(0x28 + 16 * (cpu))	/* a 64-bit TSS descriptor takes two slots */

#define TIMER_VECTOR	0x20
#define SPURIOUS_VECTOR	0xFF

#define RFLAGS_RESERVED	(1u << 1)	/* always 1 */

/*
 * What an interrupt or system call leaves on the thread's kernel stack (entry.S), lowest
 * address first. The CPU pushes the last five words, the stub the vector and a zero error
 * code, intr_common the registers and the x87/SSE state: an interrupted thread's every
 * register is here, and entry.S restores them all on the way out.
 */
struct kframe {
	uint8_t fpu[512];	/* FXSAVE image; FXSAVE wants 16-byte alignment */
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

/* SDM Vol. 3A, "Task-State Segment (TSS)" in 64-bit mode: only RSP0 is used here. */
struct tss64 {
	uint32_t reserved0;
	uint64_t rsp[3];	/* stack for a switch to CPL 0, 1, 2 */
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;	/* past the limit: no I/O bitmap, so user port I/O faults */
} __attribute__((packed));

enum kthread_state {
	KT_READY,	/* in a run queue */
	KT_RUNNING,
	KT_REQUEUE,	/* preempted or yielding: queued on cpu once off its stack */
	KT_BLOCKED,	/* in kthread_join() */
	KT_ZOMBIE,	/* ended, waiting to be joined */
};

struct kpmu_thread;

struct kthread {
	struct kthread_uinfo info;
	struct kpmu_thread *pmu;	/* the PMU driver's state (pmu.c), NULL until opened */
	uint64_t ksp;		/* saved stack pointer while switched out (kswitch) */
	uint64_t kstack_top;	/* TSS.RSP0 while it runs: where user threads enter the kernel */
	void *kstack;		/* malloc'ed stacks, NULL for the boot stack of main */
	void *ustack;
	/* True from switch-in until kswitch has left its stack: kthread_join() waits for it. */
	volatile bool on_cpu;
	enum kthread_state state;
	unsigned cpu;		/* the VCPU that runs it, or whose queue holds or gets it */
	bool pinned;		/* never migrated */
	struct kthread *next;	/* run-queue link */
	struct kthread *joiner;	/* blocked in kthread_join() on this thread */
	int exit_code;
	/*
	 * The PMU driver's charge of kernel paths to the thread's counting window (pmu.c): this
	 * entry's TSC stamp if it came while counting, the sample of a resume in it, and from when
	 * the way out of its last entry is charged.
	 */
	uint64_t trap_in, charge_from, resumed_at;
};

struct kcpu {
	struct kcpu *self;	/* at offset 0, read through GS: this_cpu() */
	uint64_t entry_tsc;	/* KCPU_ENTRY_TSC: entry.S's stamp of the last kernel entry */
	uint64_t exit_tsc;	/* KCPU_EXIT_TSC: of the last return to a thread */
	unsigned id;		/* VCPU index, also its local APIC ID */
	struct kthread *current;
	struct kthread *idle;	/* runs when the queue is empty; never queued */
	struct rt_spinlock rq_lock;
	struct kthread *rq_head, *rq_tail;
	uint64_t rng;		/* migration choices, seeded per VCPU */
	volatile bool online;
	struct tss64 tss;
};

_Static_assert(offsetof(struct kcpu, entry_tsc) == KCPU_ENTRY_TSC, "stamp.h");
_Static_assert(offsetof(struct kcpu, exit_tsc) == KCPU_EXIT_TSC, "stamp.h");

extern struct kcpu kcpus[KCPU_MAX];
extern unsigned kcpu_count;

/* GS base points at the VCPU's own struct kcpu (gdt.c sets it up): one load, no exit. */
static inline struct kcpu *this_cpu(void)
{
	struct kcpu *c;

	__asm__ volatile("movq %%gs:0, %0" : "=r"(c));
	return c;
}

static inline void cpu_relax(void)
{
	__builtin_ia32_pause();
}

/* gdt.c */
void gdt_init(unsigned ncpus);
void gdt_load(struct kcpu *c);

/* paging.c */
uint64_t paging_init(void);

/* entry.S */
extern const uint64_t kirq_stubs[256 - 32];
extern char kintr_return[];
void kswitch(struct kthread *prev, uint64_t *prev_ksp, uint64_t next_ksp);

/* irq.c */
void irq_init(void);
void kernel_trap(struct kframe *f);

/* apic.c */
void pic_mask_all(void);
void apic_cpu_init(void);
void apic_eoi(void);
void apic_send(unsigned apic_id, uint32_t icr_low);
void apic_timer_calibrate(void);
void apic_timer_start(uint64_t tsc_ticks);
void apic_set_lvtpc(uint32_t lvt);

/* thread.c */
bool sched_init(bool migrate, uint64_t seed);
void sched_run_idle(struct kcpu *c) __attribute__((noreturn));
void sched_tick(void);
void sched_switched(struct kthread *prev);
/* kernel_trap()'s first and last calls: the hooks' trap_enter and trap_leave. */
void kthread_trap_enter(void);
void kthread_trap_leave(void);

/* smpboot.c */
unsigned smp_boot_aps(uint64_t cr3, uint64_t quantum);

/* heap.c */
void heap_init(void);

#endif
