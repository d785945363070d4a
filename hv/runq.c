/* Bounded per-PCPU run queues: add, remove and move VCPUs without ever overfilling, and place a domain. */
#include "lib/printk.h"
#include "hv/pcpu.h"
#include "hv/runq.h"

static bool add_locked(struct runq *q, struct vcpu *v)
{
	if (q->len >= MAX_RUNQ)
		return false;
	q->v[q->len++] = v;
	return true;
}

static bool remove_locked(struct runq *q, struct vcpu *v)
{
	for (unsigned i = 0; i < q->len; i++) {
		if (q->v[i] == v) {
			q->v[i] = q->v[--q->len];
			return true;
		}
	}
	return false;
}

bool runq_add(struct runq *q, struct vcpu *v)
{
	bool ok;

	spin_lock(&q->lock);
	ok = add_locked(q, v);
	spin_unlock(&q->lock);
	return ok;
}

void runq_remove(struct runq *q, struct vcpu *v)
{
	spin_lock(&q->lock);
	remove_locked(q, v);
	spin_unlock(&q->lock);
}

bool runq_move(struct runq *from, struct runq *to, struct vcpu *v)
{
	/* One order for every pair: two PCPUs moving VCPUs towards each other cannot deadlock. */
	struct runq *first = from < to ? from : to, *second = from < to ? to : from;
	bool ok = false;

	if (from == to)
		return true;
	spin_lock(&first->lock);
	spin_lock(&second->lock);
	if (to->len < MAX_RUNQ && remove_locked(from, v))
		ok = add_locked(to, v);
	spin_unlock(&second->lock);
	spin_unlock(&first->lock);
	return ok;
}

bool runq_plan(const unsigned *len, const bool *online, unsigned npcpus, unsigned n,
	       const uint32_t *pin, unsigned npin, unsigned *next, unsigned *pc, char *why,
	       size_t why_size)
{
	unsigned add[MAX_PCPUS], rr = *next;

	if (!npcpus || npcpus > MAX_PCPUS) {
		snprintk(why, why_size, "%u PCPUs, expected 1..%u", npcpus, MAX_PCPUS);
		return false;
	}
	for (unsigned p = 0; p < npcpus; p++)
		add[p] = 0;
	for (unsigned i = 0; i < n; i++) {
		if (npin) {
			pc[i] = pin[npin == 1 ? 0 : i];
			if (pc[i] >= npcpus || !online[pc[i]]) {
				snprintk(why, why_size, "vcpu %u is pinned to pcpu %u, which is "
					 "not online", i, pc[i]);
				return false;
			}
			if (len[pc[i]] + add[pc[i]] >= MAX_RUNQ) {
				snprintk(why, why_size, "vcpu %u is pinned to pcpu %u, whose "
					 "run queue is full (%u VCPUs, at most %u)", i, pc[i],
					 len[pc[i]] + add[pc[i]], MAX_RUNQ);
				return false;
			}
		} else {
			unsigned tried = 0;

			/* The next online PCPU with room, in round-robin order. */
			do {
				pc[i] = rr++ % npcpus;
			} while (++tried <= npcpus &&
				 (!online[pc[i]] || len[pc[i]] + add[pc[i]] >= MAX_RUNQ));
			if (tried > npcpus) {
				snprintk(why, why_size, "no room for vcpu %u: every online "
					 "PCPU's run queue is full (at most %u VCPUs each)", i,
					 MAX_RUNQ);
				return false;
			}
		}
		add[pc[i]]++;
	}
	*next = rr;
	return true;
}
