/* Guest page-table walks: guest linear to guest physical, and copies to and from guest memory. */
#ifndef PERFVISOR_HV_GPT_H
#define PERFVISOR_HV_GPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "include/x86/cr.h"
#include "include/x86/msr.h"

/* Page-fault error code bits (SDM Vol. 3A 4.7). */
#define GPT_PF_P	(1u << 0)	/* protection violation; clear: not present */
#define GPT_PF_W	(1u << 1)	/* write access */
#define GPT_PF_U	(1u << 2)	/* CPL 3 access */
#define GPT_PF_I	(1u << 4)	/* instruction fetch */

/* Read or write len bytes of guest-physical memory; false when any of it is outside guest RAM. */
typedef bool (*gpt_read_fn)(void *ctx, uint64_t gpa, void *buf, size_t len);
typedef bool (*gpt_write_fn)(void *ctx, uint64_t gpa, const void *buf, size_t len);

/* The guest state a walk depends on, and how to reach guest RAM. */
struct gpt_cpu {
	uint64_t cr0, cr3, cr4, efer;
	unsigned cpl;		/* 3 makes accesses user-mode */
	/*
	 * PAE paging: the four PDPTE registers, which with EPT live in the VMCS guest-PDPTE fields
	 * (SDM Vol. 3A 4.4.1), or NULL to read the PDPTEs from memory at CR3.
	 */
	const uint64_t *pdptes;
	gpt_read_fn read_gpa;
	gpt_write_fn write_gpa;	/* only gpt_copy_to_guest() uses it */
	/*
	 * Optional (ram_size 0: none): guest-physical [0, ram_size) is host memory at ram, where
	 * walks read their entries, and copies from the guest their bytes, directly, with no call
	 * (the soft PMU walks at every block, the PV PMU's resume at every thread switch).
	 */
	const uint8_t *ram;
	uint64_t ram_size;
	void *ctx;
};

enum gpt_access {
	GPT_READ,
	GPT_WRITE,
	GPT_FETCH,
	/* An implicit supervisor-mode read (the IDT, GDT, LDT, TSS: SDM Vol. 3A 4.6), at any CPL. */
	GPT_READ_SYS,
};

enum gpt_status {
	GPT_OK = 0,
	GPT_PAGE_FAULT,		/* the guest's tables refuse the access: inject #PF */
	GPT_NON_CANONICAL,	/* 4-level paging, address not canonical: #GP, not #PF */
	GPT_BAD_GPA,		/* a table entry or the data lies outside guest RAM */
	GPT_BAD_MODE,		/* 5-level paging, which is not supported */
};

/* What a walk or copy found. */
struct gpt_result {
	uint64_t gpa;		/* GPT_OK: the translation; GPT_BAD_GPA: the address not in RAM */
	uint64_t la;		/* failures: the linear address that failed (CR2 for a #PF) */
	uint32_t pf_ec;		/* GPT_PAGE_FAULT: the #PF error code, GPT_PF_* */
};

/*
 * Translate linear address la for an access of kind acc by the guest described by cpu.
 * Checks present, R/W (with CR0.WP), U/S, XD (with EFER.NXE) and SMEP; ignores reserved bits,
 * SMAP and protection keys, and sets no accessed/dirty flags. Outside IA-32e mode la is
 * truncated to its 32 bits.
 */
enum gpt_status gpt_translate(const struct gpt_cpu *cpu, uint64_t la, enum gpt_access acc,
			      struct gpt_result *res);

/*
 * The last walk of one caller, to be taken again cheaply: what it depended on (the control
 * registers, CPL, the access, the linear page) and every paging-structure entry it read, where
 * and what. While all of them are the same, walking again would read the same entries and give
 * the same page: then no walk is needed. Not a cache of translations: every entry is read again.
 */
#define GPT_MEMO_ENTRIES	4
struct gpt_memo {
	bool valid;
	uint64_t cr0, cr3, cr4, efer;
	unsigned cpl;
	enum gpt_access acc;
	uint64_t la_page;	/* la >> 12 */
	uint64_t gpa;		/* the page it maps la's page to */
	unsigned n, entry_size;
	uint64_t entry_gpa[GPT_MEMO_ENTRIES], entry[GPT_MEMO_ENTRIES];
	uint64_t entry_mask;	/* the bits of an 8-byte load that are the entry */
	/*
	 * The RAM window every entry lay in, with 8 bytes from each (NULL: some did not): they are
	 * loaded from it again.
	 */
	const uint8_t *ram;
	uint64_t ram_size;
	uint64_t hits;		/* translations that needed no walk */
};

/*
 * gpt_translate(), remembering a successful walk in m (not PAE paging's: its PDPTEs are
 * registers); the next call for the same page checks the remembered entries instead of
 * walking. m NULL: gpt_translate().
 */
enum gpt_status gpt_translate_memo(const struct gpt_cpu *cpu, uint64_t la, enum gpt_access acc,
				   struct gpt_memo *m, struct gpt_result *res);

/* The len bytes at gpa inside RAM, or NULL. */
static inline const void *gpt_ram_bytes(const struct gpt_cpu *cpu, uint64_t gpa, size_t len)
{
	return gpa < cpu->ram_size && cpu->ram_size - gpa >= len ? cpu->ram + gpa : NULL;
}

/* What the walk m remembers depended on is the same now, with la's page: one test for all. */
static inline bool gpt_memo_same_state(const struct gpt_cpu *cpu, const struct gpt_memo *m,
				       uint64_t la, enum gpt_access acc)
{
	/* Any difference sets some bit. */
	uint64_t diff = (m->la_page ^ la >> 12) | (uint64_t)(m->acc ^ acc) | (m->cr0 ^ cpu->cr0) |
			(m->cr3 ^ cpu->cr3) | (m->cr4 ^ cpu->cr4) | (m->efer ^ cpu->efer) |
			(uint64_t)(m->cpl ^ cpu->cpl);

	return m->valid && !diff;
}

/* Every entry lay inside the RAM window it still has (checked when remembered). */
static inline bool gpt_memo_in_window(const struct gpt_cpu *cpu, const struct gpt_memo *m)
{
	return m->ram && m->ram == cpu->ram && m->ram_size == cpu->ram_size;
}

/*
 * The entries, by plain 8-byte loads from the window, 32-bit paging's masked to their 4 (one
 * path, no branch): every slot, those past the walk's repeating its last entry (hv/gpt.c's
 * memo_walk()), so no count to test.
 */
static inline bool gpt_memo_entries_hold(const struct gpt_memo *m)
{
	uint64_t diff = 0;

#pragma GCC unroll 4
	for (unsigned i = 0; i < GPT_MEMO_ENTRIES; i++) {
		uint64_t e;

		__builtin_memcpy(&e, m->ram + m->entry_gpa[i], 8);
		diff |= e ^ m->entry[i];
	}
	return !(diff & m->entry_mask);
}

/*
 * gpt_map_memo() when m's walk holds, inline: it reads only cpu's control registers, CPL and RAM
 * window. NULL when it does not hold (or the bytes leave their page or RAM): gpt_map_memo() says.
 */
static inline const void *gpt_map_hit(const struct gpt_cpu *cpu, uint64_t la, size_t len,
				      enum gpt_access acc, struct gpt_memo *m)
{
	/* One page: the next one may map anywhere, or nowhere. */
	if (!len || (la & 0xFFF) + len > 0x1000)
		return NULL;
	if (!(cpu->efer & EFER_LMA))
		la = (uint32_t)la;
	if (!gpt_memo_same_state(cpu, m, la, acc) || !gpt_memo_in_window(cpu, m) ||
	    !gpt_memo_entries_hold(m))
		return NULL;
	m->hits++;
	return gpt_ram_bytes(cpu, m->gpa | (la & 0xFFF), len);
}

/*
 * Where the len bytes at la are in the hypervisor, for an access of kind acc: inside cpu->ram,
 * when they lie in one page of it (gpt_translate_memo() with m, which must not be NULL, and no
 * copy); NULL otherwise (a fault, a page crossed, memory outside RAM: gpt_copy_from_guest()
 * copies them or says why).
 */
const void *gpt_map_memo(const struct gpt_cpu *cpu, uint64_t la, size_t len, enum gpt_access acc,
			 struct gpt_memo *m);

/*
 * Copy len bytes at guest linear address la into dst, translating page by page for acc
 * (GPT_READ, or GPT_FETCH for instruction bytes). On failure the bytes before the failing page
 * have been copied and res says what failed where.
 */
enum gpt_status gpt_copy_from_guest(const struct gpt_cpu *cpu, void *dst, uint64_t la, size_t len,
				    enum gpt_access acc, struct gpt_result *res);

/* Copy len bytes from src to guest linear address la as guest writes; as above on failure. */
enum gpt_status gpt_copy_to_guest(const struct gpt_cpu *cpu, uint64_t la, const void *src,
				  size_t len, struct gpt_result *res);

#endif
