/* Unit tests for boot/frame: reserved frames never handed out, exhaustion, runs, frees, errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "lib/frame.c"

/* The test's RAM stands for physical [RAM_PA, RAM_END). */
#define RAM_PA		0x100000ull
#define RAM_END		0x900000ull
#define NFRAMES		((RAM_END - RAM_PA) / FRAME_SIZE)
#define GIB		(1ull << 30)

static uint8_t *ram;
static const struct frame_range *forbidden;
static size_t nforbidden;
static unsigned p2v_calls, p2v_violations;
static uint64_t first_p2v;

/* Every access the allocator makes goes through here: it must stay out of reserved memory. */
static void *p2v(uint64_t pa)
{
	if (pa < RAM_PA || pa >= RAM_END) {
		fprintf(stderr, "p2v(0x%lx) outside the test's RAM\n", pa);
		abort();
	}
	for (size_t i = 0; i < nforbidden; i++)
		if (pa + FRAME_SIZE > forbidden[i].start && pa < forbidden[i].end)
			p2v_violations++;
	if (!p2v_calls++)
		first_p2v = pa;
	return ram + (pa - RAM_PA);
}

static const struct frame_range usable_a[] = {
	{ 0, 0x9fc00 },				/* below 1 MiB: never managed */
	{ 0x100000, 0x400000 },
	{ 0x500123, 0x900000 },			/* unaligned start: 0x501000 is the first frame */
	{ 4 * GIB, 8 * GIB },			/* above 4 GiB: never managed */
};

static const struct frame_range reserved_a[] = {
	{ 0x100000, 0x1a0000 },			/* the hypervisor image */
	{ 0x300000, 0x301001 },			/* a module ending one byte into a frame */
	{ 0x600800, 0x600900 },			/* a module inside one frame */
	{ 0x9000, 0x9100 },			/* the multiboot info */
	{ 0x701800, 0x780000 },			/* something the caller keeps */
};

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/* Independent of the allocator: may the frame at pa ever be handed out? */
static bool allowed(uint64_t pa)
{
	bool in_usable = false;

	if (pa < 0x100000 || pa + FRAME_SIZE > 4 * GIB)
		return false;
	for (size_t i = 0; i < N(usable_a); i++)
		if (pa >= usable_a[i].start && pa + FRAME_SIZE <= usable_a[i].end)
			in_usable = true;
	for (size_t i = 0; i < N(reserved_a); i++)
		if (pa + FRAME_SIZE > reserved_a[i].start && pa < reserved_a[i].end)
			return false;
	return in_usable;
}

static bool all_zero(uint64_t pa, uint64_t npages)
{
	const uint8_t *p = ram + (pa - RAM_PA);

	for (uint64_t i = 0; i < npages * FRAME_SIZE; i++)
		if (p[i])
			return false;
	return true;
}

static int init_a(void)
{
	forbidden = reserved_a;
	nforbidden = N(reserved_a);
	p2v_calls = p2v_violations = 0;
	memset(ram, 0xee, RAM_END - RAM_PA);
	return frame_init(usable_a, N(usable_a), reserved_a, N(reserved_a), p2v);
}

static void test_exhaustion(void)
{
	static uint64_t got[NFRAMES];
	static bool seen[NFRAMES];
	uint64_t total, nfree, n = 0, pa, expect = 0, bitmap_pa;
	bool ok_allowed = true, ok_unique = true, ok_zero = true;

	check(init_a() == 0, "init with layout A");
	bitmap_pa = first_p2v;
	for (uint64_t f = RAM_PA; f < RAM_END; f += FRAME_SIZE)
		expect += allowed(f);
	frame_stats(&total, &nfree);
	/* 2048 frames span 1..9 MiB: two 256-byte bitmaps fit in one frame. */
	check(total == expect - 1 && nfree == total,
	      "stats %lu/%lu, want %lu managed less 1 bitmap", total, nfree, expect);
	check(allowed(bitmap_pa), "bitmap at 0x%lx is in usable, unreserved RAM", bitmap_pa);

	while ((pa = frame_alloc()) != 0 && n < NFRAMES) {
		uint64_t i = (pa - RAM_PA) / FRAME_SIZE;

		if (pa % FRAME_SIZE || pa < RAM_PA || pa >= RAM_END || !allowed(pa) ||
		    pa == bitmap_pa) {
			ok_allowed = check(0, "frame 0x%lx may not be handed out", pa);
			break;
		}
		if (seen[i])
			ok_unique = check(0, "frame 0x%lx handed out twice", pa);
		if (!all_zero(pa, 1))
			ok_zero = check(0, "frame 0x%lx is not zeroed", pa);
		seen[i] = true;
		/* Scribble: a frame that overlapped the bitmaps would now corrupt them. */
		memset(ram + (pa - RAM_PA), 0xa5, FRAME_SIZE);
		got[n++] = pa;
	}
	check(ok_allowed && ok_unique && ok_zero,
	      "every frame handed out was allowed, new, zeroed");
	check(n == total, "%lu frames handed out until exhaustion, %lu managed", n, total);
	frame_stats(&total, &nfree);
	check(nfree == 0, "none free after exhaustion (%lu)", nfree);
	check(frame_alloc() == 0 && frame_alloc_contig(1, 1) == 0, "exhausted allocator returns 0");
	check(p2v_violations == 0, "no access to reserved memory (%u)", p2v_violations);

	/* Free in another order (odd ones first); stats come back to where they started. */
	for (uint64_t k = 0; k < n; k++) {
		uint64_t i = k < n / 2 ? 2 * k + 1 : 2 * (k - n / 2);
		int r = frame_free(got[i]);

		if (r)
			check(0, "free 0x%lx: %d", got[i], r);
	}
	frame_stats(&total, &nfree);
	check(nfree == total && total == expect - 1, "all free again: %lu/%lu", nfree, total);
	check(frame_free(got[0]) == FRAME_E_DOUBLE, "double free detected");
	frame_stats(&total, &nfree);
	check(nfree == total, "a refused double free changes nothing");
	check(frame_free(bitmap_pa) == FRAME_E_RANGE, "the bitmap frame cannot be freed");
}

static void test_free_errors(void)
{
	static const struct {
		uint64_t pa;
		int err;
	} cases[] = {
		{ 0, FRAME_E_RANGE },
		{ 0x9000, FRAME_E_RANGE },		/* below 1 MiB */
		{ 0x100000, FRAME_E_RANGE },		/* image */
		{ 0x19f000, FRAME_E_RANGE },		/* image, last frame */
		{ 0x300000, FRAME_E_RANGE },		/* module */
		{ 0x301000, FRAME_E_RANGE },		/* module's last byte */
		{ 0x600000, FRAME_E_RANGE },		/* module inside a frame */
		{ 0x400000, FRAME_E_RANGE },		/* hole */
		{ 0x500000, FRAME_E_RANGE },		/* partial frame of a usable range */
		{ 0x701000, FRAME_E_RANGE },		/* caller's reserved range */
		{ 0x77f000, FRAME_E_RANGE },
		{ 0x700000, FRAME_E_DOUBLE },		/* the free frame just before it */
		{ 0x900000, FRAME_E_RANGE },		/* past the span */
		{ 4 * GIB, FRAME_E_RANGE },		/* above 4 GiB */
		{ UINT64_MAX & ~0xfffull, FRAME_E_RANGE },
		{ 0x200800, FRAME_E_ALIGN },
		{ 0x200000, FRAME_E_DOUBLE },		/* managed but free */
		{ 0x302000, FRAME_E_DOUBLE },
	};
	uint64_t total, nfree, t0, f0, a;

	init_a();
	frame_stats(&t0, &f0);
	for (size_t i = 0; i < N(cases); i++)
		check(frame_free(cases[i].pa) == cases[i].err, "free 0x%lx gives %d",
		      cases[i].pa, cases[i].err);
	frame_stats(&total, &nfree);
	check(total == t0 && nfree == f0, "refused frees change nothing");

	a = frame_alloc_contig(4, 1);
	check(a && frame_free(a + FRAME_SIZE) == 0, "alloc 4 at 0x%lx, free the second", a);
	check(frame_free_contig(a, 4) == FRAME_E_DOUBLE, "free_contig over a free frame refused");
	check(frame_free_contig(a + 3 * FRAME_SIZE, 2) == FRAME_E_DOUBLE,
	      "free_contig past the run refused");
	check(frame_free_contig(0x19f000, 2) == FRAME_E_RANGE,
	      "free_contig starting in the image refused");
	frame_stats(&total, &nfree);
	check(nfree == f0 - 3, "refused contiguous frees free nothing (%lu free)", nfree);
	check(frame_free(a) == 0 && frame_free_contig(a + 2 * FRAME_SIZE, 2) == 0,
	      "the rest frees fine");
	frame_stats(&total, &nfree);
	check(nfree == f0, "back to the start");
}

static void test_reuse(void)
{
	uint64_t a, b;

	init_a();
	a = frame_alloc();
	memset(ram + (a - RAM_PA), 0x5a, FRAME_SIZE);
	check(frame_free(a) == 0, "free 0x%lx", a);
	b = frame_alloc();
	check(b == a, "lowest free frame handed out again (0x%lx, 0x%lx)", a, b);
	check(all_zero(b, 1), "and zeroed again");
	check(a == 0x1a1000, "first frame 0x%lx: after the image and the bitmap", a);
}

static void test_contig(void)
{
	uint64_t total, nfree, t0, f0, a, b;

	init_a();
	frame_stats(&t0, &f0);
	/* No 2 MiB-aligned 2 MiB run: image, module, hole, module, end of RAM. */
	check(frame_alloc_contig(512, 512) == 0, "no 2 MiB page in layout A");
	frame_stats(&total, &nfree);
	check(nfree == f0, "a failed contiguous allocation takes nothing");

	memset(ram + (0x200000 - RAM_PA), 0x77, 0x100000);
	a = frame_alloc_contig(256, 256);
	check(a == 0x200000, "first 1 MiB-aligned MiB at 0x%lx", a);
	check(all_zero(a, 256), "zeroed");
	b = frame_alloc_contig(256, 256);
	check(b == 0x800000, "second at 0x%lx (3M module, 4M hole, 5M partial, 6M module, 7M kept)",
	      b);
	check(frame_alloc_contig(256, 256) == 0, "no third");
	for (uint64_t pa = b; pa < b + 256 * FRAME_SIZE; pa += FRAME_SIZE)
		if (!allowed(pa))
			check(0, "contiguous frame 0x%lx not allowed", pa);
	a = frame_alloc_contig(3, 4);
	check(a && a % (4 * FRAME_SIZE) == 0 && allowed(a) && allowed(a + 2 * FRAME_SIZE),
	      "3 frames 16 KiB-aligned at 0x%lx", a);
	check(frame_alloc_contig(0, 1) == 0 && frame_alloc_contig(1, 0) == 0 &&
	      frame_alloc_contig(1, 3) == 0 && frame_alloc_contig(1ull << 40, 1) == 0 &&
	      frame_alloc_contig(1, 1ull << 63) == 0, "bad arguments give 0");
	check(frame_free_contig(a, 3) == 0 && frame_free_contig(0x200000, 256) == 0 &&
	      frame_free_contig(b, 256) == 0, "all freed");
	frame_stats(&total, &nfree);
	check(total == t0 && nfree == f0, "stats back to the start (%lu/%lu)", nfree, total);
	check(p2v_violations == 0, "no access to reserved memory");
}

static void test_init_cases(void)
{
	static const struct frame_range low[] = { { 0, 0x9fc00 } };
	static const struct frame_range high[] = { { 4 * GIB, 8 * GIB } };
	static const struct frame_range sliver[] = { { 0x100001, 0x101fff } };
	static const struct frame_range one_mib[] = { { 0x100000, 0x200000 } };
	static const struct frame_range all_of_it[] = { { 0, UINT64_MAX } };
	static const struct frame_range most[] = { { 0x100000, 0x1ff000 } };
	static const struct frame_range odd[] = { { 0x300000, UINT64_MAX },
						  { 0x100800, 0x100400 } };
	static const struct frame_range overlapping[] = { { 0x100000, 0x300000 },
							  { 0x200000, 0x400000 } };
	static const struct frame_range straddle[] = { { 0x800000, 4 * GIB + 0x10000000 } };
	uint64_t total, nfree;

	forbidden = NULL;
	nforbidden = 0;
	check(frame_init(NULL, 0, NULL, 0, p2v) == FRAME_E_NOMEM, "no usable RAM");
	check(frame_init(low, 1, NULL, 0, p2v) == FRAME_E_NOMEM, "only RAM below 1 MiB");
	check(frame_init(high, 1, NULL, 0, p2v) == FRAME_E_NOMEM, "only RAM above 4 GiB");
	check(frame_init(sliver, 1, NULL, 0, p2v) == FRAME_E_NOMEM, "no whole frame");
	frame_stats(&total, &nfree);
	check(total == 0 && nfree == 0 && frame_alloc() == 0 && frame_free(0x100000) ==
	      FRAME_E_RANGE, "a failed init leaves an empty allocator");
	check(frame_init(one_mib, 1, all_of_it, 1, p2v) == FRAME_E_NOROOM,
	      "everything reserved: no room for the bitmaps");

	p2v_calls = 0;
	check(frame_init(one_mib, 1, most, 1, p2v) == 0 && first_p2v == 0x1ff000,
	      "bitmaps in the last free frame (0x%lx)", first_p2v);
	frame_stats(&total, &nfree);
	check(total == 0 && frame_alloc() == 0, "which leaves nothing to hand out");

	p2v_calls = 0;
	check(frame_init(one_mib, 1, odd, 2, p2v) == 0 && first_p2v == 0x100000,
	      "a reserved range to the end of memory and an inverted one");
	frame_stats(&total, &nfree);
	check(total == 255, "inverted range ignored: %lu frames", total);

	check(frame_init(overlapping, 2, NULL, 0, p2v) == 0, "overlapping usable ranges");
	frame_stats(&total, &nfree);
	check(total == 0x300000 / FRAME_SIZE - 1, "counted once: %lu frames", total);

	check(frame_init(straddle, 1, NULL, 0, p2v) == 0, "usable range across 4 GiB");
	frame_stats(&total, &nfree);
	check(total == (4 * GIB - 0x800000) / FRAME_SIZE - 64,
	      "managed up to 4 GiB less 256 KiB of bitmaps: %lu frames", total);

	init_a();
	frame_alloc_contig(100, 1);
	init_a();
	frame_stats(&total, &nfree);
	check(nfree == total && total > 0, "re-init starts afresh (%lu/%lu)", nfree, total);
}

int main(void)
{
	ram = malloc(RAM_END - RAM_PA);
	if (!ram)
		return 2;
	test_exhaustion();
	test_free_errors();
	test_reuse();
	test_contig();
	test_init_cases();
	free(ram);
	return unit_summary();
}
