/* First guest: shows the runtime boots, passes arguments, runs CPUID and newlib's float printf. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/rt/rt.h"

int main(int argc, char **argv)
{
	struct rt_cpuid_regs r = rt_cpuid(0, 0);
	char vendor[13];
	int code = 0;

	printf("hello: guest-stub running, argc=%d\n", argc);
	for (int i = 0; i < argc; i++) {
		printf("hello: argv[%d]=%s\n", i, argv[i]);
		if (strncmp(argv[i], "exit=", 5) == 0)
			code = atoi(argv[i] + 5);
	}

	/* CPUID leaf 0 spells the vendor in EBX, EDX, ECX order. */
	memcpy(vendor, &r.ebx, 4);
	memcpy(vendor + 4, &r.edx, 4);
	memcpy(vendor + 8, &r.ecx, 4);
	vendor[12] = '\0';
	printf("hello: cpu vendor %s\n", vendor);

	/* Needs SSE enabled and newlib's floating-point printf. */
	printf("hello: float %.3f\n", 2.5);

	printf("hello: exit %d\n", code);
	return code;
}
