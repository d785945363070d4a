/* Guest test reporting: one counter and one lock for all of a guest's checks, on every VCPU. */
#include <stdarg.h>
#include <stdio.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/rt/spinlock.h"

/* Long enough for every check name the guests print; a longer one is cut, never overrun. */
#define REPORT_LINE	256

static struct rt_spinlock report_lock;
static int report_passed, report_failed;

/*
 * Counting and printing under one lock keeps the numbers in the order the lines come out.
 * Interrupts stay masked so that no thread is preempted holding it (as the console's write).
 */
static void report_line(bool pass, const char *suffix, const char *fmt, va_list ap)
{
	char what[REPORT_LINE];
	uint64_t flags;

	flags = rt_irq_save();
	rt_spin_lock(&report_lock);
	vsnprintf(what, sizeof(what), fmt, ap);
	if (pass)
		report_passed++;
	else
		report_failed++;
	printf("%sok %d - %s%s\n", pass ? "" : "not ", report_passed + report_failed, what, suffix);
	rt_spin_unlock(&report_lock);
	rt_irq_restore(flags);
}

void report(bool pass, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_line(pass, "", fmt, ap);
	va_end(ap);
}

void report_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_line(true, " # SKIP", fmt, ap);
	va_end(ap);
}

bool report_value(const char *what, uint64_t measured, uint64_t expected)
{
	bool pass = measured == expected;

	report(pass, "%s: measured %llu expected %llu", what, (unsigned long long)measured,
	       (unsigned long long)expected);
	return pass;
}

int report_summary(void)
{
	uint64_t flags;
	int failed;

	flags = rt_irq_save();
	rt_spin_lock(&report_lock);
	printf("%d passed, %d failed\n", report_passed, report_failed);
	failed = report_failed;
	rt_spin_unlock(&report_lock);
	rt_irq_restore(flags);
	return failed;
}
