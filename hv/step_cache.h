/* The soft PMU's block cache: blocks decoded once, by guest-physical address, code write-protected. */
#ifndef PERFVISOR_HV_STEP_CACHE_H
#define PERFVISOR_HV_STEP_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "hv/gpt.h"
#include "hv/insn.h"
#include "hv/step_block.h"

struct domain;
struct vcpu;

/* Frames of one VCPU's cache (lazily allocated, contiguous). */
#define STEP_CACHE_FRAMES	4
/* Writes that may take a page's protection off; then it stays writable and uncached (data). */
#define STEP_CACHE_DROPS	8
/* No second page: the block's decode read no byte past its first page. */
#define STEP_CACHE_NO_PAGE	(~0ull)

/*
 * A decoded block, valid while every page its decode read stays write-protected. Keyed by the
 * guest-physical address of its first byte, its RIP (the targets are RIP-relative) and the
 * code's mode (CS.L/D: operand and address sizes). Only its own VCPU writes an entry (under
 * the domain's ept_lock); any VCPU may clear `valid`, under it.
 */
struct step_cache_entry {
	volatile bool valid;
	uint8_t mode;
	uint64_t gpa;
	uint64_t gpa2;		/* the next page, when the decode read bytes there */
	uint64_t rip;
	struct step_block b;	/* decoded with BLOCK_MAX instructions at most */
};

struct step_cache {
	struct gpt_memo walk;	/* the last lookup's walk of the guest's page tables */
	uint64_t cool;		/* a page a write just released: not protected at the next fill */
	uint64_t hits, fills, drops;
	unsigned n;		/* entries */
	struct step_cache_entry e[];
};

/*
 * The block at rip (linear address la, code of mode `mode`), at most max instructions: from v's
 * cache, or fetched and decoded (and cached when its pages could be protected). Returns its n;
 * 0 when the instruction at rip must be single-stepped.
 */
unsigned step_cache_block(struct vcpu *v, uint64_t rip, uint64_t la, enum insn_mode mode,
			  unsigned max, struct step_block *b);
/*
 * The cached block at rip (la, mode as above) whose first byte is at guest-physical gpa, the
 * translation of la the caller vouches for: whole, with no fetch or decode; NULL: none.
 */
const struct step_block *step_cache_find(struct vcpu *v, uint64_t rip, uint64_t la,
					 enum insn_mode mode, uint64_t gpa);
/*
 * An EPT write violation at gpa: true when it hit a code page the cache protected (its blocks
 * are dropped from every VCPU's cache, the page is writable again and the write is retried).
 */
bool step_cache_write_fault(struct vcpu *v, uint64_t gpa);
/* The hypervisor wrote [gpa, gpa + len) of d's RAM for its guest: cached blocks there go. */
void step_cache_hv_write(struct domain *d, uint64_t gpa, uint64_t len);
/* Gives v's cache back (the VCPU is freed). */
void step_cache_free(struct vcpu *v);

#endif
