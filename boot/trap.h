/* Exceptions and interrupts taken by the hypervisor itself (not by guests). */
#ifndef PERFVISOR_BOOT_TRAP_H
#define PERFVISOR_BOOT_TRAP_H

#include <stdint.h>

/* Laid out by boot/isr.S: the pushed registers, then vector/error, then the CPU's frame. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

typedef void (*irq_handler_t)(struct trap_frame *f);

void idt_init(void);
void idt_load(void);
/* Installs a handler for an interrupt vector (32..255). */
void trap_set_handler(unsigned vector, irq_handler_t h);

#endif
