/* Finds the function that holds an address, in the image's own symbol table (symtab.h). */
#include "guest-stub/workloads/symtab.h"

const struct wl_sym *wl_sym_lookup(uint64_t rip)
{
	size_t lo = 0, hi = wl_symtab_len;
	const struct wl_sym *s;

	/* The last symbol at or below rip: wl_symtab[lo - 1] when the search ends. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (wl_symtab[mid].addr <= rip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &wl_symtab[lo - 1];
	if (s->size ? rip - s->addr < s->size : lo < wl_symtab_len)
		return s;
	return NULL;
}
