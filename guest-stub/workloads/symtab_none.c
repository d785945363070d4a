/* The empty symbol table of guests linked once (symtab.h): the profiler then names no function. */
#include "guest-stub/workloads/symtab.h"

const struct wl_sym wl_symtab[1];
const size_t wl_symtab_len;
