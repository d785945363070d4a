/* boot_cpu_init(): a CPU's own start-up before hv/ runs on it: its GDT and TSS, the IDT, GS = its pcpu. */
#include "boot/cpu_init.h"
#include "boot/gdt.h"
#include "boot/trap.h"
#include "hv/pcpu.h"
#include "lib/cpu.h"

#define MSR_GS_BASE	0xC0000101

/* Here rather than in struct pcpu: only the boot path touches a CPU's descriptor tables. */
static struct cpu_tables cpu_tables[MAX_PCPUS];

void boot_cpu_init(struct pcpu *p)
{
	p->self = p;
	gdt_load_cpu(&cpu_tables[p->index]);
	idt_load();
	wrmsr(MSR_GS_BASE, (uint64_t)p);
}
