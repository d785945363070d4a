/* Per-PCPU scheduling loop: pick, switch in (TSC offset), run a slice of VM entries, switch out, maybe migrate. */
#include "lib/cpu.h"
#include "lib/exit.h"
#include "lib/frame.h"
#include "lib/inject.h"
#include "lib/printk.h"
#include "hv/domain.h"
#include "hv/irq.h"
#include "hv/pcpu.h"
#include "hv/sched.h"
#include "hv/spec.h"
#include "hv/step.h"
#include "hv/vcpu.h"
#include "hv/vmexit.h"
#include "hv/vmx.h"
#include "hv/vmx_caps.h"
#include "hv/vmx_ops.h"

struct sched_options sched_opts = { .slice_us = 10000, .max_cpus = MAX_PCPUS };
uint64_t tsc_khz;

static volatile int run_finished;
/* The shortest guest run between forced exits, in host TSC ticks. */
#define MIN_RUN	2000
uint64_t first_entry_tsc;

/* PIT channel 2 gated by port 0x61 (the classic calibration; the PIT runs at 1.193182 MHz). */
void sched_calibrate_tsc(void)
{
	const uint16_t ticks = 11932;	/* 10 ms */
	uint64_t t0, t1;
	uint8_t ctl = inb(0x61);

	outb(0x61, (ctl & ~0x02) | 0x01);	/* gate on, speaker off */
	outb(0x43, 0xB0);			/* channel 2, lo/hi, mode 0 */
	outb(0x42, ticks & 0xFF);
	outb(0x42, ticks >> 8);
	t0 = rdtsc();
	for (unsigned long i = 0; i < 100000000ul && !(inb(0x61) & 0x20); i++)
		;
	t1 = rdtsc();
	outb(0x61, ctl);
	tsc_khz = (t1 - t0) / 10;
	if (!tsc_khz)
		tsc_khz = 1000000;	/* no PIT: assume 1 GHz rather than divide by zero */
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

bool sched_place(struct vcpu *const *vcpus, unsigned n, const uint32_t *pin, unsigned npin,
		 char *why, size_t why_size)
{
	static unsigned next_pcpu;
	unsigned len[MAX_PCPUS], pc[DOM_VCPUS_MAX];
	bool online[MAX_PCPUS];

	if (n > DOM_VCPUS_MAX) {
		snprintk(why, why_size, "%u VCPUs, at most %u", n, DOM_VCPUS_MAX);
		return false;
	}
	/* Domains are built on the boot PCPU before the others schedule: the lengths hold still. */
	for (unsigned i = 0; i < num_pcpus; i++) {
		len[i] = pcpus[i].rq.len;
		online[i] = pcpus[i].online;
	}
	if (!runq_plan(len, online, num_pcpus, n, pin, npin, &next_pcpu, pc, why, why_size))
		return false;
	for (unsigned i = 0; i < n; i++) {
		vcpus[i]->pcpu = &pcpus[pc[i]];
		/* The plan left room on every queue it chose. */
		runq_add(&pcpus[pc[i]].rq, vcpus[i]);
	}
	return true;
}

uint64_t sched_guest_tsc(struct vcpu *v)
{
	return (v->tsc_frozen ? v->tsc_frozen : rdtsc()) + v->tsc_offset;
}

void sched_tsc_freeze(struct vcpu *v, uint64_t exit_tsc)
{
	if (v->dom->cfg.tsc == DOM_TSC_VCPU)
		v->tsc_frozen = exit_tsc;
}

/*
 * The guest resumes at the exit's TSC plus the few ticks from here to the entry: never below
 * anything it read before the exit, nor below the TSC its APIC timer was judged at.
 */
void sched_tsc_thaw(struct vcpu *v)
{
	if (!v->tsc_frozen)
		return;
	v->entry_tsc = rdtsc();
	v->tsc_offset = sched_thawed_offset(v->tsc_offset, v->tsc_frozen, v->entry_tsc);
	v->tsc_frozen = 0;
	vmwrite(VMCS_TSC_OFFSET, v->tsc_offset);
}

/* A halted VCPU runs again once its timer fired or an interrupt is pending (SDM Vol. 3A 11.8). */
static bool wants_to_run(struct vcpu *v)
{
	bool run;

	if (v->dom->state != DOM_RUNNING) {
		v->state = VCPU_DEAD;
		return false;
	}
	if (v->state == VCPU_RUNNABLE)
		return true;
	if (v->state != VCPU_HALTED)
		return false;
	spin_lock(&v->lock);
	vapic_timer_update(&v->apic, sched_guest_tsc(v));
	run = vapic_has_event(&v->apic);
	spin_unlock(&v->lock);
	if (run)
		v->state = VCPU_RUNNABLE;
	return run;
}

static struct vcpu *pick_next(struct pcpu *p)
{
	struct vcpu *pick = (struct vcpu *)0;
	struct runq *q = &p->rq;

	spin_lock(&q->lock);
	for (unsigned n = 0; n < q->len && !pick; n++) {
		unsigned i = (q->next + n) % q->len;

		if (wants_to_run(q->v[i])) {
			pick = q->v[i];
			q->next = i + 1;
		}
	}
	/* Dead VCPUs leave the queue for good; this PCPU, where each last ran, releases them. */
	for (unsigned i = 0; i < q->len;) {
		struct vcpu *dead = q->v[i];

		if (dead->state == VCPU_DEAD) {
			q->v[i] = q->v[--q->len];
			dom_vcpu_gone(dead);
		} else {
			i++;
		}
	}
	spin_unlock(&q->lock);
	return pick;
}

/*
 * The one switch hook: every VCPU switch and migration passes here, so per-VCPU virtual state
 * (the TSC now, the PMU later) is saved and restored in one place.
 */
static void switch_in(struct pcpu *p, struct vcpu *v)
{
	uint64_t now = rdtsc(), pmu_start;
	bool moved = v->pcpu_last != p;

	vcpu_load(v);
	if (p->last_dom != v->dom)
		spec_domain_switch();
	p->last_dom = v->dom;
	/* SDM Vol. 3C 29.4.3.1: this PCPU may hold translations from before the VCPU left. */
	if (moved)
		invept_single(v->dom->eptp);
	v->pcpu_last = p;
	/* Seed 003, 4.2.5: a VCPU's TSC does not advance while it waits for a PCPU. */
	if (v->dom->cfg.tsc == DOM_TSC_VCPU && v->desched_tsc && !inject_on(INJECT_TSC_NO_OFFSET))
		v->tsc_offset -= now - v->desched_tsc;
	/* A domain's wall time ("ran" in the summary) starts when it first runs. */
	if (!v->dom->start_tsc)
		__atomic_compare_exchange_n(&v->dom->start_tsc, &(uint64_t){ 0 }, now, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	vmwrite(VMCS_TSC_OFFSET, v->tsc_offset);
	pmu_start = rdtsc();
	pmu_switch_in(v);
	p->switch_pmu_tsc += rdtsc() - pmu_start;
	if (v->sipi_pending) {
		vcpu_start_real_mode(v, v->sipi_vector);
		v->sipi_pending = false;
	}
	p->running = v;
	p->switches++;
	if (!first_entry_tsc)
		__atomic_compare_exchange_n(&first_entry_tsc, &(uint64_t){ 0 }, rdtsc(), false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	p->switch_tsc += rdtsc() - now;
}

static void switch_out(struct pcpu *p, struct vcpu *v)
{
	uint64_t start = rdtsc();

	pmu_switch_out(v);
	p->switch_pmu_tsc += rdtsc() - start;
	/* The wait for a PCPU from here is switch_in()'s to take out, as for every VCPU. */
	sched_tsc_thaw(v);
	vcpu_put(v);
	/* Only a VCPU that wanted to run was kept waiting; a halted one's clock keeps going. */
	v->desched_tsc = v->state == VCPU_RUNNABLE ? rdtsc() : 0;
	p->running = (struct vcpu *)0;
	p->switch_tsc += rdtsc() - start;
}

static uint64_t rng_state[MAX_PCPUS];

/* migrate=random: at a slice end, move an unpinned VCPU to a random other PCPU. */
static void maybe_migrate(struct pcpu *p, struct vcpu *v)
{
	struct pcpu *q;

	if (!sched_opts.migrate_random || num_pcpus < 2 || v->dom->cfg.npin ||
	    v->dom->state != DOM_RUNNING)
		return;
	if (!rng_state[p->index])
		rng_state[p->index] = sched_opts.seed * 2654435761u + p->index + 1;
	if (xorshift(&rng_state[p->index]) % 2)
		return;
	q = &pcpus[(p->index + 1 + xorshift(&rng_state[p->index]) % (num_pcpus - 1)) % num_pcpus];
	vcpu_unload(v);
	/*
	 * A full queue refuses the VCPU: it stays here rather than overfill the other PCPU. Its
	 * PCPU is set first: q may pick it the moment it is on q's queue.
	 */
	v->pcpu = q;
	if (!runq_move(&p->rq, &q->rq, v)) {
		v->pcpu = p;
		pr_debug("[%s] vcpu %u: stays on pcpu %u: pcpu %u's run queue is full\n",
			 v->dom->cfg.name, v->id, p->index, q->index);
		return;
	}
	v->migrations++;
	/* It may be q's only work: q wakes now, not at the end of its idle wait. */
	irq_kick(v);
	pr_debug("[%s] vcpu %u: migrates from pcpu %u to pcpu %u\n", v->dom->cfg.name, v->id,
		 p->index, q->index);
	__atomic_fetch_add(&q->migrations_in, 1, __ATOMIC_RELAXED);
}

static uint32_t preemption_value(struct vcpu *v, uint64_t slice_end)
{
	uint64_t now = rdtsc(), end = slice_end, deadline;

	spin_lock(&v->lock);
	deadline = vapic_timer_deadline(&v->apic);
	spin_unlock(&v->lock);
	if (deadline != VAPIC_NO_DEADLINE && deadline - v->tsc_offset < end)
		end = deadline - v->tsc_offset;
	/* The PMU may need the run to end earlier (a cycle counter's overflow point). */
	if (v->pmu_run_limit && now + v->pmu_run_limit < end)
		end = now + v->pmu_run_limit;
	v->pmu_run_limit = 0;
	/* A deadline always in the past (a timer of period 1) must not stop the guest from running:
	 * every entry gets at least MIN_RUN ticks, as hardware runs a handler between interrupts. */
	if ((int64_t)(end - now) < MIN_RUN)
		end = now + MIN_RUN;
	end = (end - now) >> vmx_caps.preemption_rate;
	return end > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)end;
}

void sched_ept_sync(struct vcpu *v)
{
	struct domain *d = v->dom;
	struct ept_user *users[DOM_VCPUS_MAX];
	uint64_t gen = ept_changed(&d->ept_gen);

	invept_single(d->eptp);
	v->ept.gen = gen;
	for (unsigned i = 0; i < d->nvcpus; i++)
		users[i] = &d->vcpus[i]->ept;
	ept_wait(users, d->nvcpus, &v->ept, gen);
}

/* VM entries until the slice ends, the VCPU halts or yields, or its domain ends. */
static void run_slice(struct vcpu *v)
{
	uint64_t slice_end = rdtsc() + sched_opts.slice_us * tsc_khz / 1000;
	uint64_t t_entry, t_exit = 0, gen, step_exits;

	v->resched = false;
	while (v->state == VCPU_RUNNABLE && v->dom->state == DOM_RUNNING && !v->resched) {
		if ((int64_t)(rdtsc() - slice_end) >= 0)
			break;
		/* timeout=: a runaway domain is stopped, not waited for forever. */
		if (v->dom->cfg.timeout_ms &&
		    rdtsc() - v->dom->start_tsc > v->dom->cfg.timeout_ms * tsc_khz) {
			dom_kill(v->dom, v, "ran longer than its timeout of %lu ms",
				 v->dom->cfg.timeout_ms);
			break;
		}
		irq_deliver(v);
		step_before_entry(v);
		pmu_before_entry(v);
		/* Before the deadlines are converted to host time, which the offset moves. */
		sched_tsc_thaw(v);
		vmwrite(VMCS_PREEMPTION_TIMER, preemption_value(v, slice_end));
		t_entry = rdtsc();
		v->entry_tsc = t_entry;
		/* The hypervisor's time for this VCPU: from each exit up to the next entry. */
		if (t_exit)
			v->hv_tsc += t_entry - t_exit;
		/* No translation older than the domain's EPT generation (SDM Vol. 3C 29.4.3.1). */
		gen = ept_enter(&v->ept, &v->dom->ept_gen);
		if (gen) {
			invept_single(v->dom->eptp);
			__atomic_store_n(&v->ept.gen, gen, __ATOMIC_RELEASE);
		}
		spec_before_entry();
		if (!vmx_enter(v)) {
			ept_leave(&v->ept);
			/* The fast path's blocks retired before the entry that failed. */
			step_fast_flush(v);
			dom_kill(v->dom, v, "VM entry failed");
			break;
		}
		ept_leave(&v->ept);
		t_exit = rdtsc();
		pmu_after_exit(v);
		v->run_tsc += t_exit - t_entry;
		step_exits = v->step.exits;
		vmexit_handle(v);
		if (v->step.exits != step_exits)
			/* From the last entry, the stepper's fast path's if it ran since. */
			sched_tsc_freeze(v, sched_charged_tsc(v->entry_tsc, t_exit,
							      v->step.run_insns));
		/* Only this exit's block may be charged, never a later exit with stepping off. */
		v->step.run_insns = 0;
	}
	if (t_exit)
		v->hv_tsc += rdtsc() - t_exit;
}

/* Every domain has ended: let the PCPUs hand back their VCPUs, then the summary and leak check. */
static void finish_run(struct pcpu *p)
{
	uint64_t deadline = rdtsc() + 100 * tsc_khz, total, free;
	int code;

	if (__atomic_exchange_n(&run_finished, 1, __ATOMIC_ACQ_REL))
		return;
	while (!dom_all_released() && (int64_t)(rdtsc() - deadline) < 0)
		pick_next(p);
	code = dom_summary();
	for (unsigned i = 0; i < num_pcpus; i++)
		printk("perfvisor:   pcpu %u idle: %lu TSC ticks, %lu waits in HLT\n", i,
		       pcpus[i].idle_tsc, pcpus[i].idle_halts);
	frame_stats(&total, &free);
	if (!dom_all_released()) {
		printk("perfvisor: frames: not every domain was released in time\n");
	} else if (free != dom_frames_free_at_start) {
		printk("perfvisor: frames: LEAK: %lu free at the end, %lu before the domains\n",
		       free, dom_frames_free_at_start);
		code = EXIT_LEAK;
	} else {
		printk("perfvisor: frames: %lu free at the end, as before the domains (no leak)\n",
		       free);
	}
	hv_exit(code);
}

/*
 * The earliest host TSC at which a halted VCPU of this PCPU has an APIC timer interrupt, or
 * latest if none comes before it.
 */
static uint64_t wake_deadline(struct pcpu *p, uint64_t now, uint64_t latest)
{
	struct runq *q = &p->rq;
	uint64_t end = latest, d;

	spin_lock(&q->lock);
	for (unsigned i = 0; i < q->len; i++) {
		struct vcpu *v = q->v[i];

		if (v->state != VCPU_HALTED)
			continue;
		spin_lock(&v->lock);
		d = vapic_timer_deadline(&v->apic);
		spin_unlock(&v->lock);
		if (d != VAPIC_NO_DEADLINE && (int64_t)(d - v->tsc_offset - now) <
		    (int64_t)(end - now))
			end = d - v->tsc_offset;
	}
	spin_unlock(&q->lock);
	return end;
}

/*
 * Nothing to run: halt until a kick (irq_kick: a VCPU here became runnable or a domain ended) or
 * the next APIC timer deadline of a halted VCPU, and never longer than a slice, the longest a
 * VCPU waits anyway. An idle PCPU that spins takes its share of an emulator's time from the PCPU
 * that has work (Bochs runs its CPUs in turn). Returns a VCPU found runnable on the way, or none.
 */
static struct vcpu *idle(struct pcpu *p)
{
	uint64_t now = rdtsc();
	uint64_t deadline = wake_deadline(p, now, now + sched_opts.slice_us * tsc_khz / 1000);
	struct vcpu *v;

	__atomic_store_n(&p->idle, true, __ATOMIC_SEQ_CST);
	/* A waker that changed a state before it could see the flag: look once more. */
	v = pick_next(p);
	if (!v && !run_finished && !dom_all_ended()) {
		if (irq_idle_halt(deadline))
			p->idle_halts++;
		else
			cpu_relax();
	}
	__atomic_store_n(&p->idle, false, __ATOMIC_RELEASE);
	return v;
}

/* A domain ended: idle PCPUs hand back its VCPUs now rather than at their next deadline. */
static void wake_idle_pcpus(void)
{
	struct pcpu *self = this_pcpu();

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < num_pcpus; i++)
		if (&pcpus[i] != self && pcpus[i].online && pcpus[i].idle)
			irq_kick_pcpu(&pcpus[i]);
}

void sched_run(void)
{
	struct pcpu *p = this_pcpu();

	irq_pcpu_init();
	for (;;) {
		struct vcpu *v;
		uint64_t idle_start;

		/* At the end a PCPU still hands back its dead VCPUs before it stops. */
		if (run_finished) {
			pick_next(p);
			cpu_halt_forever();
		}
		if (dom_all_ended())
			finish_run(p);
		v = pick_next(p);
		if (!v) {
			idle_start = rdtsc();
			v = idle(p);
			p->idle_tsc += rdtsc() - idle_start;
			if (!v)
				continue;
		}
		switch_in(p, v);
		run_slice(v);
		switch_out(p, v);
		if (v->dom->state != DOM_RUNNING)
			wake_idle_pcpus();
		maybe_migrate(p, v);
	}
}

static void deliver_ipi(struct vcpu *t, const struct vapic_ipi *ipi)
{
	switch (ipi->mode) {
	case VAPIC_DM_FIXED:
	case VAPIC_DM_LOWEST:
	case VAPIC_DM_NMI:
		spin_lock(&t->lock);
		vapic_accept(&t->apic, ipi);
		spin_unlock(&t->lock);
		if (t->state == VCPU_HALTED)
			t->state = VCPU_RUNNABLE;
		irq_kick(t);
		break;
	case VAPIC_DM_INIT:
		/* SDM Vol. 3A 10.4.2: INIT puts an AP back to waiting for SIPI. */
		if (t->id) {
			spin_lock(&t->lock);
			vapic_init_ipi(&t->apic);
			spin_unlock(&t->lock);
			t->halted_for_good = false;
			t->state = VCPU_WAIT_SIPI;
		}
		break;
	case VAPIC_DM_SIPI:
		/* Only a VCPU waiting for SIPI takes it; a second SIPI is ignored. */
		if (t->state == VCPU_WAIT_SIPI) {
			t->sipi_vector = ipi->vector;
			t->sipi_pending = true;
			t->state = VCPU_RUNNABLE;
			irq_kick(t);
		}
		break;
	default:
		pr_debug("[%s] IPI delivery mode %u is not emulated\n", t->dom->cfg.name,
			 ipi->mode);
		break;
	}
}

void sched_send_ipi(struct vcpu *from, const struct vapic_ipi *ipi)
{
	struct domain *d = from->dom;

	for (unsigned i = 0; i < d->nvcpus; i++) {
		struct vcpu *t = d->vcpus[i];

		if (vapic_is_target(&t->apic, ipi, t == from))
			deliver_ipi(t, ipi);
	}
}
