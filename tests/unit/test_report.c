/* Unit tests for guest-stub/lib/report.c: the lines, their numbers, the summary and the lock. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/unit.h"

/*
 * Host stand-ins for guest-stub/rt/spinlock.h (whose CLI faults in user mode): they record
 * whether the lock is held with interrupts masked, which every printed line must be.
 */
#define GUEST_STUB_RT_SPINLOCK_H
struct rt_spinlock {
	uint32_t locked;
};

static bool fake_masked;
static int fake_lock_errors;
static struct rt_spinlock *fake_held;

static uint64_t rt_irq_save(void)
{
	uint64_t was = fake_masked;

	fake_masked = true;
	return was;
}

static void rt_irq_restore(uint64_t flags)
{
	fake_masked = flags;
}

static void rt_spin_lock(struct rt_spinlock *l)
{
	fake_lock_errors += l->locked || !fake_masked;
	l->locked = 1;
	fake_held = l;
}

static void rt_spin_unlock(struct rt_spinlock *l)
{
	fake_lock_errors += !l->locked;
	l->locked = 0;
}

/* report.c's printf writes here; unlocked_lines counts lines printed without the lock. */
static char out[4096];
static size_t out_len;
static int unlocked_lines;

static int fake_printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	unlocked_lines += !(fake_held && fake_held->locked && fake_masked);
	va_start(ap, fmt);
	n = vsnprintf(out + out_len, sizeof(out) - out_len, fmt, ap);
	va_end(ap);
	out_len += (size_t)n;
	return n;
}

/* After report.h, whose format attributes name printf itself. */
#include "guest-stub/lib/report.h"
#define printf fake_printf
#include "guest-stub/lib/report.c"
#undef printf

/* The text printed since the last call, for one check. */
static const char *printed(void)
{
	static char last[sizeof(out)];

	memcpy(last, out, out_len + 1);
	out_len = 0;
	out[0] = 0;
	return last;
}

int main(void)
{
	char long_name[600];
	const char *s;
	int failed;

	report(true, "first %s %d", "check", 1);
	check(!strcmp(printed(), "ok 1 - first check 1\n"), "report(true): 'ok 1 - what'");
	report(false, "second");
	check(!strcmp(printed(), "not ok 2 - second\n"), "report(false): 'not ok 2 - what'");
	report_skip("no PMU here: %s", "skipped");
	check(!strcmp(printed(), "ok 3 - no PMU here: skipped # SKIP\n"),
	      "report_skip: 'ok 3 - what # SKIP'");
	check(report_value("instructions", 4005, 4005) &&
	      !strcmp(printed(), "ok 4 - instructions: measured 4005 expected 4005\n"),
	      "report_value equal: true, both values");
	check(!report_value("branches", 1000, 1001) &&
	      !strcmp(printed(), "not ok 5 - branches: measured 1000 expected 1001\n"),
	      "report_value different: false, both values");
	check(!report_value("top bit", UINT64_MAX, UINT64_MAX - 1) &&
	      !strcmp(printed(), "not ok 6 - top bit: measured 18446744073709551615 "
		      "expected 18446744073709551614\n"),
	      "report_value: 64-bit values in full");

	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = 0;
	report(true, "%s", long_name);
	s = printed();
	check(!strncmp(s, "ok 7 - xxx", 10) && strlen(s) == strlen("ok 7 - ") + REPORT_LINE,
	      "a name longer than REPORT_LINE is cut, not overrun (%zu bytes)", strlen(s));

	failed = report_summary();
	check(!strcmp(printed(), "4 passed, 3 failed\n") && failed == 3,
	      "report_summary: 'N passed, N failed' (skips pass), returns the failed count");
	check(!unlocked_lines && !fake_lock_errors && !fake_masked && !report_lock.locked,
	      "every line printed under the lock with interrupts masked; both released after");
	return unit_summary();
}
