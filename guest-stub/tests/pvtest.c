/* Acceptance of the guest PMU driver and library: exit-free reads, exact counts, sampling. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/kernel/pmu.h"
#include "guest-stub/lib/papi.h"
#include "guest-stub/lib/pvc.h"
#include "guest-stub/lib/report.h"

#define MAX_READS	32
#define READ_ATTEMPTS	8	/* a timer or slice end may fall among the reads: try again */
#define SKIP_ATTEMPTS	3
#define EXACT_PER_CPU	2	/* threads per VCPU in test b */
#define EXACT_STEP	97	/* thread k of test b runs n + k * EXACT_STEP iterations */
#define IMODE_ALIGNED	16	/* test d: a period whose overflows all fall on a yield's INT */
#define PAPI_THRESHOLD	101

static const uint64_t ins_usr = PVC_EV_INSTRUCTIONS | PVC_USR | PVC_EN;
static const uint64_t br_usr = PVC_EV_BRANCHES | PVC_USR | PVC_EN;
static const uint64_t ins_all = PVC_EV_INSTRUCTIONS | PVC_USR | PVC_OS | PVC_EN;

static const char *domain = "-";
static const char *mode_name;

/* One measured value; expected < 0: no exact expectation (times). */
static void json(uint32_t vcpu, uint32_t tid, const char *event, uint64_t measured,
		 long long expected)
{
	char want[24];

	if (expected < 0)
		snprintf(want, sizeof(want), "null");
	else
		snprintf(want, sizeof(want), "%lld", expected);
	printf("{\"domain\": \"%s\", \"vcpu\": %u, \"thread\": %u, \"event\": \"%s\", "
	       "\"mode\": \"%s\", \"measured\": %llu, \"expected\": %s}\n", domain, vcpu, tid,
	       event, mode_name, (unsigned long long)measured, want);
}

/*
 * The measured windows. Each is one asm block from the SYS_PMU control call, whose return
 * starts counting, to the stop call, whose INT is the last instruction counted: user-mode
 * instructions and branches in between are known exactly. The control call's result stays
 * in R8.
 *
 * window_loop: mov, mov, n * (nop, nop, dec, jnz), mov, mov, int:
 * 4n + 5 instructions, n + 1 branches (INT is a far branch).
 */
static long window_loop(const struct pv_control *c, uint64_t n)
{
	register long rc __asm__("r8");
	long rax = SYS_PMU, rdi = KPMU_CONTROL, rsi = (long)(uintptr_t)c;

	__asm__ volatile("int $0x80\n\t"
			 "mov %%rax, %%r8\n\t"
			 "mov %[n], %%rcx\n"
			 "1:\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "dec %%rcx\n\t"
			 "jnz 1b\n\t"
			 "mov %[sys], %%eax\n\t"
			 "mov %[stop], %%edi\n\t"
			 "int $0x80"
			 : "=&r"(rc), "+a"(rax), "+D"(rdi), "+S"(rsi)
			 : [n] "r"(n), [sys] "i"(SYS_PMU), [stop] "i"(KPMU_STOP)
			 : "rcx", "memory");
	return rc;
}

static uint64_t loop_instructions(uint64_t n)
{
	return 4 * n + 5;
}

/*
 * window_yields: mov, mov, k * (mov, 4 nop, int (yield), dec, jnz), mov, mov, int:
 * 8k + 5 instructions, 2k + 1 branches. Iteration j's yield INT is event 8j: a period of 8
 * or 16 overflows right on it, in the kernel's way to a switch. The labels bound the
 * user RIPs overflow notifications may find.
 */
extern const char pvtest_yields_begin[], pvtest_yields_end[];

static __attribute__((noinline, noclone)) long window_yields(const struct pv_control *c,
							      uint64_t k)
{
	register long rc __asm__("r8");
	long rax = SYS_PMU, rdi = KPMU_CONTROL, rsi = (long)(uintptr_t)c;

	__asm__ volatile("int $0x80\n"
			 "pvtest_yields_begin:\n\t"
			 "mov %%rax, %%r8\n\t"
			 "mov %[k], %%rcx\n"
			 "1:\n\t"
			 "mov %[yield], %%eax\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "int $0x80\n\t"
			 "dec %%rcx\n\t"
			 "jnz 1b\n\t"
			 "mov %[sys], %%eax\n\t"
			 "mov %[stop], %%edi\n\t"
			 "int $0x80\n"
			 "pvtest_yields_end:"
			 : "=&r"(rc), "+a"(rax), "+D"(rdi), "+S"(rsi)
			 : [k] "r"(k), [yield] "i"(SYS_YIELD), [sys] "i"(SYS_PMU),
			   [stop] "i"(KPMU_STOP)
			 : "rcx", "memory");
	return rc;
}

static uint64_t yields_instructions(uint64_t k)
{
	return 8 * k + 5;
}

static uint64_t yields_branches(uint64_t k)
{
	return 2 * k + 1;
}

/* What a measured thread tells main, which alone prints. */
struct run {
	uint64_t n;		/* iterations of its window */
	uint64_t period;	/* test d: its i-mode period */
	uint64_t evtsel;	/* test e: its one counter's event */
	long rc;		/* the control call's result */
	uint32_t tid, vcpu;	/* vcpu: where it ended */
	uint64_t resumes;	/* switch-ins during its window */
	uint64_t vcpu_mask;
	uint64_t v[PV_NVALUES];
	struct kpmu_probe p0, p1;
	uint64_t ievents, notified, late;
	bool rips_ok;
};

static void run_begin(struct run *r, const volatile struct kthread_uinfo *me)
{
	r->tid = me->tid;
	r->resumes = me->resumes;
}

static void run_end(struct run *r, const volatile struct kthread_uinfo *me)
{
	r->resumes = me->resumes - r->resumes;
	r->vcpu = me->smp_id;
	r->vcpu_mask = me->vcpu_mask;
}

static struct kthread *spawn(int (*fn)(void *), void *arg, int cpu)
{
	struct kthread *t = kthread_create(fn, arg, KTHREAD_USER, cpu);

	if (!t) {
		printf("pvtest: out of memory\n");
		exit(1);
	}
	return t;
}

/* Two threads of fn on VCPU 0, each with k iterations, until both have ended. */
static void run_two(int (*fn)(void *), struct run r[2], uint64_t k)
{
	struct kthread *t[2];

	for (int i = 0; i < 2; i++) {
		r[i].n = k;
		t[i] = spawn(fn, &r[i], 0);
	}
	for (int i = 0; i < 2; i++)
		kthread_join(t[i]);
}

/*
 * a: N direct reads from ring 3 between two probes of this VCPU's VM exits. A guest timer
 * tick or a hypervisor slice end among them (the page's tsc.start_vcpu moves) brings exits of
 * its own: such an attempt is disturbed and tried again; every other must show none.
 */
struct reads {
	unsigned n;
	long rc;
	uint32_t tid, vcpu;
	unsigned attempts, disturbed, clean_with_exits;
	int64_t extra;		/* exits other than the probe's own and hypercalls, last attempt */
	uint64_t v[MAX_READS][PV_NVALUES];
};

static uint64_t vcpu_start(const struct kpmu_thread *self)
{
	return PV_LOAD(&pv_area(self->areas, self->counts.smp_id)->tsc.start_vcpu);
}

static int reader(void *arg)
{
	struct reads *r = arg;
	const volatile struct kthread_uinfo *me = sys_self();
	const struct kpmu_thread *self = pvc_open();
	const struct pv_control c = { .ncounters = 2, .evtsel = { ins_usr, br_usr } };

	r->tid = me->tid;
	r->rc = self ? pvc_control(&c) : -1;
	if (r->rc)
		return 1;
	while (r->attempts < READ_ATTEMPTS) {
		uint64_t ticks = me->ticks, resumes = me->resumes, start = vcpu_start(self);
		struct kpmu_probe p0, p1;

		r->attempts++;
		pvc_probe(&p0);
		for (unsigned j = 0; j < r->n; j++)
			pvc_read(self, r->v[j]);
		pvc_probe(&p1);
		r->extra = (int64_t)(p1.exits - p0.exits - 1 - (p1.hypercalls - p0.hypercalls));
		if (me->ticks != ticks || me->resumes != resumes || vcpu_start(self) != start) {
			r->disturbed++;
			continue;
		}
		r->clean_with_exits += r->extra != 0;
		break;
	}
	r->vcpu = me->smp_id;
	pvc_stop();
	return 0;
}

static void test_direct_read(unsigned n)
{
	static struct reads r;
	uint64_t ins = 0, br = 0;
	bool steady = true, clean;

	r.n = n;
	kthread_join(spawn(reader, &r, 0));
	clean = r.attempts > r.disturbed;
	if (r.rc || !clean) {
		report(false, "a: %u undisturbed direct reads (control %ld, %u disturbed)",
		       n, r.rc, r.disturbed);
		return;
	}
	/* Undisturbed reads never retry: each costs the same instructions and branches. */
	for (unsigned j = 1; j < n; j++) {
		uint64_t di = r.v[j][0] - r.v[j - 1][0], db = r.v[j][1] - r.v[j - 1][1];

		if (j == 1) {
			ins = di;
			br = db;
		}
		steady &= di == ins && db == br && di > 0 && r.v[j][PV_TSC] > r.v[j - 1][PV_TSC];
	}
	json(r.vcpu, r.tid, "read-instructions", ins, -1);
	json(r.vcpu, r.tid, "read-exits", (uint64_t)r.extra, kpmu_mode() == KPMU_MODE_PV ? 0 : -1);
	report(steady, "a: %u reads from ring 3 rise steadily: %llu instructions, %llu branches",
	       n, (unsigned long long)ins, (unsigned long long)br);
	if (kpmu_mode() == KPMU_MODE_PV)
		report(!r.clean_with_exits, "a: %u direct reads cost %lld VM exits "
		       "(%u attempts disturbed by a timer or slice end first)", n,
		       (long long)r.extra, r.disturbed);
	else
		report(r.extra >= 2 * (int64_t)n, "a: hvm: %u reads by RDPMC trap: %lld VM exits",
		       n, (long long)r.extra);
}

/* A thread's measured window of r->n iterations under c, and its counts after it. */
static int run_window(struct run *r, const struct pv_control *c,
		      long (*window)(const struct pv_control *c, uint64_t n))
{
	const volatile struct kthread_uinfo *me = sys_self();
	const struct kpmu_thread *self = pvc_open();

	if (!self)
		return 1;
	run_begin(r, me);
	r->rc = window(c, r->n);
	run_end(r, me);
	pvc_read(self, r->v);
	return 0;
}

/* b: threads run known loops while the schedulers of both levels switch them. */
static int looper(void *arg)
{
	struct run *r = arg;
	const volatile struct kthread_uinfo *me = sys_self();
	const struct kpmu_thread *self = pvc_open();
	const struct pv_control c = { .ncounters = 2, .evtsel = { ins_usr, br_usr } };

	if (!self)
		return 1;
	run_begin(r, me);
	r->rc = window_loop(&c, r->n);
	run_end(r, me);
	pvc_read(self, r->v);
	return 0;
}

static void test_exact(unsigned ncpus, uint64_t n)
{
	static struct run r[EXACT_PER_CPU * KCPU_MAX];
	struct kthread *t[EXACT_PER_CPU * KCPU_MAX];
	unsigned count = EXACT_PER_CPU * ncpus;

	for (unsigned k = 0; k < count; k++) {
		r[k].n = n + k * EXACT_STEP;
		t[k] = spawn(looper, &r[k], KTHREAD_ANY_CPU);
	}
	for (unsigned k = 0; k < count; k++)
		kthread_join(t[k]);
	for (unsigned k = 0; k < count; k++) {
		uint64_t ins = loop_instructions(r[k].n), br = r[k].n + 1;

		json(r[k].vcpu, r[k].tid, "instructions", r[k].v[0], (long long)ins);
		json(r[k].vcpu, r[k].tid, "branches", r[k].v[1], (long long)br);
		json(r[k].vcpu, r[k].tid, "tsc", r[k].v[PV_TSC], -1);
		report(!r[k].rc && r[k].v[0] == ins && r[k].v[1] == br,
		       "b: thread %u: %llu instructions, %llu branches, exact over %llu switch-ins "
		       "(vcpus %#llx)", r[k].tid, (unsigned long long)r[k].v[0],
		       (unsigned long long)r[k].v[1], (unsigned long long)r[k].resumes,
		       (unsigned long long)r[k].vcpu_mask);
	}
}

/* c: two threads of one control yield to each other; their switches are the resumes. */
static int yielder(void *arg)
{
	struct run *r = arg;
	const volatile struct kthread_uinfo *me = sys_self();
	const struct kpmu_thread *self = pvc_open();
	const struct pv_control c = { .ncounters = 3, .evtsel = { ins_usr, ins_all, br_usr } };

	if (!self)
		return 1;
	pvc_probe(&r->p0);
	run_begin(r, me);
	r->rc = window_yields(&c, r->n);
	run_end(r, me);
	pvc_probe(&r->p1);
	pvc_read(self, r->v);
	return 0;
}

struct phase {
	struct run r[2];
	uint64_t resumes, skips;
	int64_t async;		/* exits neither probes nor hypercalls: timer, slice end */
};

static void run_phase(struct phase *ph, bool skip, uint64_t k)
{
	struct kpmu_stats s0 = *kpmu_stats(0), s1;
	const struct kpmu_probe *first, *last;
	bool was = kpmu_set_skip(skip);

	memset(ph, 0, sizeof(*ph));
	run_two(yielder, ph->r, k);
	s1 = *kpmu_stats(0);
	ph->resumes = s1.resumes - s0.resumes;
	ph->skips = s1.skips - s0.skips;
	/* Between the first probe and the last: 3 more probes, the hypercalls, and nothing else. */
	first = ph->r[0].p0.exits < ph->r[1].p0.exits ? &ph->r[0].p0 : &ph->r[1].p0;
	last = ph->r[0].p1.exits > ph->r[1].p1.exits ? &ph->r[0].p1 : &ph->r[1].p1;
	ph->async = (int64_t)(last->exits - first->exits - 3 -
			      (last->hypercalls - first->hypercalls));
	kpmu_set_skip(was);
}

static void test_skip(uint64_t k)
{
	static struct phase on, off;
	unsigned attempt;

	for (attempt = 1; attempt <= SKIP_ATTEMPTS; attempt++) {
		run_phase(&on, true, k);
		run_phase(&off, false, k);
		if (!on.async && !off.async)
			break;
		printf("pvtest: c: attempt %u disturbed (%lld and %lld exits of timers): again\n",
		       attempt, (long long)on.async, (long long)off.async);
	}
	report(attempt <= SKIP_ATTEMPTS,
	       "c: phases with and without skipping undisturbed by timers (attempt %u of %u)",
	       attempt, SKIP_ATTEMPTS);
	for (int i = 0; i < 2; i++) {
		const struct run *a = &on.r[i], *b = &off.r[i];
		bool exact = !a->rc && !b->rc && a->v[0] == yields_instructions(k) &&
			     b->v[0] == yields_instructions(k) && a->v[2] == yields_branches(k) &&
			     b->v[2] == yields_branches(k);

		json(a->vcpu, a->tid, "instructions", a->v[0], (long long)yields_instructions(k));
		json(a->vcpu, a->tid, "instructions-os-skip-on", a->v[1], (long long)b->v[1]);
		json(b->vcpu, b->tid, "instructions-os-skip-off", b->v[1], (long long)a->v[1]);
		report(exact, "c: thread %d: user counts exact, skip on and off (%llu switch-ins)",
		       i, (unsigned long long)a->resumes);
		report(a->v[1] == b->v[1], "c: thread %d: kernel+user instructions the same with "
		       "and without resume hypercalls: %llu and %llu", i,
		       (unsigned long long)a->v[1], (unsigned long long)b->v[1]);
	}
	json(0, 0, "resume-hypercalls-skip-on", on.resumes, -1);
	json(0, 0, "resume-hypercalls-skip-off", off.resumes, -1);
	report(on.resumes < off.resumes && on.skips > 0,
	       "c: skipping: %llu resume hypercalls (%llu skipped) instead of %llu",
	       (unsigned long long)on.resumes, (unsigned long long)on.skips,
	       (unsigned long long)off.resumes);
}

/* d: i-mode sampling threads yielding to each other. */
static int sampler(void *arg)
{
	struct run *r = arg;
	const volatile struct kthread_uinfo *me = sys_self();
	const struct kpmu_thread *self = pvc_open();
	const struct pv_control c = {
		.ncounters = 2,
		.imode_mask = 1,
		.evtsel = { ins_usr, br_usr },
		.ireset = { pvc_ireset(r->period) },
	};

	if (!self)
		return 1;
	run_begin(r, me);
	r->rc = window_yields(&c, r->n);
	run_end(r, me);
	pvc_read(self, r->v);
	r->ievents = pvc_ievents(self, 0);
	r->notified = self->notified[0];
	r->late = self->notified_late;
	r->rips_ok = self->nrips == r->notified && self->nrips <= KPMU_RIPS;
	for (uint64_t j = 0; j < self->nrips && j < KPMU_RIPS; j++)
		r->rips_ok &= self->rips[j] >= (uintptr_t)pvtest_yields_begin &&
			      self->rips[j] <= (uintptr_t)pvtest_yields_end;
	return 0;
}

static void test_imode(uint64_t k, uint64_t period)
{
	static struct run r[2];

	r[0].period = IMODE_ALIGNED;
	r[1].period = period;
	run_two(sampler, r, k);
	for (int i = 0; i < 2; i++) {
		uint64_t events = yields_instructions(k), want = events / r[i].period;

		json(r[i].vcpu, r[i].tid, "overflows", r[i].notified, (long long)want);
		json(r[i].vcpu, r[i].tid, "instructions-imode", r[i].ievents, (long long)events);
		json(r[i].vcpu, r[i].tid, "branches", r[i].v[1], (long long)yields_branches(k));
		report(!r[i].rc && r[i].notified == want && r[i].ievents == events &&
		       r[i].v[1] == yields_branches(k),
		       "d: thread %u, period %llu: %llu notifications for %llu events, a-mode "
		       "branches beside exact", r[i].tid, (unsigned long long)r[i].period,
		       (unsigned long long)r[i].notified, (unsigned long long)events);
		report(r[i].rips_ok, "d: thread %u: every notification found it in its own window",
		       r[i].tid);
	}
	/* Period 16 overflows on yields: the thread is switched out before the interrupt. */
	report(r[0].late > 0 && r[0].late <= r[0].notified,
	       "d: %llu of %llu notifications reached a thread suspended before its interrupt",
	       (unsigned long long)r[0].late, (unsigned long long)r[0].notified);
}

/*
 * p: the PAPI layer, as PAPI's own tests use it: a counted run, then the same run sampled
 * with an overflow handler. Sampling must count what counting counted, in periods.
 */
struct sampled {
	struct papi_eventset set;	/* first: the handler gets it back */
	uint64_t calls, nowhere;
};

static void on_sample(struct papi_eventset *set, int event, uint64_t address)
{
	struct sampled *s = (struct sampled *)set;

	s->calls += event == PAPI_TOT_INS;
	s->nowhere += !address;
}

/*
 * The live reads' set, and its handler: it reads the counters itself, a suspension after the
 * read's own system call and before papi_read() returns, which must not move that read's value.
 */
struct live {
	struct papi_eventset set;	/* first: the handler gets it back */
	uint64_t calls;
	int err;
};

static void on_live(struct papi_eventset *set, int event, uint64_t address)
{
	struct live *l = (struct live *)set;
	uint64_t v[PV_NVALUES];

	(void)event;
	(void)address;
	l->calls++;
	l->err |= pvc_iread(v) < 0;
}

struct papi_run {
	uint64_t n;
	int err;
	uint32_t tid, vcpu;
	long long counted[3], sampled[2], live[2];
	uint64_t live_calls;
	struct sampled s;
};

/*
 * The live reads' period, 3n: from the start, workload(n) spans about 4n and workload(2n) the
 * next 8n, so the overflows at 3n, 6n, 9n and 12n fall inside them as long as the reads' own
 * instructions (a few hundred) stay under 2n; none among the reads, whose handler calls would
 * then be inside a measured span. Four by the stop, which comes before 15n.
 */
#define PAPI_LIVE_PERIODS	3
#define PAPI_LIVE_OVERFLOWS	4

static __attribute__((noinline)) void workload(uint64_t n)
{
	__asm__ volatile("1:\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "dec %0\n\t"
			 "jnz 1b"
			 : "+r"(n));
}

/* Both runs take this one path: the same instructions around the workload. */
static __attribute__((noinline)) int measure(struct papi_eventset *set, uint64_t n,
					     long long *values)
{
	int err = papi_start(set);

	if (err)
		return err;
	workload(n);
	return papi_stop(set, values);
}

/*
 * PAPI_TOT_INS (i-mode) read twice around workload(n), n iterations of a 4-instruction loop,
 * while the thread runs: the second read less the first. Each read's value is the kernel's at
 * its system call, so what lies between is the first read's return, the call and the second
 * read up to its system call: no retry loop, the same instructions at any n however the thread
 * is switched or moved meanwhile, so n and 2n differ by exactly the 4n of the extra work.
 */
static __attribute__((noinline)) long long read_around(struct papi_eventset *set, uint64_t n)
{
	long long a[1], b[1];

	if (papi_read(set, a))
		return -1;
	workload(n);
	if (papi_read(set, b))
		return -1;
	return b[0] - a[0];
}

static int papi_live(struct papi_run *p)
{
	static struct live l;
	long long end[1];

	if (papi_create_eventset(&l.set) || papi_add_event(&l.set, PAPI_TOT_INS) ||
	    papi_overflow(&l.set, PAPI_TOT_INS, PAPI_LIVE_PERIODS * p->n, on_live) ||
	    papi_start(&l.set))
		return 1;
	p->live[0] = read_around(&l.set, p->n);
	p->live[1] = read_around(&l.set, 2 * p->n);
	p->live_calls = l.calls;
	return papi_stop(&l.set, end) || l.err;
}

static int papi_user(void *arg)
{
	struct papi_run *p = arg;
	struct papi_eventset set;
	const volatile struct kthread_uinfo *me = sys_self();

	p->tid = me->tid;
	p->err = papi_create_eventset(&set) || papi_add_event(&set, PAPI_TOT_INS) ||
		 papi_add_event(&set, PAPI_BR_INS) || papi_add_event(&set, PAPI_TOT_CYC) ||
		 measure(&set, p->n, p->counted) ||
		 papi_create_eventset(&p->s.set) || papi_add_event(&p->s.set, PAPI_TOT_INS) ||
		 papi_add_event(&p->s.set, PAPI_BR_INS) ||
		 papi_overflow(&p->s.set, PAPI_TOT_INS, PAPI_THRESHOLD, on_sample) ||
		 measure(&p->s.set, p->n, p->sampled) || papi_live(p);
	p->vcpu = me->smp_id;
	return 0;
}

static void test_papi(uint64_t n)
{
	static struct papi_run p;
	long long want;

	p.n = n;
	kthread_join(spawn(papi_user, &p, KTHREAD_ANY_CPU));
	want = p.counted[0] / PAPI_THRESHOLD;
	json(p.vcpu, p.tid, "papi-tot-ins", (uint64_t)p.counted[0], -1);
	json(p.vcpu, p.tid, "papi-tot-ins-sampled", (uint64_t)p.sampled[0], p.counted[0]);
	json(p.vcpu, p.tid, "papi-br-ins", (uint64_t)p.counted[1], -1);
	json(p.vcpu, p.tid, "papi-br-ins-sampled", (uint64_t)p.sampled[1], p.counted[1]);
	json(p.vcpu, p.tid, "papi-tot-cyc", (uint64_t)p.counted[2], -1);
	json(p.vcpu, p.tid, "papi-overflows", p.s.calls, want);
	report(!p.err && p.counted[0] >= 4 * (long long)n && p.counted[1] > (long long)n &&
	       p.sampled[0] == p.counted[0] && p.sampled[1] == p.counted[1] && p.counted[2] > 0,
	       "p: PAPI_TOT_INS %lld and PAPI_BR_INS %lld, the same counted and sampled",
	       p.counted[0], p.counted[1]);
	/* The loop: nop, nop, dec, jnz per iteration (4n more at 2n than at n). */
	report(!p.err && p.live[0] >= 4 * (long long)n && p.live[1] - p.live[0] == 4 * (long long)n &&
	       p.live_calls == PAPI_LIVE_OVERFLOWS,
	       "p: PAPI_read of an i-mode PAPI_TOT_INS is current while the thread runs: %lld "
	       "around n, %lld around 2n, %lld apart (want %llu); %llu handler calls that read "
	       "again (want %u)", p.live[0], p.live[1], p.live[1] - p.live[0],
	       (unsigned long long)(4 * n), (unsigned long long)p.live_calls, PAPI_LIVE_OVERFLOWS);
	report(!p.err && (long long)p.s.calls == want && !p.s.nowhere,
	       "p: papi_overflow every %u instructions: %llu handler calls, each with its address",
	       PAPI_THRESHOLD, (unsigned long long)p.s.calls);
}

/*
 * e: two threads whose controls differ, with as many counters each, yield to each other. A
 * switch between them must load the incoming control: skipping compares the whole control
 * with the page's active one (seed 003 4.2.1), and each thread counts its own event.
 */
static int switcher(void *arg)
{
	const struct run *r = arg;
	const struct pv_control c = { .ncounters = 1, .evtsel = { r->evtsel } };

	return run_window(arg, &c, window_yields);
}

static void test_own_control(uint64_t k)
{
	static struct run r[2];
	const uint64_t want[2] = { yields_instructions(k), yields_branches(k) };
	const char *const name[2] = { "instructions", "branches" };

	r[0].evtsel = ins_usr;
	r[1].evtsel = br_usr;
	run_two(switcher, r, k);
	for (int i = 0; i < 2; i++) {
		json(r[i].vcpu, r[i].tid, name[i], r[i].v[0], (long long)want[i]);
		report(!r[i].rc && r[i].v[0] == want[i], "e: thread %u counts its own event, "
		       "%s: %llu, want %llu (%llu switch-ins)", r[i].tid, name[i],
		       (unsigned long long)r[i].v[0], (unsigned long long)want[i],
		       (unsigned long long)r[i].resumes);
	}
}

/*
 * r: a direct read split by a thread switch (seed 003 4.2.3). The reader takes the first half
 * of its loads (its own and its VCPU's Sum and Start), yields to a thread counting the same
 * event, and takes Phys once that thread has run its loop: mixed, the value would hold the
 * other thread's events. Their controls being the same, both switches skip RESUME and change
 * no page: the retry sees Start*_thread of the TSC changed and reads again. With split=move the
 * reader migrates to VCPU 1 instead, and waits there for the other thread's loop on VCPU 0:
 * its smp_id changed. With inject=no-retry (this guest's argument) the first attempt stands.
 */
#define SPLIT_WAIT	0	/* the other thread waits for the reader to be inside its read */
#define SPLIT_INSIDE	1
#define SPLIT_DONE	2	/* the other thread ran its loop */
#define SPLIT_READ	3	/* the reader has its value: the other thread may stop */

static bool no_retry, split_move;
static volatile int split_state;

struct split {
	uint64_t n;		/* the other thread's loop: 4n + 2 user instructions at least */
	long rc;
	bool other_ran;		/* the other thread ran its loop while the reader was inside */
	unsigned attempts;
	uint64_t read, stop;	/* the split read, and the count at pvc_stop() after it */
};

static const struct pv_control split_control = { .ncounters = 1, .evtsel = { ins_usr } };

static uint64_t split_read(const struct kpmu_thread *self, struct split *sp)
{
	static const struct pv_read_ops ops = KPMU_READ_OPS;
	struct pv_read_snap s;
	struct pv_thread_counts t;
	uint64_t offset, log;

	do {
		pv_snap_take(&s, &self->counts);
		t = self->counts;
		offset = PV_LOAD(&s.a->offset[0]);
		if (!sp->attempts++) {
			split_state = SPLIT_INSIDE;
			if (split_move)
				sys_move(1);
			else
				sys_yield();
			/* Moved, the reader runs beside the other thread: it waits for its loop. */
			while (split_move && split_state != SPLIT_DONE)
				sys_yield();
			sp->other_ran = split_state == SPLIT_DONE;
		}
		log = pv_log_of(&t, offset, 0, pv_phys(s.a, 0, &ops), pv_wrap_mask(s.a, 0));
	} while (!no_retry && pv_snap_changed(&s, &self->counts));
	return log;
}

static int split_reader(void *arg)
{
	struct split *sp = arg;
	const struct kpmu_thread *self = pvc_open();
	uint64_t v[PV_NVALUES];

	sp->rc = self ? pvc_control(&split_control) : -1;
	if (sp->rc)
		return 1;
	sp->read = split_read(self, sp);
	split_state = SPLIT_READ;
	pvc_stop();
	pvc_read(self, v);
	sp->stop = v[0];
	return 0;
}

static int split_other(void *arg)
{
	const struct split *sp = arg;

	if (!pvc_open() || pvc_control(&split_control))
		return 1;
	while (split_state == SPLIT_WAIT)
		sys_yield();
	workload(sp->n);
	split_state = SPLIT_DONE;
	/*
	 * Back to the reader with the same control loaded (its switch-in skips RESUME), and no
	 * stop before its read: the stop's RESUME would change the page.
	 */
	while (split_state != SPLIT_READ)
		sys_yield();
	pvc_stop();
	return 0;
}

static void test_split_read(uint64_t n)
{
	static struct split sp;
	struct kthread *t[2];

	sp.n = n;
	/* The other thread first: counting already when the reader yields to it, it skips RESUME. */
	t[0] = spawn(split_other, &sp, 0);
	t[1] = spawn(split_reader, &sp, 0);
	for (int i = 0; i < 2; i++)
		kthread_join(t[i]);
	report(!sp.rc && sp.other_ran, "r: the other thread ran its %llu-iteration loop inside "
	       "the read", (unsigned long long)n);
	/*
	 * Exact counters only grow: the read is at most the count at the stop, and short of it
	 * by the few straight-line instructions from its Phys to the stop, far fewer than the
	 * other thread's 4n. Mixed, it would exceed the stop's count by about those 4n.
	 */
	report(!sp.rc && sp.read <= sp.stop && sp.stop - sp.read < 4 * n,
	       "r: the split read %llu is at most the %llu counted at the stop, by fewer than "
	       "%llu (%u attempts)", (unsigned long long)sp.read, (unsigned long long)sp.stop,
	       (unsigned long long)(4 * n), sp.attempts);
}

static uint64_t arg_number(int argc, char **argv, const char *key, uint64_t fallback)
{
	size_t len = strlen(key);

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], key, len))
			return strtoull(argv[i] + len, NULL, 0);
	return fallback;
}

static const char *arg_string(int argc, char **argv, const char *key, const char *fallback)
{
	size_t len = strlen(key);

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], key, len))
			return argv[i] + len;
	return fallback;
}

/*
 * Arguments besides the kernel's (quantum=, migrate=, seed=) and the driver's (mode=, skip=):
 * tests= letters of the tests to run (abcdp by default; e and r on request), domain= the name
 * for the JSON lines, n= loop iterations of tests b and r, reads= test a's reads, yields= per
 * thread in tests c, d and e, period= of test d's second sampler, split=move: test r's reader
 * migrates (2 VCPUs) instead of yielding, inject=no-retry: its read takes its first attempt
 * (docs/tour.md).
 */
int main(int argc, char **argv)
{
	unsigned ncpus = kernel_init(argc, argv);
	const char *which = arg_string(argc, argv, "tests=", "abcdp");
	uint64_t n = arg_number(argc, argv, "n=", 600);
	uint64_t reads = arg_number(argc, argv, "reads=", 8);
	uint64_t yields = arg_number(argc, argv, "yields=", 6);
	uint64_t period = arg_number(argc, argv, "period=", 7);

	domain = arg_string(argc, argv, "domain=", domain);
	for (int i = 0; i < argc; i++) {
		no_retry |= !strcmp(argv[i], "inject=no-retry");
		split_move |= !strcmp(argv[i], "split=move");
	}
	if (!kpmu_init(argc, argv)) {
		report(false, "the PMU driver started");
		return report_summary();
	}
	mode_name = kpmu_mode() == KPMU_MODE_PV ? "pv" : "hvm";
	if (reads < 2 || reads > MAX_READS || !n || !yields || !period) {
		printf("pvtest: reads= wants 2..%u; n=, yields=, period= at least 1\n", MAX_READS);
		return 1;
	}
	if (split_move && ncpus < 2) {
		printf("pvtest: split=move wants 2 vcpus\n");
		return 1;
	}
	if (strchr(which, 'a'))
		test_direct_read((unsigned)reads);
	if (strchr(which, 'b'))
		test_exact(ncpus, n);
	if (strchr(which, 'c') && kpmu_mode() == KPMU_MODE_PV)
		test_skip(yields);
	if (strchr(which, 'd'))
		test_imode(yields, period);
	if (strchr(which, 'p'))
		test_papi(n);
	if (strchr(which, 'e'))
		test_own_control(yields);
	if (strchr(which, 'r') && kpmu_mode() == KPMU_MODE_PV)
		test_split_read(n);
	kpmu_report();
	return report_summary();
}
