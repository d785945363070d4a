/* Interrupts and system calls: the IDT gates the kernel adds, and where each vector goes. */
#include <stdint.h>
#include <unistd.h>

#include "guest-stub/kernel/internal.h"
#include "guest-stub/rt/rt.h"

#define FIRST_IRQ	32

static void (*handlers[256])(uint8_t vector);
static int64_t (*driver_syscalls[SYS_COUNT])(uint64_t, uint64_t, uint64_t);

static void install(uint8_t vector, unsigned dpl)
{
	rt_idt_set_gate(vector, (void (*)(void))kirq_stubs[vector - FIRST_IRQ], dpl);
}

bool kernel_irq_register(uint8_t vector, void (*handler)(uint8_t vector))
{
	if (vector < KIRQ_FIRST || vector > KIRQ_LAST)
		return false;
	handlers[vector] = handler;
	install(vector, 0);
	return true;
}

bool kernel_syscall_register(unsigned nr, int64_t (*fn)(uint64_t, uint64_t, uint64_t))
{
	if (nr <= SYS_MOVE || nr >= SYS_COUNT)
		return false;
	driver_syscalls[nr] = fn;
	return true;
}

/* The IDT is shared by all VCPUs: the gates are set up once, before the APs start. */
void irq_init(void)
{
	install(TIMER_VECTOR, 0);
	install(SPURIOUS_VECTOR, 0);
	install(SYSCALL_VECTOR, 3);
}

static int64_t do_syscall(struct kframe *f)
{
	switch (f->rax) {
	case SYS_WRITE:
		return write(STDOUT_FILENO, (const void *)f->rdi, (size_t)f->rsi);
	case SYS_YIELD:
		kthread_yield();
		return 0;
	case SYS_EXIT:
		kthread_exit((int)f->rdi);
	case SYS_VCPU:
		return this_cpu()->id;
	case SYS_SELF:
		return (int64_t)(uintptr_t)kthread_info(this_cpu()->current);
	case SYS_MOVE:
		return kthread_move(f->rdi) ? 0 : -SYS_EINVAL;
	default:
		if (f->rax < SYS_COUNT && driver_syscalls[f->rax])
			return driver_syscalls[f->rax](f->rdi, f->rsi, f->rdx);
		return -SYS_ENOSYS;
	}
}

static void dispatch(struct kframe *f)
{
	uint8_t vector = (uint8_t)f->vector;

	if (vector == SYSCALL_VECTOR) {
		f->rax = (uint64_t)do_syscall(f);
		return;
	}
	/* SDM Vol. 3A, "Spurious Interrupt": it sets no ISR bit, so it takes no EOI. */
	if (vector == SPURIOUS_VECTOR)
		return;
	/* EOI first: a switch below may not come back to this frame for a long time. */
	apic_eoi();
	if (vector == TIMER_VECTOR)
		sched_tick();
	else if (handlers[vector])
		handlers[vector](vector);
}

/*
 * Called by entry.S for every vector from 32 up, with interrupts masked (interrupt gates).
 * A handler may switch threads: this frame is then resumed whenever its thread runs again,
 * and the thread current at the end is the one the way out returns to.
 */
void kernel_trap(struct kframe *f)
{
	kthread_trap_enter();
	dispatch(f);
	kthread_trap_leave();
}
