/* Extended page tables: a domain's guest-physical to host-physical map. */
#ifndef PERFVISOR_HV_EPT_H
#define PERFVISOR_HV_EPT_H

#include <stdbool.h>
#include <stdint.h>

#define EPT_R	1ull
#define EPT_W	2ull
#define EPT_X	4ull
#define EPT_RWX	(EPT_R | EPT_W | EPT_X)

/* Allocates an empty 4-level EPT; returns its EPTP (with memory type and walk length), 0 if out of memory. */
uint64_t ept_create(void);
/* Maps [gpa, gpa+size) to host-physical hpa with perms, with 2 MiB pages where both are aligned. */
bool ept_map(uint64_t eptp, uint64_t gpa, uint64_t hpa, uint64_t size, uint64_t perms);
/* Frees every table page of the EPT (not the memory it maps); returns how many frames. */
unsigned ept_destroy(uint64_t eptp);

#endif
