/* Unit tests for hv/step_pv.c over the real hv/ept.c: a-mode pages shut while their blocks run. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/vmx_caps.h"

/* EPT tables come from host memory: their "physical" addresses are pointers. */
uint64_t frame_alloc(void)
{
	void *p = aligned_alloc(4096, 4096);

	return (uint64_t)(uintptr_t)p;
}

int frame_free(uint64_t pa)
{
	free((void *)(uintptr_t)pa);
	return 0;
}

#include "hv/ept.c"
#include "hv/step_pv.c"

struct vmx_caps vmx_caps;

#define RAM		(4ull << 20)
#define AREA		0x10000ull	/* VCPU k's page at AREA + k * 4096 */

static struct domain dom;
static struct vcpu vcpus[2];

/* The rights the EPT gives page gpa (its 4 KiB leaf). */
static uint64_t perms(uint64_t gpa)
{
	const uint64_t *t = table(dom.eptp);

	for (int l = 3; l > 0; l--)
		t = table(t[(gpa >> (12 + 9 * l)) & 511]);
	return t[(gpa >> 12) & 511] & EPT_RWX;
}

/* A 2-VCPU domain after HC_PMU_SETUP: both pages read-only, nobody in its guest. */
static void reset(void)
{
	if (dom.eptp)
		ept_destroy(dom.eptp);
	memset(&dom, 0, sizeof(dom));
	memset(vcpus, 0, sizeof(vcpus));
	dom.eptp = ept_create();
	ept_map(dom.eptp, 0, 1ull << 30, RAM, EPT_RWX);
	ept_map(dom.eptp, AREA, (1ull << 30) + AREA, 2 * 4096, EPT_R);
	dom.ro_start = AREA;
	dom.ro_end = AREA + 2 * 4096;
	dom.nvcpus = 2;
	for (unsigned k = 0; k < 2; k++) {
		vcpus[k].dom = &dom;
		vcpus[k].id = k;
		dom.vcpus[k] = &vcpus[k];
	}
}

static void test_set_perms(void)
{
	reset();
	check(ept_set_perms(dom.eptp, AREA + 4096, 0) && perms(AREA + 4096) == 0 &&
	      perms(AREA) == EPT_R && perms(AREA + 2 * 4096) == EPT_RWX,
	      "ept_set_perms: one 4 KiB leaf loses its rights, its neighbours keep theirs");
	check(ept_set_perms(dom.eptp, AREA + 4096, EPT_R) && perms(AREA + 4096) == EPT_R,
	      "ept_set_perms: and gets them back");
	check(!ept_set_perms(dom.eptp, 8ull << 20, EPT_R) && perms(AREA + 4096) == EPT_R,
	      "ept_set_perms: no leaf outside RAM, nothing changed");
}

static void test_own_block(void)
{
	uint64_t gen;

	reset();
	gen = dom.ept_gen;
	check(step_pv_block_start(&vcpus[0]) && vcpus[0].step.pv.in_block,
	      "nobody else in its guest: the block runs");
	check(perms(AREA) == 0 && perms(AREA + 4096) == EPT_R && dom.ept_gen == gen + 1,
	      "its page shut, the other VCPU's left read-only, the domain's EPT generation bumped "
	      "(every PCPU flushes before its next entry)");
	step_pv_block_end(&vcpus[0]);
	check(!vcpus[0].step.pv.in_block, "counted: the block is over");
	check(step_pv_block_start(&vcpus[0]) && dom.ept_gen == gen + 1,
	      "the next block: the page is still shut, no new generation");
	step_pv_block_end(&vcpus[0]);
	/* The guest reads its page: the exit counted the block, the read is retried. */
	step_pv_fault(&vcpus[0], AREA + 0x80);
	check(perms(AREA) == EPT_R, "its own read: the page opens at once");
	check(!step_pv_block_start(&vcpus[0]) && perms(AREA) == EPT_R,
	      "the read is stepped with the page open (no block)");
	check(step_pv_block_start(&vcpus[0]) && perms(AREA) == 0 && dom.ept_gen == gen + 2,
	      "after it the page is shut again and blocks resume");
}

static void test_other_pcpu(void)
{
	reset();
	vcpus[1].ept.in_guest = true;
	vcpus[1].ept.gen = dom.ept_gen;
	check(!step_pv_block_start(&vcpus[0]) && perms(AREA) == 0 && !vcpus[0].step.pv.in_block,
	      "another VCPU in its guest since before the shut may hold the readable page: "
	      "stepped, not waited for");
	check(!step_pv_block_start(&vcpus[0]), "... as long as it stays there");
	vcpus[1].ept.gen = dom.ept_gen;
	check(step_pv_block_start(&vcpus[0]), "once it flushed, the block runs");
	step_pv_block_end(&vcpus[0]);
	vcpus[1].ept.in_guest = false;
}

static void test_cross_read(void)
{
	reset();
	check(step_pv_block_start(&vcpus[0]), "VCPU 0 runs a block");
	step_pv_fault(&vcpus[1], AREA + 0x80);
	check(perms(AREA) == 0 && vcpus[0].step.pv.wanted,
	      "VCPU 1 reads VCPU 0's page mid-block: it stays shut (its counts lag), the read waits");
	step_pv_fault(&vcpus[1], AREA + 0x80);
	check(perms(AREA) == 0, "and retried, waits again");
	step_pv_block_end(&vcpus[0]);
	check(!step_pv_block_start(&vcpus[0]) && perms(AREA) == EPT_R && !vcpus[0].step.pv.wanted,
	      "VCPU 0 counted its block: instead of the next one its page opens, VCPU 0 steps");
	check(!step_pv_block_start(&vcpus[0]) && perms(AREA) == EPT_R,
	      "it stays open for the read's retry as for a read of its own (STEP_PV_OPEN_STEPS)");
	check(step_pv_block_start(&vcpus[0]) && perms(AREA) == 0, "then it shuts again");
	step_pv_block_end(&vcpus[0]);
	step_pv_fault(&vcpus[1], AREA + 8);
	check(perms(AREA) == EPT_R, "a read while VCPU 0 runs no block opens the page at once");
	step_pv_fault(&vcpus[1], AREA + 2 * 4096 - 8);
	check(perms(AREA + 4096) == EPT_R, "a read of a page never shut changes nothing");
	dom.vcpus[1] = NULL;
	step_pv_fault(&vcpus[0], AREA + 4096);
	check(perms(AREA + 4096) == EPT_R, "a page without its VCPU: nothing to open");
	ept_destroy(dom.eptp);
	dom.eptp = 0;
}

int main(void)
{
	test_set_perms();
	test_own_block();
	test_other_pcpu();
	test_cross_read();
	return unit_summary();
}
