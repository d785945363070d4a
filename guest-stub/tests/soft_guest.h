/* Shared by the soft_* test guests: their hypercall and their key=number arguments. */
#ifndef GUEST_STUB_TESTS_SOFT_GUEST_H
#define GUEST_STUB_TESTS_SOFT_GUEST_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int64_t soft_hypercall(uint64_t nr, uint64_t a0, uint64_t a1)
{
	int64_t ret;

	__asm__ volatile("vmcall" : "=a"(ret) : "a"(nr), "D"(a0), "S"(a1) : "memory");
	return ret;
}

/* The number after "key=" among the arguments, or fallback. */
static inline uint64_t soft_arg(int argc, char **argv, const char *key, uint64_t fallback)
{
	size_t len = strlen(key);

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], key, len) && argv[i][len] == '=')
			return strtoull(argv[i] + len + 1, NULL, 0);
	return fallback;
}

#endif
