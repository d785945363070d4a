/* The validation workloads: assembly kernels whose instruction and branch counts are known. */
#ifndef GUEST_STUB_WORKLOADS_WORKLOADS_H
#define GUEST_STUB_WORKLOADS_WORKLOADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Every kernel is written in assembly (mbench.S, chase.S) so that the compiler cannot change
 * what it executes: its counts below are exact, from its first instruction to its RET, both
 * included (the caller's CALL is not). Branches are what perfvisor's soft PMU and Intel's
 * "Branch Instructions Retired" count: every Jcc (taken or not), CALL and RET.
 *
 * A measurement around a call also counts the measuring code's own instructions. They do not
 * depend on the argument, so a thread measures the same call twice, with n and with n = 0,
 * and compares the difference with expect(n) - expect(0): the harness cancels out exactly.
 */
struct wl_counts {
	uint64_t instructions;
	uint64_t branches;
};

/*
 * The seed's microbenchmark (seed 003, 5.1.1): branches, memory accesses and floating point in
 * one loop. n iterations over buf[0..mask] (mask + 1 a power of two, at least 2): load, multiply,
 * add, store, advance the index, and a data-dependent branch that skips one more addition on
 * every other iteration. Returns the sum of those additions.
 *
 * Instructions: 8 + 10 n + floor(n / 2); branches: 2 + 2 n.
 */
double wl_mbench(double *buf, uint64_t mask, uint64_t n);
struct wl_counts wl_mbench_expect(uint64_t n);

/*
 * Pointer chasing, for the profiler: a ring of nodes, each pointing at the next, laid out in a
 * shuffled order so that consecutive visits are far apart in memory. wl_chase_ring() builds it
 * over nodes[0..count-1] and returns its start.
 */
struct wl_node {
	struct wl_node *next;
	uint64_t pad[7];	/* one node per 64-byte cache line */
};

struct wl_node *wl_chase_ring(struct wl_node *nodes, size_t count, uint64_t seed);

/*
 * wl_pchase(node, rounds, steps) walks the ring; each round calls wl_chase_x4, wl_chase_x3,
 * wl_chase_x2 and wl_chase_x1 with steps[0], [1], [2] and [3] steps (rounds, steps >= 1):
 *
 *   wl_chase_xK, per call: 2 + 3 steps instructions, 1 + steps branches
 *   wl_pchase itself:      11 + 18 rounds instructions, 1 + 5 rounds branches
 *
 * A sampling profiler reads the interrupted RIP: the instruction AFTER the one whose event
 * overflowed. The counts survive that shift. Instructions: a function gains the CALL that
 * enters it and loses its RET, which lands in its caller. Branches: the sample lands on the
 * branch's target; wl_chase_xK gains the CALL to it and gives its RET to wl_pchase, which gains
 * the callees' RETs and the CALL that entered it and gives away its own RET and its CALLs.
 * Either way each function keeps exactly the count above, and each call of wl_chase_xK is one
 * unbroken run of that many events.
 */
enum wl_chase_func {
	WL_PCHASE, WL_CHASE_X4, WL_CHASE_X3, WL_CHASE_X2, WL_CHASE_X1, WL_CHASE_FUNCS
};

#define WL_CHASED	4	/* the wl_chase_xK */

extern const char *const wl_chase_names[WL_CHASE_FUNCS];

uint64_t wl_pchase(struct wl_node *start, uint64_t rounds, const uint64_t steps[WL_CHASED]);
struct wl_node *wl_chase_x4(struct wl_node *node, uint64_t steps);
struct wl_node *wl_chase_x3(struct wl_node *node, uint64_t steps);
struct wl_node *wl_chase_x2(struct wl_node *node, uint64_t steps);
struct wl_node *wl_chase_x1(struct wl_node *node, uint64_t steps);

/*
 * Steps that make every call of wl_chase_xK a whole number of sampling periods of its events
 * (instructions, or branches): a run of m * period events holds exactly m samples wherever the
 * periods fall, so a right profile gets exactly cost / period samples per function. The K-th
 * function takes K - 1 periods more than wl_chase_x1: for branches the costs go 4:3:2:1
 * periods, for instructions 10:7:4:1 with a period of the form 3 m + 2 (11:8:5:2 for 3 m + 1).
 * False for instructions and a period that 3 divides: no call length is a multiple of it.
 */
bool wl_pchase_steps(uint64_t period, bool branches, uint64_t steps[WL_CHASED]);

/* Per function of enum wl_chase_func, for one call of wl_pchase(), and their sum. */
void wl_pchase_expect(uint64_t rounds, const uint64_t steps[WL_CHASED],
		      struct wl_counts out[WL_CHASE_FUNCS]);
struct wl_counts wl_pchase_total(uint64_t rounds, const uint64_t steps[WL_CHASED]);

#endif
