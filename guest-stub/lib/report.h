/* Guest test reporting: numbered 'ok N - what' lines and the closing count, for every guest. */
#ifndef GUEST_STUB_LIB_REPORT_H
#define GUEST_STUB_LIB_REPORT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The kvm-unit-tests idea: each check is one line, numbered in the order the checks ran,
 * that system rows match by its text ("what"), never by its number. Safe when several VCPUs
 * report at once (one lock, taken with interrupts masked), so CPL 0 only: user threads hand
 * their results to kernel code, which reports them.
 */

/* 'ok N - what' when pass, else 'not ok N - what'. */
void report(bool pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* 'ok N - what # SKIP': a check that cannot run here; it counts as passed (TAP's rule). */
void report_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An exact expectation: '[not ]ok N - what: measured M expected E'; returns whether M == E. */
bool report_value(const char *what, uint64_t measured, uint64_t expected);

/* The last line, 'N passed, N failed'; returns the failed count, the guest's exit code. */
int report_summary(void);

#endif
