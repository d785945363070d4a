/* The threads' printf: format in the caller's ring, print through one system call. */
#include <stdarg.h>
#include <stdio.h>

#include "guest-stub/kernel/user.h"

#define UPRINTF_MAX	256

int uprintf(const char *fmt, ...)
{
	char buf[UPRINTF_MAX];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0)
		return len;
	if (len >= (int)sizeof(buf))
		len = sizeof(buf) - 1;	/* truncated */
	return (int)sys_write(buf, (size_t)len);
}
