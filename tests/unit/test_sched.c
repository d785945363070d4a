/* Unit tests for hv/runq: run-queue capacity at and past MAX_RUNQ, moves, domain placement, limits. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "lib/cmdline.c"
#include "lib/printk.c"
#include "hv/domcfg.c"
#include "hv/runq.c"
#include "hv/domain.h"
#include "lib/multiboot.h"

/* printk.c writes to the console; these tests use only its formatting. */
void con_write(const char *s, size_t len)
{
	(void)s;
	(void)len;
}

/* Stand-ins for VCPUs: the queues only hold and compare pointers. */
#define NV	(2 * MAX_RUNQ + 8)
static char fake[NV];
#define VC(i)	((struct vcpu *)&fake[i])

static bool holds(const struct runq *q, struct vcpu *v)
{
	for (unsigned i = 0; i < q->len; i++)
		if (q->v[i] == v)
			return true;
	return false;
}

static void test_capacity(void)
{
	struct runq q = { 0 };
	bool all = true;

	for (unsigned i = 0; i < MAX_RUNQ; i++)
		all &= runq_add(&q, VC(i));
	check(all && q.len == MAX_RUNQ, "runq: %u VCPUs fit (MAX_RUNQ)", MAX_RUNQ);
	check(!runq_add(&q, VC(MAX_RUNQ)) && q.len == MAX_RUNQ && !holds(&q, VC(MAX_RUNQ)),
	      "runq: the %uth VCPU is refused and the queue is unchanged", MAX_RUNQ + 1);
	runq_remove(&q, VC(5));
	check(q.len == MAX_RUNQ - 1 && !holds(&q, VC(5)), "runq: remove frees one place");
	runq_remove(&q, VC(5));
	check(q.len == MAX_RUNQ - 1, "runq: removing a VCPU that is not there changes nothing");
	check(runq_add(&q, VC(MAX_RUNQ)) && q.len == MAX_RUNQ, "runq: the freed place is taken");
}

static void test_move(void)
{
	struct runq a = { 0 }, b = { 0 };

	for (unsigned i = 0; i < MAX_RUNQ; i++)
		runq_add(&b, VC(i));
	runq_add(&a, VC(MAX_RUNQ));
	check(!runq_move(&a, &b, VC(MAX_RUNQ)) && a.len == 1 && b.len == MAX_RUNQ &&
	      holds(&a, VC(MAX_RUNQ)), "migration: a full queue refuses the VCPU, it stays put");
	runq_remove(&b, VC(0));
	check(runq_move(&a, &b, VC(MAX_RUNQ)) && a.len == 0 && b.len == MAX_RUNQ &&
	      holds(&b, VC(MAX_RUNQ)), "migration: into the last free place (queue at the bound)");
	check(!runq_move(&a, &b, VC(1)) && a.len == 0 && b.len == MAX_RUNQ,
	      "migration: a VCPU not on the source queue is not moved");
	check(runq_move(&b, &b, VC(1)) && b.len == MAX_RUNQ, "migration: to its own queue is a no-op");
}

/* Two PCPUs migrating at random in both directions; their queues hold more than one could. */
static struct runq rq2[2];
#define MOVERS_VCPUS	(MAX_RUNQ + MAX_RUNQ / 2)
#define MOVES		200000

static void *mover(void *arg)
{
	unsigned self = (unsigned)(uintptr_t)arg, seed = 12345 + self;

	for (unsigned n = 0; n < MOVES; n++) {
		struct vcpu *v;

		seed = seed * 1103515245 + 12345;
		spin_lock(&rq2[self].lock);
		v = rq2[self].len ? rq2[self].v[(seed >> 8) % rq2[self].len] : NULL;
		spin_unlock(&rq2[self].lock);
		/* Only this thread takes VCPUs off its queue, so v is still there. */
		if (v)
			runq_move(&rq2[self], &rq2[!self], v);
	}
	return NULL;
}

static void test_concurrent_moves(void)
{
	pthread_t t[2];
	bool once = true;

	for (unsigned i = 0; i < MOVERS_VCPUS; i++)
		runq_add(&rq2[i % 2], VC(i));
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, mover, (void *)i);
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (unsigned i = 0; i < MOVERS_VCPUS; i++)
		once &= holds(&rq2[0], VC(i)) != holds(&rq2[1], VC(i));
	check(rq2[0].len <= MAX_RUNQ && rq2[1].len <= MAX_RUNQ &&
	      rq2[0].len + rq2[1].len == MOVERS_VCPUS && once,
	      "migration: %u racing moves of %u VCPUs keep each on exactly one queue, none over "
	      "the bound (%u + %u)", 2 * MOVES, MOVERS_VCPUS, rq2[0].len, rq2[1].len);
}

/* Places one domain into len[] as sched_place does; returns whether it was placed. */
static bool place(unsigned *len, const bool *online, unsigned npcpus, unsigned n,
		  const uint32_t *pin, unsigned npin, unsigned *next, char *why)
{
	unsigned pc[DOM_VCPUS_MAX], before[MAX_PCPUS], next0 = *next;

	memcpy(before, len, sizeof(before));
	why[0] = '\0';
	if (!runq_plan(len, online, npcpus, n, pin, npin, next, pc, why, 160)) {
		if (memcmp(before, len, sizeof(before)) || *next != next0)
			check(0, "plan: a refused domain changed nothing");
		return false;
	}
	for (unsigned i = 0; i < n; i++)
		len[pc[i]]++;
	return true;
}

static void test_plan(void)
{
	unsigned len[MAX_PCPUS] = { 0 }, next = 0, placed = 0;
	bool online[MAX_PCPUS] = { true, true, false };
	uint32_t pin0[1] = { 0 }, pin2[1] = { 2 }, pin9[1] = { 9 }, pins[2] = { 1, 0 };
	char why[160];

	/* The reported crash: nine 8-VCPU domains on one PCPU. */
	for (unsigned d = 0; d < 9; d++)
		placed += place(len, online, 1, 8, NULL, 0, &next, why);
	check(placed == 8 && len[0] == MAX_RUNQ, "plan: eight 8-VCPU domains fill one PCPU (%u)",
	      len[0]);
	check(!strcmp(why, "no room for vcpu 0: every online PCPU's run queue is full (at most 64 "
		      "VCPUs each)"), "plan: the ninth is refused: %s", why);

	memset(len, 0, sizeof(len));
	len[0] = MAX_RUNQ - 8;
	check(place(len, online, 2, 8, pin0, 1, &next, why) && len[0] == MAX_RUNQ,
	      "plan: pinned VCPUs fill a queue exactly to the bound");
	len[0] = MAX_RUNQ - 7;
	check(!place(len, online, 2, 8, pin0, 1, &next, why) &&
	      !strcmp(why, "vcpu 7 is pinned to pcpu 0, whose run queue is full (64 VCPUs, at "
		      "most 64)"), "plan: one pinned VCPU past the bound refuses the domain: %s", why);

	memset(len, 0, sizeof(len));
	len[0] = MAX_RUNQ;
	next = 0;
	check(place(len, online, 3, 4, NULL, 0, &next, why) && len[1] == 4 && len[2] == 0,
	      "plan: unpinned VCPUs skip a full PCPU and an offline one");
	check(!place(len, online, 3, 1, pin2, 1, &next, why) &&
	      !strcmp(why, "vcpu 0 is pinned to pcpu 2, which is not online"),
	      "plan: a pin to an offline PCPU: %s", why);
	check(!place(len, online, 3, 1, pin9, 1, &next, why) &&
	      !strcmp(why, "vcpu 0 is pinned to pcpu 9, which is not online"),
	      "plan: a pin past the PCPUs: %s", why);
	len[0] = 3;
	len[1] = 5;
	check(place(len, online, 3, 2, pins, 2, &next, why) && len[0] == 4 && len[1] == 6,
	      "plan: one pin per VCPU");
	memset(len, 0, sizeof(len));
	next = 0;
	check(place(len, online, 2, 3, NULL, 0, &next, why) && len[0] == 2 && len[1] == 1 &&
	      place(len, online, 2, 1, NULL, 0, &next, why) && len[1] == 2,
	      "plan: unpinned VCPUs go round robin across domains");
	check(!place(len, online, MAX_PCPUS + 1, 1, NULL, 0, &next, why),
	      "plan: more PCPUs than MAX_PCPUS is refused, not overrun: %s", why);
}

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

static void test_domain_limits(void)
{
	struct dom_config cfg;

	check(dom_config_parse(0, "vcpus=8", 1, NULL, quiet, NULL, &cfg) == DOM_CFG_OK &&
	      cfg.vcpus == DOM_VCPUS_MAX, "limits: vcpus=%u (DOM_VCPUS_MAX) is accepted",
	      DOM_VCPUS_MAX);
	check(dom_config_parse(0, "vcpus=9", 1, NULL, quiet, NULL, &cfg) == DOM_CFG_FATAL,
	      "limits: vcpus=%u is refused", DOM_VCPUS_MAX + 1);
	/* Every module the boot takes becomes a domain (hv/main.c builds one per module). */
	check(MB_MODS_MAX <= MAX_DOMAINS, "limits: %u modules at most, each fits a domain slot (%u)",
	      MB_MODS_MAX, MAX_DOMAINS);
	/* A domain of the most VCPUs always fits an empty PCPU. */
	check(DOM_VCPUS_MAX <= MAX_RUNQ, "limits: one domain of DOM_VCPUS_MAX fits a run queue");
}

int main(void)
{
	test_capacity();
	test_move();
	test_concurrent_moves();
	test_plan();
	test_domain_limits();
	return unit_summary();
}
