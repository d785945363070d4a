/* The IDT: exceptions report the fault on the console and end with code 3; kernels add gates. */
#include <stdbool.h>
#include <stdint.h>

#include "guest-stub/rt/internal.h"
#include "guest-stub/rt/rt.h"

#define TRAP_VECTORS	32
#define IDT_VECTORS	256
#define TRAP_EXIT_CODE	3
#define SEL_CODE64	0x08	/* as in start.S */
#define GATE_INTERRUPT	0x8E	/* present, DPL 0, 64-bit interrupt gate */
#define GATE_DPL_SHIFT	5

/* What start.S's stubs and the CPU leave on the stack. */
struct rt_trap_frame {
	uint64_t vector;
	uint64_t error;
	uint64_t rip;
	uint64_t cs;
	uint64_t rflags;
	uint64_t rsp;
	uint64_t ss;
};

/* SDM vol. 3A, "64-Bit Mode IDT": 16-byte gate descriptors. */
struct idt_gate {
	uint16_t offset_low;
	uint16_t selector;
	uint8_t ist;
	uint8_t type;
	uint16_t offset_mid;
	uint32_t offset_high;
	uint32_t reserved;
};

struct idt_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

extern const uint64_t rt_trap_stubs[TRAP_VECTORS];

/* Gates that are not filled in are not present: such a vector raises #NP, a reported fault. */
static struct idt_gate idt[IDT_VECTORS] __attribute__((aligned(16)));

/* Interrupt gates clear RFLAGS.IF, so handlers start with interrupts masked. */
void rt_idt_set_gate(uint8_t vector, void (*entry)(void), unsigned dpl)
{
	uint64_t addr = (uintptr_t)entry;

	idt[vector] = (struct idt_gate){
		.offset_low = (uint16_t)addr,
		.selector = SEL_CODE64,
		.type = (uint8_t)(GATE_INTERRUPT | (dpl & 3) << GATE_DPL_SHIFT),
		.offset_mid = (uint16_t)(addr >> 16),
		.offset_high = (uint32_t)(addr >> 32),
	};
}

void rt_idt_load(void)
{
	struct idt_ptr ptr = { .limit = sizeof(idt) - 1, .base = (uintptr_t)idt };

	__asm__ volatile("lidt %0" : : "m"(ptr));
}

void rt_trap_init(void)
{
	for (int v = 0; v < TRAP_VECTORS; v++)
		rt_idt_set_gate((uint8_t)v, (void (*)(void))rt_trap_stubs[v], 0);
	rt_idt_load();
}

/* Formats without stdio: the fault may have hit inside it, or broken the FPU state it uses. */
static void put_hex(const char *label, uint64_t val, int digits)
{
	char buf[2 + 16] = "0x";

	for (int i = 0; i < digits; i++)
		buf[2 + i] = "0123456789abcdef"[(val >> (4 * (digits - 1 - i))) & 0xf];
	rt_console_write(label, __builtin_strlen(label));
	rt_console_write(buf, 2 + (size_t)digits);
}

void rt_trap(const struct rt_trap_frame *f) __attribute__((noreturn));

void rt_trap(const struct rt_trap_frame *f)
{
	static bool in_trap;

	/* A fault while reporting a fault: just stop. */
	if (in_trap)
		rt_poweroff(TRAP_EXIT_CODE);
	in_trap = true;

	put_hex("\nguest-stub: exception vector=", f->vector, 2);
	put_hex(" rip=", f->rip, 16);
	put_hex(" error=", f->error, 8);
	rt_console_write("\n", 1);
	rt_poweroff(TRAP_EXIT_CODE);
}
