/* QEMU's pc-testdev as a domain sees it (testdev on or off), and INS/OUTS with and without REP. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/rt/rt.h"

/* The device's addresses as QEMU gives them; written down here again as the guest's oracle. */
#define PORT_DATA	0xE0
#define IOMEM		0xFF000000ull
#define IOMEM_LEN	0x10000ull

#define STR_LEN		16
/* Loops that keep this domain's tag in the test RAM while a second domain writes its own. */
#define HOLD_LOOPS	2000000u

/* The last 2 MiB page of the first GiB: above RAM, so taking it out of the map hides nothing. */
#define HOLE		0x3FE00000ull
#define PTE_P		1ull
#define PTE_PS		(1ull << 7)
#define PTE_ADDR	0x000FFFFFFFFFF000ull
#define PF_W		2u		/* #PF error code: a write (SDM Vol. 3A 4.7) */

/* #PF catcher: keeps CR2 and the error code, counts, resumes at pf_fixup (set before each try). */
volatile uint64_t pf_fixup, pf_count, pf_cr2, pf_ec;
void pf_entry(void);
__asm__(".text\n"
	"pf_entry:\n"
	"	push %rax\n"
	"	mov 8(%rsp), %rax\n"		/* the error code */
	"	mov %rax, pf_ec(%rip)\n"
	"	mov %cr2, %rax\n"
	"	mov %rax, pf_cr2(%rip)\n"
	"	mov pf_fixup(%rip), %rax\n"
	"	mov %rax, 16(%rsp)\n"		/* the frame's RIP */
	"	pop %rax\n"
	"	add $8, %rsp\n"
	"	incq pf_count(%rip)\n"
	"	iretq\n");

static uint64_t rep_outsb(const void *src, uint64_t count, bool down, const void **end)
{
	const void *si = src;

	__asm__ volatile("cmp $0, %[down]; je 1f; std; 1: rep outsb; cld"
			 : "+S"(si), "+c"(count)
			 : "d"((uint16_t)PORT_DATA), [down] "r"((uint64_t)down)
			 : "memory", "cc");
	*end = si;
	return count;
}

static uint64_t rep_insb(void *dst, uint64_t count, void **end)
{
	void *di = dst;

	__asm__ volatile("cld; rep insb" : "+D"(di), "+c"(count) : "d"((uint16_t)PORT_DATA)
			 : "memory");
	*end = di;
	return count;
}

/* One OUTSW and one INSL without REP: a single element each, RCX untouched. */
static void single_elements(bool on)
{
	uint16_t w = 0xbeef;
	uint32_t l = 0;
	const void *si = &w;
	void *di = &l;
	uint64_t rcx = 7;

	__asm__ volatile("cld; outsw" : "+S"(si), "+c"(rcx) : "d"((uint16_t)PORT_DATA) : "memory");
	__asm__ volatile("cld; insl" : "+D"(di), "+c"(rcx) : "d"((uint16_t)PORT_DATA) : "memory");
	report(si == (const uint8_t *)&w + 2 && di == (uint8_t *)&l + 4 && rcx == 7,
	       "string I/O: OUTSW and INSL without REP move RSI and RDI by one element, not RCX");
	if (on)
		report_value("string I/O: INSL reads back the word OUTSW wrote",
			     l & 0xFFFF, 0xbeef);
	else
		report_value("string I/O: INSL from a port nobody decodes reads all ones", l,
			     0xFFFFFFFFu);
}

static void string_io(bool on)
{
	static const char msg[STR_LEN + 1] = "abcdefghijklmnop";
	volatile uint8_t *mem = (volatile uint8_t *)(uintptr_t)(IOMEM + 0x1000 - 8);
	uint8_t buf[32];
	const void *end;
	void *dend;
	uint64_t left;

	left = rep_outsb(msg, STR_LEN, false, &end);
	report(left == 0 && end == msg + STR_LEN, "string I/O: REP OUTSB up moves RSI, empties RCX");
	if (on)
		report_value("string I/O: REP OUTSB up leaves the last byte in the register",
			     rt_inb(PORT_DATA), 'p');
	left = rep_outsb(msg + STR_LEN - 1, STR_LEN, true, &end);
	report(left == 0 && (uintptr_t)end == (uintptr_t)msg - 1, "string I/O: REP OUTSB with DF set moves RSI down");
	if (on)
		report_value("string I/O: REP OUTSB down leaves the first byte", rt_inb(PORT_DATA),
			     'a');
	left = rep_outsb(msg, 0, false, &end);
	report(left == 0 && end == msg, "string I/O: REP with RCX 0 does nothing");

	memset(buf, 0x11, sizeof(buf));
	if (on)
		rt_outb(PORT_DATA, 0x99);
	left = rep_insb(buf, 20, &dend);
	report(left == 0 && dend == buf + 20 && buf[20] == 0x11,
	       "string I/O: REP INSB fills exactly RCX bytes");
	report_value("string I/O: REP INSB stores what the port reads", buf[19], on ? 0x99 : 0xFF);
	if (!on)
		return;
	/* Across a page boundary of the test RAM, as kvm-unit-tests' string_io_mmio does. */
	left = rep_insb((void *)mem, 16, &dend);
	report(left == 0 && mem[0] == 0x99 && mem[15] == 0x99,
	       "string I/O: REP INSB into the test RAM across a page boundary");
}

static void device(bool on)
{
	volatile uint32_t *ram = (volatile uint32_t *)(uintptr_t)IOMEM;
	volatile uint32_t *last = (volatile uint32_t *)(uintptr_t)(IOMEM + IOMEM_LEN - 4);
	volatile uint32_t *past = (volatile uint32_t *)(uintptr_t)(IOMEM + IOMEM_LEN);

	rt_outl(PORT_DATA, 0x11223344);
	if (!on) {
		report_value("no testdev: port 0xE0 reads all ones", rt_inl(PORT_DATA), 0xFFFFFFFFu);
		ram[0] = 0x12345678;
		report_value("no testdev: 0xFF000000 takes no write, reads all ones", ram[0],
			     0xFFFFFFFFu);
		return;
	}
	report_value("testdev: OUTL then INL at 0xE0", rt_inl(PORT_DATA), 0x11223344);
	rt_outb(PORT_DATA + 2, 0xaa);
	report_value("testdev: OUTB to 0xE2 replaces lane 2 only", rt_inl(PORT_DATA), 0x11aa3344);
	report_value("testdev: INW at 0xE1 reads lanes 1 and 2", rt_inw(PORT_DATA + 1), 0xaa33);
	rt_outl(0xE4, (uint32_t)(uintptr_t)&ram);
	report_value("testdev: a page flush at 0xE4 leaves the register", rt_inl(PORT_DATA),
		     0x11aa3344);

	ram[0] = 0xcafef00d;
	*last = 0x5a5aa5a5;
	report(ram[0] == 0xcafef00d && *last == 0x5a5aa5a5,
	       "testdev: its 64 KiB at 0xFF000000 read back what was written, first and last");
	ram[4] = 40;
	__asm__ volatile("lock addl $2, %0" : "+m"(ram[4]));
	report_value("testdev: a locked ALU instruction on the test RAM", ram[4], 42);
	*past = 0x12345678;
	report_value("testdev: past its 64 KiB nothing answers (all ones)", *past, 0xFFFFFFFFu);
}

/* The 2 MiB page directory entry that maps HOLE in the current tables, or NULL. */
static volatile uint64_t *hole_pde(void)
{
	uint64_t cr3, *pml4, *pdpt, *pd;

	__asm__ volatile("mov %%cr3, %0" : "=r"(cr3));
	pml4 = (uint64_t *)(uintptr_t)(cr3 & PTE_ADDR);
	if (!(pml4[0] & PTE_P))
		return NULL;
	pdpt = (uint64_t *)(uintptr_t)(pml4[0] & PTE_ADDR);
	if (!(pdpt[0] & PTE_P) || (pdpt[0] & PTE_PS))
		return NULL;
	pd = (uint64_t *)(uintptr_t)(pdpt[0] & PTE_ADDR);
	return (pd[HOLE >> 21] & PTE_PS) ? &pd[HOLE >> 21] : NULL;
}

/*
 * OUTSB from, and INSB to, a page the guest's own tables do not map: the #PF reaches the guest
 * with CR2 the operand's address and the error code of a read or a write, and RSI/RDI stay.
 */
static void string_page_fault(void)
{
	volatile uint64_t *pde = hole_pde();
	uint64_t saved, si = HOLE + 5, di = HOLE + 9, before;

	if (!pde) {
		report_skip("string I/O: a #PF on the memory operand (no 2 MiB page to take out)");
		return;
	}
	saved = *pde;
	*pde = saved & ~PTE_P;
	__asm__ volatile("invlpg (%0)" : : "r"(HOLE) : "memory");
	rt_idt_set_gate(14, pf_entry, 0);

	before = pf_count;
	__asm__ volatile("lea 1f(%%rip), %%r11\n\t"
			 "mov %%r11, pf_fixup(%%rip)\n\t"
			 "cld; outsb\n"
			 "1:"
			 : "+S"(si) : "d"((uint16_t)PORT_DATA) : "r11", "memory");
	report(pf_count == before + 1 && pf_cr2 == HOLE + 5 && pf_ec == 0 && si == HOLE + 5,
	       "string I/O: OUTSB from an unmapped page: #PF, CR2 the operand, a read, RSI kept");
	before = pf_count;
	__asm__ volatile("lea 1f(%%rip), %%r11\n\t"
			 "mov %%r11, pf_fixup(%%rip)\n\t"
			 "cld; insb\n"
			 "1:"
			 : "+D"(di) : "d"((uint16_t)PORT_DATA) : "r11", "memory");
	report(pf_count == before + 1 && pf_cr2 == HOLE + 9 && pf_ec == PF_W && di == HOLE + 9,
	       "string I/O: INSB to an unmapped page: #PF, CR2 the operand, a write, RDI kept");
	*pde = saved;
	__asm__ volatile("invlpg (%0)" : : "r"(HOLE) : "memory");
}

/* With tag=N: the test RAM holds N through HOLD_LOOPS while another domain writes its own. */
static void hold_tag(uint32_t tag)
{
	volatile uint32_t *word = (volatile uint32_t *)(uintptr_t)(IOMEM + 0x8000);
	unsigned wrong = 0;

	*word = tag;
	for (unsigned i = 0; i < HOLD_LOOPS; i++)
		wrong += *word != tag;
	report_value("testdev: the test RAM is this domain's own (reads of another tag)", wrong, 0);
}

int main(int argc, char **argv)
{
	bool on = false;
	uint32_t tag = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "on"))
			on = true;
		else if (!strncmp(argv[i], "tag=", 4))
			tag = (uint32_t)strtoul(argv[i] + 4, NULL, 0);
	}
	device(on);
	string_io(on);
	single_elements(on);
	string_page_fault();
	if (on && tag)
		hold_tag(tag);
	return report_summary();
}
