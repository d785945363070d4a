/* Unit tests for hv/ept.c: 2 MiB and 4 KiB leaves, splits, read-only ranges, frames, changes under the domain's lock. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/unit/unit.h"
#include "lib/spinlock.h"
#include "hv/vmx_caps.h"

/* Page tables come from here: host memory, so the EPT's "physical" addresses are pointers. */
static long frames_out;
static long frames_left = -1;	/* allocations that may still succeed; -1: any number */

uint64_t frame_alloc(void)
{
	void *p;

	if (!frames_left)
		return 0;
	if (frames_left > 0)
		frames_left--;
	p = aligned_alloc(4096, 4096);

	if (p)
		__atomic_fetch_add(&frames_out, 1, __ATOMIC_RELAXED);
	return (uint64_t)(uintptr_t)p;
}

int frame_free(uint64_t pa)
{
	__atomic_fetch_sub(&frames_out, 1, __ATOMIC_RELAXED);
	free((void *)(uintptr_t)pa);
	return 0;
}

#include "hv/ept.c"

struct vmx_caps vmx_caps;

#define MIB		(1ull << 20)
#define RAM_HPA		(1ull << 30)	/* host-physical addresses are only stored, never used */

/* The leaf for gpa: its entry and the size it maps (0 if not mapped). */
static uint64_t leaf(uint64_t eptp, uint64_t gpa, uint64_t *size)
{
	const uint64_t *t = table(eptp);

	for (int l = 3; l >= 0; l--) {
		uint64_t e = t[(gpa >> (12 + 9 * l)) & 511];

		if (!(e & EPT_RWX)) {
			*size = 0;
			return 0;
		}
		if (l == 0 || (e & EPT_LARGE)) {
			*size = 1ull << (12 + 9 * l);
			return e;
		}
		t = table(e);
	}
	*size = 0;
	return 0;
}

/* Every 4 KiB page of [gpa, gpa+len) maps gpa + RAM_HPA with exactly perms. */
static bool pages_are(uint64_t eptp, uint64_t gpa, uint64_t len, uint64_t perms)
{
	for (uint64_t a = gpa; a < gpa + len; a += 4096) {
		uint64_t size, e = leaf(eptp, a, &size);

		if (!size || (e & EPT_RWX) != perms ||
		    (e & ADDR_MASK) + (a & (size - 1) & ~0xFFFull) != RAM_HPA + a ||
		    (e & (7ull << 3)) != EPT_MT_WB)
			return false;
	}
	return true;
}

static void test_large_and_split(void)
{
	uint64_t eptp, size;
	long before;

	vmx_caps.ept_vpid = 1ull << 16;
	before = frames_out;
	eptp = ept_create();
	check(eptp && (eptp & 0x3F) == ((3 << 3) | 6), "create: WB, walk length 4 in the EPTP");
	check(ept_map(eptp, 0, RAM_HPA, 8 * MIB, EPT_RWX) && frames_out - before == 3,
	      "8 MiB RWX: PML4, PDPT and one PD (2 MiB leaves)");
	leaf(eptp, 2 * MIB + 4096, &size);
	check(size == 2 * MIB && pages_are(eptp, 0, 8 * MIB, EPT_RWX),
	      "8 MiB RWX: 2 MiB leaves, every page at its host address");
	check(ept_map(eptp, 2 * MIB + 8192, RAM_HPA + 2 * MIB + 8192, 2 * 4096, EPT_R) &&
	      frames_out - before == 4, "read-only 2 pages: one 2 MiB leaf split (one PT)");
	check(pages_are(eptp, 2 * MIB + 8192, 8192, EPT_R) &&
	      pages_are(eptp, 2 * MIB, 8192, EPT_RWX) &&
	      pages_are(eptp, 2 * MIB + 16384, 2 * MIB - 16384, EPT_RWX),
	      "read-only 2 pages: exactly those pages lost W; the 510 others kept RWX");
	leaf(eptp, 0, &size);
	check(size == 2 * MIB && pages_are(eptp, 0, 2 * MIB, EPT_RWX) &&
	      pages_are(eptp, 4 * MIB, 4 * MIB, EPT_RWX), "the other 2 MiB leaves untouched");
	check(ept_map(eptp, 6 * MIB - 4096, RAM_HPA + 6 * MIB - 4096, 2 * 4096, EPT_R) &&
	      frames_out - before == 6 && pages_are(eptp, 6 * MIB - 4096, 8192, EPT_R) &&
	      pages_are(eptp, 4 * MIB, 2 * MIB - 4096, EPT_RWX) &&
	      pages_are(eptp, 6 * MIB + 4096, 2 * MIB - 4096, EPT_RWX),
	      "a range across a 2 MiB boundary splits both leaves");
	check(ept_map(eptp, 2 * MIB + 8192, RAM_HPA + 2 * MIB + 8192, 4096, EPT_R) &&
	      frames_out - before == 6, "mapping an already split range again allocates nothing");
	check(ept_destroy(eptp) == 6 && frames_out == before, "destroy frees every table (6)");
}

/* A read-only range across two 2 MiB leaves with one table frame left: refused, nothing read-only. */
static void test_out_of_memory(void)
{
	uint64_t eptp, size;
	long before = frames_out;

	vmx_caps.ept_vpid = 1ull << 16;
	eptp = ept_create();
	ept_map(eptp, 0, RAM_HPA, 8 * MIB, EPT_RWX);
	frames_left = 1;
	check(!ept_map(eptp, 4 * MIB - 4096, RAM_HPA + 4 * MIB - 4096, 2 * 4096, EPT_R) &&
	      pages_are(eptp, 0, 8 * MIB, EPT_RWX),
	      "out of tables half way: refused, every page keeps RWX (the first split stays)");
	frames_left = -1;
	leaf(eptp, 4 * MIB, &size);
	check(ept_map(eptp, 4 * MIB - 4096, RAM_HPA + 4 * MIB - 4096, 2 * 4096, EPT_R) &&
	      size == 2 * MIB && pages_are(eptp, 4 * MIB - 4096, 8192, EPT_R) &&
	      pages_are(eptp, 2 * MIB, 2 * MIB - 4096, EPT_RWX) &&
	      pages_are(eptp, 4 * MIB + 4096, 2 * MIB - 4096, EPT_RWX),
	      "with memory again the same range maps read-only");
	check(ept_destroy(eptp) == 5 && frames_out == before, "destroy frees every table (5)");
}

static void test_no_large_pages(void)
{
	uint64_t eptp, size;
	long before = frames_out;

	vmx_caps.ept_vpid = 0;
	eptp = ept_create();
	check(ept_map(eptp, 0, RAM_HPA, 4 * MIB, EPT_RWX) && frames_out - before == 5,
	      "without 2 MiB EPT pages: 4 KiB leaves (PML4, PDPT, PD, two PTs)");
	leaf(eptp, 3 * MIB, &size);
	check(size == 4096 && pages_are(eptp, 0, 4 * MIB, EPT_RWX), "4 KiB leaves map right");
	check(ept_destroy(eptp) == 5 && frames_out == before, "destroy frees them");
	vmx_caps.ept_vpid = 1ull << 16;
}

/*
 * The lock model: several PCPUs change one domain's EPT under its ept_lock (as
 * vcpu_pmu_map_area does). Each thread write-protects and re-opens its own pages inside the
 * same 2 MiB leaf; every change must survive, and the leaf is split exactly once.
 */
#define THREADS		4
#define ROUNDS		2000
static struct spinlock ept_lock;
static uint64_t shared_eptp;

static void *changer(void *arg)
{
	uint64_t page = 2 * MIB + (uint64_t)(uintptr_t)arg * 4096;
	bool ok = true;

	for (unsigned r = 0; r < ROUNDS; r++) {
		spin_lock(&ept_lock);
		ok &= ept_map(shared_eptp, page, RAM_HPA + page, 4096, r % 2 ? EPT_RWX : EPT_R);
		spin_unlock(&ept_lock);
	}
	spin_lock(&ept_lock);
	ok &= ept_map(shared_eptp, page, RAM_HPA + page, 4096, EPT_R);
	spin_unlock(&ept_lock);
	return ok ? arg : NULL;
}

static void test_locked_changes(void)
{
	pthread_t t[THREADS];
	long before = frames_out;
	bool ok = true;

	shared_eptp = ept_create();
	ept_map(shared_eptp, 0, RAM_HPA, 4 * MIB, EPT_RWX);
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, changer, (void *)(i + 1));
	for (unsigned i = 0; i < THREADS; i++) {
		void *r;

		pthread_join(t[i], &r);
		ok &= r != NULL;
	}
	check(ok && pages_are(shared_eptp, 2 * MIB + 4096, THREADS * 4096, EPT_R) &&
	      pages_are(shared_eptp, 2 * MIB, 4096, EPT_RWX) &&
	      pages_are(shared_eptp, 2 * MIB + (THREADS + 1) * 4096,
			2 * MIB - (THREADS + 1) * 4096, EPT_RWX),
	      "%u PCPUs x %u changes under the lock: every page ends as its last change left it",
	      THREADS, ROUNDS);
	check(frames_out - before == 4, "under the lock the leaf is split once (no table lost)");
	ept_destroy(shared_eptp);
	check(frames_out == before, "and nothing leaks");
}

/* The generation handshake, each ordering of one PCPU's entry against one change. */
static volatile uint64_t dom_gen;
static struct ept_user users[3];		/* [2] is the changer's own VCPU */
static struct ept_user *const list[3] = { &users[0], &users[1], &users[2] };
static volatile bool wait_returned;
static uint64_t wait_gen;

static void *waiter(void *arg)
{
	(void)arg;
	ept_wait(list, 3, &users[2], wait_gen);
	__atomic_store_n(&wait_returned, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Starts ept_wait() for gen on another thread; true if it is still waiting after 50 ms. */
static bool wait_blocks(pthread_t *t, uint64_t gen)
{
	struct timespec ms50 = { 0, 50 * 1000 * 1000 };

	wait_gen = gen;
	wait_returned = false;
	pthread_create(t, NULL, waiter, NULL);
	nanosleep(&ms50, NULL);
	return !__atomic_load_n(&wait_returned, __ATOMIC_ACQUIRE);
}

static void test_generation_handshake(void)
{
	pthread_t t;
	uint64_t gen, seen;

	check(ept_enter(&users[0], &dom_gen) == 0, "handshake: nothing changed, no flush");
	users[2].in_guest = true;	/* the changer's VCPU is in an exit, but even so */
	gen = ept_changed(&dom_gen);
	users[2].gen = gen;
	check(wait_blocks(&t, gen), "handshake: a PCPU in its guest since before the change is "
	      "waited for");
	ept_leave(&users[0]);
	pthread_join(t, NULL);
	check(wait_returned, "handshake: ... until it leaves its guest");
	seen = ept_enter(&users[0], &dom_gen);
	check(seen == gen, "handshake: its next entry flushes for the new generation");
	users[0].gen = seen;
	check(!wait_blocks(&t, gen), "handshake: a PCPU in its guest that flushed for it is not "
	      "waited for");
	pthread_join(t, NULL);
	ept_leave(&users[0]);
	gen = ept_changed(&dom_gen);
	check(!wait_blocks(&t, gen), "handshake: PCPUs out of their guests are not waited for");
	pthread_join(t, NULL);
	check(ept_enter(&users[1], &dom_gen) == gen && ept_enter(&users[0], &dom_gen) == gen,
	      "handshake: entries after the change flush for it");
	users[0].gen = users[1].gen = gen;
	ept_leave(&users[0]);
	ept_leave(&users[1]);
}

int main(void)
{
	test_large_and_split();
	test_out_of_memory();
	test_no_large_pages();
	test_locked_changes();
	test_generation_handshake();
	return unit_summary();
}
