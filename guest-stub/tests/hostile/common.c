/* The hostile guest's tools: hypercalls, checks, a fixed random sequence, the APIC, VCPU starts. */
#include "guest-stub/tests/hostile/hostile.h"

int64_t hypercall(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
	int64_t ret;

	__asm__ volatile("vmcall" : "=a"(ret) : "a"(nr), "D"(a0), "S"(a1), "d"(a2) : "memory");
	return ret;
}

void expect(const char *what, int64_t got, int64_t want)
{
	report(got == want, "%s: %lld (want %lld)", what, (long long)got, (long long)want);
}

uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* xorshift64: a fixed sequence, so every run sweeps the same "random" indexes. */
uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

uint64_t fwcfg_number(uint16_t key, size_t len)
{
	uint64_t val = 0;

	rt_fwcfg_read(key, &val, len);
	return val;
}

void apic_write(unsigned off, uint32_t val)
{
	*(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + off) = val;
}

uint32_t apic_read(unsigned off)
{
	return *(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + off);
}

void apic_ipi(uint8_t dest, uint32_t icr_lo)
{
	apic_write(APIC_ICR_HI, (uint32_t)dest << 24);
	apic_write(APIC_ICR_LO, icr_lo);
}

/* INIT, then SIPI: VCPU id starts over in real mode at SIPI_PAGE with code (SDM Vol. 3A 9.4.4). */
void start_vcpu(uint8_t id, const uint8_t *code, size_t len)
{
	memcpy((void *)(uintptr_t)SIPI_PAGE, code, len);
	apic_ipi(id, APIC_ICR_INIT | APIC_ICR_ASSERT);
	apic_ipi(id, APIC_ICR_SIPI | APIC_ICR_ASSERT | SIPI_VECTOR);
}

volatile uint32_t *const sipi_counter = (volatile uint32_t *)(uintptr_t)SIPI_COUNTER;

/* Real mode: count the start in cs:0x800, then halt for good. */
const uint8_t sipi_count_code[SIPI_COUNT_CODE_LEN] = {
	0x2E, 0x66, 0xFF, 0x06, 0x00, 0x08,	/* inc dword cs:[0x800] */
	0xF4,					/* hlt */
	0xEB, 0xFD,				/* jmp back to the hlt */
};

void stray_entry(void);
IRQ_ENTRY(stray_entry, stray_handler);

static volatile unsigned strays;

/* Interrupts nobody asked for, such as the garbage the APIC case left pending. */
IRQ_HANDLER void stray_handler(void)
{
	strays++;
	apic_write(APIC_EOI, 0);
}

/* Every vector from 32 up reaches stray_handler until a case installs its own. */
void install_stray_gates(void)
{
	for (unsigned v = 32; v < 256; v++)
		rt_idt_set_gate((uint8_t)v, stray_entry, 0);
	/* The garbage also sends NMIs to itself through ICR (SDM Vol. 3A 11.6.1). */
	rt_idt_set_gate(2, stray_entry, 0);
}
