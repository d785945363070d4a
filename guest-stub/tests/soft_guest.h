/* Shared by the soft_* test guests: their key=number arguments, and rt.h for their hypercalls. */
#ifndef GUEST_STUB_TESTS_SOFT_GUEST_H
#define GUEST_STUB_TESTS_SOFT_GUEST_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/rt/rt.h"

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
