/* Tiny host unit-test reporting: check() lines in TAP-like form and a closing summary. */
#ifndef PERFVISOR_TESTS_UNIT_H
#define PERFVISOR_TESTS_UNIT_H

#include <stdarg.h>
#include <stdio.h>

static int unit_passed, unit_failed;

/* Report one check: "ok N - name" or "not ok N - name". Returns cond so callers can stop early. */
__attribute__((format(printf, 2, 3)))
static inline int check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", unit_passed + unit_failed + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (cond)
		unit_passed++;
	else
		unit_failed++;
	return cond;
}

/* Last line of every unit program; the exit status says whether any check failed. */
static inline int unit_summary(void)
{
	printf("%d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
