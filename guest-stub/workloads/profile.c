/* The flat profile: samples per function, merged per domain and printed most-sampled first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/workloads/profile.h"
#include "guest-stub/workloads/symtab.h"

struct wl_profile *wl_profile_new(void)
{
	return calloc(1, sizeof(struct wl_profile) + wl_symtab_len * sizeof(uint32_t));
}

void wl_profile_add(struct wl_profile *p, uint64_t rip)
{
	const struct wl_sym *s = wl_sym_lookup(rip);

	p->samples++;
	if (s)
		p->hits[s - wl_symtab]++;
	else
		p->unknown++;
}

void wl_profile_merge(struct wl_profile *into, const struct wl_profile *from)
{
	into->samples += from->samples;
	into->unknown += from->unknown;
	for (size_t i = 0; i < wl_symtab_len; i++)
		into->hits[i] += from->hits[i];
}

uint64_t wl_profile_hits(const struct wl_profile *p, const char *function)
{
	for (size_t i = 0; i < wl_symtab_len; i++)
		if (strcmp(wl_symtab[i].name, function) == 0)
			return p->hits[i];
	return 0;
}

void wl_profile_print(const struct wl_profile *p, const char *title, unsigned top)
{
	size_t *order = malloc(wl_symtab_len * sizeof(*order)), n = 0;

	if (!wl_symtab_len)
		printf("profile: %s: no symbol table in this image\n", title);
	if (!order || !p->samples)
		goto out;
	for (size_t i = 0; i < wl_symtab_len; i++)
		if (p->hits[i])
			order[n++] = i;
	/* Insertion sort by hits, descending: few functions have samples. */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && p->hits[order[j]] > p->hits[order[j - 1]]; j--) {
			size_t tmp = order[j];

			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	printf("profile: %s: %llu samples\n", title, (unsigned long long)p->samples);
	for (size_t i = 0; i < n && i < top; i++) {
		uint64_t per10k = p->hits[order[i]] * 10000ull / p->samples;

		printf("profile: %s: %3llu.%02llu%% %8u %s\n", title,
		       (unsigned long long)(per10k / 100), (unsigned long long)(per10k % 100),
		       p->hits[order[i]], wl_symtab[order[i]].name);
	}
	if (p->unknown)
		printf("profile: %s: %llu samples outside the image's functions\n", title,
		       (unsigned long long)p->unknown);
out:
	free(order);
}
