/* boot_cpu_init(): a CPU's own start-up before hv/ runs on it: its GDT and TSS, the IDT, GS = its pcpu. */
#include "boot/cpu_init.h"
#include "boot/gdt.h"
#include "boot/trap.h"
#include "hv/pcpu.h"
#include "lib/cpu.h"
#include "lib/frame.h"

#define TABLE_FRAMES	((sizeof(struct cpu_tables) + FRAME_SIZE - 1) / FRAME_SIZE)

/*
 * The boot CPU's tables are in the image: it loads them before the frame allocator exists.
 * Each other CPU's come from the frame allocator when it starts, so the image does not carry
 * MAX_PCPUS of them. Here rather than in struct pcpu: only the boot path touches them.
 */
static struct cpu_tables boot_cpu_tables;

void boot_cpu_init(struct pcpu *p)
{
	struct cpu_tables *t = &boot_cpu_tables;

	p->self = p;
	if (p->index) {
		t = (struct cpu_tables *)frame_alloc_contig(TABLE_FRAMES, 1);
		/* No memory for its tables: this CPU never comes online (smp.c says so). */
		if (!t)
			cpu_halt_forever();
	}
	gdt_load_cpu(t);
	idt_load();
	wrmsr(MSR_GS_BASE, (uint64_t)p);
}
