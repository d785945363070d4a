/* Finds the CPUs' local APIC IDs in the firmware tables: the ACPI MADT, else the Intel MP table. */
#include "hv/cpus_fw.h"

#include <stddef.h>

/* No table is checksummed beyond this: an absurd length would walk through MMIO. */
#define TABLE_MAX		(1u << 20)

/* BIOS data area: EBDA segment and base memory size in KiB. */
#define BDA_EBDA_SEG		0x40E
#define BDA_BASE_KIB		0x413
#define BASE_KIB_MAX		640
#define KIB			1024
/* ACPI 6.x 5.2.5.1 and MP spec 1.4 chapter 4: the BIOS read-only area, 16-byte aligned. */
#define ROM_AREA		0xE0000
#define ROM_AREA_LEN		0x20000
#define SEARCH_STEP		16

/* ACPI 6.x 5.2.5.3: Root System Description Pointer. */
#define RSDP_V1_LEN		20
#define RSDP_REVISION		15
#define RSDP_RSDT		16
#define RSDP_LENGTH		20
#define RSDP_XSDT		24
#define RSDP_V2_LEN		36

/* ACPI 6.x 5.2.6: System Description Table header. */
#define SDT_HDR_LEN		36
#define TABLE_LENGTH		4	/* also the MP configuration table's, 16 bits there */

/* ACPI 6.x 5.2.12: MADT, then interrupt controller structures of (type, length, ...). */
#define MADT_LAPIC_ADDR		36
#define MADT_ENTRIES		44
#define MADT_LAPIC		0	/* 5.2.12.2 */
#define MADT_LAPIC_OVERRIDE	5	/* 5.2.12.8 */
#define MADT_X2APIC		9	/* 5.2.12.12 */
#define MADT_ENABLED		(1u << 0)	/* Table "Local APIC Flags" */
#define MADT_ONLINE_CAPABLE	(1u << 1)	/* ACPI 6.3 onwards */

/* MP spec 1.4, 4.1: MP floating pointer structure. */
#define MPFP_LEN		16
#define MPFP_TABLE		4
#define MPFP_PARAGRAPHS		8
#define MPFP_FEATURE1		11

/* MP spec 1.4, 4.2 and 4.3: configuration table header and base entries. */
#define MPC_HDR_LEN		44
#define MPC_LENGTH_SIZE		2
#define MPC_ENTRY_COUNT		34
#define MPC_LAPIC_ADDR		36
#define MPC_PROCESSOR		0	/* 4.3.1, 20 bytes */
#define MPC_PROCESSOR_LEN	20
#define MPC_LAST_TYPE		4	/* bus, I/O APIC, I/O and local interrupt: 8 bytes each */
#define MPC_OTHER_LEN		8
#define MPC_CPU_EN		(1u << 0)
#define MPC_CPU_BP		(1u << 1)

_Static_assert(FW_CPUS_MAX <= 64, "not_enabled is a 64-bit mask");

static const char no_fit[] = "does not fit in the memory window";

/* True when [pa, pa + len) lies inside the window; in offsets from its start, never overflowing. */
static bool fits(const struct fw_window *w, uint64_t pa, uint64_t len)
{
	return pa >= w->pa && len <= w->size && pa - w->pa <= w->size - len;
}

/* Only for ranges fits() accepted. Through an integer, so a window at address 0 is ordinary. */
static const uint8_t *at(const struct fw_window *w, uint64_t pa)
{
	return (const uint8_t *)((uintptr_t)w->base + (uintptr_t)(pa - w->pa));
}

/* Little-endian read of n bytes: firmware tables are packed, fields unaligned. */
static uint64_t rd(const struct fw_window *w, uint64_t pa, unsigned n)
{
	const uint8_t *p = at(w, pa);
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* ACPI and MP checksums alike: all bytes, checksum included, add up to 0. */
static uint8_t sum(const struct fw_window *w, uint64_t pa, uint64_t len)
{
	const uint8_t *p = at(w, pa);
	uint8_t s = 0;

	while (len--)
		s += *p++;
	return s;
}

static bool sig_is(const struct fw_window *w, uint64_t pa, const char *sig, size_t len)
{
	return __builtin_memcmp(at(w, pa), sig, len) == 0;
}

static void note(struct fw_cpus *out, const char *what, const char *why, uint64_t pa)
{
	if (out->nnotes < FW_NOTES_MAX)
		out->notes[out->nnotes] = (struct fw_note){ .what = what, .why = why, .pa = pa };
	out->nnotes++;
}

/* Start a table afresh, forgetting one that turned out unusable; the notes stay. */
static void reset(struct fw_cpus *out)
{
	out->count = 0;
	out->not_enabled = 0;
	out->bsp_index = -1;
	out->lapic_base = 0;
	out->source = NULL;
	out->dropped = 0;
}

/*
 * Record a usable CPU; returns its index, or -1 when the list is full. An ID listed
 * twice (firmware may give both an xAPIC and an x2APIC entry) is recorded once.
 */
static int add_cpu(struct fw_cpus *out, uint32_t id, bool enabled, const char *what,
		   uint64_t table)
{
	unsigned i;

	for (i = 0; i < out->count; i++)
		if (out->apic_id[i] == id)
			return i;
	if (out->count == FW_CPUS_MAX) {
		if (!out->dropped++)
			note(out, what, "too many CPUs: the rest are ignored", table);
		return -1;
	}
	if (!enabled)
		out->not_enabled |= 1ull << out->count;
	out->apic_id[out->count] = id;
	return out->count++;
}

/*
 * The checks every table gets: a header of min_len bytes in the window, the signature,
 * a length (lsize bytes at offset 4) from min_len to TABLE_MAX that fits, a zero sum.
 * Returns the length, or 0 when the table must be skipped.
 */
static uint32_t table_ok(const struct fw_window *w, uint64_t pa, const char *sig, unsigned lsize,
			 uint32_t min_len, const char *what, struct fw_cpus *out)
{
	uint32_t len;

	if (!fits(w, pa, min_len)) {
		note(out, what, no_fit, pa);
		return 0;
	}
	if (!sig_is(w, pa, sig, 4)) {
		note(out, what, "wrong signature", pa);
		return 0;
	}
	len = rd(w, pa + TABLE_LENGTH, lsize);
	if (len < min_len || len > TABLE_MAX) {
		note(out, what, "length out of range", pa);
		return 0;
	}
	if (!fits(w, pa, len)) {
		note(out, what, no_fit, pa);
		return 0;
	}
	if (sum(w, pa, len)) {
		note(out, what, "bad checksum", pa);
		return 0;
	}
	return len;
}

typedef bool (*check_fn)(const struct fw_window *w, uint64_t pa, struct fw_cpus *out);

/* Scan [start, start + len) on 16-byte boundaries for sig at a structure that passes check. */
static bool scan(const struct fw_window *w, uint64_t start, uint64_t len, const char *sig,
		 size_t sig_len, check_fn check, struct fw_cpus *out, uint64_t *found)
{
	uint64_t pa;

	for (pa = start; pa < start + len; pa += SEARCH_STEP) {
		if (fits(w, pa, SEARCH_STEP) && sig_is(w, pa, sig, sig_len) && check(w, pa, out)) {
			*found = pa;
			return true;
		}
	}
	return false;
}

/*
 * ACPI 6.x 5.2.5.1 and MP spec 1.4 chapter 4: the first KiB of the EBDA, for the MP
 * floating pointer also the last KiB of base memory, then the BIOS area.
 */
static bool search(const struct fw_window *w, const char *sig, size_t sig_len,
		   bool base_mem_end, check_fn check, struct fw_cpus *out, uint64_t *found)
{
	uint64_t ebda = 0, kib;

	if (fits(w, BDA_EBDA_SEG, 2)) {
		ebda = rd(w, BDA_EBDA_SEG, 2) << 4;
		if (ebda && scan(w, ebda, KIB, sig, sig_len, check, out, found))
			return true;
	}
	if (base_mem_end && fits(w, BDA_BASE_KIB, 2)) {
		kib = rd(w, BDA_BASE_KIB, 2);
		if (kib && kib <= BASE_KIB_MAX && (kib - 1) * KIB != ebda &&
		    scan(w, (kib - 1) * KIB, KIB, sig, sig_len, check, out, found))
			return true;
	}
	return scan(w, ROM_AREA, ROM_AREA_LEN, sig, sig_len, check, out, found);
}

/* ACPI 6.x 5.2.5.3: the checksum covers the first 20 bytes (ACPI 1.0 fields). */
static bool rsdp_ok(const struct fw_window *w, uint64_t pa, struct fw_cpus *out)
{
	if (!fits(w, pa, RSDP_V1_LEN)) {
		note(out, "ACPI RSDP", no_fit, pa);
		return false;
	}
	if (sum(w, pa, RSDP_V1_LEN)) {
		note(out, "ACPI RSDP", "bad checksum", pa);
		return false;
	}
	return true;
}

/* ACPI 6.x 5.2.5.3: revision 2 and later add a length and an extended checksum over it. */
static bool rsdp_v2_ok(const struct fw_window *w, uint64_t pa, struct fw_cpus *out)
{
	uint64_t len;

	if (rd(w, pa + RSDP_REVISION, 1) < 2)
		return false;
	if (!fits(w, pa, RSDP_V2_LEN)) {
		note(out, "ACPI RSDP", no_fit, pa);
		return false;
	}
	len = rd(w, pa + RSDP_LENGTH, 4);
	if (len < RSDP_V2_LEN || len > TABLE_MAX || !fits(w, pa, len)) {
		note(out, "ACPI RSDP", "length out of range, XSDT ignored", pa);
		return false;
	}
	if (sum(w, pa, len)) {
		note(out, "ACPI RSDP", "bad extended checksum, XSDT ignored", pa);
		return false;
	}
	return true;
}

/* Bytes a MADT structure of this type needs for the fields read here (ACPI 6.x 5.2.12.x). */
static unsigned madt_min_len(unsigned type)
{
	switch (type) {
	case MADT_LAPIC:
		return 8;
	case MADT_LAPIC_OVERRIDE:
		return 12;
	case MADT_X2APIC:
		return 16;
	default:
		return 2;
	}
}

/* ACPI 6.x 5.2.12: the local APIC address, then processor (x2)APIC structures. */
static bool madt_parse(const struct fw_window *w, uint64_t madt, struct fw_cpus *out)
{
	static const char what[] = "ACPI MADT";
	uint32_t len = table_ok(w, madt, "APIC", 4, MADT_ENTRIES, what, out);
	uint32_t off, flags, id;
	unsigned type, elen, i;

	if (!len)
		return false;
	reset(out);
	out->lapic_base = rd(w, madt + MADT_LAPIC_ADDR, 4);
	for (off = MADT_ENTRIES; off < len; off += elen) {
		/* A length below 2 would never advance; any bad length means a corrupt table. */
		type = rd(w, madt + off, 1);
		elen = len - off >= 2 ? rd(w, madt + off + 1, 1) : 0;
		if (elen < madt_min_len(type) || elen > len - off) {
			note(out, what, "bad structure length", madt + off);
			return false;
		}
		if (type == MADT_LAPIC) {
			id = rd(w, madt + off + 3, 1);
			flags = rd(w, madt + off + 4, 4);
		} else if (type == MADT_X2APIC) {
			id = rd(w, madt + off + 4, 4);
			flags = rd(w, madt + off + 8, 4);
		} else {
			if (type == MADT_LAPIC_OVERRIDE)
				out->lapic_base = rd(w, madt + off + 4, 8);
			continue;
		}
		if (flags & (MADT_ENABLED | MADT_ONLINE_CAPABLE))
			add_cpu(out, id, flags & MADT_ENABLED, what, madt);
	}
	if (!out->count) {
		note(out, what, "no usable CPU", madt);
		return false;
	}
	/* ACPI 6.x 5.2.12.1: firmware should list the boot processor first. */
	for (i = 0; i < out->count; i++) {
		if (!(out->not_enabled >> i & 1)) {
			out->bsp_index = i;
			break;
		}
	}
	out->source = "ACPI MADT";
	return true;
}

/* ACPI 6.x 5.2.7 (RSDT) and 5.2.8 (XSDT): a header, then table addresses of esize bytes. */
static bool madt_from_root(const struct fw_window *w, uint64_t root, const char *sig,
			   unsigned esize, const char *what, struct fw_cpus *out)
{
	uint32_t len = table_ok(w, root, sig, 4, SDT_HDR_LEN, what, out);
	uint32_t off;
	uint64_t table;

	for (off = SDT_HDR_LEN; len && len - off >= esize; off += esize) {
		table = rd(w, root + off, esize);
		if (!fits(w, table, 4)) {
			note(out, "ACPI table", no_fit, table);
			continue;
		}
		if (sig_is(w, table, "APIC", 4) && madt_parse(w, table, out))
			return true;
	}
	return false;
}

/* The XSDT when the RSDP has a sound one, else (or when it leads nowhere) the RSDT. */
static bool acpi_find(const struct fw_window *w, struct fw_cpus *out)
{
	uint64_t rsdp, xsdt;

	if (!search(w, "RSD PTR ", 8, false, rsdp_ok, out, &rsdp)) {
		note(out, "ACPI RSDP", "not found", 0);
		return false;
	}
	if (rsdp_v2_ok(w, rsdp, out)) {
		xsdt = rd(w, rsdp + RSDP_XSDT, 8);
		if (xsdt && madt_from_root(w, xsdt, "XSDT", 8, "ACPI XSDT", out))
			return true;
	}
	return madt_from_root(w, rd(w, rsdp + RSDP_RSDT, 4), "RSDT", 4, "ACPI RSDT", out);
}

/* MP spec 1.4, 4.1: one 16-byte paragraph whose bytes add up to 0. */
static bool mpfp_ok(const struct fw_window *w, uint64_t pa, struct fw_cpus *out)
{
	if (rd(w, pa + MPFP_PARAGRAPHS, 1) != 1) {
		note(out, "MP floating pointer", "length out of range", pa);
		return false;
	}
	if (sum(w, pa, MPFP_LEN)) {
		note(out, "MP floating pointer", "bad checksum", pa);
		return false;
	}
	return true;
}

/* MP spec 1.4, 4.2 and 4.3: the header, then entry_count entries sized by their type. */
static bool mpc_parse(const struct fw_window *w, uint64_t mpc, struct fw_cpus *out)
{
	static const char what[] = "MP configuration table";
	uint32_t len = table_ok(w, mpc, "PCMP", MPC_LENGTH_SIZE, MPC_HDR_LEN, what, out);
	uint32_t off = MPC_HDR_LEN, n, type, elen, flags;
	int idx;

	if (!len)
		return false;
	reset(out);
	out->lapic_base = rd(w, mpc + MPC_LAPIC_ADDR, 4);
	for (n = rd(w, mpc + MPC_ENTRY_COUNT, 2); n; n--, off += elen) {
		type = off < len ? rd(w, mpc + off, 1) : 0;
		elen = type == MPC_PROCESSOR ? MPC_PROCESSOR_LEN : MPC_OTHER_LEN;
		if (type > MPC_LAST_TYPE || elen > len - off) {
			note(out, what, type > MPC_LAST_TYPE ? "unknown entry type" :
			     "entries overrun the table", mpc + off);
			return false;
		}
		if (type != MPC_PROCESSOR)
			continue;
		flags = rd(w, mpc + off + 3, 1);
		if (!(flags & MPC_CPU_EN))
			continue;
		idx = add_cpu(out, rd(w, mpc + off + 1, 1), true, what, mpc);
		if (flags & MPC_CPU_BP)
			out->bsp_index = idx;
	}
	if (!out->count) {
		note(out, what, "no usable CPU", mpc);
		return false;
	}
	out->source = "MP table";
	return true;
}

static bool mp_find(const struct fw_window *w, struct fw_cpus *out)
{
	uint64_t fp, mpc;

	if (!search(w, "_MP_", 4, true, mpfp_ok, out, &fp)) {
		note(out, "MP floating pointer", "not found", 0);
		return false;
	}
	mpc = rd(w, fp + MPFP_TABLE, 4);
	if (!mpc) {
		/* MP spec 1.4 chapter 5: a default configuration has no table to read IDs from. */
		note(out, "MP floating pointer", rd(w, fp + MPFP_FEATURE1, 1) ?
		     "default configuration, not supported" : "no configuration table", fp);
		return false;
	}
	return mpc_parse(w, mpc, out);
}

const char *fw_cpus_find(const struct fw_window *w, struct fw_cpus *out)
{
	out->nnotes = 0;
	reset(out);
	if (acpi_find(w, out) || mp_find(w, out))
		return NULL;
	reset(out);
	return "no usable ACPI MADT or MP table";
}
