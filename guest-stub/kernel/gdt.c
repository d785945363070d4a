/* The GDT: kernel and user segments for 64-bit mode, and one TSS per VCPU. */
#include <stdint.h>

#include "guest-stub/kernel/internal.h"
#include "guest-stub/rt/rt.h"
#include "include/x86/msr.h"

/*
 * SDM Vol. 3A, "Segment Descriptors": in 64-bit mode base and limit are ignored for code and
 * data; what counts is L (64-bit code), P, S, the type and the DPL. Accessed bits are
 * preset so the CPU never writes the table.
 */
#define DESC_KCODE	0x00af9b000000ffffull	/* L, P, DPL 0, execute/read */
#define DESC_KDATA	0x00cf93000000ffffull	/* P, DPL 0, read/write */
#define DESC_UDATA	0x00cff3000000ffffull	/* P, DPL 3, read/write */
#define DESC_UCODE	0x00affb000000ffffull	/* L, P, DPL 3, execute/read */
#define TSS_TYPE_AVAIL	0x9ull			/* available 64-bit TSS */
#define DESC_PRESENT	(1ull << 47)

#define GDT_FIXED	5	/* null, kernel code, kernel data, user data, user code */

static uint64_t gdt[GDT_FIXED + 2 * KCPU_MAX] __attribute__((aligned(16))) = {
	[SEL_KCODE >> 3] = DESC_KCODE,
	[SEL_KDATA >> 3] = DESC_KDATA,
	[SEL_UDATA >> 3] = DESC_UDATA,
	[SEL_UCODE >> 3] = DESC_UCODE,
};

/* SDM Vol. 3A, "TSS Descriptor in 64-bit mode": 16 bytes, the base's high half in the second. */
static void set_tss_desc(unsigned cpu, const struct tss64 *tss)
{
	uint64_t base = (uintptr_t)tss, limit = sizeof(*tss) - 1;
	unsigned slot = SEL_TSS(cpu) >> 3;

	gdt[slot] = (limit & 0xffff) | (base & 0xffffff) << 16 | TSS_TYPE_AVAIL << 40 |
		    DESC_PRESENT | (limit >> 16 & 0xf) << 48 | (base >> 24 & 0xff) << 56;
	gdt[slot + 1] = base >> 32;
}

void gdt_init(unsigned ncpus)
{
	for (unsigned i = 0; i < ncpus; i++) {
		kcpus[i].tss.iomap_base = sizeof(struct tss64);
		set_tss_desc(i, &kcpus[i].tss);
	}
}

/*
 * Loads the GDT on this VCPU, reloads every segment register (CS by a far return), loads
 * the VCPU's TSS, and points GS base at its struct kcpu. FS and GS get the null selector,
 * which IRET to user mode leaves alone; GS base is then written through its MSR.
 */
void gdt_load(struct kcpu *c)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) ptr = { sizeof(gdt) - 1, (uintptr_t)gdt };

	__asm__ volatile("lgdt %0\n\t"
			 "movl %1, %%eax\n\t"
			 "movl %%eax, %%ds\n\t"
			 "movl %%eax, %%es\n\t"
			 "movl %%eax, %%ss\n\t"
			 "xorl %%eax, %%eax\n\t"
			 "movl %%eax, %%fs\n\t"
			 "movl %%eax, %%gs\n\t"
			 "pushq %2\n\t"
			 "leaq 1f(%%rip), %%rax\n\t"
			 "pushq %%rax\n\t"
			 "lretq\n"
			 "1:"
			 : : "m"(ptr), "i"(SEL_KDATA), "i"(SEL_KCODE) : "rax", "memory");
	__asm__ volatile("ltr %w0" : : "r"(SEL_TSS(c->id)));
	c->self = c;
	rt_wrmsr(MSR_GS_BASE, (uintptr_t)c);
}
