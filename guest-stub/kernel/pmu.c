/* The PMU driver's core: per-thread Sum/Start at every switch, SYS_PMU, overflow notifications. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/kernel/internal.h"
#include "guest-stub/kernel/pmu_backend.h"
#include "include/perfvisor/hypercall.h"
#include "include/x86/cr.h"
#include "include/x86/pmu_msr.h"

/*
 * One page per VCPU, in guest RAM (seed 003 figure 6): the hypervisor's (pv, read-only once
 * set up) or the kernel's own (hvm). Threads find theirs by smp_id.
 */
static union kpmu_page areas[KCPU_MAX] __attribute__((aligned(PV_PMU_AREA_STRIDE)));

static const struct kpmu_backend *backend;
static enum kpmu_mode mode;
bool kpmu_skip = true;
bool kpmu_inject_skip_by_size;
static bool inject_early_start;
struct kpmu_stats kpmu_cpu_stats[KCPU_MAX];
static bool cpu_ready[KCPU_MAX];
static uint64_t sample_rdtsc(void *ctx);
/* Phys as the library reads it, but the TSC read keeps its value: sampled_tsc. */
static const struct pv_read_ops ops = { kpmu_rdpmc, sample_rdtsc, NULL };
/* Per VCPU: the TSC of the last sample, the instant a thread's window stopped or went on. */
static uint64_t sampled_tsc[KCPU_MAX];

const struct kpmu_stats *kpmu_stats(unsigned cpu)
{
	return &kpmu_cpu_stats[cpu];
}

enum kpmu_mode kpmu_mode(void)
{
	return mode;
}

bool kpmu_set_skip(bool on)
{
	bool was = kpmu_skip;

	kpmu_skip = on;
	return was;
}

/* The last RDTSC of pv_sample() is the value it took: the TSC of its last pass. */
static uint64_t sample_rdtsc(void *ctx)
{
	uint64_t tsc = kpmu_rdtsc(ctx);

	sampled_tsc[this_cpu()->id] = tsc;
	return tsc;
}

/* Where a user thread's user-mode state is while it is in the kernel: its first frame. */
static uint64_t user_rip(const struct kthread *k)
{
	const struct kframe *f = (const struct kframe *)k->kstack_top - 1;

	/* Kernel threads have none (and "main" no kernel stack of its own): 0. */
	return k->kstack && (f->cs & 3) == 3 ? f->rip : 0;
}

/*
 * The thread learns of its overflows (a profiler would signal it): one notification and one
 * sample RIP per overflow, however many came before it could be told (counts, PV_PENDING).
 */
static void notify(struct kthread *k, uint32_t counts, bool late)
{
	struct kpmu_thread *t = k->pmu;

	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++) {
		for (uint32_t n = pv_pending_count(counts, i); n; n--) {
			t->notified[i]++;
			t->rips[t->nrips % KPMU_RIPS] = user_rip(k);
			t->nrips++;
			t->notified_late += late;
		}
	}
}

/*
 * Switch-in: overflows the thread missed while being suspended reach it now, in its own
 * context (seed 003 4.2.2); then its control is loaded (or the call skipped) and Start* is
 * sampled right after, which leaves the call's own events out (seed 003 equation 4).
 */
static int64_t resume(struct kthread *k, unsigned cpu)
{
	struct kpmu_thread *t = k->pmu;
	int64_t ret;

	if (t->pending) {
		notify(k, t->pending, true);
		t->pending = 0;
	}
	/* inject=early-start: the validation suite's deliberate breakage of equation 4. */
	if (inject_early_start)
		k->info.sample_retry_tsc += pv_thread_resume(&t->counts, areas, (int)cpu, &ops);
	ret = backend->load(t, cpu);
	if (!inject_early_start)
		k->info.sample_retry_tsc += pv_thread_resume(&t->counts, areas, (int)cpu, &ops);
	k->resumed_at = sampled_tsc[cpu];
	return ret;
}

/* Switch-out: Sum_thread += Phys* - Start*_thread first: the suspension's work is not in it. */
static void suspend(struct kthread *k, unsigned cpu)
{
	struct kpmu_thread *t = k->pmu;

	k->info.sample_retry_tsc += pv_thread_suspend(&t->counts, &ops);
	if (k->trap_in)
		k->info.window_kernel_tsc += sampled_tsc[cpu] - k->trap_in;
	k->trap_in = 0;
	t->pending = pv_pending_merge(t->pending, backend->unload(t, cpu));
}

static bool counting(const struct kthread *k)
{
	return k->pmu && k->pmu->running;
}

static void on_switch_out(struct kthread *prev)
{
	if (counting(prev))
		suspend(prev, this_cpu()->id);
}

static void on_switch_in(struct kthread *next)
{
	unsigned cpu = this_cpu()->id;

	/* Each VCPU once: RDPMC for user threads, and what the backend needs on every VCPU. */
	if (!cpu_ready[cpu]) {
		uint64_t cr4;

		__asm__ volatile("movq %%cr4, %0" : "=r"(cr4));
		__asm__ volatile("movq %0, %%cr4" : : "r"(cr4 | CR4_PCE));
		if (backend->cpu_init)
			backend->cpu_init();
		cpu_ready[cpu] = true;
	}
	if (counting(next))
		resume(next, cpu);
	else
		backend->load(NULL, cpu);
}

/*
 * What the kernel's paths add to a counting thread's TSC window, so that the validation suite
 * can tell two runs' windows apart by their kernel work (docs/validation.md). At an entry
 * while counting: the way out of the thread's last entry is charged up to entry.S's stamp of
 * it, and this entry's path runs from its stamp to the suspension's sample (suspend()) or, when
 * nothing switches, to the way out. At the way out: from the resume's sample, or from this
 * entry's stamp. The thread itself is in user mode between the two, so the VCPU's exit stamp
 * at its next entry is its own.
 */
static void on_trap_enter(struct kthread *k)
{
	const struct kcpu *c = this_cpu();

	if (!counting(k)) {
		k->trap_in = 0;
		return;
	}
	if (k->charge_from)
		k->info.window_kernel_tsc += c->exit_tsc - k->charge_from;
	k->charge_from = 0;
	k->trap_in = c->entry_tsc;
	k->info.window_entries++;
}

static void on_trap_leave(struct kthread *k)
{
	k->charge_from = 0;
	if (counting(k))
		k->charge_from = k->resumed_at ? k->resumed_at : k->trap_in;
	k->resumed_at = 0;
	k->trap_in = 0;
}

static const struct kthread_hooks hooks = {
	on_switch_out, on_switch_in, on_trap_enter, on_trap_leave
};

static void on_overflow(uint8_t vector)
{
	struct kthread *k = this_cpu()->current;
	struct kpmu_thread *t = counting(k) ? k->pmu : NULL;
	struct kpmu_stats *s = &kpmu_cpu_stats[this_cpu()->id];
	uint32_t counts = backend->iack(t);

	(void)vector;
	s->overflow_irqs++;
	/* None: the thread that overflowed was suspended first; it hears of it when resumed. */
	if (counts)
		notify(k, counts, false);
	else
		s->stale_irqs++;
}

/* What the hypervisor would refuse: a control must be valid before it is anyone's. */
static bool control_valid(const struct pv_control *c)
{
	if (c->ncounters > PV_PMU_COUNTERS || c->imode_mask >> c->ncounters)
		return false;
	for (unsigned i = 0; i < c->ncounters; i++)
		if (c->evtsel[i] >> 32 || !(c->evtsel[i] & EVTSEL_EN) || c->ireset[i] >> 48)
			return false;
	return true;
}

/* A new measurement: every value from zero, i-mode counters a full period from overflow. */
static int64_t start(struct kthread *k, const struct pv_control *c)
{
	struct kpmu_thread *t = k->pmu;
	unsigned cpu = this_cpu()->id;

	if (!control_valid(c))
		return -KPMU_EINVAL;
	if (t->running)
		suspend(k, cpu);
	memset(&t->counts, 0, sizeof(t->counts));
	memset(t->notified, 0, sizeof(t->notified));
	t->notified_late = t->nrips = 0;
	t->pending = 0;
	t->control = *c;
	memcpy(t->ivalues, c->ireset, sizeof(t->ivalues));
	t->running = 1;
	return resume(k, cpu);
}

static int64_t stop(struct kthread *k)
{
	unsigned cpu = this_cpu()->id;

	struct kpmu_thread *t = k->pmu;

	if (!t->running)
		return 0;
	suspend(k, cpu);
	/* Overflows its suspension found: it is still running here, in its own context. */
	if (t->pending) {
		notify(k, t->pending, true);
		t->pending = 0;
	}
	t->running = 0;
	pv_thread_stop(&t->counts);
	return backend->load(NULL, cpu);
}

static int64_t iresume(struct kthread *k)
{
	struct kpmu_thread *t = k->pmu;
	unsigned cpu = this_cpu()->id;

	if (!t->running)
		return -KPMU_EINVAL;
	suspend(k, cpu);
	memcpy(t->ivalues, t->control.ireset, sizeof(t->ivalues));
	/* Overflows its suspension found stay pending: resume() tells the thread of them. */
	return resume(k, cpu);
}

/*
 * A suspension and a resume, as at a switch; then every value as of that suspension: a-mode
 * ones and the TSC are Sum_thread, i-mode ones ivalues and the notifications (the resume told
 * the thread of the overflows the suspension found). They are copied out here because the
 * thread's next switch moves ivalues on: loaded by the thread after the call, they could be
 * from a switch after it (pvtest p).
 */
static int64_t iread(struct kthread *k, uint64_t values[PV_NVALUES])
{
	struct kpmu_thread *t = k->pmu;
	unsigned cpu = this_cpu()->id;
	int64_t ret = 0;

	if (t->running) {
		suspend(k, cpu);
		ret = resume(k, cpu);
	}
	for (unsigned i = 0; i < PV_NVALUES; i++)
		values[i] = t->control.imode_mask >> i & 1 ? kpmu_ievents(t, i) : t->counts.sum[i];
	return ret;
}

static int64_t probe(struct kpmu_probe *p)
{
	int64_t exits;

	__asm__ volatile("vmcall" : "=a"(exits) : "a"((uint64_t)HC_VCPU_EXITS) : "memory");
	p->exits = (uint64_t)exits;
	p->hypercalls = kpmu_cpu_stats[this_cpu()->id].hypercalls;
	return 0;
}

static struct kpmu_thread *open_thread(struct kthread *k)
{
	if (!k->pmu) {
		k->pmu = calloc(1, sizeof(*k->pmu));
		if (!k->pmu)
			return NULL;
		k->pmu->areas = areas;
		k->pmu->mode = mode;
	}
	return k->pmu;
}

static int64_t on_syscall(uint64_t op, uint64_t arg, uint64_t unused)
{
	struct kthread *k = this_cpu()->current;

	(void)unused;
	if (op == KPMU_OPEN)
		return (int64_t)(uintptr_t)open_thread(k);
	if (op == KPMU_PROBE)
		return probe((struct kpmu_probe *)(uintptr_t)arg);
	if (!k->pmu)
		return -KPMU_EINVAL;
	switch (op) {
	case KPMU_CONTROL:
		return start(k, (const struct pv_control *)(uintptr_t)arg);
	case KPMU_IRESUME:
		return iresume(k);
	case KPMU_STOP:
		return stop(k);
	case KPMU_IREAD:
		return iread(k, (uint64_t *)(uintptr_t)arg);
	default:
		return -KPMU_EINVAL;
	}
}

bool kpmu_init(int argc, char **argv)
{
	unsigned n = kernel_ncpus();

	backend = &kpmu_pv_backend;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "mode=hvm"))
			backend = &kpmu_hvm_backend;
		else if (!strcmp(argv[i], "skip=off"))
			kpmu_skip = false;
		else if (!strcmp(argv[i], "inject=early-start"))
			inject_early_start = true;
		else if (!strcmp(argv[i], "inject=skip-by-size"))
			kpmu_inject_skip_by_size = true;
	}
	mode = backend == &kpmu_hvm_backend ? KPMU_MODE_HVM : KPMU_MODE_PV;
	if (!rt_under_perfvisor()) {
		printf("kpmu: not under perfvisor: no paravirtual PMU, no exit counts\n");
		return false;
	}
	if (!backend->init(areas, n))
		return false;
	kernel_irq_register(KPMU_VECTOR, on_overflow);
	kernel_syscall_register(SYS_PMU, on_syscall);
	kthread_set_hooks(&hooks);
	printf("kpmu: mode %s, resume skipping %s, overflow vector %#x, %u vcpus%s%s\n",
	       backend->name, kpmu_skip ? "on" : "off", KPMU_VECTOR, n,
	       inject_early_start ? "; inject=early-start: Start* sampled before the resume" : "",
	       kpmu_inject_skip_by_size ?
	       "; inject=skip-by-size: RESUME skipped for any control as long as the active one" : "");
	return true;
}

void kpmu_report(void)
{
	for (unsigned i = 0; i < kernel_ncpus(); i++) {
		const struct kpmu_stats *s = &kpmu_cpu_stats[i];

		printf("kpmu: vcpu %u: %llu resumes, %llu skipped, %llu hypercalls, "
		       "%llu overflow interrupts (%llu found the thread already suspended)\n", i,
		       (unsigned long long)s->resumes, (unsigned long long)s->skips,
		       (unsigned long long)s->hypercalls, (unsigned long long)s->overflow_irqs,
		       (unsigned long long)s->stale_irqs);
	}
}
