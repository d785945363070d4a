/* A flat sampling profile: sampled user RIPs counted per function of the guest's symbol table. */
#ifndef GUEST_STUB_WORKLOADS_PROFILE_H
#define GUEST_STUB_WORKLOADS_PROFILE_H

#include <stdint.h>

/* One per thread (no locking: only its own overflow handler adds to it), or a merged sum. */
struct wl_profile {
	uint64_t samples;
	uint64_t unknown;	/* outside every function of the table */
	uint32_t hits[];	/* per entry of wl_symtab */
};

/* A zeroed profile; NULL when out of memory. From kernel threads (malloc). */
struct wl_profile *wl_profile_new(void);

/* From the overflow handler, in any ring: one sample at rip. */
void wl_profile_add(struct wl_profile *p, uint64_t rip);

/* into += from, for a domain's profile from its threads'. */
void wl_profile_merge(struct wl_profile *into, const struct wl_profile *from);

uint64_t wl_profile_hits(const struct wl_profile *p, const char *function);

/*
 * Prints the flat profile, most samples first, functions with at least one sample (at most
 * top lines): "profile: TITLE: PERCENT% SAMPLES FUNCTION". From kernel threads.
 */
void wl_profile_print(const struct wl_profile *p, const char *title, unsigned top);

#endif
