/* Per-CPU bookkeeping: the pcpu array and the per-CPU part of start-up (GDT, IDT, GS base). */
#include "lib/cpu.h"
#include "boot/trap.h"
#include "hv/pcpu.h"

#define MSR_GS_BASE	0xC0000101

struct pcpu pcpus[MAX_PCPUS];
unsigned num_pcpus = 1;

void pcpu_init_self(struct pcpu *p)
{
	p->self = p;
	gdt_load_cpu(&p->tables);
	idt_load();
	wrmsr(MSR_GS_BASE, (uint64_t)p);
}
