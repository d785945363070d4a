/* The hypervisor's IDT: fault fix-ups for *_safe() accessors, interrupt handlers, and a clean stop on any other exception. */
#include "lib/exit.h"
#include "boot/gdt.h"
#include "lib/printk.h"
#include "boot/trap.h"

struct idt_gate {
	uint16_t off_lo, sel;
	uint8_t ist, type;
	uint16_t off_mid;
	uint32_t off_hi, reserved;
} __attribute__((packed));

struct ex_entry {
	uint64_t insn, fixup;
};

extern const char isr_table_start[];
extern const struct ex_entry __ex_table_start[], __ex_table_end[];

static struct idt_gate idt[256] __attribute__((aligned(16)));
static irq_handler_t handlers[256];

static const char *const exc_names[32] = {
	"#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow",
	"#BR bound", "#UD invalid opcode", "#NM no FPU", "#DF double fault", "coprocessor",
	"#TS invalid TSS", "#NP not present", "#SS stack fault", "#GP general protection",
	"#PF page fault", "reserved", "#MF x87 error", "#AC alignment", "#MC machine check",
	"#XM SIMD error", "#VE virtualization", "#CP control protection",
};

void idt_init(void)
{
	for (unsigned v = 0; v < 256; v++) {
		uint64_t a = (uint64_t)(isr_table_start + 16 * v);

		idt[v].off_lo = a & 0xFFFF;
		idt[v].sel = SEL_CODE;
		/* #DF, NMI and #MC switch to the TSS's IST1 stack: the current one may be bad. */
		idt[v].ist = (v == 2 || v == 8 || v == 18) ? 1 : 0;
		idt[v].type = 0x8E;	/* present, DPL 0, 64-bit interrupt gate */
		idt[v].off_mid = (a >> 16) & 0xFFFF;
		idt[v].off_hi = a >> 32;
		idt[v].reserved = 0;
	}
}

void idt_load(void)
{
	struct desc_ptr idtr = { sizeof(idt) - 1, (uint64_t)idt };

	__asm__ volatile("lidt %0" : : "m"(idtr));
}

void trap_set_handler(unsigned vector, irq_handler_t h)
{
	if (vector >= 32 && vector < 256)
		handlers[vector] = h;
}

static void dump_and_stop(struct trap_frame *f)
{
	uint64_t cr2;

	__asm__ volatile("mov %%cr2, %0" : "=r"(cr2));
	printk("perfvisor: unexpected %s (vector %lu) error 0x%lx\n",
	       f->vector < 32 && exc_names[f->vector] ? exc_names[f->vector] : "interrupt",
	       f->vector, f->error);
	printk("  rip %016lx  cs %04lx  rflags %08lx  cr2 %016lx\n", f->rip, f->cs, f->rflags, cr2);
	printk("  rax %016lx  rbx %016lx  rcx %016lx  rdx %016lx\n", f->rax, f->rbx, f->rcx, f->rdx);
	printk("  rsi %016lx  rdi %016lx  rbp %016lx  rsp %016lx\n", f->rsi, f->rdi, f->rbp, f->rsp);
	printk("  r8  %016lx  r9  %016lx  r10 %016lx  r11 %016lx\n", f->r8, f->r9, f->r10, f->r11);
	printk("  r12 %016lx  r13 %016lx  r14 %016lx  r15 %016lx\n", f->r12, f->r13, f->r14, f->r15);
	hv_exit(EXIT_HV_FAULT);
}

void trap_dispatch(struct trap_frame *f);

void trap_dispatch(struct trap_frame *f)
{
	if (f->vector == 13) {
		for (const struct ex_entry *e = __ex_table_start; e < __ex_table_end; e++) {
			if (e->insn == f->rip) {
				f->rip = e->fixup;
				return;
			}
		}
	}
	if (handlers[f->vector]) {
		handlers[f->vector](f);
		return;
	}
	dump_and_stop(f);
}
