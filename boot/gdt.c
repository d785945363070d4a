/* Builds each CPU's GDT (flat code/data plus its own TSS) and loads GDTR, the segments and TR. */
#include "boot/gdt.h"

void gdt_load_cpu(struct cpu_tables *t)
{
	uint64_t base = (uint64_t)&t->tss;
	uint64_t limit = sizeof(t->tss) - 1;
	struct desc_ptr gdtr = { sizeof(t->gdt) - 1, (uint64_t)t->gdt };

	t->gdt[0] = 0;
	t->gdt[1] = 0x00AF9A000000FFFFull;	/* 64-bit code, DPL 0 */
	t->gdt[2] = 0x00CF92000000FFFFull;	/* data, DPL 0 */
	/* SDM Vol. 3A 7.2.3: a 16-byte available 64-bit TSS descriptor (type 9). */
	t->gdt[3] = (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) | (0x89ull << 40) |
		    ((limit >> 16) << 48) | (((base >> 24) & 0xFF) << 56);
	t->gdt[4] = base >> 32;
	t->tss.ist[0] = (uint64_t)(t->ist_stack + sizeof(t->ist_stack));
	t->tss.iomap_base = sizeof(t->tss);

	__asm__ volatile("lgdt %0\n\t"
			 "mov %1, %%ds\n\t"
			 "mov %1, %%es\n\t"
			 "mov %1, %%ss\n\t"
			 "pushq %2\n\t"
			 "leaq 1f(%%rip), %%rax\n\t"
			 "pushq %%rax\n\t"
			 "lretq\n"
			 "1:\n\t"
			 "ltr %w3"
			 :
			 : "m"(gdtr), "r"((uint64_t)SEL_DATA), "i"(SEL_CODE), "r"(SEL_TSS)
			 : "rax", "memory");
}
