/* Builds the ACPI tables of a domain (ACPI 6.5 chapter 5): what Linux and kvm-unit-tests look for. */
#include "hv/acpi.h"
#include "include/x86/apic.h"
#include "include/x86/ioapic.h"

/* Where each table goes in the area; all below 1 MiB, so the 32-bit pointers reach them. */
#define RSDP_AT		(ACPI_AREA + 0x000)
#define RSDT_AT		(ACPI_AREA + 0x040)
#define XSDT_AT		(ACPI_AREA + 0x080)
#define FADT_AT		(ACPI_AREA + 0x100)
#define FACS_AT		(ACPI_AREA + 0x240)	/* 5.2.10: 64-byte aligned */
#define DSDT_AT		(ACPI_AREA + 0x280)
#define MADT_AT		(ACPI_AREA + 0x300)
#define AREA_USED	0x400
#define DSDT_ROOM	(MADT_AT - DSDT_AT)

#define HDR_LEN		36	/* 5.2.6: the system description table header */
#define RSDP_LEN	36	/* 5.2.5.3, revision 2 */
#define FADT_LEN	276	/* 5.2.9, revision 6 */
#define FACS_LEN	64
#define MADT_LAPIC_LEN	8	/* 5.2.12.2 */
#define MADT_IOAPIC_LEN	12	/* 5.2.12.3 */
#define VCPUS_MAX	((AREA_USED - (MADT_AT - ACPI_AREA) - HDR_LEN - 8 - MADT_IOAPIC_LEN) / \
			 MADT_LAPIC_LEN)

/* FADT flags (5.2.9, table 5.10) and IA-PC boot architecture flags (5.2.9.3). */
#define FADT_HW_REDUCED_ACPI	(1u << 20)
#define BOOT_VGA_NOT_PRESENT	(1u << 2)
#define BOOT_CMOS_RTC_ABSENT	(1u << 5)
#define MADT_PCAT_COMPAT	1u	/* the 8259s are there (masked: perfvisor accepts that) */

static const char oem_id[6] = { 'P', 'R', 'F', 'V', 'S', 'R' };
static const char oem_table[8] = { 'P', 'E', 'R', 'F', 'V', 'I', 'S', 'R' };

static void put(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_bytes(uint8_t *p, const char *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)s[i];
}

/* 5.2.5.3, 5.2.6: the bytes of the checksummed range add up to 0. */
static uint8_t checksum(const uint8_t *p, unsigned n)
{
	uint8_t s = 0;

	for (unsigned i = 0; i < n; i++)
		s += p[i];
	return (uint8_t)-s;
}

static void header(uint8_t *t, const char sig[4], unsigned len, uint8_t rev)
{
	put_bytes(t, sig, 4);
	put(t + 4, len, 4);
	t[8] = rev;
	put_bytes(t + 10, oem_id, 6);
	put_bytes(t + 16, oem_table, 8);
	put(t + 24, 1, 4);		/* OEM revision */
	put_bytes(t + 28, "PRFV", 4);	/* creator */
	put(t + 32, 1, 4);
}

static void seal(uint8_t *t)
{
	unsigned len = t[4] | t[5] << 8 | t[6] << 16 | (unsigned)t[7] << 24;

	t[9] = 0;
	t[9] = checksum(t, len);
}

static void build_madt(uint8_t *t, unsigned nvcpus)
{
	unsigned len = HDR_LEN + 8 + nvcpus * MADT_LAPIC_LEN + MADT_IOAPIC_LEN;
	uint8_t *e = t + HDR_LEN + 8;

	header(t, "APIC", len, 5);
	put(t + HDR_LEN, APIC_DEFAULT_BASE, 4);
	put(t + HDR_LEN + 4, MADT_PCAT_COMPAT, 4);
	for (unsigned i = 0; i < nvcpus; i++, e += MADT_LAPIC_LEN) {
		e[0] = 0;			/* processor local APIC */
		e[1] = MADT_LAPIC_LEN;
		e[2] = (uint8_t)i;		/* ACPI processor UID */
		e[3] = (uint8_t)i;		/* APIC ID: the VCPU's */
		put(e + 4, 1, 4);		/* enabled */
	}
	e[0] = 1;				/* I/O APIC */
	e[1] = MADT_IOAPIC_LEN;
	e[2] = (uint8_t)nvcpus;			/* its ID, after the local APICs' */
	put(e + 4, IOAPIC_DEFAULT_BASE, 4);
	put(e + 8, 0, 4);			/* global system interrupt base */
	seal(t);
}

static void build_fadt(uint8_t *t)
{
	header(t, "FACP", FADT_LEN, 6);
	put(t + 36, FACS_AT, 4);		/* FIRMWARE_CTRL */
	put(t + 40, DSDT_AT, 4);		/* DSDT */
	put(t + 109, BOOT_VGA_NOT_PRESENT | BOOT_CMOS_RTC_ABSENT, 2);
	/* No PM timer, PM1 blocks, GPEs or SCI are emulated: hardware-reduced ACPI (4.1). */
	put(t + 112, FADT_HW_REDUCED_ACPI, 4);
	put(t + 132, FACS_AT, 8);		/* X_FIRMWARE_CTRL, the same FACS */
	put(t + 140, DSDT_AT, 8);		/* X_DSDT */
	put_bytes(t + 268, "perfvisr", 8);	/* hypervisor vendor identity */
	seal(t);
}

/*
 * The DSDT's one device, COM1 (AML, ACPI 6.5 chapter 20; resource descriptors 6.4.2):
 * Scope (\_SB) { Device (COM1) { Name (_HID, EisaId ("PNP0501")) Name (_UID, 1)
 *   Name (_CRS, ResourceTemplate () { IO (Decode16, 0x3F8, 0x3F8, 1, 8) IRQNoFlags () {4} }) } }
 * A hardware-reduced platform has no legacy PIC, so an OS maps no ISA IRQ unless a device asks
 * for it: without this Linux's 8250 driver cannot get IRQ 4 and its tty refuses every write.
 */
static const uint8_t dsdt_com1[] = {
	0x10, 0x32, '_', 'S', 'B', '_',				/* Scope, 50 bytes */
	0x5b, 0x82, 0x2b, 'C', 'O', 'M', '1',			/* Device, 43 bytes */
	0x08, '_', 'H', 'I', 'D', 0x0c, 0x41, 0xd0, 0x05, 0x01,	/* DWord: EisaId PNP0501 */
	0x08, '_', 'U', 'I', 'D', 0x01,				/* One */
	0x08, '_', 'C', 'R', 'S', 0x11, 0x10, 0x0a, 0x0d,	/* Buffer, 13 bytes: */
	0x47, 0x01, 0xf8, 0x03, 0xf8, 0x03, 0x01, 0x08,		/* I/O port, 16-bit decode */
	0x22, 0x10, 0x00,					/* IRQ mask: IRQ 4 */
	0x79, 0x00,						/* end tag */
};

_Static_assert(HDR_LEN + sizeof(dsdt_com1) <= DSDT_ROOM, "the DSDT runs into the MADT");

static void build_dsdt(uint8_t *t)
{
	header(t, "DSDT", HDR_LEN + sizeof(dsdt_com1), 2);
	for (unsigned i = 0; i < sizeof(dsdt_com1); i++)
		t[HDR_LEN + i] = dsdt_com1[i];
	seal(t);
}

static void build_facs(uint8_t *t)
{
	put_bytes(t, "FACS", 4);
	put(t + 4, FACS_LEN, 4);
	t[32] = 2;				/* version; no checksum (5.2.10) */
}

const char *acpi_build(void *ram, uint64_t ram_size, unsigned nvcpus)
{
	uint8_t *a, *rsdp;

	if (ram_size < ACPI_AREA_END)
		return "guest RAM ends below 1 MiB";
	if (!nvcpus || nvcpus > VCPUS_MAX)
		return "too many VCPUs for the MADT";
	a = (uint8_t *)ram;
	for (unsigned i = 0; i < AREA_USED; i++)
		a[ACPI_AREA + i] = 0;

	build_madt(a + MADT_AT, nvcpus);
	build_fadt(a + FADT_AT);
	build_facs(a + FACS_AT);
	build_dsdt(a + DSDT_AT);

	header(a + RSDT_AT, "RSDT", HDR_LEN + 2 * 4, 1);
	put(a + RSDT_AT + HDR_LEN, FADT_AT, 4);
	put(a + RSDT_AT + HDR_LEN + 4, MADT_AT, 4);
	seal(a + RSDT_AT);
	header(a + XSDT_AT, "XSDT", HDR_LEN + 2 * 8, 1);
	put(a + XSDT_AT + HDR_LEN, FADT_AT, 8);
	put(a + XSDT_AT + HDR_LEN + 8, MADT_AT, 8);
	seal(a + XSDT_AT);

	rsdp = a + RSDP_AT;
	put_bytes(rsdp, "RSD PTR ", 8);
	put_bytes(rsdp + 9, oem_id, 6);
	rsdp[15] = 2;				/* revision: ACPI 2.0+, XSDT present */
	put(rsdp + 16, RSDT_AT, 4);
	put(rsdp + 20, RSDP_LEN, 4);
	put(rsdp + 24, XSDT_AT, 8);
	rsdp[8] = checksum(rsdp, 20);		/* the ACPI 1.0 part */
	rsdp[32] = checksum(rsdp, RSDP_LEN);	/* the whole structure */
	return (const char *)0;
}
