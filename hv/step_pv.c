/* The stepper's guard on paravirtual pages: a VCPU's page is unreadable while its blocks run. */
#include "lib/spinlock.h"
#include "hv/domain.h"
#include "hv/ept.h"
#include "hv/step_pv.h"
#include "hv/vcpu.h"

/*
 * A soft a-mode counter of instructions or branches moves with every guest instruction, and
 * guests read it from their page with no exit; a block only tells the PMU what retired at its
 * end. So while VCPU k runs a block its page (k) is shut in the domain's EPT: any VCPU's read
 * of it exits (EPT violation, SDM Vol. 3C 29.3.3.2), the block is counted up to the reading
 * instruction, which has not retired (step_on_exit), and the page opens for the read, which
 * is then stepped with the page current, as every instruction was before blocks.
 */

static uint64_t page_gpa(const struct domain *d, unsigned k)
{
	return d->ro_start + (uint64_t)k * 4096;
}

/*
 * Read-only again, as HC_PMU_SETUP left it. More rights need no INVEPT: a PCPU that still
 * holds the old translation takes an EPT violation, which invalidates it (SDM Vol. 3C
 * 29.4.3.1, 29.4.3.2), and the read is retried here.
 */
static void open_page(struct domain *d, struct vcpu *owner)
{
	struct step_pv *g = &owner->step.pv;

	if (g->shut)
		ept_set_perms(d->eptp, page_gpa(d, owner->id), EPT_R);
	g->shut = false;
	g->wanted = false;
	g->open_left = STEP_PV_OPEN_STEPS;
}

bool step_flushed_everywhere(struct vcpu *v, uint64_t gen)
{
	struct domain *d = v->dom;
	struct ept_user *users[DOM_VCPUS_MAX];
	unsigned n = 0;

	for (unsigned i = 0; i < d->nvcpus; i++)
		if (d->vcpus[i])
			users[n++] = &d->vcpus[i]->ept;
	return ept_flushed(users, n, &v->ept, gen);
}

bool step_pv_block_start(struct vcpu *v)
{
	struct domain *d = v->dom;
	struct step_pv *g = &v->step.pv;
	bool ok = false;

	spin_lock(&d->ept_lock);
	if (g->wanted) {
		/* A read waits on another PCPU: let it in before the next block. */
		open_page(d, v);
	} else if (!g->shut && g->open_left) {
		g->open_left--;
	} else {
		if (!g->shut) {
			ept_set_perms(d->eptp, page_gpa(d, v->id), 0);
			g->shut = true;
			g->shut_gen = ept_changed(&d->ept_gen);
		}
		/* Until every PCPU flushed, v steps: its page stays current meanwhile. */
		ok = step_flushed_everywhere(v, g->shut_gen);
		g->in_block = ok;
	}
	spin_unlock(&d->ept_lock);
	return ok;
}

void step_pv_block_end(struct vcpu *v)
{
	struct domain *d = v->dom;

	/* Only v sets its own in_block: no lock to look. */
	if (!v->step.pv.in_block)
		return;
	spin_lock(&d->ept_lock);
	v->step.pv.in_block = false;
	spin_unlock(&d->ept_lock);
}

void step_pv_fault(struct vcpu *v, uint64_t gpa)
{
	struct domain *d = v->dom;
	unsigned k = (unsigned)((gpa - d->ro_start) / 4096);
	struct vcpu *owner = k < d->nvcpus ? d->vcpus[k] : (struct vcpu *)0;

	/* The stepping's own exit, as the single step of the read was before blocks. */
	v->step.exits++;
	if (!owner)
		return;
	spin_lock(&d->ept_lock);
	/* v's own block was counted at this exit; another VCPU's opens it at its next exit. */
	if (owner->step.pv.in_block)
		owner->step.pv.wanted = true;
	else
		open_page(d, owner);
	spin_unlock(&d->ept_lock);
}
