/* The benchmarks' guest harness: RDTSC spans over many repetitions, hypercalls, JSON lines. */
#ifndef GUEST_STUB_BENCH_H
#define GUEST_STUB_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "guest-stub/rt/rt.h"

/* Odd, so the median is one of the samples. */
#define BENCH_REPS	301

/*
 * RDTSC-to-RDTSC spans of one measured body. In Bochs with one CPU the TSC advances once per
 * instruction, the hypervisor's too, so a span is the exact number of instructions the guest
 * saw go by, VM exit and entry included; elsewhere it is cycles.
 */
struct bench_series {
	uint64_t span[BENCH_REPS];
};

/*
 * Times body BENCH_REPS times into *series. Only inline code between the two RDTSCs, so
 * ring-3 threads may measure too (they leave the reporting to a kernel thread).
 */
#define BENCH_MEASURE(series, body)						\
	for (int bench_i = 0; bench_i < BENCH_REPS; bench_i++) {		\
		uint64_t bench_t0 = rt_rdtsc();					\
		body;								\
		(series)->span[bench_i] = rt_rdtsc() - bench_t0;		\
	}

/* Keeps a computed value alive, so the compiler cannot drop the code that made it. */
static inline void bench_keep(uint64_t v)
{
	__asm__ volatile("" : : "r"(v));
}

/* The same for values stored at p: every store stays, with no load added. */
static inline void bench_keep_stored(const void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static inline int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static inline void bench_sort(struct bench_series *s)
{
	qsort(s->span, BENCH_REPS, sizeof(s->span[0]), bench_cmp_u64);
}

static inline uint64_t bench_median(struct bench_series *s)
{
	bench_sort(s);
	return s->span[BENCH_REPS / 2];
}

/*
 * The line tests/bench/run.py parses: min, median and max of the spans minus base (the
 * median span of an empty body, which takes out the two RDTSCs themselves).
 */
static inline void bench_report(const char *figure, struct bench_series *s, uint64_t base)
{
	bench_sort(s);
	printf("{\"figure\": \"%s\", \"reps\": %d, \"min\": %llu, \"median\": %llu, \"max\": %llu}\n",
	       figure, BENCH_REPS, (unsigned long long)(s->span[0] - base),
	       (unsigned long long)(s->span[BENCH_REPS / 2] - base),
	       (unsigned long long)(s->span[BENCH_REPS - 1] - base));
}

/* A figure this platform does not have (the path does not exist here): why, in words. */
static inline void bench_na(const char *figure, const char *why)
{
	printf("{\"figure\": \"%s\", \"na\": \"%s\"}\n", figure, why);
}

/* A guest that cannot measure what it was asked to says why, in words, and fails. */
static inline void bench_fail(const char *figure, const char *why, int64_t code)
{
	printf("{\"figure\": \"%s\", \"error\": \"%s (%lld)\"}\n", figure, why, (long long)code);
	exit(1);
}

#endif
