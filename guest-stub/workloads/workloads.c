/* The workloads' expected counts (the formulas of workloads.h) and the pointer-chasing ring. */
#include "guest-stub/workloads/workloads.h"

const char *const wl_chase_names[WL_CHASE_FUNCS] = {
	[WL_PCHASE] = "wl_pchase",
	[WL_CHASE_X4] = "wl_chase_x4",
	[WL_CHASE_X3] = "wl_chase_x3",
	[WL_CHASE_X2] = "wl_chase_x2",
	[WL_CHASE_X1] = "wl_chase_x1",
};

struct wl_counts wl_mbench_expect(uint64_t n)
{
	return (struct wl_counts){ .instructions = 8 + 10 * n + n / 2, .branches = 2 + 2 * n };
}

void wl_pchase_expect(uint64_t rounds, const uint64_t steps[WL_CHASED],
		      struct wl_counts out[WL_CHASE_FUNCS])
{
	out[WL_PCHASE] = (struct wl_counts){ 11 + 18 * rounds, 1 + 5 * rounds };
	for (unsigned k = 0; k < WL_CHASED; k++)
		out[WL_CHASE_X4 + k] = (struct wl_counts){ rounds * (2 + 3 * steps[k]),
							   rounds * (1 + steps[k]) };
}

struct wl_counts wl_pchase_total(uint64_t rounds, const uint64_t steps[WL_CHASED])
{
	struct wl_counts per[WL_CHASE_FUNCS], sum = { 0, 0 };

	wl_pchase_expect(rounds, steps, per);
	for (unsigned f = 0; f < WL_CHASE_FUNCS; f++) {
		sum.instructions += per[f].instructions;
		sum.branches += per[f].branches;
	}
	return sum;
}

bool wl_pchase_steps(uint64_t period, bool branches, uint64_t steps[WL_CHASED])
{
	uint64_t base = 1;

	/* The least steps whose call is a whole number of periods: 1 + s or 2 + 3 s events. */
	while ((branches ? 1 + base : 2 + 3 * base) % period)
		if (++base > period)
			return false;	/* 3 divides the period: no call fits it */
	for (unsigned k = 0; k < WL_CHASED; k++)
		steps[k] = base + (WL_CHASED - 1 - k) * period;
	return true;
}

/* xorshift64 (Marsaglia 2003): the same shuffle for the same seed, in every run. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/*
 * A random cyclic order: Sattolo's shuffle of 0..count-1 is one cycle through all of them.
 * The permutation is built in pad[0], so a thread's small stack is enough for any ring.
 */
struct wl_node *wl_chase_ring(struct wl_node *nodes, size_t count, uint64_t seed)
{
	uint64_t state = seed | 1;

	for (size_t i = 0; i < count; i++)
		nodes[i].pad[0] = i;
	for (size_t i = count - 1; i > 0; i--) {
		size_t j = next_random(&state) % i;
		uint64_t tmp = nodes[i].pad[0];

		nodes[i].pad[0] = nodes[j].pad[0];
		nodes[j].pad[0] = tmp;
	}
	for (size_t i = 0; i < count; i++)
		nodes[i].next = &nodes[nodes[i].pad[0]];
	return &nodes[0];
}
