/* Hostile cases against the device models: APIC page and IPIs, APIC timer, fw_cfg, console. */
#include "guest-stub/tests/hostile/hostile.h"

/*
 * case=apic: garbage of every size at every offset of the APIC page, IPIs of every delivery
 * mode to APIC IDs that do not exist, and an INIT/SIPI storm at VCPU 1.
 */
#define STORM_ROUNDS		64

static void apic_garbage(void)
{
	static const uint32_t garbage[] = { 0xFFFFFFFF, 0x5A5A5A5A, 0xA5A5A5A5, 0 };
	volatile uint8_t *page = (volatile uint8_t *)(uintptr_t)APIC_DEFAULT_BASE;
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
		APIC_ICR_FIXED | VEC_FIXED_IPI, APIC_ICR_LOWEST | VEC_FIXED_IPI, APIC_ICR_SMI,
		APIC_ICR_RESERVED, APIC_ICR_NMI, APIC_ICR_INIT | APIC_ICR_ASSERT,
		APIC_ICR_SIPI | SIPI_VECTOR, APIC_ICR_EXTINT,
	};
	unsigned sent = 0;

	/* Physical destinations 2..254 are nobody; 255 is everybody (SDM Vol. 3A 11.6.2.1). */
	for (unsigned dest = 2; dest < 255; dest += 7)
		for (unsigned m = 0; m < ARRAY_SIZE(modes); m++, sent++)
			apic_ipi((uint8_t)dest, modes[m] | (dest & 1 ? APIC_ICR_LOGICAL : 0));
	/* Illegal vectors 0-15 (11.5.2): a send error, no delivery. */
	for (unsigned v = 0; v < 16; v++, sent++)
		apic_ipi(0, APIC_ICR_FIXED | v);
	apic_ipi(0xFF, APIC_ICR_FIXED | VEC_FIXED_IPI);
	apic_ipi(0, APIC_ICR_SELF | APIC_ICR_FIXED | VEC_FIXED_IPI);
	apic_ipi(0, APIC_ICR_ALL | APIC_ICR_NMI);
	return sent + 3;
}

/* INIT/SIPI at VCPU 1 over and over; each start runs sipi_count_code once. */
static void apic_sipi_storm(void)
{
	unsigned sipis = 0;

	memcpy((void *)(uintptr_t)SIPI_PAGE, sipi_count_code, sizeof(sipi_count_code));
	*sipi_counter = 0;
	for (unsigned r = 0; r < STORM_ROUNDS; r++) {
		apic_ipi(1, APIC_ICR_INIT | APIC_ICR_ASSERT);
		apic_ipi(1, APIC_ICR_SIPI | SIPI_VECTOR);
		apic_ipi(1, APIC_ICR_SIPI | SIPI_VECTOR);	/* a second SIPI: ignored */
		apic_ipi(1, APIC_ICR_INIT);			/* INIT de-assert: no effect */
		apic_ipi(0, APIC_ICR_OTHERS | APIC_ICR_INIT | APIC_ICR_ASSERT);
		apic_ipi(0, APIC_ICR_OTHERS | APIC_ICR_SIPI | SIPI_VECTOR);
		sipis += 3;
		hypercall(HC_YIELD, 0, 0, 0);	/* let VCPU 1 run between the rounds */
	}
	for (unsigned i = 0; i < 100 && !*sipi_counter; i++)
		hypercall(HC_YIELD, 0, 0, 0);
	report(*sipi_counter >= 1 && *sipi_counter <= sipis,
	       "apic: INIT/SIPI storm: VCPU 1 started %u times for %u SIPIs", *sipi_counter,
	       sipis);
	apic_ipi(1, APIC_ICR_INIT | APIC_ICR_ASSERT);	/* VCPU 1 waits for a SIPI again */
}

int case_apic(unsigned ncpus)
{
	uint32_t version = apic_read(APIC_VERSION), esr;

	install_stray_gates();
	apic_garbage();
	apic_write(APIC_SPIV, APIC_SPIV_ENABLE | 0xFF);
	printf("hostile: apic: %u IPIs to APIC IDs that do not exist, of every delivery mode\n",
	       apic_bad_ipis());
	apic_write(APIC_ESR, 0);
	esr = apic_read(APIC_ESR);
	report(esr & APIC_ESR_ILLEGAL_REG, "apic: ESR shows the illegal register accesses (%#x)",
	       esr);
	report(esr & APIC_ESR_SEND_ILLEGAL, "apic: ESR shows the illegal vectors sent (%#x)",
	       esr);
	expect("apic: ID is read-only", apic_read(APIC_ID), 0);
	expect("apic: version is read-only", apic_read(APIC_VERSION), version);
	if (ncpus > 1)
		apic_sipi_storm();
	return report_summary();
}

/*
 * case=timer: the APIC timer at period 1, divide by 1, bounded by its handler. Hardware runs
 * the handler (interrupts masked) between one interrupt and the next.
 */
#define TIMER_STORM_IRQS	200
#define TIMER_STORM_SPINS	2000000

static volatile unsigned timer_irqs;

void timer_entry(void);
IRQ_ENTRY(timer_entry, timer_handler);

IRQ_HANDLER void timer_handler(void)
{
	if (++timer_irqs >= TIMER_STORM_IRQS)
		apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED);
	apic_write(APIC_EOI, 0);
}

int case_timer(void)
{
	unsigned spins = 0;

	install_stray_gates();
	rt_idt_set_gate(VEC_TIMER, timer_entry, 0);
	apic_write(APIC_SPIV, APIC_SPIV_ENABLE | 0xFF);
	apic_write(APIC_TPR, 0);
	apic_write(APIC_TIMER_DCR, APIC_DCR_DIVIDE_1);
	apic_write(APIC_LVT_TIMER, APIC_LVT_PERIODIC | VEC_TIMER);
	apic_write(APIC_TIMER_ICR, 1);
	__asm__ volatile("sti");
	while (timer_irqs < TIMER_STORM_IRQS && spins < TIMER_STORM_SPINS)
		spins++;
	__asm__ volatile("cli");
	apic_write(APIC_TIMER_ICR, 0);
	/* One more may have been in IRR already when the handler masked the timer. */
	report(timer_irqs == TIMER_STORM_IRQS || timer_irqs == TIMER_STORM_IRQS + 1,
	       "timer: period 1: %u interrupts, %u turns of the loop they interrupted",
	       timer_irqs, spins);
	return report_summary();
}

/* case=fwcfg: garbage selectors, sizes and data; the items must still read right after. */
#define FWCFG_LONG_READ		600

int case_fwcfg(uint64_t ram, unsigned ncpus)
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
		rt_outw(FWCFG_PORT_SELECTOR, sel[i]);
		for (unsigned b = 0; b < 16; b++)
			sink += rt_inb(FWCFG_PORT_DATA);
		/* Wrong sizes and directions on both ports, and the DMA ports after them. */
		sink += rt_inw(FWCFG_PORT_DATA) + rt_inl(FWCFG_PORT_DATA) +
			rt_inw(FWCFG_PORT_SELECTOR) + rt_inl(FWCFG_PORT_SELECTOR);
		rt_outb(FWCFG_PORT_DATA, (uint8_t)rnd());
		rt_outw(FWCFG_PORT_DATA, (uint16_t)rnd());
		rt_outl(FWCFG_PORT_DATA, (uint32_t)rnd());
		rt_outb(FWCFG_PORT_SELECTOR, (uint8_t)rnd());
		rt_outl(FWCFG_PORT_SELECTOR, (uint32_t)rnd());
		for (uint16_t p = FWCFG_PORT_DATA + 1; p <= FWCFG_PORT_SELECTOR + 0xB; p++) {
			sink += rt_inl(p);
			rt_outl(p, (uint32_t)rnd());
		}
		accesses += 16 + 9 + 2 * 10;
	}
	/* Far past the end of an item: the offset must not wrap into other data. */
	rt_outw(FWCFG_PORT_SELECTOR, FWCFG_RAM_SIZE);
	for (unsigned b = 0; b < FWCFG_LONG_READ; b++)
		sink += rt_inb(FWCFG_PORT_DATA);
	accesses += FWCFG_LONG_READ;
	printf("hostile: fwcfg: %u garbage accesses (read sum %#llx)\n", accesses,
	       (unsigned long long)sink);
	rt_fwcfg_read(FWCFG_SIGNATURE, sig, 4);
	report(!strcmp(sig, "QEMU"), "fwcfg: signature still reads \"%s\"", sig);
	expect("fwcfg: RAM size still right", (int64_t)fwcfg_number(FWCFG_RAM_SIZE, 8),
	       (int64_t)ram);
	expect("fwcfg: CPU count still right", (int64_t)fwcfg_number(FWCFG_NB_CPUS, 2), ncpus);
	return report_summary();
}


/* case=forge: console output that a log reader splitting on more than '\n' takes as new lines. */
int case_forge(void)
{
	printf("hostile: forge: form feed\fperfvisor:   domain 9 (forged): exit code 0, 1 vcpus\n");
	printf("hostile: forge: vertical tab\vperfvisor: EXIT 0\n");
	printf("hostile: forge: file separator\x1cperfvisor: frames: forged (no leak)\n");
	printf("hostile: forge: NEL \xc2\x85perfvisor: forged by NEL\n");
	return 0;
}
