/* Guest: the sampling profiler on pointer chasing; each function's samples against its cost. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/workloads/harness.h"
#include "guest-stub/workloads/profile.h"
#include "guest-stub/workloads/symtab.h"
#include "guest-stub/workloads/workloads.h"

#define DEFAULT_THREADS	1
#define DEFAULT_ROUNDS	30
#define SHAPE_PERIOD	149	/* 3 m + 2: costs of 10:7:4:1 periods (workloads.h) */
#define RING_NODES	4096
#define TOP		8	/* lines of each flat profile */

/*
 * sample=ins|br|cyc: the event sampled, as in seed 003 tables 3-5. Instructions and branches
 * are exact, and the calls are shaped to whole periods of them. Cycles follow instructions only
 * roughly; their calls are shaped as for instructions every SHAPE_PERIOD, and their period
 * keeps a round under the kernel's KPMU_RIPS samples.
 */
static const struct {
	const char *name;
	int preset;
	const char *event;
	bool exact, branches;
	uint64_t period;
} samplers[] = {
	{ "ins", PAPI_TOT_INS, "profile-instructions", true, false, SHAPE_PERIOD },
	{ "br", PAPI_BR_INS, "profile-branches", true, true, SHAPE_PERIOD },
	{ "cyc", PAPI_TOT_CYC, "profile-cycles", false, false, 40000 },
};

struct pc_thread {
	struct papi_eventset set;
	uint64_t *rips;		/* the samples, as the handler got them */
	uint64_t nrips, lost;	/* kept; beyond the buffer, or older than the kernel's ring */
	struct wl_profile *profile;
};

static struct wl_options opts;
static uint64_t rounds = DEFAULT_ROUNDS, period, steps[WL_CHASED];
static unsigned sampler;
static struct wl_node *ring;
static struct pc_thread pc[WL_THREADS_MAX];
static uint64_t rips_max;

/*
 * PAPI's handler, run by papi_read() in the thread: as short as can be, because the counter
 * keeps counting meanwhile (its own samples land in the library, not in the workload).
 */
static void on_sample(struct papi_eventset *set, int event, uint64_t address)
{
	struct pc_thread *t = (struct pc_thread *)((char *)set - offsetof(struct pc_thread, set));

	(void)event;
	if (address && t->nrips < rips_max)
		t->rips[t->nrips++] = address;
	else
		t->lost++;
}

/*
 * One round at a time: the kernel keeps the last KPMU_RIPS sample addresses, so the library
 * hands them over (papi_read) before a round can have made that many.
 */
static int worker(struct wl_thread *self)
{
	struct pc_thread *t = &pc[self->index];
	long long value;
	struct wl_node *node = &ring[self->index * RING_NODES / WL_THREADS_MAX];

	if (papi_create_eventset(&t->set) != PAPI_OK ||
	    papi_add_event(&t->set, samplers[sampler].preset) != PAPI_OK ||
	    papi_overflow(&t->set, samplers[sampler].preset, period, on_sample) != PAPI_OK ||
	    papi_start(&t->set) != PAPI_OK)
		return 1;
	for (uint64_t r = 0; r < rounds; r++) {
		node = (struct wl_node *)wl_pchase(node, 1, steps);
		papi_read(&t->set, &value);
	}
	papi_stop(&t->set, &value);
	return 0;
}

/* The workload alone, natively where there is no PMU to sample with. */
static void unsampled(struct wl_thread *self)
{
	wl_pchase(&ring[self->index * RING_NODES / WL_THREADS_MAX], rounds, steps);
}

static uint64_t expected_of(const struct wl_counts *c)
{
	return samplers[sampler].preset == PAPI_BR_INS ? c->branches : c->instructions;
}

/*
 * Cycles as a line in instructions: a * cost + b over the four chasing functions (least
 * squares). Each is called once a round, so what a call costs beyond its instructions (the
 * VM exits it takes, whose entry and exit paths land partly in the guest's cycles) is the same
 * b for all four, and the cycles per instruction the same a.
 */
static void cycles_line(const uint64_t *hits, const uint64_t *cost, double *a, double *b)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0;
	unsigned n = 0;

	for (unsigned f = 0; f < WL_CHASE_FUNCS; f++) {
		if (f == WL_PCHASE)
			continue;
		mx += (double)cost[f];
		my += (double)hits[f];
		n++;
	}
	mx /= n;
	my /= n;
	for (unsigned f = 0; f < WL_CHASE_FUNCS; f++) {
		if (f == WL_PCHASE)
			continue;
		sxy += ((double)cost[f] - mx) * ((double)hits[f] - my);
		sxx += ((double)cost[f] - mx) * ((double)cost[f] - mx);
	}
	*a = sxx > 0 ? sxy / sxx : 0;
	*b = my - *a * mx;
}

/*
 * Each function's samples. Instructions and branches: exactly cost / period for each of the
 * four chasing functions. Cycles: on the line cycles_line() draws through the four, within
 * three standard deviations of a count of that many samples (under the soft PMU each call's
 * exits add to its cycles: the share of samples is not the share of instructions, seed 003
 * table 3's ratio, which the report still shows). wl_pchase's own runs are not whole periods:
 * shown, not judged. And the four ranked by cost.
 */
static void judge(const struct wl_thread *th, const struct wl_profile *p, const char *who,
		  unsigned nthreads)
{
	struct wl_counts per_round[WL_CHASE_FUNCS];
	uint64_t hits[WL_CHASE_FUNCS], cost[WL_CHASE_FUNCS], chased_hits = 0, chased_cost = 0;
	bool ranked = true;
	double a, b;

	wl_pchase_expect(rounds, steps, per_round);
	for (unsigned f = 0; f < WL_CHASE_FUNCS; f++) {
		hits[f] = wl_profile_hits(p, wl_chase_names[f]);
		cost[f] = nthreads * expected_of(&per_round[f]);
		if (f != WL_PCHASE) {
			chased_hits += hits[f];
			chased_cost += cost[f];
		}
	}
	cycles_line(hits, cost, &a, &b);
	for (unsigned f = 0; f < WL_CHASE_FUNCS; f++) {
		double share = (double)chased_hits * (double)cost[f] / (double)chased_cost;
		double want = a * (double)cost[f] + b;

		if (th)
			wl_emit(&opts, &(struct wl_value){ .workload = "pchase",
				.event = samplers[sampler].event, .function = wl_chase_names[f],
				.thread = th, .measured = hits[f], .expected = cost[f],
				.has_expected = true, .raw = period });
		if (f == WL_PCHASE)
			continue;
		if (f > WL_CHASE_X4)
			ranked &= hits[f] < hits[f - 1];
		if (samplers[sampler].exact)
			wl_check(hits[f] == cost[f] / period,
				 "%s: %s: %llu samples, exactly %llu expected", who,
				 wl_chase_names[f], (unsigned long long)hits[f],
				 (unsigned long long)(cost[f] / period));
		else
			wl_check(want > 0 && fabs((double)hits[f] - want) <= 3 * sqrt(want),
				 "%s: %s: %llu samples, %.1f on the line (ratio to its share of "
				 "instructions %.3f, 3 sigma %.1f)", who, wl_chase_names[f],
				 (unsigned long long)hits[f], want,
				 share > 0 ? (double)hits[f] / share : 0.0, want > 0 ? 3 * sqrt(want) : 0);
	}
	wl_check(ranked, "%s: the four functions ranked by their cost", who);
}

int main(int argc, char **argv)
{
	struct wl_thread th[WL_THREADS_MAX] = { 0 };
	struct wl_profile *domain;
	char who[32];

	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "rounds=", 7) == 0)
			rounds = strtoull(argv[i] + 7, NULL, 0);
		else if (strncmp(argv[i], "period=", 7) == 0)
			period = strtoull(argv[i] + 7, NULL, 0);
		for (unsigned s = 0; s < sizeof(samplers) / sizeof(samplers[0]); s++)
			if (!strncmp(argv[i], "sample=", 7) &&
			    !strcmp(argv[i] + 7, samplers[s].name))
				sampler = s;
	}
	opts = wl_init("pchase", DEFAULT_THREADS, argc, argv);
	if (!period)
		period = samplers[sampler].period;
	ring = malloc(RING_NODES * sizeof(*ring));
	domain = wl_profile_new();
	if (!ring || !domain || !rounds ||
	    !wl_pchase_steps(samplers[sampler].exact ? period : SHAPE_PERIOD,
			     samplers[sampler].branches, steps)) {
		printf("pchase: out of memory, rounds=0, or a period that 3 divides\n");
		return 1;
	}
	wl_chase_ring(ring, RING_NODES, 1);
	if (opts.meter == &wl_meter_tsc)
		return wl_run_timed(&opts, "pchase", "pchase", unsampled);
	if (opts.meter->ring != KTHREAD_USER) {
		printf("pchase: counters=%s cannot sample: use pv-a or hvm\n", opts.meter->name);
		return 1;
	}
	/* Room for every sample a round can make, with margin: the rest is counted as lost. */
	rips_max = rounds * (wl_pchase_total(1, steps).instructions / SHAPE_PERIOD + 8);
	printf("pchase: sampling %s every %llu events, %llu rounds of %llu/%llu/%llu/%llu steps, "
	       "%llu symbols\n", samplers[sampler].name, (unsigned long long)period,
	       (unsigned long long)rounds, (unsigned long long)steps[0],
	       (unsigned long long)steps[1], (unsigned long long)steps[2],
	       (unsigned long long)steps[3], (unsigned long long)wl_symtab_len);
	for (unsigned k = 0; k < opts.threads; k++) {
		pc[k].rips = malloc(rips_max * sizeof(uint64_t));
		pc[k].profile = wl_profile_new();
		if (!pc[k].rips || !pc[k].profile)
			return 1;
		th[k].fn = worker;
	}
	wl_run_threads(&opts, th, opts.threads);
	/* The symbol look-ups happen here, in the kernel thread, uncounted. */
	for (unsigned k = 0; k < opts.threads; k++) {
		if (!wl_check(th[k].code == 0, "thread %u: sampling set up", k))
			continue;
		for (uint64_t i = 0; i < pc[k].nrips; i++)
			wl_profile_add(pc[k].profile, pc[k].rips[i]);
		wl_profile_merge(domain, pc[k].profile);
		snprintf(who, sizeof(who), "thread %u", k);
		wl_profile_print(pc[k].profile, who, TOP);
		wl_check(!pc[k].lost, "thread %u: no sample lost (%llu)", k,
			 (unsigned long long)pc[k].lost);
		judge(&th[k], pc[k].profile, who, 1);
	}
	wl_profile_print(domain, "domain", TOP);
	judge(NULL, domain, "domain", opts.threads);
	return report_summary();
}
