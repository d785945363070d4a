/* Physical frame allocator: two bitmaps (managed, free) over usable RAM from 1 MiB to 4 GiB. */
#include <stdbool.h>

#include "lib/frame.h"
#include "lib/spinlock.h"

#define LOW_END		0x100000ull	/* below: IVT, BIOS data, EBDA, ROMs, AP start-up code */
#define HIGH_END	0x100000000ull	/* the hypervisor identity-maps only the low 4 GiB */

static struct {
	uint64_t *managed;	/* bit set: the frame may ever be handed out */
	uint64_t *free;		/* bit set: the frame is free now */
	uint64_t base;		/* frame number of bit 0 */
	uint64_t count;		/* frames the bitmaps cover */
	uint64_t total, nfree;
	void *(*p2v)(uint64_t pa);
} fa;

static uint64_t page_up(uint64_t a)
{
	return (a + FRAME_SIZE - 1) & ~(FRAME_SIZE - 1);
}

static uint64_t page_down(uint64_t a)
{
	return a & ~(FRAME_SIZE - 1);
}

/* The whole frames of a usable range that may be managed: [*s, *e); false if none. */
static bool clip_usable(const struct frame_range *r, uint64_t *s, uint64_t *e)
{
	if (r->start >= r->end || r->start >= HIGH_END)
		return false;
	*s = page_up(r->start < LOW_END ? LOW_END : r->start);
	*e = page_down(r->end < HIGH_END ? r->end : HIGH_END);
	return *s < *e;
}

static const struct frame_range *first_overlap(const struct frame_range *r, size_t n,
					       uint64_t s, uint64_t e)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].start < r[i].end && r[i].start < e && s < r[i].end)
			return &r[i];
	return NULL;
}

/* Index of the first bit in [from, limit) equal to want, or limit. */
static uint64_t next_bit(const uint64_t *map, uint64_t from, uint64_t limit, bool want)
{
	while (from < limit) {
		uint64_t w = map[from / 64] ^ (want ? 0 : UINT64_MAX);

		w &= UINT64_MAX << (from % 64);

		if (w) {
			uint64_t i = from / 64 * 64 + (uint64_t)__builtin_ctzll(w);

			return i < limit ? i : limit;
		}
		from = (from / 64 + 1) * 64;
	}
	return limit;
}

static void set_bit(uint64_t *map, uint64_t i, bool on)
{
	if (on)
		map[i / 64] |= 1ull << (i % 64);
	else
		map[i / 64] &= ~(1ull << (i % 64));
}

/* Make the page-aligned range [s, e) managed and free, or neither. */
static void mark(uint64_t s, uint64_t e, bool on)
{
	uint64_t lo = s / FRAME_SIZE, hi = e / FRAME_SIZE;

	if (lo < fa.base)
		lo = fa.base;
	if (hi > fa.base + fa.count)
		hi = fa.base + fa.count;
	for (uint64_t f = lo; f < hi; f++) {
		set_bit(fa.managed, f - fa.base, on);
		set_bit(fa.free, f - fa.base, on);
	}
}

/* Lowest page-aligned run of size bytes in usable RAM that touches no reserved range, or 0. */
static uint64_t find_room(const struct frame_range *usable, size_t nusable,
			  const struct frame_range *reserved, size_t nreserved, uint64_t size)
{
	for (size_t i = 0; i < nusable; i++) {
		uint64_t s, e;

		if (!clip_usable(&usable[i], &s, &e))
			continue;
		while (e - s >= size) {
			const struct frame_range *r;

			r = first_overlap(reserved, nreserved, s, s + size);

			if (!r)
				return s;
			if (r->end >= e)
				break;
			s = page_up(r->end);
		}
	}
	return 0;
}

int frame_init(const struct frame_range *usable, size_t nusable,
	       const struct frame_range *reserved, size_t nreserved,
	       void *(*p2v)(uint64_t pa))
{
	uint64_t lo = UINT64_MAX, hi = 0, s, e, words, bytes, at;

	__builtin_memset(&fa, 0, sizeof(fa));
	for (size_t i = 0; i < nusable; i++) {
		if (!clip_usable(&usable[i], &s, &e))
			continue;
		lo = s < lo ? s : lo;
		hi = e > hi ? e : hi;
	}
	if (lo >= hi)
		return FRAME_E_NOMEM;
	words = ((hi - lo) / FRAME_SIZE + 63) / 64;
	bytes = page_up(2 * words * sizeof(uint64_t));
	at = find_room(usable, nusable, reserved, nreserved, bytes);
	if (!at)
		return FRAME_E_NOROOM;

	fa.base = lo / FRAME_SIZE;
	fa.count = (hi - lo) / FRAME_SIZE;
	fa.p2v = p2v;
	fa.managed = p2v(at);
	fa.free = fa.managed + words;
	__builtin_memset(fa.managed, 0, 2 * words * sizeof(uint64_t));
	for (size_t i = 0; i < nusable; i++)
		if (clip_usable(&usable[i], &s, &e))
			mark(s, e, true);
	/* Reserved ranges cost every frame they touch. */
	for (size_t i = 0; i < nreserved; i++) {
		const struct frame_range *r = &reserved[i];
		uint64_t end = r->end < HIGH_END ? r->end : HIGH_END;

		if (r->start < end)
			mark(page_down(r->start), page_up(end), false);
	}
	mark(at, at + bytes, false);
	for (uint64_t i = next_bit(fa.managed, 0, fa.count, true); i < fa.count;
	     i = next_bit(fa.managed, i + 1, fa.count, true))
		fa.total++;
	fa.nfree = fa.total;
	return 0;
}

static uint64_t alloc_locked(uint64_t npages, uint64_t align_pages)
{
	uint64_t i, j;

	if (!npages || !align_pages || (align_pages & (align_pages - 1)))
		return 0;
	for (i = next_bit(fa.free, 0, fa.count, true); i < fa.count;
	     i = next_bit(fa.free, j, fa.count, true)) {
		uint64_t f = fa.base + i;
		uint64_t start = f + ((0 - f) & (align_pages - 1)) - fa.base;

		if (start >= fa.count || npages > fa.count - start)
			return 0;
		j = next_bit(fa.free, start, start + npages, false);
		if (j < start + npages)
			continue;
		for (uint64_t k = start; k < start + npages; k++) {
			set_bit(fa.free, k, false);
			__builtin_memset(fa.p2v((fa.base + k) * FRAME_SIZE), 0, FRAME_SIZE);
		}
		fa.nfree -= npages;
		return (fa.base + start) * FRAME_SIZE;
	}
	return 0;
}

/* Every PCPU allocates and frees (domains end on any of them): one lock for the allocator. */
static struct spinlock frame_lock;

uint64_t frame_alloc_contig(uint64_t npages, uint64_t align_pages)
{
	uint64_t pa;

	spin_lock(&frame_lock);
	pa = alloc_locked(npages, align_pages);
	spin_unlock(&frame_lock);
	return pa;
}

uint64_t frame_alloc(void)
{
	return frame_alloc_contig(1, 1);
}

static int free_locked(uint64_t pa, uint64_t npages)
{
	uint64_t f = pa / FRAME_SIZE, i = f - fa.base;

	if (pa % FRAME_SIZE)
		return FRAME_E_ALIGN;
	if (f < fa.base || i >= fa.count || npages > fa.count - i ||
	    next_bit(fa.managed, i, i + npages, false) < i + npages)
		return FRAME_E_RANGE;
	if (next_bit(fa.free, i, i + npages, true) < i + npages)
		return FRAME_E_DOUBLE;
	for (uint64_t k = i; k < i + npages; k++)
		set_bit(fa.free, k, true);
	fa.nfree += npages;
	return 0;
}

int frame_free_contig(uint64_t pa, uint64_t npages)
{
	int r;

	spin_lock(&frame_lock);
	r = free_locked(pa, npages);
	spin_unlock(&frame_lock);
	return r;
}

int frame_free(uint64_t pa)
{
	return frame_free_contig(pa, 1);
}

void frame_stats(uint64_t *total, uint64_t *free)
{
	*total = fa.total;
	*free = fa.nfree;
}
