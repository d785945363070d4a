/* Unit tests for hv/cpus_fw.c: CPU discovery from fake ACPI and MP tables in a buffer. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hv/cpus_fw.c"
#include "tests/unit/unit.h"

/* The buffer stands for physical 0..2 MiB: BIOS area below 1 MiB, "high" tables above. */
#define MEM_SIZE	0x200000u
#define ROM_RSDP	0xF0010u
#define RSDT_PA		0x100000u
#define FACP_PA		0x100100u
#define MADT_PA		0x100200u
#define MPFP_PA		0xF5000u
#define MPC_PA		0xF5100u

static uint8_t *mem;
static struct fw_window win;
static struct fw_cpus cpus;

static void put(uint64_t pa, uint64_t v, unsigned n)
{
	while (n--) {
		mem[pa++] = v;
		v >>= 8;
	}
}

static uint64_t get(uint64_t pa, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | mem[pa + n];
	return v;
}

static void put_str(uint64_t pa, const char *s)
{
	memcpy(mem + pa, s, strlen(s));
}

/* Set the byte at pa + at so that the len bytes from pa add up to 0. */
static void fix_sum(uint64_t pa, uint64_t len, uint64_t at)
{
	uint8_t s = 0;
	uint64_t i;

	mem[pa + at] = 0;
	for (i = 0; i < len; i++)
		s += mem[pa + i];
	mem[pa + at] = -s;
}

static void fresh(void)
{
	memset(mem, 0, MEM_SIZE);
	win = (struct fw_window){ .base = mem, .pa = 0, .size = MEM_SIZE };
}

static void rsdp(uint64_t pa, unsigned rev, uint32_t rsdt, uint64_t xsdt)
{
	put_str(pa, "RSD PTR ");
	put_str(pa + 9, "PVTEST");
	mem[pa + 15] = rev;
	put(pa + 16, rsdt, 4);
	fix_sum(pa, 20, 8);
	if (rev >= 2) {
		put(pa + 20, 36, 4);
		put(pa + 24, xsdt, 8);
		fix_sum(pa, 36, 32);
	}
}

/* An ACPI table header; sdt_seal() sets the checksum once the body is written. */
static void sdt(uint64_t pa, const char *sig, uint32_t len)
{
	put_str(pa, sig);
	put(pa + 4, len, 4);
	mem[pa + 8] = 1;
	put_str(pa + 10, "PVTEST");
}

static void sdt_seal(uint64_t pa)
{
	fix_sum(pa, get(pa + 4, 4), 9);
}

/* An RSDT (esize 4) or XSDT (esize 8) listing n tables. */
static void root(uint64_t pa, const char *sig, unsigned esize, unsigned n, const uint64_t *tables)
{
	unsigned i;

	sdt(pa, sig, 36 + n * esize);
	for (i = 0; i < n; i++)
		put(pa + 36 + i * esize, tables[i], esize);
	sdt_seal(pa);
}

static uint64_t madt_pa, madt_end;

static void madt_begin(uint64_t pa, uint32_t lapic)
{
	madt_pa = pa;
	madt_end = pa + 44;
	put(pa + 36, lapic, 4);
	put(pa + 40, 1, 4);	/* PCAT_COMPAT */
}

/* Close a structure of type and len bytes whose body the caller has written. */
static void madt_raw(unsigned type, unsigned len)
{
	mem[madt_end] = type;
	mem[madt_end + 1] = len;
	madt_end += len < 2 ? 2 : len;
}

static void madt_lapic(uint8_t id, uint32_t flags)
{
	put(madt_end + 2, id, 1);	/* processor UID */
	put(madt_end + 3, id, 1);
	put(madt_end + 4, flags, 4);
	madt_raw(0, 8);
}

static void madt_x2apic(uint32_t id, uint32_t flags)
{
	put(madt_end + 4, id, 4);
	put(madt_end + 8, flags, 4);
	put(madt_end + 12, id, 4);
	madt_raw(9, 16);
}

static void madt_seal(void)
{
	sdt(madt_pa, "APIC", madt_end - madt_pa);
	sdt_seal(madt_pa);
}

/* RSDP in the BIOS area -> RSDT -> { FACP, MADT }. The caller fills and seals the MADT. */
static void acpi_skeleton(void)
{
	const uint64_t tables[] = { FACP_PA, MADT_PA };

	fresh();
	rsdp(ROM_RSDP, 0, RSDT_PA, 0);
	root(RSDT_PA, "RSDT", 4, 2, tables);
	sdt(FACP_PA, "FACP", 116);
	sdt_seal(FACP_PA);
	madt_begin(MADT_PA, 0xFEC01000);
}

/* Three CPUs usable (0, 2, x2APIC 0x100), one disabled (1), and an I/O APIC. */
static void acpi_standard(void)
{
	acpi_skeleton();
	madt_lapic(0, 1);
	madt_lapic(1, 0);
	madt_raw(1, 12);
	madt_lapic(2, 1);
	madt_x2apic(0x100, 1);
	madt_seal();
}

static void mpfp(uint64_t pa, uint32_t table, uint8_t feature1)
{
	put_str(pa, "_MP_");
	put(pa + 4, table, 4);
	mem[pa + 8] = 1;
	mem[pa + 9] = 4;
	mem[pa + 11] = feature1;
	fix_sum(pa, 16, 10);
}

static uint64_t mpc_pa, mpc_end;
static unsigned mpc_n;

static void mpc_begin(uint64_t pa)
{
	mpc_pa = pa;
	mpc_end = pa + 44;
	mpc_n = 0;
	put_str(pa, "PCMP");
	mem[pa + 6] = 4;
	put(pa + 36, 0xFEE0A000, 4);
}

static void mpc_raw(unsigned type, unsigned len)
{
	mem[mpc_end] = type;
	mpc_end += len;
	mpc_n++;
}

static void mpc_cpu(uint8_t id, uint8_t flags)
{
	mem[mpc_end + 1] = id;
	mem[mpc_end + 2] = 0x14;
	mem[mpc_end + 3] = flags;
	mpc_raw(0, 20);
}

static void mpc_seal(void)
{
	put(mpc_pa + 4, mpc_end - mpc_pa, 2);
	put(mpc_pa + 34, mpc_n, 2);
	fix_sum(mpc_pa, mpc_end - mpc_pa, 7);
}

/* An MP table with CPU 5, disabled CPU 4, BSP 3, a bus and an I/O APIC entry. */
static void mp_standard(uint64_t fp)
{
	mpfp(fp, MPC_PA, 0);
	mpc_begin(MPC_PA);
	mpc_cpu(5, 1);
	mpc_cpu(4, 0);
	mpc_cpu(3, 3);
	mpc_raw(1, 8);
	mpc_raw(2, 8);
	mpc_seal();
}

static const char *run(void)
{
	memset(&cpus, 0xA5, sizeof(cpus));
	return fw_cpus_find(&win, &cpus);
}

static bool has_note(const char *what, const char *why, uint64_t pa)
{
	unsigned i;

	for (i = 0; i < cpus.nnotes && i < FW_NOTES_MAX; i++)
		if (!strcmp(cpus.notes[i].what, what) && strstr(cpus.notes[i].why, why) &&
		    cpus.notes[i].pa == pa)
			return true;
	return false;
}

static bool ids_are(unsigned n, const uint32_t *ids)
{
	return cpus.count == n && !memcmp(cpus.apic_id, ids, n * sizeof(*ids));
}

static void test_acpi(void)
{
	static const uint32_t std_ids[] = { 0, 2, 0x100 };
	const char *err;

	acpi_standard();
	err = run();
	check(!err, "MADT: found (%s)", err ? err : "ok");
	check(ids_are(3, std_ids), "MADT: enabled xAPIC and x2APIC IDs, disabled one left out");
	check(cpus.bsp_index == 0 && cpus.not_enabled == 0, "MADT: BSP is the first entry");
	check(cpus.lapic_base == 0xFEC01000, "MADT: local APIC address from the header");
	check(cpus.source && !strcmp(cpus.source, "ACPI MADT"), "MADT: source named");
	check(cpus.nnotes == 0 && cpus.dropped == 0, "MADT: nothing skipped");

	acpi_skeleton();
	madt_lapic(7, 2);	/* online-capable only: listed first, yet not the BSP */
	madt_lapic(6, 1);
	madt_x2apic(6, 1);	/* the same CPU again */
	madt_raw(5, 12);
	put(madt_end - 8, 0x123456789000ull, 8);
	madt_seal();
	err = run();
	check(!err && cpus.count == 2 && cpus.apic_id[0] == 7 && cpus.apic_id[1] == 6,
	      "MADT: online-capable kept, duplicate ID counted once");
	check(cpus.not_enabled == 1 && cpus.bsp_index == 1, "MADT: online-capable flagged, not BSP");
	check(cpus.lapic_base == 0x123456789000ull, "MADT: type 5 overrides the APIC address");

	/* RSDP in the EBDA wins over one in the BIOS area. */
	acpi_standard();
	put(0x40E, 0x9FC0, 2);
	rsdp(0x9FC00 + 0x3F0, 0, RSDT_PA, 0);
	mem[ROM_RSDP] = 'X';
	err = run();
	check(!err && cpus.count == 3, "RSDP: found in the first KiB of the EBDA");
	rsdp(0x9FC00 + 0x3F0, 0, 0x1FFFF0, 0);
	rsdp(ROM_RSDP, 0, RSDT_PA, 0);
	err = run();
	check(err && has_note("ACPI RSDT", "window", 0x1FFFF0) && cpus.count == 0,
	      "RSDP: the first valid one is used (EBDA)");
	memset(mem + 0x9FC00, 0, 0x400);
	rsdp(0x9FC00 + 0x400, 0, RSDT_PA, 0);
	mem[ROM_RSDP] = 'X';
	check(run() != NULL, "RSDP: not looked for past the first KiB of the EBDA");

	acpi_standard();
	rsdp(ROM_RSDP, 0, RSDT_PA, 0);
	mem[ROM_RSDP + 19] ^= 1;
	rsdp(0xFFFE0, 0, RSDT_PA, 0);
	err = run();
	check(!err && has_note("ACPI RSDP", "bad checksum", ROM_RSDP),
	      "RSDP: bad checksum skipped with a note, the next one used");
	acpi_standard();
	memmove(mem + ROM_RSDP + 4, mem + ROM_RSDP, 20);
	memset(mem + ROM_RSDP, 0, 4);
	check(run() != NULL, "RSDP: only on 16-byte boundaries");
}

static void test_xsdt(void)
{
	const uint64_t x_tables[] = { 0x110000 };
	const char *err;

	/* XSDT -> MADT at 0x110000 with CPU 9; RSDT -> the standard MADT. */
	acpi_standard();
	madt_begin(0x110000, 0xFEE00000);
	madt_lapic(9, 1);
	madt_seal();
	root(0x108000, "XSDT", 8, 1, x_tables);
	rsdp(ROM_RSDP, 2, RSDT_PA, 0x108000);
	err = run();
	check(!err && cpus.count == 1 && cpus.apic_id[0] == 9, "XSDT: preferred over the RSDT");
	rsdp(ROM_RSDP, 2, RSDT_PA, 0x100000000ull);
	err = run();
	check(!err && cpus.count == 3 && has_note("ACPI XSDT", "window", 0x100000000ull),
	      "XSDT: outside the window, RSDT used");
	rsdp(ROM_RSDP, 2, RSDT_PA, 0x108000);
	mem[ROM_RSDP + 30] ^= 1;
	err = run();
	check(!err && cpus.count == 3 && has_note("ACPI RSDP", "extended checksum", ROM_RSDP),
	      "XSDT: bad extended checksum, RSDT used");
	rsdp(ROM_RSDP, 2, RSDT_PA, 0x108000);
	mem[0x108000 + 40] ^= 1;
	err = run();
	check(!err && cpus.count == 3 && has_note("ACPI XSDT", "bad checksum", 0x108000),
	      "XSDT: bad checksum, RSDT used");
}

static void test_acpi_bad(void)
{
	const uint64_t far[] = { 0x300000, MADT_PA };
	unsigned i;

	acpi_standard();
	mem[RSDT_PA + 20] ^= 1;
	check(run() != NULL && has_note("ACPI RSDT", "bad checksum", RSDT_PA) && cpus.count == 0,
	      "RSDT: bad checksum, nothing trusted");
	acpi_standard();
	put(RSDT_PA + 4, 0xFFFFFFF0, 4);
	check(run() != NULL && has_note("ACPI RSDT", "length out of range", RSDT_PA),
	      "RSDT: absurd length refused");
	acpi_standard();
	put(RSDT_PA + 4, 20, 4);
	check(run() != NULL && has_note("ACPI RSDT", "length out of range", RSDT_PA),
	      "RSDT: length shorter than its header refused");
	acpi_standard();
	root(MEM_SIZE - 64, "RSDT", 4, 2, far);
	put(MEM_SIZE - 64 + 4, 128, 4);
	rsdp(ROM_RSDP, 0, MEM_SIZE - 64, 0);
	check(run() != NULL && has_note("ACPI RSDT", "window", MEM_SIZE - 64),
	      "RSDT: length reaching past the window refused");
	rsdp(ROM_RSDP, 0, MEM_SIZE - 20, 0);
	check(run() != NULL && has_note("ACPI RSDT", "window", MEM_SIZE - 20),
	      "RSDT: header straddling the window end refused");
	rsdp(ROM_RSDP, 0, FACP_PA, 0);
	check(run() != NULL && has_note("ACPI RSDT", "wrong signature", FACP_PA),
	      "RSDT: wrong signature refused");

	acpi_standard();
	root(RSDT_PA, "RSDT", 4, 2, far);
	check(!run() && cpus.count == 3 && has_note("ACPI table", "window", 0x300000),
	      "RSDT: entry outside the window skipped, the others used");

	acpi_standard();
	mem[MADT_PA + 50] ^= 1;
	check(run() != NULL && has_note("ACPI MADT", "bad checksum", MADT_PA),
	      "MADT: bad checksum refused");
	acpi_standard();
	put(MADT_PA + 4, 40, 4);
	sdt_seal(MADT_PA);
	check(run() != NULL && has_note("ACPI MADT", "length out of range", MADT_PA),
	      "MADT: shorter than its fixed fields refused");
	acpi_standard();
	madt_pa = MEM_SIZE - 60;
	madt_end = madt_pa + 44;
	madt_lapic(0, 1);
	madt_lapic(1, 1);
	sdt(madt_pa, "APIC", 44 + 16);
	put(madt_pa + 4, 0x1000, 4);
	root(RSDT_PA, "RSDT", 4, 1, (const uint64_t[]){ madt_pa });
	check(run() != NULL && has_note("ACPI MADT", "window", madt_pa),
	      "MADT: truncated by the window end refused");

	acpi_skeleton();
	madt_lapic(0, 1);
	madt_raw(0, 0);
	madt_lapic(1, 1);
	madt_seal();
	check(run() != NULL && has_note("ACPI MADT", "bad structure length", MADT_PA + 52) &&
	      cpus.count == 0, "MADT: structure of length 0 stops the walk, table refused");
	acpi_skeleton();
	madt_lapic(0, 1);
	madt_raw(0, 4);
	madt_seal();
	check(run() != NULL && has_note("ACPI MADT", "bad structure length", MADT_PA + 52),
	      "MADT: processor structure shorter than 8 bytes refused");
	acpi_skeleton();
	madt_lapic(0, 1);
	madt_raw(9, 16);
	madt_seal();
	put(MADT_PA + 4, get(MADT_PA + 4, 4) - 4, 4);
	sdt_seal(MADT_PA);
	check(run() != NULL && has_note("ACPI MADT", "bad structure length", MADT_PA + 52),
	      "MADT: structure running past the table end refused");
	acpi_skeleton();
	madt_lapic(0, 1);
	madt_seal();
	put(MADT_PA + 4, get(MADT_PA + 4, 4) + 1, 4);
	sdt_seal(MADT_PA);
	check(run() != NULL && has_note("ACPI MADT", "bad structure length", MADT_PA + 52),
	      "MADT: one stray byte at the end refused");

	acpi_skeleton();
	for (i = 0; i < 70; i++)
		madt_x2apic(1000 + i, 1);
	madt_seal();
	check(!run() && cpus.count == FW_CPUS_MAX && cpus.dropped == 6 && cpus.apic_id[63] == 1063 &&
	      cpus.nnotes == 1 && has_note("ACPI MADT", "too many", MADT_PA),
	      "MADT: 70 CPUs truncated to 64, with a note");
}

static void test_mp(void)
{
	static const uint32_t mp_ids[] = { 5, 3 };
	const char *err;

	fresh();
	mp_standard(MPFP_PA);
	err = run();
	check(!err && ids_are(2, mp_ids) && cpus.bsp_index == 1, "MP: enabled CPUs, BSP flag");
	check(cpus.lapic_base == 0xFEE0A000 && cpus.source && !strcmp(cpus.source, "MP table"),
	      "MP: APIC address and source");
	check(has_note("ACPI RSDP", "not found", 0), "MP: used because no RSDP");

	/* A MADT without a usable CPU falls back to the MP table. */
	acpi_skeleton();
	madt_lapic(0, 0);
	madt_seal();
	mp_standard(MPFP_PA);
	err = run();
	check(!err && cpus.count == 2 && has_note("ACPI MADT", "no usable CPU", MADT_PA),
	      "MP: used when the MADT lists no usable CPU");

	fresh();
	put(0x413, 640, 2);
	mp_standard(639 * 1024);
	check(!run() && cpus.count == 2, "MP: found in the last KiB of base memory");
	put(0x413, 0, 2);
	check(run() != NULL, "MP: base memory end not searched when its size is unknown");

	fresh();
	mp_standard(MPFP_PA);
	mem[MPFP_PA + 12] ^= 1;
	check(run() != NULL && has_note("MP floating pointer", "bad checksum", MPFP_PA),
	      "MP: floating pointer with a bad checksum refused");
	fresh();
	mp_standard(MPFP_PA);
	mem[MPFP_PA + 8] = 2;
	fix_sum(MPFP_PA, 16, 10);
	check(run() != NULL && has_note("MP floating pointer", "length", MPFP_PA),
	      "MP: floating pointer longer than 16 bytes refused");
	fresh();
	mpfp(MPFP_PA, 0, 5);
	check(run() != NULL && has_note("MP floating pointer", "default configuration", MPFP_PA),
	      "MP: default configuration reported");
	fresh();
	mp_standard(MPFP_PA);
	mem[MPC_PA + 60] ^= 1;
	check(run() != NULL && has_note("MP configuration table", "bad checksum", MPC_PA),
	      "MP: configuration table with a bad checksum refused");
	fresh();
	mp_standard(MPFP_PA);
	mem[MPC_PA + 44 + 40] = 7;
	fix_sum(MPC_PA, mpc_end - MPC_PA, 7);
	check(run() != NULL && has_note("MP configuration table", "unknown entry", MPC_PA + 84),
	      "MP: unknown entry type refused");
	fresh();
	mp_standard(MPFP_PA);
	put(MPC_PA + 34, mpc_n + 1, 2);
	fix_sum(MPC_PA, mpc_end - MPC_PA, 7);
	check(run() != NULL && has_note("MP configuration table", "overrun", mpc_end),
	      "MP: entry count beyond the table length refused");
	fresh();
	mp_standard(MPFP_PA);
	put(MPC_PA + 4, 0xFFFF, 2);
	fix_sum(MPC_PA, mpc_end - MPC_PA, 7);
	win.size = MPC_PA + 0x1000;
	check(run() != NULL && has_note("MP configuration table", "window", MPC_PA),
	      "MP: table length past the window refused");
}

static void test_nothing(void)
{
	const char *err;
	unsigned i;

	fresh();
	err = run();
	check(err && strstr(err, "no usable") && cpus.count == 0 && cpus.source == NULL &&
	      cpus.bsp_index == -1, "nothing found: error and an empty result");
	check(has_note("ACPI RSDP", "not found", 0) && has_note("MP floating pointer", "not found", 0),
	      "nothing found: both searches noted");

	/* Many bad candidates: notes are counted, only FW_NOTES_MAX kept. */
	for (i = 0; i < 12; i++)
		put_str(0xE0000 + 16 * i, "RSD PTR ");
	check(run() != NULL && cpus.nnotes == 14 && has_note("ACPI RSDP", "bad checksum", 0xE0070),
	      "notes: counted past the array, the first ones kept");

	/* A window that starts at the BIOS area and has no BIOS data area. */
	acpi_standard();
	win = (struct fw_window){ .base = mem + 0xE0000, .pa = 0xE0000, .size = 0x40000 };
	check(!run() && cpus.count == 3, "window: not at 0, tables found through it");
	win = (struct fw_window){ .base = mem + 0xE0000, .pa = 0xE0000, .size = 0x20210 };
	check(run() != NULL && has_note("ACPI MADT", "window", MADT_PA),
	      "window: MADT just past its end refused");
}

int main(void)
{
	/* A walk that never advances must fail the run, not hang it. */
	alarm(20);
	mem = malloc(MEM_SIZE);
	if (!mem)
		return 2;
	test_acpi();
	test_xsdt();
	test_acpi_bad();
	test_mp();
	test_nothing();
	free(mem);
	return unit_summary();
}
