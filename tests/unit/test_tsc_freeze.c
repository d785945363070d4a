/* Unit tests for the frozen guest TSC (hv/sched.h): the thawed offset, an APIC timer on it. */
#include "tests/unit/unit.h"
#include "hv/vapic.c"
#include "hv/sched.h"

/*
 * Linux's tick here (docs/linux-guest.md): LVT timer periodic, vector 0xec, divide configuration
 * 3 (by 16, SDM Vol. 3A 11.5.4), initial count 5993: one interrupt every 95888 guest TSC ticks.
 */
#define TICK_VECTOR	0xec
#define TICK_COUNT	5993u
#define TICK_PERIOD	(16ull * TICK_COUNT)
/* A stepped block's model costs in host TSC ticks: guest mode, the exit's handling, the entry. */
#define BLOCK_GUEST	150ull
#define BLOCK_HV	3000ull
#define BLOCK_ENTRY	50ull
/* The stepped tick handler: 75 blocks (Bochs's log: 75 breakpoint #DBs to one EOI). */
#define HANDLER_BLOCKS	75u

struct sim {
	struct vapic apic;
	uint64_t host, offset;
	bool freeze;		/* the rule applies: tsc=vcpu, each exit the stepping's own */
	bool went_back;		/* the guest's TSC at a resume was below one it had before */
	bool resume_off;	/* ... or not the exit's plus the entry path */
};

static void sim_start(struct sim *s, uint64_t offset, bool freeze)
{
	struct vapic_ipi ipi;
	uint64_t now;

	*s = (struct sim){ .host = 1000000, .offset = offset, .freeze = freeze };
	now = s->host + s->offset;
	vapic_init(&s->apic, 0);
	vapic_write(&s->apic, 0xf0, 4, 0x1ff, now, &ipi);
	vapic_write(&s->apic, 0x3e0, 4, 3, now, &ipi);
	vapic_write(&s->apic, 0x320, 4, 1u << 17 | TICK_VECTOR, now, &ipi);
	vapic_write(&s->apic, 0x380, 4, TICK_COUNT, now, &ipi);
}

/*
 * One stepped block: the guest runs, exits at host TSC x; the timer is judged at the exit's
 * guest TSC (irq_deliver() while the TSC stands still), the offset thawed before the entry.
 * Returns whether the tick is pending after it (it is taken: ISR, then EOI'd at once).
 */
static bool sim_block(struct sim *s)
{
	struct vapic_ipi ipi;
	uint64_t x, at_exit, judged;
	bool tick;

	s->host += BLOCK_GUEST;
	x = s->host;
	at_exit = x + s->offset;
	s->host += BLOCK_HV;
	judged = s->freeze ? at_exit : s->host + s->offset;
	vapic_timer_update(&s->apic, judged);
	tick = vapic_pending(&s->apic) == TICK_VECTOR;
	if (tick) {
		vapic_ack(&s->apic, TICK_VECTOR);
		vapic_write(&s->apic, 0xb0, 4, 0, judged, &ipi);
	}
	if (s->freeze)
		s->offset = sched_thawed_offset(s->offset, x, s->host);
	s->host += BLOCK_ENTRY;
	if (s->host + s->offset < judged || s->host + s->offset < at_exit)
		s->went_back = true;
	if (s->freeze && s->host + s->offset != at_exit + BLOCK_ENTRY)
		s->resume_off = true;
	return tick;
}

static void test_offset(void)
{
	uint64_t off = 0 - 123456789ull, frozen = 5000000, now = 5003000;

	check(sched_thawed_offset(off, frozen, now) + now == frozen + off,
	      "the thawed offset reads at now the guest TSC of the freeze");
	check(sched_thawed_offset(off, frozen, now) + now + 7 == frozen + off + 7,
	      "and runs on from there: 7 ticks later, 7 more");
	check(sched_thawed_offset(off, frozen, frozen) == off, "thawed at once: the offset stays");
	off = 0 - frozen;
	check(sched_thawed_offset(off, frozen, now) + now == 0,
	      "modulo 2^64: a guest TSC of 0 at the freeze reads 0 again");
}

/* The first tick comes at the block whose exit's guest TSC reaches one period. */
static unsigned first_tick_block(void)
{
	/* Exit i's guest TSC is i x BLOCK_GUEST + (i - 1) x BLOCK_ENTRY after the timer's start. */
	return (unsigned)((TICK_PERIOD + BLOCK_ENTRY + BLOCK_GUEST + BLOCK_ENTRY - 1) /
			  (BLOCK_GUEST + BLOCK_ENTRY));
}

static void test_tick_frozen(void)
{
	struct sim s;
	unsigned i, ticks = 0, first = 0, in_handler = 0;
	uint64_t n;

	sim_start(&s, 0 - 777777ull, true);
	for (i = 1; !first && i < 10000; i++)
		if (sim_block(&s))
			first = i;
	check(first == first_tick_block(),
	      "frozen: the tick comes after %u blocks of %llu guest and %llu entry ticks (got %u)",
	      first_tick_block(), BLOCK_GUEST, BLOCK_ENTRY, first);
	for (i = 0; i < HANDLER_BLOCKS; i++)
		in_handler += sim_block(&s);
	check(in_handler == 0, "frozen: the %u-block handler ends before the next tick (%u ticks)",
	      HANDLER_BLOCKS, in_handler);
	for (i = 0; i < 100000; i++)
		ticks += sim_block(&s);
	n = 100000 + HANDLER_BLOCKS + first;
	check(ticks == (n * BLOCK_GUEST + (n - 1) * BLOCK_ENTRY) / TICK_PERIOD - 1,
	      "frozen: one tick a period of the guest's own time (%u)", ticks);
	check(!s.went_back && !s.resume_off,
	      "frozen: each resume reads the exit's TSC plus the entry path, never less");
}

/* Without the rule the hypervisor's time fills the period: every tick finds the next due. */
static void test_tick_running(void)
{
	struct sim s;
	unsigned i, first = 0, in_handler = 0;

	sim_start(&s, 0 - 777777ull, false);
	for (i = 1; !first && i < 10000; i++)
		if (sim_block(&s))
			first = i;
	for (i = 0; i < HANDLER_BLOCKS; i++)
		in_handler += sim_block(&s);
	check(HANDLER_BLOCKS * (BLOCK_GUEST + BLOCK_HV + BLOCK_ENTRY) > TICK_PERIOD &&
	      in_handler > 0, "running: the tick comes again inside its handler (%u times)",
	      in_handler);
}

/*
 * A block with no RDTSC: its exit's guest TSC is charged from the entry by one tick an
 * instruction, never later than the exit's and never before the entry's.
 */
static void test_charged(void)
{
	uint64_t entry = 0 - 100ull, exit = entry + 1500;

	check(sched_charged_tsc(entry, exit, 15) == entry + 15,
	      "15 instructions in 1500 ticks: the guest TSC stands at the entry's + 15");
	check(sched_charged_tsc(entry, exit, 0) == exit,
	      "a run that may have read the TSC (0): the exit's, as before");
	check(sched_charged_tsc(entry, exit, 1500) == exit &&
	      sched_charged_tsc(entry, exit, 4000) == exit,
	      "as many instructions as ticks or more (a long counted loop): the exit's, no later");
	check(sched_charged_tsc(exit, exit, 3) == exit, "no time since the entry: the exit's");
}

int main(void)
{
	test_offset();
	test_charged();
	test_tick_frozen();
	test_tick_running();
	return unit_summary();
}
