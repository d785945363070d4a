/* CPU-bound guest: rounds of a prime sieve and an SSE sum with known answers, then its TSC delta. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/rt/rt.h"

#define SIEVE_LIMIT	100000
#define PRIME_COUNT	9592		/* pi(100000) */
#define PRIME_SUM	454396537ull	/* the sum of the primes below 100000 */
#define SSE_TERMS	300000u

static uint8_t composite[SIEVE_LIMIT];

/* Integer and memory work: a lost register or page shows as a wrong count or sum. */
static int sieve_ok(void)
{
	uint64_t count = 0, sum = 0;

	memset(composite, 0, sizeof(composite));
	for (uint32_t i = 2; i * i < SIEVE_LIMIT; i++)
		if (!composite[i])
			for (uint32_t j = i * i; j < SIEVE_LIMIT; j += i)
				composite[j] = 1;
	for (uint32_t i = 2; i < SIEVE_LIMIT; i++) {
		if (!composite[i]) {
			count++;
			sum += i;
		}
	}
	return count == PRIME_COUNT && sum == PRIME_SUM;
}

/*
 * The accumulator stays in an XMM register for the whole loop, so SSE state lost or swapped
 * on a VCPU switch or migration shows as a wrong sum. Every partial sum is an integer below
 * 2^53, so the double result is exact.
 */
static int sse_sum_ok(uint32_t mult)
{
	double acc = 0.0, m = mult;

	for (uint32_t k = 1; k <= SSE_TERMS; k++)
		acc += (double)k * m;
	return acc == (double)((uint64_t)mult * SSE_TERMS * (SSE_TERMS + 1) / 2);
}

int main(int argc, char **argv)
{
	unsigned rounds = 3, mult = 1, failed = 0;
	uint64_t start = rt_rdtsc();

	/* rounds= sets the amount of work; domains give different mult= so their sums differ. */
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "rounds=", 7) == 0)
			rounds = (unsigned)atoi(argv[i] + 7);
		else if (strncmp(argv[i], "mult=", 5) == 0)
			mult = (unsigned)atoi(argv[i] + 5);
	}
	printf("burn: %u rounds, mult %u, tsc %llu at start\n", rounds, mult,
	       (unsigned long long)start);
	for (unsigned r = 1; r <= rounds; r++) {
		int sieve = sieve_ok(), sse = sse_sum_ok(mult);

		if (!sieve || !sse) {
			printf("burn: round %u: %s%s wrong\n", r, sieve ? "" : "sieve ",
			       sse ? "" : "sse-sum");
			failed++;
		}
	}
	printf("burn: %u of %u rounds right, tsc delta %llu\n", rounds - failed, rounds,
	       (unsigned long long)(rt_rdtsc() - start));
	return failed ? 1 : 0;
}
