/* Builds EPT paging structures (SDM Vol. 3C 29.3): 4 levels, write-back, 2 MiB leaves where possible. */
#include "lib/cpu.h"
#include "lib/frame.h"
#include "lib/string.h"
#include "hv/ept.h"
#include "hv/vmx_caps.h"

#define EPT_LARGE	(1ull << 7)
#define EPT_MT_WB	(6ull << 3)		/* leaf memory type: write-back */
#define ADDR_MASK	0x000FFFFFFFFFF000ull
#define SIZE_2M		(1ull << 21)
#define EPT_CODE	(1ull << 11)		/* ignored by the CPU: a protected code page */
#define DROP_SHIFT	52			/* bits 52-56, ignored: writes that dropped it */
#define DROP_MASK	(0x1Full << DROP_SHIFT)

static uint64_t *table(uint64_t entry)
{
	return (uint64_t *)(entry & ADDR_MASK);
}

uint64_t ept_create(void)
{
	uint64_t pml4 = frame_alloc();

	if (!pml4)
		return 0;
	memset((void *)pml4, 0, 4096);
	/* SDM Vol. 3C 25.6.11: memory type WB (6) and a page-walk length of 4 (encoded 3). */
	return pml4 | (3 << 3) | 6;
}

/* The entry for gpa at `level` (3 = PML4 ... 0 = PT), creating tables on the way; NULL if out of memory. */
static uint64_t *walk(uint64_t eptp, uint64_t gpa, int level)
{
	uint64_t *t = table(eptp);

	for (int l = 3; l > level; l--) {
		uint64_t *e = &t[(gpa >> (12 + 9 * l)) & 511];

		if (!(*e & EPT_RWX)) {
			uint64_t pa = frame_alloc();

			if (!pa)
				return (uint64_t *)0;
			memset((void *)pa, 0, 4096);
			*e = pa | EPT_RWX;
		} else if (*e & EPT_LARGE) {
			/* Split a 2 MiB leaf into 512 4 KiB leaves with the same rights. */
			uint64_t pa = frame_alloc(), big = *e;

			if (!pa)
				return (uint64_t *)0;
			for (unsigned i = 0; i < 512; i++)
				((uint64_t *)pa)[i] = ((big & ADDR_MASK) + i * 4096) |
						      (big & (EPT_RWX | EPT_MT_WB));
			*e = pa | EPT_RWX;
		}
		t = table(*e);
	}
	return &t[(gpa >> (12 + 9 * level)) & 511];
}

/* The entries for [gpa, gpa+size), tables made on the way; set them to hpa/perms if `set`. */
static bool map_pass(uint64_t eptp, uint64_t gpa, uint64_t hpa, uint64_t size, uint64_t perms,
		     bool set)
{
	/* IA32_VMX_EPT_VPID_CAP bit 16: 2 MiB EPT pages (SDM Vol. 3D A.10). */
	bool large_ok = vmx_caps.ept_vpid & (1ull << 16);

	while (size) {
		bool large = large_ok && !(gpa & (SIZE_2M - 1)) && !(hpa & (SIZE_2M - 1)) &&
			     size >= SIZE_2M;
		uint64_t step = large ? SIZE_2M : 4096;
		uint64_t *e = walk(eptp, gpa, large ? 1 : 0);

		if (!e)
			return false;
		if (set)
			*e = hpa | perms | EPT_MT_WB | (large ? EPT_LARGE : 0);
		gpa += step;
		hpa += step;
		size -= step;
	}
	return true;
}

/*
 * Every table first, then the entries: out of memory half way changes no translation (a split
 * keeps every page's address and rights), so a failed read-only range leaves no page read-only.
 */
bool ept_map(uint64_t eptp, uint64_t gpa, uint64_t hpa, uint64_t size, uint64_t perms)
{
	return map_pass(eptp, gpa, hpa, size, perms, false) &&
	       map_pass(eptp, gpa, hpa, size, perms, true);
}

static unsigned free_level(uint64_t *t, int level)
{
	unsigned n = 1;

	for (unsigned i = 0; level > 0 && i < 512; i++)
		if ((t[i] & EPT_RWX) && !(t[i] & EPT_LARGE))
			n += free_level(table(t[i]), level - 1);
	frame_free((uint64_t)t);
	return n;
}

uint64_t ept_enter(struct ept_user *u, volatile uint64_t *dom_gen)
{
	uint64_t gen;

	__atomic_store_n(&u->in_guest, true, __ATOMIC_SEQ_CST);
	gen = __atomic_load_n(dom_gen, __ATOMIC_SEQ_CST);
	return u->gen != gen ? gen : 0;
}

void ept_leave(struct ept_user *u)
{
	__atomic_store_n(&u->in_guest, false, __ATOMIC_RELEASE);
}

uint64_t ept_changed(volatile uint64_t *dom_gen)
{
	return __atomic_add_fetch(dom_gen, 1, __ATOMIC_SEQ_CST);
}

bool ept_flushed(struct ept_user *const *users, unsigned n, const struct ept_user *self,
		 uint64_t gen)
{
	for (unsigned i = 0; i < n; i++)
		if (users[i] != self && __atomic_load_n(&users[i]->in_guest, __ATOMIC_SEQ_CST) &&
		    __atomic_load_n(&users[i]->gen, __ATOMIC_ACQUIRE) < gen)
			return false;
	return true;
}

void ept_wait(struct ept_user *const *users, unsigned n, const struct ept_user *self,
	      uint64_t gen)
{
	/* A user in its guest with an older generation leaves it within a slice (its timer). */
	while (!ept_flushed(users, n, self, gen))
		cpu_relax();
}

/* The 4 KiB leaf of gpa, or NULL (a 2 MiB leaf, or nothing mapped). */
static uint64_t *leaf_4k(uint64_t eptp, uint64_t gpa)
{
	uint64_t *t = table(eptp), *e;

	for (int l = 3; l > 0; l--) {
		e = &t[(gpa >> (12 + 9 * l)) & 511];
		if (!(*e & EPT_RWX) || (*e & EPT_LARGE))
			return (uint64_t *)0;
		t = table(*e);
	}
	e = &t[(gpa >> 12) & 511];
	return (*e & ADDR_MASK) ? e : (uint64_t *)0;
}

bool ept_set_perms(uint64_t eptp, uint64_t gpa, uint64_t perms)
{
	uint64_t *e = leaf_4k(eptp, gpa);

	if (!e)
		return false;
	__atomic_store_n(e, (*e & ~EPT_RWX) | perms, __ATOMIC_RELEASE);
	return true;
}

enum ept_code ept_code_protect(uint64_t eptp, uint64_t gpa, unsigned max_drops)
{
	uint64_t *e = leaf_4k(eptp, gpa);

	if (e && (*e & EPT_CODE))
		return EPT_CODE_WAS;
	/* A split keeps every page's address and rights: no flush needed for it alone. The
	 * caller names a mapped page (RAM), so no table is made for nothing. */
	if (!e)
		e = walk(eptp, gpa, 0);
	if (!e || (*e & EPT_RWX) != EPT_RWX || ((*e & DROP_MASK) >> DROP_SHIFT) >= max_drops)
		return EPT_CODE_NO;
	__atomic_store_n(e, (*e & ~EPT_W) | EPT_CODE, __ATOMIC_RELEASE);
	return EPT_CODE_NEW;
}

bool ept_code_protected(uint64_t eptp, uint64_t gpa)
{
	const uint64_t *e = leaf_4k(eptp, gpa);

	return e && (__atomic_load_n(e, __ATOMIC_ACQUIRE) & EPT_CODE);
}

bool ept_code_release(uint64_t eptp, uint64_t gpa, bool *stale)
{
	uint64_t *e = leaf_4k(eptp, gpa), drops;

	*stale = e && (*e & EPT_RWX) == EPT_RWX;
	if (!e || !(*e & EPT_CODE))
		return *stale;
	drops = (*e & DROP_MASK) >> DROP_SHIFT;
	if (drops < DROP_MASK >> DROP_SHIFT)
		drops++;
	__atomic_store_n(e, (*e & ~(EPT_CODE | DROP_MASK)) | EPT_W | drops << DROP_SHIFT,
			 __ATOMIC_RELEASE);
	return true;
}

unsigned ept_destroy(uint64_t eptp)
{
	return free_level(table(eptp), 3);
}
