/* The guest image's own function symbols, for the profiler: generated at link time (symtab.sh). */
#ifndef GUEST_STUB_WORKLOADS_SYMTAB_H
#define GUEST_STUB_WORKLOADS_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

/*
 * A profiled guest is linked twice (workloads.mk): the first image's ELF symbol table
 * becomes a C array, sorted by address, and the second link adds that array. The array
 * lies in .rodata, after all code in guest.ld, so no function moves between the two links:
 * the build compares both images' function addresses and stops if one did. Any other guest
 * gets the empty table of symtab_none.c.
 */
struct wl_sym {
	uint64_t addr;
	uint64_t size;		/* 0: unknown (no .size): up to the next symbol */
	const char *name;
};

extern const struct wl_sym wl_symtab[];
extern const size_t wl_symtab_len;

/* The function that holds rip, or NULL (outside the image's code, or no table). */
const struct wl_sym *wl_sym_lookup(uint64_t rip);

#endif
