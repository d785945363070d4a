/* Guest page-table walks: guest linear to guest physical, and copies to and from guest memory. */
#include "hv/gpt.h"

/* Paging-structure entry bits (SDM Vol. 3A 4.3, 4.4.2, 4.5.4). */
#define PTE_P		(1ull << 0)
#define PTE_RW		(1ull << 1)
#define PTE_US		(1ull << 2)
#define PTE_PS		(1ull << 7)
#define PTE_XD		(1ull << 63)
/* Bits 51:12 hold the next table or the page; reserved bits below MAXPHYADDR are not checked. */
#define PTE_ADDR	0x000ffffffffff000ull
/* PAE paging: CR3 bits 31:5 locate the four PDPTEs (SDM Vol. 3A 4.4.1). */
#define CR3_PAE_PDPT	0xffffffe0ull

#define PAGE_SIZE	4096u

/* How one paging mode's tables are laid out below CR3 (or below the PDPTE for PAE). */
struct walk_shape {
	uint64_t table;		/* guest-physical address of the first table walked */
	unsigned top_shift;	/* lowest linear-address bit of that table's index */
	unsigned index_bits;	/* 10 for 32-bit paging, 9 otherwise */
	unsigned entry_size;	/* 4 for 32-bit paging, 8 otherwise */
	uint64_t leaf_shifts;	/* bit n: a PS entry in the table indexed at bit n maps a page */
};

/* Access rights combined over every level of a walk (SDM Vol. 3A 4.6.1). */
struct rights {
	bool writable;		/* R/W set at every level */
	bool user;		/* U/S set at every level */
	bool no_exec;		/* XD set at some level, with EFER.NXE */
};

/* Paging entries are little-endian, like the hypervisor; 4-byte entries fill the low half. */
static bool read_entry(const struct gpt_cpu *cpu, uint64_t gpa, unsigned size, uint64_t *e)
{
	*e = 0;
	if (gpa < cpu->ram_size && cpu->ram_size - gpa >= size) {
		/* Constant sizes: two loads, not a call to memcpy. */
		if (size == 8)
			__builtin_memcpy(e, cpu->ram + gpa, 8);
		else
			__builtin_memcpy(e, cpu->ram + gpa, 4);
		return true;
	}
	return cpu->read_gpa(cpu->ctx, gpa, e, size);
}

static enum gpt_status page_fault(const struct gpt_cpu *cpu, enum gpt_access acc, bool present,
				  struct gpt_result *res)
{
	uint32_t ec = 0;

	if (present)
		ec |= GPT_PF_P;
	if (acc == GPT_WRITE)
		ec |= GPT_PF_W;
	if (cpu->cpl == 3 && acc != GPT_READ_SYS)
		ec |= GPT_PF_U;
	/* SDM Vol. 3A 4.7: I/D is reported only with SMEP, or with PAE-format entries and NXE. */
	if (acc == GPT_FETCH && (cpu->cr4 & CR4_SMEP ||
				 (cpu->cr4 & CR4_PAE && cpu->efer & EFER_NXE)))
		ec |= GPT_PF_I;
	res->pf_ec = ec;
	return GPT_PAGE_FAULT;
}

/* SDM Vol. 3A 4.6.1 (SMAP and protection keys left out). */
static bool walk_allowed(const struct gpt_cpu *cpu, struct rights r, enum gpt_access acc)
{
	bool user = cpu->cpl == 3 && acc != GPT_READ_SYS;

	if (user && !r.user)
		return false;
	switch (acc) {
	case GPT_WRITE:
		/* Supervisor writes ignore R/W unless CR0.WP. */
		return r.writable || (!user && !(cpu->cr0 & CR0_WP));
	case GPT_FETCH:
		/* SMEP: no supervisor fetches from user pages. */
		return !r.no_exec && (user || !r.user || !(cpu->cr4 & CR4_SMEP));
	case GPT_READ:
	case GPT_READ_SYS:
		break;
	}
	return true;
}

/* Physical base of the page a leaf entry maps, shift being log2 of its size. */
static uint64_t page_base(uint64_t e, unsigned shift, unsigned entry_size)
{
	uint64_t base = e & PTE_ADDR & ~((1ull << shift) - 1);

	/* 32-bit paging 4-MiB pages: PDE bits 20:13 are address bits 39:32 (SDM Vol. 3A 4.3). */
	if (entry_size == 4 && shift == 22)
		base |= (e >> 13 & 0xff) << 32;
	return base;
}

/*
 * m, unless NULL, records the entries read (their addresses and values). Inlined into each
 * paging mode's call, so that the compiler lays out that mode's constant shape.
 */
static inline __attribute__((always_inline)) enum gpt_status
walk(const struct gpt_cpu *cpu, const struct walk_shape *w, uint64_t la, enum gpt_access acc,
     struct gpt_result *res, struct gpt_memo *m)
{
	uint64_t table = w->table, index_mask = (1ull << w->index_bits) - 1, e, gpa;
	/* Every level's entry ANDed (R/W, U/S) and ORed (XD) together: the rights of the walk. */
	uint64_t all = ~0ull, any = 0;
	struct rights r;
	unsigned shift;

	for (shift = w->top_shift;; shift -= w->index_bits) {
		gpa = table + (la >> shift & index_mask) * w->entry_size;
		if (!read_entry(cpu, gpa, w->entry_size, &e)) {
			res->gpa = gpa;
			return GPT_BAD_GPA;
		}
		if (m && m->n < GPT_MEMO_ENTRIES) {
			m->entry_gpa[m->n] = gpa;
			m->entry[m->n++] = e;
		}
		if (!(e & PTE_P))
			return page_fault(cpu, acc, false, res);
		all &= e;
		any |= e;
		if (shift == 12 || (w->leaf_shifts >> shift & 1 && e & PTE_PS))
			break;
		table = e & PTE_ADDR;
	}
	/* Without NXE bit 63 is reserved, so it is ignored like the other reserved bits. */
	r = (struct rights){ all & PTE_RW, all & PTE_US, cpu->efer & EFER_NXE && any & PTE_XD };
	if (!walk_allowed(cpu, r, acc))
		return page_fault(cpu, acc, true, res);
	res->gpa = page_base(e, shift, w->entry_size) | (la & ((1ull << shift) - 1));
	return GPT_OK;
}

/* The PDPTE that maps la under PAE paging (SDM Vol. 3A 4.4.1); PDPTEs carry no access rights. */
static enum gpt_status pae_pdpte(const struct gpt_cpu *cpu, uint64_t la, enum gpt_access acc,
				 struct gpt_result *res, uint64_t *pdpte)
{
	unsigned i = la >> 30 & 3;
	uint64_t gpa = (cpu->cr3 & CR3_PAE_PDPT) + i * 8;

	if (cpu->pdptes) {
		*pdpte = cpu->pdptes[i];
	} else if (!read_entry(cpu, gpa, 8, pdpte)) {
		res->gpa = gpa;
		return GPT_BAD_GPA;
	}
	if (!(*pdpte & PTE_P))
		return page_fault(cpu, acc, false, res);
	return GPT_OK;
}

static enum gpt_status translate(const struct gpt_cpu *cpu, uint64_t la, enum gpt_access acc,
				 struct gpt_result *res, struct gpt_memo *m)
{
	uint64_t pdpte;
	enum gpt_status st;

	/* Linear addresses are 32 bits wide outside IA-32e mode. */
	if (!(cpu->efer & EFER_LMA))
		la = (uint32_t)la;
	res->la = la;

	/* The paging mode follows CR0.PG, CR4.PAE, EFER.LMA and CR4.LA57 (SDM Vol. 3A 4.1.1). */
	if (!(cpu->cr0 & CR0_PG)) {
		res->gpa = la;
		return GPT_OK;
	}
	if (!(cpu->cr4 & CR4_PAE)) {
		/* 32-bit paging: 1024-entry directory and tables (SDM Vol. 3A 4.3). */
		return walk(cpu, &(struct walk_shape){ cpu->cr3 & 0xfffff000ull, 22, 10, 4,
						       cpu->cr4 & CR4_PSE ? 1ull << 22 : 0 },
			    la, acc, res, m);
	} else if (!(cpu->efer & EFER_LMA)) {
		/* PAE paging: a PDPTE, then a directory with 2-MiB pages (SDM Vol. 3A 4.4). */
		st = pae_pdpte(cpu, la, acc, res, &pdpte);
		if (st)
			return st;
		return walk(cpu, &(struct walk_shape){ pdpte & PTE_ADDR, 21, 9, 8, 1ull << 21 },
			    la, acc, res, m);
	}
	if (cpu->cr4 & CR4_LA57)
		return GPT_BAD_MODE;
	/* 4-level paging needs bits 63:47 all equal (SDM Vol. 3A 4.5, Vol. 1 3.3.7.1). */
	if (la >> 47 != 0 && la >> 47 != 0x1ffff)
		return GPT_NON_CANONICAL;
	return walk(cpu, &(struct walk_shape){ cpu->cr3 & PTE_ADDR, 39, 9, 8,
					       1ull << 30 | 1ull << 21 },
		    la, acc, res, m);
}

enum gpt_status gpt_translate(const struct gpt_cpu *cpu, uint64_t la, enum gpt_access acc,
			      struct gpt_result *res)
{
	return translate(cpu, la, acc, res, (struct gpt_memo *)0);
}

/* The walk m remembers is the one la's page would take now: same state, same entries. */
static inline bool memo_holds(const struct gpt_cpu *cpu, const struct gpt_memo *m, uint64_t la,
			      enum gpt_access acc)
{
	uint64_t e;

	if (!gpt_memo_same_state(cpu, m, la, acc))
		return false;
	if (gpt_memo_in_window(cpu, m))
		return gpt_memo_entries_hold(m);
	for (unsigned i = 0; i < m->n; i++)
		if (!read_entry(cpu, m->entry_gpa[i], m->entry_size, &e) || e != m->entry[i])
			return false;
	return true;
}

/* No remembered walk holds: walk, and remember it if it may be taken again. */
static __attribute__((noinline)) enum gpt_status
memo_walk(const struct gpt_cpu *cpu, uint64_t la, enum gpt_access acc, struct gpt_memo *m,
	  struct gpt_result *res)
{
	enum gpt_status st;

	m->valid = false;
	m->n = 0;
	st = translate(cpu, la, acc, res, m);
	/* PAE paging's PDPTEs come from registers, not memory: such walks are not remembered. */
	if (st != GPT_OK ||
	    ((cpu->cr0 & CR0_PG) && (cpu->cr4 & CR4_PAE) && !(cpu->efer & EFER_LMA)))
		return st;
	m->valid = true;
	m->cr0 = cpu->cr0;
	m->cr3 = cpu->cr3;
	m->cr4 = cpu->cr4;
	m->efer = cpu->efer;
	m->cpl = cpu->cpl;
	m->acc = acc;
	m->la_page = la >> 12;
	m->gpa = res->gpa & ~0xFFFull;
	m->entry_size = (cpu->cr4 & CR4_PAE) ? 8 : 4;
	m->entry_mask = m->entry_size == 8 ? ~0ull : 0xFFFFFFFFull;
	/* No entry (paging off): nothing to load again, memo_holds() reads none. */
	m->ram = m->n ? cpu->ram : (const uint8_t *)0;
	m->ram_size = cpu->ram_size;
	for (unsigned i = 0; i < m->n; i++)
		if (m->entry_gpa[i] >= cpu->ram_size || cpu->ram_size - m->entry_gpa[i] < 8)
			m->ram = (const uint8_t *)0;
	/* The slots past the walk's repeat its last entry: memo_holds() loads all of them. */
	for (unsigned i = m->n; m->n && i < GPT_MEMO_ENTRIES; i++) {
		m->entry_gpa[i] = m->entry_gpa[m->n - 1];
		m->entry[i] = m->entry[m->n - 1];
	}
	return st;
}

/* gpt_translate_memo(), its check inlined into the caller: the walk only when it must. */
static inline enum gpt_status memo_translate(const struct gpt_cpu *cpu, uint64_t la,
					     enum gpt_access acc, struct gpt_memo *m,
					     struct gpt_result *res)
{
	if (!(cpu->efer & EFER_LMA))
		la = (uint32_t)la;
	if (!memo_holds(cpu, m, la, acc))
		return memo_walk(cpu, la, acc, m, res);
	m->hits++;
	res->la = la;
	res->gpa = m->gpa | (la & 0xFFF);
	return GPT_OK;
}

enum gpt_status gpt_translate_memo(const struct gpt_cpu *cpu, uint64_t la, enum gpt_access acc,
				   struct gpt_memo *m, struct gpt_result *res)
{
	return m ? memo_translate(cpu, la, acc, m, res) : translate(cpu, la, acc, res, m);
}

/* gpt_map_memo() but for a hit: out of line, so that the hit needs no stack frame. */
static __attribute__((noinline)) const void *
map_slow(const struct gpt_cpu *cpu, uint64_t la, size_t len, enum gpt_access acc,
	 struct gpt_memo *m)
{
	struct gpt_result res;

	/* One page: the next one may map anywhere, or nowhere. */
	if (!len || (la & (PAGE_SIZE - 1)) + len > PAGE_SIZE)
		return NULL;
	return memo_translate(cpu, la, acc, m, &res) == GPT_OK ? gpt_ram_bytes(cpu, res.gpa, len) :
								  NULL;
}

const void *gpt_map_memo(const struct gpt_cpu *cpu, uint64_t la, size_t len, enum gpt_access acc,
			 struct gpt_memo *m)
{
	const void *p = gpt_map_hit(cpu, la, len, acc, m);

	return p ? p : map_slow(cpu, la, len, acc, m);
}

/* Move len bytes between guest linear la and dst (reads) or src (writes), page by page. */
static enum gpt_status copy(const struct gpt_cpu *cpu, uint64_t la, size_t len,
			    enum gpt_access acc, uint8_t *dst, const uint8_t *src,
			    struct gpt_result *res)
{
	size_t done = 0, chunk;
	enum gpt_status st;
	bool ok;

	while (done < len) {
		chunk = PAGE_SIZE - (la & (PAGE_SIZE - 1));
		if (chunk > len - done)
			chunk = len - done;
		st = gpt_translate(cpu, la, acc, res);
		if (st)
			return st;
		if (dst && res->gpa < cpu->ram_size && chunk <= cpu->ram_size - res->gpa)
			ok = __builtin_memcpy(dst + done, cpu->ram + res->gpa, chunk);
		else if (dst)
			ok = cpu->read_gpa(cpu->ctx, res->gpa, dst + done, chunk);
		else
			ok = cpu->write_gpa(cpu->ctx, res->gpa, src + done, chunk);
		if (!ok)
			return GPT_BAD_GPA;
		done += chunk;
		la += chunk;
	}
	return GPT_OK;
}

enum gpt_status gpt_copy_from_guest(const struct gpt_cpu *cpu, void *dst, uint64_t la, size_t len,
				    enum gpt_access acc, struct gpt_result *res)
{
	return copy(cpu, la, len, acc, dst, NULL, res);
}

enum gpt_status gpt_copy_to_guest(const struct gpt_cpu *cpu, uint64_t la, const void *src,
				  size_t len, struct gpt_result *res)
{
	return copy(cpu, la, len, GPT_WRITE, NULL, src, res);
}
