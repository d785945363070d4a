/* The soft PMU's block cache: blocks decoded once, by guest-physical address, code write-protected. */
#include <stddef.h>

#include "lib/frame.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "hv/domain.h"
#include "hv/ept.h"
#include "hv/guest_mem.h"
#include "hv/step_cache.h"
#include "hv/vcpu.h"

/*
 * Exactness: a cached block stands for the bytes it was decoded from only while no write can
 * reach them unseen. So its pages are write-protected in the domain's EPT before it is cached:
 * a guest write there exits (EPT violation, SDM Vol. 3C 29.3.3.2) before it happens, and drops
 * the page's blocks from every VCPU's cache; the hypervisor's own writes for the guest say so
 * (step_cache_hv_write). A block is cached only when the bytes it was decoded from are still
 * there with the protection in force on every PCPU (no stale writable translation), all under
 * the domain's ept_lock, which the drops take too. RIP is translated again at every lookup (the
 * guest's page tables change without an exit; the last walk is re-checked, gpt_translate_memo()):
 * the cache is by guest-physical address.
 */

#define PAGE(a)		((a) & ~0xFFFull)

static struct step_cache *cache(struct vcpu *v)
{
	struct step_cache *c = v->step.cache;
	uint64_t pa;

	if (c || v->step.cache_failed)
		return c;
	pa = frame_alloc_contig(STEP_CACHE_FRAMES, 1);
	if (!pa) {
		v->step.cache_failed = true;
		return (struct step_cache *)0;
	}
	c = (struct step_cache *)pa;
	memset(c, 0, STEP_CACHE_FRAMES * FRAME_SIZE);
	c->cool = STEP_CACHE_NO_PAGE;
	c->n = (STEP_CACHE_FRAMES * FRAME_SIZE - offsetof(struct step_cache, e)) /
	       sizeof(struct step_cache_entry);
	/* Other PCPUs' drop() may look at it from now: whole before it is seen. */
	__atomic_store_n(&v->step.cache, c, __ATOMIC_RELEASE);
	return c;
}

void step_cache_free(struct vcpu *v)
{
	if (v->step.cache)
		frame_free_contig((uint64_t)v->step.cache, STEP_CACHE_FRAMES);
	v->step.cache = (struct step_cache *)0;
}

static struct step_cache_entry *slot(struct step_cache *c, uint64_t gpa)
{
	return &c->e[(gpa ^ gpa >> 11) % c->n];
}

/* The guest-physical page the next page after la's is fetched from, if the guest may. */
static bool next_page(struct vcpu *v, uint64_t la, uint64_t *gpa)
{
	struct gpt_result res;

	if (guest_translate(v, PAGE(la) + 4096, GPT_FETCH, (struct gpt_memo *)0, &res) != GPT_OK)
		return false;
	*gpa = res.gpa;
	return true;
}

/*
 * Bytes of guest code at la (gpa: its translation): up to BLOCK_BYTES, fewer where the next
 * page cannot be fetched from (*gpa2: that page's address, or STEP_CACHE_NO_PAGE).
 */
static unsigned fetch(struct vcpu *v, uint64_t la, uint64_t gpa, uint8_t *bytes, uint64_t *gpa2)
{
	unsigned first = 4096 - (la & 0xFFF);
	const void *p;

	*gpa2 = STEP_CACHE_NO_PAGE;
	if (first > BLOCK_BYTES)
		first = BLOCK_BYTES;
	p = dom_gpa_to_hva(v->dom, gpa, first);
	if (!p)
		return 0;
	memcpy(bytes, p, first);
	if (first == BLOCK_BYTES || !next_page(v, la, gpa2))
		return first;
	p = dom_gpa_to_hva(v->dom, *gpa2, BLOCK_BYTES - first);
	if (!p) {
		*gpa2 = STEP_CACHE_NO_PAGE;
		return first;
	}
	memcpy(bytes + first, p, BLOCK_BYTES - first);
	return BLOCK_BYTES;
}

/*
 * Protects page gpa for the cache (*fresh: it was not, so translations elsewhere may lag).
 * Only RAM: the write violation on it comes back to step_cache_write_fault(), while beyond RAM
 * (the test device's memory) it would be taken for a write to nothing.
 */
static bool protect(struct vcpu *v, uint64_t gpa, bool *fresh)
{
	enum ept_code st;

	if (PAGE(gpa) == v->step.cache->cool || gpa >= v->dom->ram_size)
		return false;
	st = ept_code_protect(v->dom->eptp, gpa, STEP_CACHE_DROPS);
	*fresh |= st == EPT_CODE_NEW;
	return st != EPT_CODE_NO;
}

/* Whether guest RAM at gpa (and gpa2 after `first` bytes) still holds bytes[0..len). */
static bool same(struct domain *d, uint64_t gpa, uint64_t gpa2, const uint8_t *bytes,
		 unsigned first, unsigned len)
{
	unsigned a = len < first ? len : first;

	return !memcmp(dom_gpa_to_hva(d, gpa, a), bytes, a) &&
	       (len == a || !memcmp(dom_gpa_to_hva(d, gpa2, len - a), bytes + a, len - a));
}

/*
 * Caches b, decoded from bytes[0..len) (len: every byte the decode may have looked at) at gpa,
 * then gpa2 after `first` bytes: once its pages are protected, the protection is in force on
 * every PCPU, and the bytes are still the decoded ones. False: not cached (try again later).
 */
static bool fill(struct vcpu *v, struct step_cache_entry *e, const struct step_block *b,
		 enum insn_mode mode, uint64_t gpa, uint64_t gpa2, const uint8_t *bytes,
		 unsigned first, unsigned len)
{
	struct domain *d = v->dom;
	bool ok, fresh = false;

	if (len <= first)
		gpa2 = STEP_CACHE_NO_PAGE;
	spin_lock(&d->ept_lock);
	ok = protect(v, gpa, &fresh) && (gpa2 == STEP_CACHE_NO_PAGE || protect(v, gpa2, &fresh));
	if (fresh)
		ept_changed(&d->ept_gen);
	ok = ok && step_flushed_everywhere(v, d->ept_gen) &&
	     same(d, gpa, gpa2, bytes, first, len);
	if (ok) {
		e->valid = false;
		e->gpa = gpa;
		e->gpa2 = gpa2;
		e->rip = b->start;
		e->mode = (uint8_t)mode;
		e->b = *b;
		__atomic_store_n(&e->valid, true, __ATOMIC_RELEASE);
		v->step.cache->fills++;
	}
	spin_unlock(&d->ept_lock);
	return ok;
}

/* An entry for the code at la: the same bytes (both pages where it read two), rip and mode. */
static bool hit(struct vcpu *v, const struct step_cache_entry *e, uint64_t rip, uint64_t la,
		enum insn_mode mode, uint64_t gpa)
{
	uint64_t gpa2;

	if (!__atomic_load_n(&e->valid, __ATOMIC_ACQUIRE) || e->gpa != gpa || e->rip != rip ||
	    e->mode != mode)
		return false;
	return e->gpa2 == STEP_CACHE_NO_PAGE || (next_page(v, la, &gpa2) && gpa2 == e->gpa2);
}

/* The cached block for the code at la (gpa: its translation), a hit counted; NULL: none. */
static const struct step_block *find(struct vcpu *v, struct step_cache *c, uint64_t rip,
				     uint64_t la, enum insn_mode mode, uint64_t gpa)
{
	const struct step_cache_entry *e = slot(c, gpa);

	if (!hit(v, e, rip, la, mode, gpa))
		return (const struct step_block *)0;
	c->hits++;
	return &e->b;
}

const struct step_block *step_cache_find(struct vcpu *v, uint64_t rip, uint64_t la,
					 enum insn_mode mode, uint64_t gpa)
{
	return v->step.cache ? find(v, v->step.cache, rip, la, mode, gpa) :
			       (const struct step_block *)0;
}

unsigned step_cache_block(struct vcpu *v, uint64_t rip, uint64_t la, enum insn_mode mode,
			  unsigned max, struct step_block *b)
{
	struct step_cache *c = cache(v);
	struct step_cache_entry *e = (struct step_cache_entry *)0;
	const struct step_block *cached;
	uint8_t bytes[BLOCK_BYTES];
	struct gpt_result res;
	uint64_t gpa, gpa2;
	unsigned len, seen;

	/* The fetch as the CPU does it: a page the guest may not execute gives no block. */
	if (guest_translate(v, la, GPT_FETCH, c ? &c->walk : (struct gpt_memo *)0, &res) != GPT_OK)
		return 0;
	gpa = res.gpa;
	if (c) {
		cached = find(v, c, rip, la, mode, gpa);
		if (cached) {
			*b = *cached;
			return step_block_cut(b, max);
		}
		e = slot(c, gpa);
	}
	len = fetch(v, la, gpa, bytes, &gpa2);
	if (!step_block_decode(bytes, len, rip, mode, BLOCK_MAX, true, b))
		return 0;
	/*
	 * A store before the block reaches its second page may rewrite the guest's page-table
	 * entry for that page, which no EPT protection watches, and without a TLB entry the CPU
	 * fetches through the new one (SDM Vol. 3A 4.10.4.3): other bytes than those decoded. A
	 * block that crosses a page keeps no store inside.
	 */
	if (b->store_end && b->off[b->n] > 4096 - (la & 0xFFF))
		step_block_cut(b, b->store_end);
	/*
	 * The decode read the block's bytes and at most one instruction's beyond them. Where that
	 * reaches the end of what could be fetched short of BLOCK_BYTES, the block depends on the
	 * next page being absent: not cached.
	 */
	seen = b->off[b->n] + INSN_MAX_LEN;
	if (seen >= len)
		seen = len;
	/* Stores stay inside only while no write can reach its code unseen: cached, protected. */
	if (!c || (seen == len && len < BLOCK_BYTES) ||
	    !fill(v, e, b, mode, gpa, gpa2, bytes, 4096 - (unsigned)(la & 0xFFF), seen))
		step_block_cut(b, b->store_end ? b->store_end : b->n);
	c = v->step.cache;
	if (c)
		c->cool = STEP_CACHE_NO_PAGE;
	return step_block_cut(b, max);
}

/* Drops every cached block that read page gpa, in every VCPU of d (under d's ept_lock). */
static void drop(struct domain *d, uint64_t page)
{
	for (unsigned i = 0; i < d->nvcpus; i++) {
		struct step_cache *c = d->vcpus[i] ?
				       __atomic_load_n(&d->vcpus[i]->step.cache, __ATOMIC_ACQUIRE) :
				       NULL;

		for (unsigned k = 0; c && k < c->n; k++) {
			struct step_cache_entry *e = &c->e[k];

			if (e->valid && (PAGE(e->gpa) == page || e->gpa2 == page)) {
				__atomic_store_n(&e->valid, false, __ATOMIC_RELEASE);
				c->drops++;
			}
		}
	}
}

bool step_cache_write_fault(struct vcpu *v, uint64_t gpa)
{
	struct domain *d = v->dom;
	bool retry, stale;

	if (gpa >= d->ram_size)
		return false;
	spin_lock(&d->ept_lock);
	retry = ept_code_release(d->eptp, gpa, &stale);
	if (retry && !stale)
		drop(d, PAGE(gpa));
	spin_unlock(&d->ept_lock);
	if (!retry)
		return false;
	/* The write runs again now: its page is not to be protected again before it has. */
	if (!stale && v->step.cache)
		v->step.cache->cool = PAGE(gpa);
	v->step.exits++;
	return true;
}

void step_cache_hv_write(struct domain *d, uint64_t gpa, uint64_t len)
{
	/* The write before the look, as fill() protects before it compares (store, then load). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* The page stays protected: only the guest's writes need the EPT's help. */
	for (uint64_t p = PAGE(gpa); p < gpa + len; p += 4096) {
		if (!ept_code_protected(d->eptp, p))
			continue;
		spin_lock(&d->ept_lock);
		drop(d, p);
		spin_unlock(&d->ept_lock);
	}
}
