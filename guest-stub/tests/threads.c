/* Test guest: four user threads sum series on the VCPUs; main joins them and checks them all. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/lib/report.h"

#define WORKERS		4
#define BASE_TERMS	40000	/* worker k sums (k + 2) * BASE_TERMS / 2 terms, ~8 insns each */
#define EXIT_BASE	100	/* worker k ends with EXIT_BASE + k */
#define MAX_TID		64
#define SEQ_TRIES	100

struct work {
	/* set by main */
	unsigned index;
	uint64_t terms;
	/* set by the worker */
	uint64_t squares;
	double harmonic;
	unsigned cpl;
	uint32_t tid;
	uint64_t vcpu_mask;
	uint64_t resumes;
	bool smp_id_ok;
};

static uint64_t hook_in[MAX_TID], hook_out[MAX_TID];

static void count_in(struct kthread *t)
{
	uint32_t tid = kthread_info(t)->tid;

	if (tid < MAX_TID)
		__atomic_fetch_add(&hook_in[tid], 1, __ATOMIC_RELAXED);
}

static void count_out(struct kthread *t)
{
	uint32_t tid = kthread_info(t)->tid;

	if (tid < MAX_TID)
		__atomic_fetch_add(&hook_out[tid], 1, __ATOMIC_RELAXED);
}

static const struct kthread_hooks counting_hooks = { count_out, count_in, NULL, NULL };

/*
 * The work: integer and floating-point sums whose registers a broken switch would corrupt.
 * The empty asm hides i from the compiler, which would otherwise sum in closed form.
 */
static void series(uint64_t terms, uint64_t *squares, double *harmonic)
{
	uint64_t sq = 0;
	double h = 0;

	for (uint64_t i = 1; i <= terms; i++) {
		__asm__ volatile("" : "+r"(i));
		sq += i * i;
		h += 1.0 / (double)i;
	}
	*squares = sq;
	*harmonic = h;
}

/*
 * perfctr-xen's optimistic read (seed 003, 4.2.3): smp_id is good if no switch-in happened
 * around the read, which the resume count tells. It must match what the kernel says.
 */
static bool check_smp_id(const volatile struct kthread_uinfo *me)
{
	for (int i = 0; i < SEQ_TRIES; i++) {
		uint64_t before = me->resumes;
		uint32_t smp_id = me->smp_id;
		unsigned vcpu = sys_vcpu();

		if (me->resumes == before)
			return smp_id == vcpu;
	}
	return false;
}

static void format_mask(char *buf, size_t len, uint64_t mask)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < 64 && used < len; i++)
		if (mask >> i & 1)
			used += (size_t)snprintf(buf + used, len - used, "%s%u", used ? "," : "", i);
}

/* Runs at CPL 3: reaches the kernel only by system calls. */
static int worker(void *arg)
{
	struct work *w = arg;
	const volatile struct kthread_uinfo *me = sys_self();
	char vcpus[32];

	w->cpl = current_cpl();
	w->tid = me->tid;
	series(w->terms, &w->squares, &w->harmonic);
	w->smp_id_ok = check_smp_id(me);
	w->vcpu_mask = me->vcpu_mask;
	w->resumes = me->resumes;
	format_mask(vcpus, sizeof(vcpus), w->vcpu_mask);
	uprintf("threads: worker %u: %llu terms, squares %llu, at CPL %u, ran on vcpus %s, "
		"resumed %llu times\n", w->index, (unsigned long long)w->terms,
		(unsigned long long)w->squares, w->cpl, vcpus, (unsigned long long)w->resumes);
	return EXIT_BASE + (int)w->index;
}

static bool migrate_asked(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "migrate=random") == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static struct work work[WORKERS];
	struct kthread *t[WORKERS];
	int code[WORKERS];
	unsigned ncpus = kernel_init(argc, argv);
	bool migrate = migrate_asked(argc, argv) && ncpus > 1;
	bool cpl3 = true, preempted = false, moved = false, stayed = true, hooks_ok = true;

	kthread_set_hooks(&counting_hooks);
	for (unsigned k = 0; k < WORKERS; k++) {
		work[k].index = k;
		work[k].terms = (k + 2) * BASE_TERMS / 2;
		t[k] = kthread_create(worker, &work[k], KTHREAD_USER, KTHREAD_ANY_CPU);
		if (!t[k]) {
			printf("threads: out of memory\n");
			return 1;
		}
	}
	for (unsigned k = 0; k < WORKERS; k++)
		code[k] = kthread_join(t[k]);

	for (unsigned k = 0; k < WORKERS; k++) {
		struct work *w = &work[k];
		uint64_t n = w->terms, squares;
		double harmonic;

		/* The reference: the closed form, and the same float sum computed here by main. */
		series(n, &squares, &harmonic);
		report(w->squares == n * (n + 1) * (2 * n + 1) / 6 && w->squares == squares &&
		       memcmp(&w->harmonic, &harmonic, sizeof(harmonic)) == 0,
		       "worker %u: sums right", k);
		report(code[k] == EXIT_BASE + (int)k, "worker %u: exit code from join", k);
		report(w->smp_id_ok, "worker %u: smp_id is the VCPU it runs on", k);
		cpl3 &= w->cpl == 3;
		preempted |= w->resumes > 1;
		moved |= __builtin_popcountll(w->vcpu_mask) > 1;
		stayed &= __builtin_popcountll(w->vcpu_mask) == 1;
		/* Each run of a thread begins with switch_in and ends with switch_out. */
		hooks_ok &= w->tid < MAX_TID && hook_in[w->tid] == hook_out[w->tid] &&
			    hook_in[w->tid] >= w->resumes;
	}
	report(cpl3, "user threads ran at CPL 3");
	report(hooks_ok, "switch hooks called in pairs for all %u workers", WORKERS);
	/* Only the timer switches workers; it shows only when workers share a VCPU. */
	if (WORKERS > ncpus)
		report(preempted, "timer preemption: a worker resumed more than 1 time");
	if (migrate)
		report(moved, "migrate=random: a worker ran on more than 1 VCPU");
	else
		report(stayed, "no migration: each worker ran on 1 VCPU");
	return report_summary();
}
