/* Unit tests for hv/acpi.c: the tables parsed back as an OS finds them, and by perfvisor's own MADT reader. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/acpi.c"
#include "hv/cpus_fw.c"

#define RAM_SIZE	(2u << 20)

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static bool sums_to_zero(const uint8_t *p, uint64_t n)
{
	uint8_t s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += p[i];
	return s == 0;
}

/* A system description table at pa: its signature and a length and checksum that hold. */
static bool tbl_ok(const uint8_t *ram, uint64_t pa, const char *sig)
{
	return pa && pa < RAM_SIZE && !memcmp(ram + pa, sig, 4) && le(ram + pa + 4, 4) >= 36 &&
	       sums_to_zero(ram + pa, le(ram + pa + 4, 4));
}

/* ACPI 6.5 5.2.5.1: the OS scans 0xE0000-0xFFFFF on 16-byte boundaries for "RSD PTR ". */
static uint64_t find_rsdp(const uint8_t *ram)
{
	for (uint64_t pa = 0xE0000; pa < 0x100000; pa += 16)
		if (!memcmp(ram + pa, "RSD PTR ", 8))
			return pa;
	return 0;
}

static void parse_back(uint8_t *ram, unsigned nvcpus)
{
	uint64_t rsdp, xsdt, rsdt, fadt = 0, madt = 0, facs, dsdt;
	const uint8_t *e, *end;
	unsigned lapics = 0, ioapics = 0, bad_ids = 0;

	rsdp = find_rsdp(ram);
	check(rsdp && sums_to_zero(ram + rsdp, 20) && ram[rsdp + 15] == 2 &&
	      le(ram + rsdp + 20, 4) == 36 && sums_to_zero(ram + rsdp, 36),
	      "%u vcpus: RSDP revision 2 found, both checksums right", nvcpus);
	rsdt = le(ram + rsdp + 16, 4);
	xsdt = le(ram + rsdp + 24, 8);
	check(tbl_ok(ram, rsdt, "RSDT") && tbl_ok(ram, xsdt, "XSDT"), "RSDT and XSDT valid");
	for (unsigned i = 0; i < (le(ram + xsdt + 4, 4) - 36) / 8; i++) {
		uint64_t t = le(ram + xsdt + 36 + 8 * i, 8);

		fadt = !memcmp(ram + t, "FACP", 4) ? t : fadt;
		madt = !memcmp(ram + t, "APIC", 4) ? t : madt;
	}
	check(tbl_ok(ram, fadt, "FACP") && ram[fadt + 8] == 6 && le(ram + fadt + 4, 4) == 276,
	      "XSDT lists a revision 6 FADT, checksum right");
	check(le(ram + rsdt + 36, 4) == fadt && le(ram + rsdt + 40, 4) == madt,
	      "RSDT lists the same FADT and MADT");
	facs = le(ram + fadt + 132, 8);
	dsdt = le(ram + fadt + 140, 8);
	check(facs && facs == le(ram + fadt + 36, 4) && facs % 64 == 0 &&
	      !memcmp(ram + facs, "FACS", 4) && le(ram + facs + 4, 4) == 64,
	      "FADT's FIRMWARE_CTRL and X_FIRMWARE_CTRL name one 64-byte aligned FACS");
	check(dsdt == le(ram + fadt + 40, 4) && tbl_ok(ram, dsdt, "DSDT"),
	      "FADT's DSDT and X_DSDT name one valid DSDT");
	check(le(ram + fadt + 112, 4) & (1u << 20), "FADT says hardware-reduced ACPI (no PM timer)");
	check(tbl_ok(ram, madt, "APIC") && le(ram + madt + 36, 4) == 0xFEE00000,
	      "MADT valid, local APICs at 0xFEE00000");
	end = ram + madt + le(ram + madt + 4, 4);
	for (e = ram + madt + 44; e < end && e[1]; e += e[1]) {
		if (e[0] == 0) {
			bad_ids += e[3] != lapics || !(le(e + 4, 4) & 1);
			lapics++;
		} else if (e[0] == 1) {
			ioapics += le(e + 4, 4) == 0xFEC00000 && le(e + 8, 4) == 0;
		}
	}
	check(e == end && lapics == nvcpus && !bad_ids,
	      "MADT: one enabled local APIC per VCPU, IDs 0..%u", nvcpus - 1);
	check(ioapics == 1, "MADT: one I/O APIC at 0xFEC00000, GSI base 0");
}

/* ACPI 6.5 20.2.4: a PkgLength, one to four bytes; *at moves past it. */
static unsigned pkg_len(const uint8_t *p, unsigned *at)
{
	unsigned extra = p[*at] >> 6, len = extra ? p[*at] & 0x0f : p[*at] & 0x3f;

	for (unsigned i = 1; i <= extra; i++)
		len |= (unsigned)p[*at + i] << (4 + 8 * (i - 1));
	*at += 1 + extra;
	return len;
}

/* ACPI 6.5 19.3.4 EISAID: three letters of 5 bits from 'A' = 1, then four hex digits. */
static uint32_t eisa_id(const char *s)
{
	unsigned v = (s[0] - '@') << 10 | (s[1] - '@') << 5 | (s[2] - '@');
	unsigned prod = (unsigned)strtoul(s + 3, NULL, 16);

	return (v >> 8) | (v & 0xff) << 8 | (prod >> 8) << 16 | (prod & 0xff) << 24;
}

/*
 * The DSDT's AML read back: \_SB.COM1 with _HID PNP0501 and a _CRS of I/O ports 0x3F8-0x3FF and
 * IRQ 4 (6.4.2.5, 6.4.2.1), the package lengths filling the table exactly.
 */
static void dsdt_com1_back(const uint8_t *ram)
{
	const uint8_t *t = ram + le(ram + le(ram + find_rsdp(ram) + 24, 8) + 36, 8);
	const uint8_t *d = ram + le(t + 140, 8);
	unsigned n = (unsigned)le(d + 4, 4), at = 36, end, dev_end;
	uint32_t hid = 0;
	int io = 0, irq = 0;

	check(d[at] == 0x10, "DSDT: the AML begins with a Scope");
	at++;
	end = at + pkg_len(d, &at) - 1;
	check(end == n && !memcmp(d + at, "_SB_", 4), "DSDT: Scope (\\_SB) fills the table");
	at += 4;
	check(d[at] == 0x5b && d[at + 1] == 0x82, "DSDT: a Device in it");
	at += 2;
	dev_end = at + pkg_len(d, &at) - 1;
	check(dev_end == end && !memcmp(d + at, "COM1", 4), "DSDT: Device (COM1) fills the Scope");
	for (at += 4; at < dev_end && d[at] == 0x08;) {
		const uint8_t *name = d + at + 1;

		at += 5;
		if (!memcmp(name, "_HID", 4) && d[at] == 0x0c) {
			hid = (uint32_t)le(d + at + 1, 4);
			at += 5;
		} else if (!memcmp(name, "_UID", 4) && d[at] <= 1) {
			at++;
		} else if (!memcmp(name, "_CRS", 4) && d[at] == 0x11) {
			unsigned r, buf_end;

			at++;
			buf_end = at + pkg_len(d, &at) - 1;
			r = at + 2;
			for (; r < buf_end && d[r] != 0x79; r += 1 + (d[r] & 7)) {
				io += d[r] == 0x47 && le(d + r + 2, 2) == 0x3f8 &&
				      le(d + r + 4, 2) == 0x3f8 && d[r + 7] == 8;
				irq += (d[r] & 0xf8) == 0x20 && le(d + r + 1, 2) == 1u << 4;
			}
			at = buf_end;
		} else {
			break;
		}
	}
	check(at == dev_end, "DSDT: COM1 holds only Name objects, each parsed (%u of %u)", at,
	      dev_end);
	check(hid == eisa_id("PNP0501"), "COM1's _HID is EisaId (\"PNP0501\"), a 16550A UART");
	check(io == 1 && irq == 1, "COM1's _CRS: I/O 0x3F8, 8 ports, and IRQ 4");
}

/* perfvisor's own reader of host firmware tables finds the same CPUs. */
static void host_reader(uint8_t *ram, unsigned nvcpus)
{
	struct fw_window w = { .base = ram, .pa = 0, .size = RAM_SIZE };
	struct fw_cpus cpus;
	const char *why = fw_cpus_find(&w, &cpus);
	bool ids = true;

	for (unsigned i = 0; i < cpus.count; i++)
		ids &= cpus.apic_id[i] == i;
	check(!why && cpus.count == nvcpus && ids && cpus.nnotes == 0 &&
	      !strcmp(cpus.source, "ACPI MADT") && cpus.lapic_base == 0xFEE00000,
	      "hv/cpus_fw.c reads %u CPUs from them with no complaint (%s)", nvcpus,
	      why ? why : "ok");
}

int main(void)
{
	uint8_t *ram = malloc(RAM_SIZE), *copy = malloc(RAM_SIZE);
	static const unsigned counts[] = { 1, 2, 8 };
	bool outside = true;

	for (unsigned i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		memset(ram, 0xcc, RAM_SIZE);
		check(acpi_build(ram, RAM_SIZE, counts[i]) == NULL, "built for %u vcpus", counts[i]);
		for (uint64_t pa = 0; pa < RAM_SIZE; pa++)
			outside &= (pa >= 0xE0000 && pa < 0x100000) || ram[pa] == 0xcc;
		parse_back(ram, counts[i]);
		dsdt_com1_back(ram);
		host_reader(ram, counts[i]);
	}
	check(outside, "nothing written outside 0xE0000-0xFFFFF");
	memset(ram, 0xcc, RAM_SIZE);
	memcpy(copy, ram, RAM_SIZE);
	check(acpi_build(ram, 0x80000, 1) && acpi_build(ram, RAM_SIZE, 0) &&
	      acpi_build(ram, RAM_SIZE, 26) && !memcmp(ram, copy, RAM_SIZE),
	      "refused: RAM below 1 MiB, 0 VCPUs, more than the MADT area holds; RAM untouched");
	free(ram);
	free(copy);
	return unit_summary();
}
