/* Hostile guest: one misbehaviour per case=NAME, each of which the hypervisor must contain. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/tests/vpmu_test.h"
#include "include/perfvisor/hypercall.h"
#include "include/perfvisor/pmu.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* fw_cfg items (QEMU docs/specs/fw_cfg.rst). */
#define FWCFG_SEL		0x510
#define FWCFG_DATA		0x511
#define FWCFG_SIGNATURE		0x00
#define FWCFG_RAM_SIZE		0x03
#define FWCFG_NB_CPUS		0x05

/* The local xAPIC page and its registers (SDM Vol. 3A table 11-1). */
#define APIC_BASE		0xFEE00000ull
#define APIC_ID			0x020
#define APIC_VERSION		0x030
#define APIC_TPR		0x080
#define APIC_EOI		0x0B0
#define APIC_SPIV		0x0F0
#define APIC_ESR		0x280
#define APIC_ICR_LO		0x300
#define APIC_ICR_HI		0x310
#define APIC_LVT_TIMER		0x320
#define APIC_LVT_PMC		0x340
#define APIC_TIMER_ICR		0x380
#define APIC_TIMER_DCR		0x3E0
#define SPIV_ENABLE		(1u << 8)
#define LVT_MASKED		(1u << 16)
#define LVT_PERIODIC		(1u << 17)
#define DCR_DIVIDE_1		0xB
#define ESR_SEND_ILLEGAL	(1u << 5)
#define ESR_ILLEGAL_REG		(1u << 7)
/* ICR: delivery mode in bits 10:8, logical destination, level, shorthand (SDM Vol. 3A 11.6.1). */
#define ICR_FIXED		0x000
#define ICR_LOWEST		0x100
#define ICR_SMI			0x200
#define ICR_RESERVED		0x300
#define ICR_NMI			0x400
#define ICR_INIT		0x500
#define ICR_SIPI		0x600
#define ICR_EXTINT		0x700
#define ICR_LOGICAL		(1u << 11)
#define ICR_ASSERT		(1u << 14)
#define ICR_SELF		(1u << 18)
#define ICR_ALL			(2u << 18)
#define ICR_OTHERS		(3u << 18)

/* Vectors of this guest's own interrupt handlers; any other vector from 32 up is "stray". */
#define VEC_PMI			0x50
#define VEC_TIMER		0x51
#define VEC_FIXED_IPI		0x60

/* Real-mode code for VCPU 1 after a SIPI: a page below the image, above the loader's data. */
#define SIPI_PAGE		0x80000ull
#define SIPI_VECTOR		(SIPI_PAGE >> 12)
#define SIPI_COUNTER		(SIPI_PAGE + 0x800)	/* cs:0x800 in the code below */
#define SIPI_GP_HANDLER		0x100			/* offset of the real-mode #GP handler */

/* Paging-entry bits (SDM Vol. 3A 4.5). */
#define PTE_P			0x001ull
#define PTE_RW			0x002ull
#define PTE_PS			0x080ull

#define EVT_INSTRUCTIONS	(EV_INSTRUCTIONS | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN)
#define EV_BRANCHES		0xC4
#define EV_CORE_CYCLES		0x3C
#define EV_REF_CYCLES		0x13C

static int64_t hypercall(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	int64_t ret;

	__asm__ volatile("vmcall" : "=a"(ret) : "a"(nr), "D"(a0), "S"(a1), "d"(a2) : "memory");
	return ret;
}

static bool expect(const char *what, int64_t got, int64_t want)
{
	return vt_report(got == want, "%s: %lld (want %lld)", what, (long long)got,
			 (long long)want);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* xorshift64: a fixed sequence, so every run sweeps the same "random" indexes. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t fwcfg_number(uint16_t key, size_t len)
{
	uint64_t val = 0;

	rt_fwcfg_read(key, &val, len);
	return val;
}

static void apic_write(unsigned off, uint32_t val)
{
	*(volatile uint32_t *)(uintptr_t)(APIC_BASE + off) = val;
}

static uint32_t apic_read(unsigned off)
{
	return *(volatile uint32_t *)(uintptr_t)(APIC_BASE + off);
}

static void apic_ipi(uint8_t dest, uint32_t icr_lo)
{
	apic_write(APIC_ICR_HI, (uint32_t)dest << 24);
	apic_write(APIC_ICR_LO, icr_lo);
}

/* INIT, then SIPI: VCPU id starts over in real mode at SIPI_PAGE with code (SDM Vol. 3A 9.4.4). */
static void start_vcpu(uint8_t id, const uint8_t *code, size_t len)
{
	memcpy((void *)(uintptr_t)SIPI_PAGE, code, len);
	apic_ipi(id, ICR_INIT | ICR_ASSERT);
	apic_ipi(id, ICR_SIPI | ICR_ASSERT | SIPI_VECTOR);
}

static volatile uint32_t *const sipi_counter = (volatile uint32_t *)(uintptr_t)SIPI_COUNTER;

/* Real mode: count the start in cs:0x800, then halt for good. */
static const uint8_t sipi_count_code[] = {
	0x2E, 0x66, 0xFF, 0x06, 0x00, 0x08,	/* inc dword cs:[0x800] */
	0xF4,					/* hlt */
	0xEB, 0xFD,				/* jmp back to the hlt */
};

/*
 * Interrupt gates of this guest: each stub saves the registers a C function may clobber and
 * returns with IRETQ. Handlers use no SSE (general-regs-only): they interrupt any code.
 */
#define IRQ_ENTRY(entry, handler)						\
	__asm__(".text\n" #entry ":\n\t"					\
		"push %rax\n\tpush %rcx\n\tpush %rdx\n\tpush %rsi\n\tpush %rdi\n\t"	\
		"push %r8\n\tpush %r9\n\tpush %r10\n\tpush %r11\n\t"		\
		"call " #handler "\n\t"						\
		"pop %r11\n\tpop %r10\n\tpop %r9\n\tpop %r8\n\t"		\
		"pop %rdi\n\tpop %rsi\n\tpop %rdx\n\tpop %rcx\n\tpop %rax\n\t"	\
		"iretq\n")
#define IRQ_HANDLER		__attribute__((used, target("general-regs-only")))

void pmi_entry(void);
void timer_entry(void);
void stray_entry(void);
IRQ_ENTRY(pmi_entry, pmi_handler);
IRQ_ENTRY(timer_entry, timer_handler);
IRQ_ENTRY(stray_entry, stray_handler);

static volatile unsigned strays;

/* Interrupts nobody asked for, such as the garbage the APIC case left pending. */
IRQ_HANDLER void stray_handler(void)
{
	strays++;
	apic_write(APIC_EOI, 0);
}

/* Every vector from 32 up reaches stray_handler until a case installs its own. */
static void install_stray_gates(void)
{
	for (unsigned v = 32; v < 256; v++)
		rt_idt_set_gate((uint8_t)v, stray_entry, 0);
	/* The garbage also sends NMIs to itself through ICR (SDM Vol. 3A 11.6.1). */
	rt_idt_set_gate(2, stray_entry, 0);
}

/*
 * case=apic: garbage of every size at every offset of the APIC page, IPIs of every delivery
 * mode to APIC IDs that do not exist, and an INIT/SIPI storm at VCPU 1.
 */
#define STORM_ROUNDS		64

static void apic_garbage(void)
{
	static const uint32_t garbage[] = { 0xFFFFFFFF, 0x5A5A5A5A, 0xA5A5A5A5, 0 };
	volatile uint8_t *page = (volatile uint8_t *)(uintptr_t)APIC_BASE;
	uint64_t sink = 0;

	for (unsigned off = 0; off < 0x1000; off += 0x10) {
		/* Reads and writes of each size, aligned and not, also across a register's end. */
		sink += page[off + 1] + *(volatile uint16_t *)(page + off + 2) +
			*(volatile uint32_t *)(page + off + 14) + *(volatile uint64_t *)(page + off);
		page[off + 3] = 0xFF;
		*(volatile uint16_t *)(page + off + 1) = 0xFFFF;
		*(volatile uint64_t *)(page + off) = UINT64_MAX;
		for (unsigned g = 0; g < ARRAY_SIZE(garbage); g++)
			*(volatile uint32_t *)(page + off) = garbage[g];
	}
	/* A write that runs off the end of the APIC page. */
	*(volatile uint32_t *)(page + 0xFFE) = 0xFFFFFFFF;
	printf("hostile: apic: garbage at all 256 register offsets (read sum %#llx)\n",
	       (unsigned long long)sink);
}

static unsigned apic_bad_ipis(void)
{
	static const uint32_t modes[] = {
		ICR_FIXED | VEC_FIXED_IPI, ICR_LOWEST | VEC_FIXED_IPI, ICR_SMI, ICR_RESERVED,
		ICR_NMI, ICR_INIT | ICR_ASSERT, ICR_SIPI | SIPI_VECTOR, ICR_EXTINT,
	};
	unsigned sent = 0;

	/* Physical destinations 2..254 are nobody; 255 is everybody (SDM Vol. 3A 11.6.2.1). */
	for (unsigned dest = 2; dest < 255; dest += 7)
		for (unsigned m = 0; m < ARRAY_SIZE(modes); m++, sent++)
			apic_ipi((uint8_t)dest, modes[m] | (dest & 1 ? ICR_LOGICAL : 0));
	/* Illegal vectors 0-15 (11.5.2): a send error, no delivery. */
	for (unsigned v = 0; v < 16; v++, sent++)
		apic_ipi(0, ICR_FIXED | v);
	apic_ipi(0xFF, ICR_FIXED | VEC_FIXED_IPI);
	apic_ipi(0, ICR_SELF | ICR_FIXED | VEC_FIXED_IPI);
	apic_ipi(0, ICR_ALL | ICR_NMI);
	return sent + 3;
}

/* INIT/SIPI at VCPU 1 over and over; each start runs sipi_count_code once. */
static void apic_sipi_storm(void)
{
	unsigned sipis = 0;

	memcpy((void *)(uintptr_t)SIPI_PAGE, sipi_count_code, sizeof(sipi_count_code));
	*sipi_counter = 0;
	for (unsigned r = 0; r < STORM_ROUNDS; r++) {
		apic_ipi(1, ICR_INIT | ICR_ASSERT);
		apic_ipi(1, ICR_SIPI | SIPI_VECTOR);
		apic_ipi(1, ICR_SIPI | SIPI_VECTOR);	/* a second SIPI: ignored */
		apic_ipi(1, ICR_INIT);			/* INIT de-assert: no effect */
		apic_ipi(0, ICR_OTHERS | ICR_INIT | ICR_ASSERT);
		apic_ipi(0, ICR_OTHERS | ICR_SIPI | SIPI_VECTOR);
		sipis += 3;
		hypercall(HC_YIELD, 0, 0, 0);	/* let VCPU 1 run between the rounds */
	}
	for (unsigned i = 0; i < 100 && !*sipi_counter; i++)
		hypercall(HC_YIELD, 0, 0, 0);
	vt_report(*sipi_counter >= 1 && *sipi_counter <= sipis,
		  "apic: INIT/SIPI storm: VCPU 1 started %u times for %u SIPIs", *sipi_counter,
		  sipis);
	apic_ipi(1, ICR_INIT | ICR_ASSERT);	/* VCPU 1 waits for a SIPI again */
}

static int case_apic(unsigned ncpus)
{
	uint32_t version = apic_read(APIC_VERSION), esr;

	install_stray_gates();
	apic_garbage();
	apic_write(APIC_SPIV, SPIV_ENABLE | 0xFF);
	printf("hostile: apic: %u IPIs to APIC IDs that do not exist, of every delivery mode\n",
	       apic_bad_ipis());
	apic_write(APIC_ESR, 0);
	esr = apic_read(APIC_ESR);
	vt_report(esr & ESR_ILLEGAL_REG, "apic: ESR shows the illegal register accesses (%#x)", esr);
	vt_report(esr & ESR_SEND_ILLEGAL, "apic: ESR shows the illegal vectors sent (%#x)", esr);
	expect("apic: ID is read-only", apic_read(APIC_ID), 0);
	expect("apic: version is read-only", apic_read(APIC_VERSION), version);
	if (ncpus > 1)
		apic_sipi_storm();
	return vt_summary("hostile");
}

/*
 * case=timer: the APIC timer at period 1, divide by 1, bounded by its handler. Hardware runs
 * the handler (interrupts masked) between one interrupt and the next.
 */
#define TIMER_STORM_IRQS	200
#define TIMER_STORM_SPINS	2000000

static volatile unsigned timer_irqs;

IRQ_HANDLER void timer_handler(void)
{
	if (++timer_irqs >= TIMER_STORM_IRQS)
		apic_write(APIC_LVT_TIMER, LVT_MASKED);
	apic_write(APIC_EOI, 0);
}

static int case_timer(void)
{
	unsigned spins = 0;

	install_stray_gates();
	rt_idt_set_gate(VEC_TIMER, timer_entry, 0);
	apic_write(APIC_SPIV, SPIV_ENABLE | 0xFF);
	apic_write(APIC_TPR, 0);
	apic_write(APIC_TIMER_DCR, DCR_DIVIDE_1);
	apic_write(APIC_LVT_TIMER, LVT_PERIODIC | VEC_TIMER);
	apic_write(APIC_TIMER_ICR, 1);
	__asm__ volatile("sti");
	while (timer_irqs < TIMER_STORM_IRQS && spins < TIMER_STORM_SPINS)
		spins++;
	__asm__ volatile("cli");
	apic_write(APIC_TIMER_ICR, 0);
	/* One more may have been in IRR already when the handler masked the timer. */
	vt_report(timer_irqs == TIMER_STORM_IRQS || timer_irqs == TIMER_STORM_IRQS + 1,
		  "timer: period 1: %u interrupts, %u turns of the loop they interrupted",
		  timer_irqs, spins);
	return vt_summary("hostile");
}

/* case=fwcfg: garbage selectors, sizes and data; the items must still read right after. */
#define FWCFG_LONG_READ		600

static int case_fwcfg(uint64_t ram, unsigned ncpus)
{
	uint64_t sink = 0;
	unsigned accesses = 0;
	uint16_t sel[48];
	char sig[5] = { 0 };

	for (unsigned i = 0; i < ARRAY_SIZE(sel); i++)
		sel[i] = i < 32 ? (uint16_t)i : i < 36 ? (uint16_t)(0x4000 + i) :
			 i < 40 ? (uint16_t)(0x8000 + i) : (uint16_t)rnd();
	sel[ARRAY_SIZE(sel) - 1] = 0xFFFF;
	for (unsigned i = 0; i < ARRAY_SIZE(sel); i++) {
		rt_outw(FWCFG_SEL, sel[i]);
		for (unsigned b = 0; b < 16; b++)
			sink += rt_inb(FWCFG_DATA);
		/* Wrong sizes and directions on both ports, and the DMA ports after them. */
		sink += rt_inw(FWCFG_DATA) + rt_inl(FWCFG_DATA) + rt_inw(FWCFG_SEL) + rt_inl(FWCFG_SEL);
		rt_outb(FWCFG_DATA, (uint8_t)rnd());
		rt_outw(FWCFG_DATA, (uint16_t)rnd());
		rt_outl(FWCFG_DATA, (uint32_t)rnd());
		rt_outb(FWCFG_SEL, (uint8_t)rnd());
		rt_outl(FWCFG_SEL, (uint32_t)rnd());
		for (uint16_t p = FWCFG_DATA + 1; p <= FWCFG_SEL + 0xB; p++) {
			sink += rt_inl(p);
			rt_outl(p, (uint32_t)rnd());
		}
		accesses += 16 + 9 + 2 * 10;
	}
	/* Far past the end of an item: the offset must not wrap into other data. */
	rt_outw(FWCFG_SEL, FWCFG_RAM_SIZE);
	for (unsigned b = 0; b < FWCFG_LONG_READ; b++)
		sink += rt_inb(FWCFG_DATA);
	accesses += FWCFG_LONG_READ;
	printf("hostile: fwcfg: %u garbage accesses (read sum %#llx)\n", accesses,
	       (unsigned long long)sink);
	rt_fwcfg_read(FWCFG_SIGNATURE, sig, 4);
	vt_report(!strcmp(sig, "QEMU"), "fwcfg: signature still reads \"%s\"", sig);
	expect("fwcfg: RAM size still right", (int64_t)fwcfg_number(FWCFG_RAM_SIZE, 8),
	       (int64_t)ram);
	expect("fwcfg: CPU count still right", (int64_t)fwcfg_number(FWCFG_NB_CPUS, 2), ncpus);
	return vt_summary("hostile");
}

/*
 * case=pmi: every counter at period 1 with its interrupt on; the handler re-arms them all and
 * unmasks LVTPC each time, so PMIs come back to back until the handler stops them.
 */
#define PMI_STORM_PMIS		150
#define PMI_STORM_TICKS		50000000ull	/* and at most ~1 s of the guest's TSC */
#define FIXED_ALL_PMI		0xBBBull	/* OS, USR and PMI for the 3 fixed counters */

static volatile unsigned pmis;
static uint64_t pmi_deadline;

static void pmi_arm(void)
{
	static const uint64_t events[VT_GP] = {
		EV_INSTRUCTIONS, EV_BRANCHES, EV_CORE_CYCLES, EV_REF_CYCLES,
	};

	for (unsigned i = 0; i < VT_GP; i++) {
		rt_wrmsr(MSR_A_PMC0 + i, VT_TOP - 1);
		rt_wrmsr(MSR_PERFEVTSEL0 + i, events[i] | EVTSEL_USR | EVTSEL_OS | EVTSEL_INT |
			 EVTSEL_EN);
	}
	for (unsigned j = 0; j < VT_FIXED; j++)
		rt_wrmsr(MSR_FIXED_CTR0 + j, VT_TOP - 1);
	rt_wrmsr(MSR_FIXED_CTR_CTRL, FIXED_ALL_PMI);
	rt_wrmsr(MSR_GLOBAL_CTRL, VT_ALL_CTRS);
}

IRQ_HANDLER void pmi_handler(void)
{
	rt_wrmsr(MSR_GLOBAL_OVF_CTRL, VT_ALL_CTRS);
	apic_write(APIC_EOI, 0);
	if (++pmis >= PMI_STORM_PMIS || rt_rdtsc() > pmi_deadline) {
		rt_wrmsr(MSR_GLOBAL_CTRL, 0);
		return;
	}
	/*
	 * SDM Vol. 3A 11.5.1: the delivery masked LVTPC; unmask it, then re-arm, so the next PMI
	 * is pending before the IRET.
	 */
	apic_write(APIC_LVT_PMC, VEC_PMI);
	pmi_arm();
}

static int case_pmi(void)
{
	uint64_t spins = 0, lvtpc;

	vt_gp_install();
	install_stray_gates();
	rt_idt_set_gate(VEC_PMI, pmi_entry, 0);
	apic_write(APIC_SPIV, SPIV_ENABLE | 0xFF);
	apic_write(APIC_LVT_PMC, VEC_PMI);
	pmi_deadline = rt_rdtsc() + PMI_STORM_TICKS;
	pmi_arm();
	__asm__ volatile("sti");
	while (pmis < PMI_STORM_PMIS && rt_rdtsc() < pmi_deadline)
		spins++;
	__asm__ volatile("cli");
	rt_wrmsr(MSR_GLOBAL_CTRL, 0);
	lvtpc = apic_read(APIC_LVT_PMC);
	vt_report(pmis > 0, "pmi: %u PMIs back to back, %llu turns of the loop they interrupted",
		  pmis, (unsigned long long)spins);
	vt_report(pmis == PMI_STORM_PMIS || rt_rdtsc() >= pmi_deadline,
		  "pmi: the storm ended by the handler's bound");
	vt_report(lvtpc & LVT_MASKED, "pmi: the last PMI left LVTPC masked (%#llx)",
		  (unsigned long long)lvtpc);
	vt_pmu_quiet();
	return vt_summary("hostile");
}

/*
 * Page tables made to trip the hypervisor's guest page walk, mapped at 512 GiB (PML4 slot 1):
 * each 1 GiB slot below is one trap. The guest itself never touches these addresses.
 */
enum craft_slot {
	CRAFT_PD_OUTSIDE,	/* the page directory lies outside RAM */
	CRAFT_1G_AT_0,		/* a 1 GiB page at 0: only its first mem= bytes are RAM */
	CRAFT_1G_TOP,		/* a 1 GiB page at the top of the 52-bit physical space */
	CRAFT_PD_IN_APIC,	/* the page directory "is" the APIC page */
	CRAFT_PT_MAXPHYS,	/* a page table at the highest physical page */
};

#define CRAFT_BASE		(1ull << 39)
#define CRAFT_VA(slot, off)	(CRAFT_BASE + ((uint64_t)(slot) << 30) + (off))

static uint64_t craft_pdpt[512] __attribute__((aligned(4096)));
static uint64_t craft_pd[512] __attribute__((aligned(4096)));

static void craft_tables(uint64_t ram)
{
	uint64_t cr3, *pml4;

	__asm__ volatile("mov %%cr3, %0" : "=r"(cr3));
	pml4 = (uint64_t *)(uintptr_t)(cr3 & ~0xFFFull);
	craft_pdpt[CRAFT_PD_OUTSIDE] = (ram + 0x200000) | PTE_P | PTE_RW;
	craft_pdpt[CRAFT_1G_AT_0] = PTE_P | PTE_RW | PTE_PS;
	craft_pdpt[CRAFT_1G_TOP] = 0x000FFFFFC0000000ull | PTE_P | PTE_RW | PTE_PS;
	craft_pdpt[CRAFT_PD_IN_APIC] = APIC_BASE | PTE_P | PTE_RW;
	craft_pdpt[CRAFT_PT_MAXPHYS] = (uintptr_t)craft_pd | PTE_P | PTE_RW;
	craft_pd[0] = 0x000FFFFFFFFFF000ull | PTE_P | PTE_RW;
	pml4[CRAFT_BASE >> 39] = (uintptr_t)craft_pdpt | PTE_P | PTE_RW;
}

/* Linear addresses no hypercall may read or write, with why. */
struct bad_ptr {
	const char *what;
	uint64_t la;
};

#define NBAD_PTRS		13

static struct bad_ptr bad_ptrs[NBAD_PTRS];

static void bad_pointers_init(uint64_t ram)
{
	const struct bad_ptr list[NBAD_PTRS] = {
		{ "just past RAM", ram },
		{ "8 bytes before the end of RAM, read 16", ram - 8 },
		{ "3 GiB, outside RAM", 0xC0000000ull },
		{ "the APIC page", APIC_BASE },
		{ "4 GiB, not mapped by the guest", 0x100000000ull },
		{ "non-canonical 2^47", 1ull << 47 },
		{ "non-canonical 2^63", 1ull << 63 },
		{ "the last byte of the address space", UINT64_MAX },
		{ "a page directory outside RAM", CRAFT_VA(CRAFT_PD_OUTSIDE, 0) },
		{ "a 1 GiB page past the end of RAM", CRAFT_VA(CRAFT_1G_AT_0, ram) },
		{ "a 1 GiB page at the top of physical space", CRAFT_VA(CRAFT_1G_TOP, 0) },
		{ "a page directory in the APIC page", CRAFT_VA(CRAFT_PD_IN_APIC, 0) },
		{ "a page table at the highest physical page", CRAFT_VA(CRAFT_PT_MAXPHYS, 0) },
	};

	craft_tables(ram);
	memcpy(bad_ptrs, list, sizeof(list));
}

/* case=hc: every bad base hypercall number, pointer and length, from CPL 0. */
static int case_hc(uint64_t ram)
{
	static const char greeting[] = "hostile: hc: written by hypercall\n";
	const uint64_t lengths[] = { HC_CONSOLE_MAX + 1, 1ull << 31, 1ull << 63, UINT64_MAX };
	unsigned wrong = 0, tried = 0;
	int64_t exits;

	bad_pointers_init(ram);
	/* Numbers: the rest of the base range, the unused PMU range, each bit, random ones. */
	for (unsigned i = 0; i < 0x200 + 64 + 300; i++) {
		uint64_t nr = i < 0x200 ? i : i < 0x200 + 64 ? 1ull << (i - 0x200) : rnd();

		if (nr < HC_BASE_COUNT || (nr >= HC_PMU_BASE && nr <= HC_PMU_IACK))
			continue;
		tried++;
		wrong += hypercall(nr, rnd(), rnd(), rnd()) != -PV_ENOSYS;
	}
	vt_report(!wrong, "hc: %u unknown hypercall numbers: %u not -ENOSYS", tried, wrong);
	for (size_t i = 0; i < NBAD_PTRS; i++) {
		char what[96];

		snprintf(what, sizeof(what), "hc: console write from %s", bad_ptrs[i].what);
		expect(what, hypercall(HC_CONSOLE_WRITE, bad_ptrs[i].la, 16, 0), -PV_EFAULT);
	}
	for (size_t i = 0; i < ARRAY_SIZE(lengths); i++)
		expect("hc: console write too long", hypercall(HC_CONSOLE_WRITE,
		       (uintptr_t)greeting, lengths[i], 0), -PV_EINVAL);
	expect("hc: console write of 0 bytes from a bad pointer",
	       hypercall(HC_CONSOLE_WRITE, 1ull << 63, 0, 0), 0);
	expect("hc: console write from an odd address through a crafted 1 GiB page",
	       hypercall(HC_CONSOLE_WRITE, CRAFT_VA(CRAFT_1G_AT_0, (uintptr_t)greeting + 9),
			 strlen(greeting) - 9, 0), (int64_t)strlen(greeting) - 9);
	expect("hc: vcpu id", hypercall(HC_VCPU_ID, rnd(), rnd(), rnd()), 0);
	exits = hypercall(HC_VCPU_EXITS, 0, 0, 0);
	vt_report(exits > 0 && hypercall(HC_VCPU_EXITS, 0, 0, 0) > exits,
		  "hc: the exit count grows (%lld)", (long long)exits);
	return vt_summary("hostile");
}

/* The one page of the PV PMU's shared area (a 1-VCPU domain), read-only once set up. */
static uint8_t pv_area[PV_PMU_AREA_STRIDE] __attribute__((aligned(4096)));
#define PV_PAGE		((volatile struct pv_vcpu_area *)pv_area)

static int64_t pv_setup(void)
{
	return hypercall(HC_PMU_SETUP, (uintptr_t)pv_area, 1, 0);
}

/* A control that counts instructions at both rings on counter 0, a-mode. */
static const struct pv_control pv_count_instructions = {
	.ncounters = 1,
	.evtsel = { EVT_INSTRUCTIONS },
};

/* Controls the hypervisor must refuse (-EINVAL), with why. */
static const struct {
	const char *what;
	struct pv_control c;
} pv_bad_controls[] = {
	{ "5 counters", { .ncounters = 5 } },
	{ "2^32 - 1 counters", { .ncounters = UINT32_MAX } },
	{ "an i-mode bit beyond the counters", { .ncounters = 2, .imode_mask = 4,
	  .evtsel = { EVT_INSTRUCTIONS, EVT_INSTRUCTIONS } } },
	{ "i-mode bit 31", { .ncounters = 4, .imode_mask = 1u << 31 } },
	{ "an event select without EN", { .ncounters = 1, .evtsel = { EV_INSTRUCTIONS } } },
	{ "an event select with bit 32", { .ncounters = 1,
	  .evtsel = { EVT_INSTRUCTIONS | 1ull << 32 } } },
	{ "an i-mode reset value of 2^48", { .ncounters = 1, .imode_mask = 1,
	  .evtsel = { EVT_INSTRUCTIONS }, .ireset = { VT_TOP } } },
	{ "an i-mode reset value of 2^64 - 1", { .ncounters = 1, .imode_mask = 1,
	  .evtsel = { EVT_INSTRUCTIONS }, .ireset = { UINT64_MAX } } },
};

/*
 * case=pv: the paravirtual PMU's hypercalls with bad order, controls, areas and pointers; then
 * a write to the read-only shared page, which must end the domain.
 */
static int case_pv(uint64_t ram)
{
	static uint64_t values[PV_PMU_COUNTERS];
	static struct pv_control odd_ctl[2];
	/* A control whose last byte lies in the page after RAM. */
	uint64_t past_end = ram - sizeof(struct pv_control) + 1;

	bad_pointers_init(ram);
	expect("pv: RESUME before SETUP", hypercall(HC_PMU_RESUME,
	       (uintptr_t)&pv_count_instructions, 0, 0), -PV_EINVAL);
	expect("pv: ISUSPEND before SETUP", hypercall(HC_PMU_ISUSPEND, (uintptr_t)values, 0, 0),
	       -PV_EINVAL);
	expect("pv: IACK before SETUP", hypercall(HC_PMU_IACK, 0, 0, 0), -PV_EINVAL);
	expect("pv: READ before SETUP", hypercall(HC_PMU_READ, 0, 0, 0), -PV_EINVAL);
	expect("pv: SET_VECTOR 31", hypercall(HC_PMU_SET_VECTOR, 31, 0, 0), -PV_EINVAL);
	expect("pv: SET_VECTOR 256", hypercall(HC_PMU_SET_VECTOR, 256, 0, 0), -PV_EINVAL);
	expect("pv: SET_VECTOR 2^63 + 64", hypercall(HC_PMU_SET_VECTOR, (1ull << 63) + 64, 0, 0),
	       -PV_EINVAL);
	expect("pv: number 0x107", hypercall(HC_PMU_IACK + 1, 0, 0, 0), -PV_ENOSYS);
	expect("pv: number 2^32 + 0x100", hypercall((1ull << 32) + HC_PMU_BASE, 0, 0, 0),
	       -PV_ENOSYS);
	/* SETUP takes a guest-physical page, one per VCPU. */
	expect("pv: SETUP of an unaligned area", hypercall(HC_PMU_SETUP, (uintptr_t)pv_area + 8,
	       1, 0), -PV_EINVAL);
	expect("pv: SETUP for 0 VCPUs", hypercall(HC_PMU_SETUP, (uintptr_t)pv_area, 0, 0),
	       -PV_EINVAL);
	expect("pv: SETUP for 2 VCPUs in a 1-VCPU domain", hypercall(HC_PMU_SETUP,
	       (uintptr_t)pv_area, 2, 0), -PV_EINVAL);
	expect("pv: SETUP for 2^32 + 1 VCPUs", hypercall(HC_PMU_SETUP, (uintptr_t)pv_area,
	       (1ull << 32) + 1, 0), -PV_EINVAL);
	expect("pv: SETUP past RAM", hypercall(HC_PMU_SETUP, ram, 1, 0), -PV_EINVAL);
	expect("pv: SETUP at the APIC page", hypercall(HC_PMU_SETUP, APIC_BASE, 1, 0),
	       -PV_EINVAL);
	expect("pv: SETUP at 2^64 - 4096", hypercall(HC_PMU_SETUP, UINT64_MAX & ~0xFFFull, 1, 0),
	       -PV_EINVAL);
	expect("pv: SETUP", pv_setup(), 0);
	expect("pv: SETUP again", pv_setup(), -PV_EINVAL);
	expect("pv: SETUP again, elsewhere", hypercall(HC_PMU_SETUP, (uintptr_t)odd_ctl & ~0xFFFull,
	       1, 0), -PV_EINVAL);
	vt_report(PV_PAGE->version == PV_PMU_VERSION && PV_PAGE->size == sizeof(struct pv_vcpu_area),
		  "pv: the page reads version %u, size %u", PV_PAGE->version, PV_PAGE->size);
	for (size_t i = 0; i < ARRAY_SIZE(pv_bad_controls); i++) {
		char what[96];

		snprintf(what, sizeof(what), "pv: RESUME with %s", pv_bad_controls[i].what);
		expect(what, hypercall(HC_PMU_RESUME, (uintptr_t)&pv_bad_controls[i].c, 0, 0),
		       -PV_EINVAL);
	}
	for (size_t i = 0; i < NBAD_PTRS; i++) {
		const struct bad_ptr *bad = &bad_ptrs[i];
		char what[96];

		snprintf(what, sizeof(what), "pv: RESUME, control at %s", bad->what);
		expect(what, hypercall(HC_PMU_RESUME, bad->la, 0, 0), -PV_EFAULT);
		snprintf(what, sizeof(what), "pv: IRESUME, values at %s", bad->what);
		expect(what, hypercall(HC_PMU_IRESUME, (uintptr_t)&pv_count_instructions,
		       bad->la, 0), -PV_EFAULT);
		snprintf(what, sizeof(what), "pv: ISUSPEND, saving to %s", bad->what);
		expect(what, hypercall(HC_PMU_ISUSPEND, bad->la, 0, 0), -PV_EFAULT);
	}
	expect("pv: RESUME, control running past RAM", hypercall(HC_PMU_RESUME, past_end, 0, 0),
	       -PV_EFAULT);
	/* No alignment rule for controls: one at an odd address is taken. */
	memcpy((char *)odd_ctl + 1, &pv_count_instructions, sizeof(pv_count_instructions));
	expect("pv: RESUME, control at an odd address", hypercall(HC_PMU_RESUME,
	       (uintptr_t)odd_ctl + 1, 0, 0), 0);
	expect("pv: READ of counter 4", hypercall(HC_PMU_READ, PV_PMU_COUNTERS, 0, 0), -PV_EINVAL);
	expect("pv: READ of counter 2^64 - 1", hypercall(HC_PMU_READ, UINT64_MAX, 0, 0),
	       -PV_EINVAL);
	vt_summary("hostile");
	printf("hostile: pv: writing the read-only shared page at %p\n", (void *)pv_area);
	PV_PAGE->flags = 0;
	printf("hostile: pv: still running after writing the read-only page\n");
	return 1;
}

/*
 * case=pvforge: ISUSPEND's save pointer aimed at the read-only page must fail as a write there
 * would. If the hypervisor writes it anyway, PMC0..3 land on the page's control: ncounters = 5,
 * and counter "4", read from ireset[0], counts into the next PCPU's soft counter 0, which
 * other domains' a-mode counts are made of. The domain then keeps counting for turns loops.
 */
static int case_pvforge(uint64_t turns)
{
	const struct pv_control c = {
		.ncounters = 1,
		.evtsel = { EVT_INSTRUCTIONS },
		.ireset = { EVT_INSTRUCTIONS },
	};

	vt_gp_install();
	expect("pvforge: SETUP", pv_setup(), 0);
	expect("pvforge: RESUME", hypercall(HC_PMU_RESUME, (uintptr_t)&c, 0, 0), 0);
	vt_wrmsr(MSR_A_PMC0, 5);
	vt_wrmsr(MSR_A_PMC0 + 1, EVT_INSTRUCTIONS);
	expect("pvforge: ISUSPEND, saving into the read-only shared page",
	       hypercall(HC_PMU_ISUSPEND, (uintptr_t)&PV_PAGE->active, 0, 0), -PV_EFAULT);
	expect("pvforge: the page's control keeps its counter count", PV_PAGE->active.ncounters,
	       c.ncounters);
	for (uint64_t i = 0; i < turns; i++)
		__asm__ volatile("" : : : "memory");
	return vt_summary("hostile");
}

/*
 * One a-mode window: HC_PMU_READ, k turns of a 2-instruction loop, HC_PMU_READ. Each VMCALL
 * counts before it reads, so the difference is the 2 MOVs, 2k, then MOV, XOR and the VMCALL.
 */
static uint64_t pv_window(uint64_t k)
{
	uint64_t delta;

	__asm__ volatile("mov %[nr], %%eax\n\t"
			 "xor %%edi, %%edi\n\t"
			 "vmcall\n\t"
			 "mov %%rax, %%r8\n\t"
			 "mov %[k], %%rcx\n"
			 "1:\tdec %%rcx\n\t"
			 "jnz 1b\n\t"
			 "mov %[nr], %%eax\n\t"
			 "xor %%edi, %%edi\n\t"
			 "vmcall\n\t"
			 "sub %%r8, %%rax"
			 : "=&a"(delta)
			 : [nr] "i"(HC_PMU_READ), [k] "r"(k)
			 : "rcx", "rdi", "r8", "memory");
	return delta;
}

#define PV_WINDOW_EXTRA		5

/* case=pvcount: a well-behaved paravirtual domain whose a-mode counts must be exact. */
#define PV_ROUNDS_MAX		64

static int case_pvcount(uint64_t rounds, uint64_t k)
{
	static const struct pv_control nothing;
	uint64_t got[PV_ROUNDS_MAX];

	if (rounds > PV_ROUNDS_MAX)
		rounds = PV_ROUNDS_MAX;
	expect("pvcount: SETUP", pv_setup(), 0);
	expect("pvcount: RESUME", hypercall(HC_PMU_RESUME, (uintptr_t)&pv_count_instructions, 0, 0),
	       0);
	for (uint64_t r = 0; r < rounds; r++)
		got[r] = pv_window(k);
	/* Counting stops before printing: stepping newlib's printf would take long. */
	expect("pvcount: RESUME with no counters", hypercall(HC_PMU_RESUME, (uintptr_t)&nothing, 0,
	       0), 0);
	for (uint64_t r = 0; r < rounds; r++)
		vt_report(got[r] == 2 * k + PV_WINDOW_EXTRA,
			  "pvcount: a-mode window %llu: %llu instructions (want %llu)",
			  (unsigned long long)r, (unsigned long long)got[r],
			  (unsigned long long)(2 * k + PV_WINDOW_EXTRA));
	return vt_summary("hostile");
}

/*
 * RDPMC over the whole ECX space, sampled: only ECX 0-3 and 0x40000000-2 may read
 * (SDM Vol. 2B RDPMC); every other index must #GP. A sweep counts those that misbehave.
 */
static bool rdpmc_valid(uint32_t ecx)
{
	return ecx < VT_GP || (ecx >= RDPMC_FIXED && ecx < RDPMC_FIXED + VT_FIXED);
}

struct rdpmc_sweep {
	unsigned tried, read, wrong;
	uint32_t first_wrong;
};

static void rdpmc_try(struct rdpmc_sweep *s, uint32_t ecx, bool allowed)
{
	uint64_t val;
	bool read = vt_rdpmc(ecx, &val);

	s->tried++;
	s->read += read;
	if (read != (allowed && rdpmc_valid(ecx)) && !s->wrong++)
		s->first_wrong = ecx;
}

static void rdpmc_sweep(struct rdpmc_sweep *s, bool allowed)
{
	uint64_t seed = rng_state;

	memset(s, 0, sizeof(*s));
	for (uint32_t i = 0; i < 64; i++) {
		rdpmc_try(s, i, allowed);
		rdpmc_try(s, RDPMC_FIXED + i, allowed);
	}
	for (unsigned bit = 0; bit < 32; bit++)
		rdpmc_try(s, 1u << bit, allowed);
	for (unsigned i = 0; i < 300; i++)
		rdpmc_try(s, (uint32_t)rnd(), allowed);
	rng_state = seed;	/* the same indexes at every ring */
}

static void rdpmc_report(const struct rdpmc_sweep *s, const char *where)
{
	vt_report(!s->wrong, "ring3: RDPMC %s: %u indexes, %u read, %u wrong (first %#x)", where,
		  s->tried, s->read, s->wrong, s->wrong ? s->first_wrong : 0);
}

static struct rdpmc_sweep user_sweep;
static unsigned user_hc_wrong, user_hc_tried;

/* Ring 3 may make no hypercall at all, whatever its number and arguments. */
static int user_hypercalls(void *arg)
{
	static const char text[] = "hostile: ring3: printed from ring 3 by hypercall\n";
	const uint64_t numbers[] = {
		HC_CONSOLE_WRITE, HC_YIELD, HC_VCPU_ID, HC_DOMAIN_EXIT, HC_VCPU_EXITS,
		HC_BASE_COUNT, HC_PMU_SETUP, HC_PMU_RESUME, HC_PMU_ISUSPEND, HC_PMU_IRESUME,
		HC_PMU_SET_VECTOR, HC_PMU_READ, HC_PMU_IACK, UINT64_MAX,
	};
	/* A valid buffer, and the APIC page, which the kernel maps for CPL 0 only. */
	const uint64_t buffers[] = { (uintptr_t)text, APIC_BASE };

	(void)arg;
	for (size_t i = 0; i < ARRAY_SIZE(numbers); i++)
		for (size_t b = 0; b < ARRAY_SIZE(buffers); b++, user_hc_tried++)
			user_hc_wrong += hypercall(numbers[i], buffers[b], sizeof(text) - 1, 0) !=
					 -PV_EPERM;
	return 0;
}

static int user_rdpmc(void *arg)
{
	rdpmc_sweep(&user_sweep, arg != NULL);
	return 0;
}

static void set_pce(bool on)
{
	uint64_t cr4;

	__asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
	cr4 = on ? cr4 | 1ull << 8 : cr4 & ~(1ull << 8);	/* CR4.PCE, SDM Vol. 3A 2.5 */
	__asm__ volatile("mov %0, %%cr4" : : "r"(cr4) : "memory");
}

static int run_user(int (*fn)(void *), void *arg)
{
	return kthread_join(kthread_create(fn, arg, KTHREAD_USER, 0));
}

/* case=ring3: hypercalls from CPL 3, and RDPMC of every index at CPL 0 and CPL 3. */
static int case_ring3(void)
{
	char *kargv[] = { "quantum=4294967295" };
	struct rdpmc_sweep s;

	vt_gp_install();
	kernel_init(1, kargv);
	run_user(user_hypercalls, NULL);
	vt_report(!user_hc_wrong, "ring3: %u hypercalls from CPL 3: %u not -EPERM", user_hc_tried,
		  user_hc_wrong);
	rdpmc_sweep(&s, true);
	rdpmc_report(&s, "at CPL 0");
	set_pce(true);
	run_user(user_rdpmc, &s);
	rdpmc_report(&user_sweep, "at CPL 3 with CR4.PCE set");
	set_pce(false);
	run_user(user_rdpmc, NULL);
	rdpmc_report(&user_sweep, "at CPL 3 with CR4.PCE clear");
	return vt_summary("hostile");
}

/*
 * case=cpuid: the whole leaf space, sparse, and dense where leaves exist; every answer must be
 * the same twice, and perfvisor's own leaves must say what the README says.
 */
static unsigned cpuid_checked, cpuid_unstable, cpuid_zero;

static struct rt_cpuid_regs cpuid_twice(uint32_t leaf, uint32_t sub)
{
	struct rt_cpuid_regs a = rt_cpuid(leaf, sub), b = rt_cpuid(leaf, sub);

	cpuid_checked++;
	cpuid_unstable += memcmp(&a, &b, sizeof(a)) != 0;
	cpuid_zero += !(a.eax | a.ebx | a.ecx | a.edx);
	return a;
}

static int case_cpuid(void)
{
	static const uint32_t dense[] = { 0, 0x40000000, 0x80000000 };
	struct rt_cpuid_regs r;
	unsigned hv_nonzero = 0;
	char sig[17];	/* a 12-byte signature or a 16-byte name, NUL-terminated */

	for (size_t d = 0; d < ARRAY_SIZE(dense); d++)
		for (uint32_t leaf = dense[d]; leaf < dense[d] + 0x100; leaf++)
			for (uint32_t sub = 0; sub < 4; sub++) {
				r = cpuid_twice(leaf, sub);
				if (leaf > 0x40000001 && leaf < 0x40000100)
					hv_nonzero += !!(r.eax | r.ebx | r.ecx | r.edx);
			}
	for (uint32_t i = 0; i < 4096; i++)
		cpuid_twice(i << 20 | (uint32_t)(rnd() & 0xFFFFF), (uint32_t)rnd());
	printf("hostile: cpuid: %u leaves and subleaves, %u all zero\n", cpuid_checked, cpuid_zero);
	vt_report(!cpuid_unstable, "cpuid: every answer the same twice (%u differ)", cpuid_unstable);
	r = rt_cpuid(1, 0);
	vt_report(r.ecx >> 31 & 1, "cpuid: leaf 1 has the hypervisor bit");
	vt_report(!(r.ecx >> 5 & 1), "cpuid: leaf 1 hides VMX");
	r = rt_cpuid(0x40000000, 0);
	memcpy(sig, &r.ebx, 4);
	memcpy(sig + 4, &r.ecx, 4);
	memcpy(sig + 8, &r.edx, 4);
	sig[12] = '\0';
	vt_report(!strcmp(sig, "perfvisor") && r.eax >= 0x40000001,
		  "cpuid: leaf 0x40000000 says \"%s\", max %#x", sig, r.eax);
	r = rt_cpuid(0x40000001, 0);
	memcpy(sig, &r, sizeof(r));
	sig[sizeof(r)] = '\0';
	vt_report(!strcmp(sig, "cpuid"), "cpuid: leaf 0x40000001 names the domain \"%s\"", sig);
	vt_report(!hv_nonzero, "cpuid: leaves 0x40000002-0x400000ff say nothing (%u do)",
		  hv_nonzero);
	return vt_summary("hostile");
}

/*
 * case=msr: RDMSR, a garbage WRMSR and a write-back of what was read, over 0-0x1fff,
 * 0xc0000000-0xc0001fff, the synthetic range 0x40000000-0x400000ff and random indexes. Every
 * #GP is survived and counted; MSRs that read but refuse their own value are listed.
 */
#define MSR_TSC			0x10
#define MSR_SWEEP_RANDOM	2000
#define MSR_LIST_MAX		64

struct msr_sweep {
	unsigned tried, read, garbage_taken, kept;
	uint32_t readable[MSR_LIST_MAX], refused[MSR_LIST_MAX];
	unsigned nreadable, nrefused;
};

static void msr_try(struct msr_sweep *s, uint32_t msr)
{
	uint64_t val;
	bool read = vt_rdmsr(msr, &val);

	s->tried++;
	/* Garbage: all ones (reserved bits, beyond any width), or a pattern that fits 32 bits. */
	s->garbage_taken += vt_wrmsr(msr, msr & 1 ? UINT64_MAX : 0x5A5A5A5Aull);
	if (!read)
		return;
	s->read++;
	if (s->nreadable < MSR_LIST_MAX)
		s->readable[s->nreadable++] = msr;
	if (vt_wrmsr(msr, val))
		s->kept++;
	else if (s->nrefused < MSR_LIST_MAX)
		s->refused[s->nrefused++] = msr;
}

static void print_msrs(const char *what, const uint32_t *list, unsigned n)
{
	char line[512];
	size_t used = 0;

	for (unsigned i = 0; i < n && used < sizeof(line) - 24; i++) {
		unsigned j = i;

		while (j + 1 < n && list[j + 1] == list[j] + 1)
			j++;
		used += (size_t)snprintf(line + used, sizeof(line) - used, j > i ? " %#x-%#x" :
					 " %#x", list[i], list[j]);
		i = j;
	}
	line[used] = '\0';
	printf("hostile: msr: %s:%s\n", what, line);
}

static int case_msr(void)
{
	static struct msr_sweep s;
	uint64_t tsc = rt_rdtsc();

	vt_gp_install();
	for (uint32_t msr = 0; msr < 0x2000; msr++)
		msr_try(&s, msr);
	for (uint32_t msr = 0xC0000000; msr < 0xC0002000; msr++)
		msr_try(&s, msr);
	for (uint32_t msr = 0x40000000; msr < 0x40000100; msr++)
		msr_try(&s, msr);
	for (unsigned i = 0; i < MSR_SWEEP_RANDOM; i++)
		msr_try(&s, (uint32_t)rnd());
	/* The garbage went into IA32_TSC too: put the clock back near where it was. */
	rt_wrmsr(MSR_TSC, tsc);
	printf("hostile: msr: %u MSRs: %u read (%u faulted), %u garbage writes taken "
	       "(%u faulted), %u took their value back\n", s.tried, s.read, s.tried - s.read,
	       s.garbage_taken, s.tried - s.garbage_taken, s.kept);
	print_msrs("readable", s.readable, s.nreadable);
	print_msrs("read-only", s.refused, s.nrefused);
	vt_report(s.read < s.tried / 10, "msr: most of the space #GPs (%u of %u read)", s.read,
		  s.tried);
	return vt_summary("hostile");
}

/*
 * case=spin: a VCPU that never exits (CLI, then a loop). With 2 VCPUs, VCPU 1 runs `loops`
 * turns of LOOP in real mode and ends the domain through the exit port; with 1 the hypervisor must
 * stop the domain itself (timeout=).
 */
static void __attribute__((noreturn)) case_spin(uint64_t loops)
{
	uint8_t code[] = {
		0x66, 0xB9, 0, 0, 0, 0,		/* mov ecx, loops */
		0x67, 0xE2, 0xFD,		/* addr32 loop . */
		0x31, 0xC0,			/* xor ax, ax */
		0xE6, 0xF4,			/* out 0xf4, al: the domain exits with code 0 */
		0xF4, 0xEB, 0xFD,		/* hlt; jmp back to the hlt */
	};

	if (fwcfg_number(FWCFG_NB_CPUS, 2) > 1) {
		memcpy(code + 2, &(uint32_t){ (uint32_t)loops }, 4);
		start_vcpu(1, code, sizeof(code));
		printf("hostile: spin: vcpu 1 ends the domain after %llu loop turns; vcpu 0 "
		       "spins with interrupts off\n", (unsigned long long)loops);
	} else {
		printf("hostile: spin: spinning with interrupts off until the hypervisor stops "
		       "this domain\n");
	}
	for (;;)
		__asm__ volatile("" : : : "memory");
}

/*
 * case=realgp: VCPU 1 in real mode executes RDMSR of an MSR that does not exist. Hardware
 * raises #GP through IVT entry 13 with no error code (SDM Vol. 3A 20.1.4); its handler counts.
 */
static int case_realgp(void)
{
	static const uint8_t code[] = {
		0x66, 0xB9, 0xBC, 0x0A, 0x00, 0x00,	/* mov ecx, 0xabc */
		0x0F, 0x32,				/* rdmsr */
		0xF4, 0xEB, 0xFD,			/* hlt; jmp back to the hlt */
	};
	volatile uint16_t *ivt13 = (volatile uint16_t *)(uintptr_t)(13 * 4);

	/* The real-mode IVT is at address 0, which the compiler would take for NULL. */
	__asm__("" : "+r"(ivt13));

	memset((void *)(uintptr_t)SIPI_PAGE, 0, 0x1000);
	memcpy((void *)(uintptr_t)(SIPI_PAGE + SIPI_GP_HANDLER), sipi_count_code,
	       sizeof(sipi_count_code));
	ivt13[0] = SIPI_GP_HANDLER;
	ivt13[1] = (uint16_t)(SIPI_PAGE >> 4);
	start_vcpu(1, code, sizeof(code));
	for (unsigned i = 0; i < 100 && !*sipi_counter; i++)
		hypercall(HC_YIELD, 0, 0, 0);
	vt_report(*sipi_counter == 1, "realgp: RDMSR of a missing MSR in real mode raised #GP "
		  "through IVT entry 13 (%u times)", *sipi_counter);
	return vt_summary("hostile");
}

/*
 * case=haltgood: VCPU 1 halts with interrupts off, then INIT-SIPI starts it again in a loop
 * that never ends; VCPU 0 halts with interrupts off. One VCPU still runs, so the domain must
 * go on (until its timeout=), not be taken for one whose VCPUs all stopped for good.
 */
static int case_haltgood(void)
{
	static const uint8_t loop_code[] = {
		0x2E, 0x66, 0xFF, 0x06, 0x00, 0x08,	/* inc dword cs:[0x800] */
		0xEB, 0xF8,				/* jmp back to the inc */
	};

	*sipi_counter = 0;
	start_vcpu(1, sipi_count_code, sizeof(sipi_count_code));
	for (unsigned i = 0; i < 100 && !*sipi_counter; i++)
		hypercall(HC_YIELD, 0, 0, 0);
	start_vcpu(1, loop_code, sizeof(loop_code));
	for (unsigned i = 0; i < 100 && *sipi_counter < 1000; i++)
		hypercall(HC_YIELD, 0, 0, 0);
	printf("hostile: haltgood: vcpu 1 halted, then loops (%u turns); vcpu 0 halts for good\n",
	       *sipi_counter);
	__asm__ volatile("cli; hlt");
	printf("hostile: haltgood: vcpu 0 woke up\n");
	return 1;
}

/* case=forge: console output that a log reader splitting on more than '\n' takes as new lines. */
static int case_forge(void)
{
	printf("hostile: forge: form feed\fperfvisor:   domain 9 (forged): exit code 0, 1 vcpus\n");
	printf("hostile: forge: vertical tab\vperfvisor: EXIT 0\n");
	printf("hostile: forge: file separator\x1cperfvisor: frames: forged (no leak)\n");
	printf("hostile: forge: NEL \xc2\x85perfvisor: forged by NEL\n");
	return 0;
}

static uint64_t arg_number(int argc, char **argv, const char *key, uint64_t fallback)
{
	size_t len = strlen(key);

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], key, len) && argv[i][len] == '=')
			return strtoull(argv[i] + len + 1, NULL, 0);
	return fallback;
}

int main(int argc, char **argv)
{
	uint64_t ram = fwcfg_number(FWCFG_RAM_SIZE, 8);
	unsigned ncpus = (unsigned)fwcfg_number(FWCFG_NB_CPUS, 2);
	const char *name = "";

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "case=", 5))
			name = argv[i] + 5;
	printf("hostile: case %s, %llu MiB, %u vcpus\n", name, (unsigned long long)(ram >> 20),
	       ncpus);
	if (!strcmp(name, "apic"))
		return case_apic(ncpus);
	if (!strcmp(name, "fwcfg"))
		return case_fwcfg(ram, ncpus);
	if (!strcmp(name, "timer"))
		return case_timer();
	if (!strcmp(name, "pmi"))
		return case_pmi();
	if (!strcmp(name, "hc"))
		return case_hc(ram);
	if (!strcmp(name, "pv"))
		return case_pv(ram);
	if (!strcmp(name, "pvforge"))
		return case_pvforge(arg_number(argc, argv, "turns", 20000));
	if (!strcmp(name, "pvcount"))
		return case_pvcount(arg_number(argc, argv, "rounds", 10),
				    arg_number(argc, argv, "k", 1000));
	if (!strcmp(name, "ring3"))
		return case_ring3();
	if (!strcmp(name, "cpuid"))
		return case_cpuid();
	if (!strcmp(name, "msr"))
		return case_msr();
	if (!strcmp(name, "spin"))
		case_spin(arg_number(argc, argv, "loops", 50000000));
	if (!strcmp(name, "realgp"))
		return case_realgp();
	if (!strcmp(name, "haltgood"))
		return case_haltgood();
	if (!strcmp(name, "forge"))
		return case_forge();
	printf("hostile: unknown case '%s'\n", name);
	return 2;
}
