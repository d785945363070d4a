/* Unit tests for lib/string.c's memcmp: equal runs, the first differing byte decides, any alignment. */
#include <stdint.h>
#include <stdio.h>

#include "tests/unit/unit.h"

/* The hypervisor's own functions, under names that do not clash with the host's C library. */
#define memset lib_memset
#define memcpy lib_memcpy
#define memmove lib_memmove
#define memcmp lib_memcmp
#define strlen lib_strlen
#define strcmp lib_strcmp
#define strncmp lib_strncmp
#define strchr lib_strchr
#include "lib/string.c"

#define MAXLEN	40
#define OFFSETS	8

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

/*
 * C11 7.24.4.1: the sign is that of the difference between the first pair of differing bytes,
 * as unsigned char; 0 when the n bytes are equal. Each length, each position of a difference
 * (the word compare must hand the differing word to the byte loop), both directions, bytes
 * with the top bit set (signed chars would invert them) and every alignment of both sides.
 */
static void test_memcmp(void)
{
	static unsigned char a[MAXLEN + OFFSETS], b[MAXLEN + OFFSETS];
	unsigned wrong_equal = 0, wrong_diff = 0, cases = 0;

	for (unsigned oa = 0; oa < OFFSETS; oa++) {
		for (unsigned ob = 0; ob < OFFSETS; ob++) {
			for (unsigned n = 0; n <= MAXLEN; n++) {
				for (unsigned i = 0; i < n; i++)
					a[oa + i] = b[ob + i] = (unsigned char)(0x10 + i);
				wrong_equal += lib_memcmp(a + oa, b + ob, n) != 0;
				for (unsigned d = 0; d < n; d++) {
					unsigned char keep = b[ob + d];

					b[ob + d] = 0x90;	/* above every filler byte, top bit set */
					wrong_diff += sign(lib_memcmp(a + oa, b + ob, n)) != -1;
					wrong_diff += sign(lib_memcmp(b + ob, a + oa, n)) != 1;
					/* A later difference the other way must not matter. */
					if (d + 1 < n) {
						a[oa + n - 1] = 0xFF;
						wrong_diff += sign(lib_memcmp(a + oa, b + ob, n)) != -1;
						a[oa + n - 1] = (unsigned char)(0x10 + n - 1);
					}
					b[ob + d] = keep;
					cases++;
				}
			}
		}
	}
	check(!wrong_equal, "equal buffers of 0..%u bytes at every alignment compare 0 (%u wrong)",
	      MAXLEN, wrong_equal);
	check(!wrong_diff, "the first differing byte decides, as unsigned char, in %u cases "
	      "(%u wrong)", cases, wrong_diff);
}

int main(void)
{
	test_memcmp();
	return unit_summary();
}
