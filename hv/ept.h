/* Extended page tables: a domain's guest-physical to host-physical map. */
#ifndef PERFVISOR_HV_EPT_H
#define PERFVISOR_HV_EPT_H

#include <stdbool.h>
#include <stdint.h>

#define EPT_R	1ull
#define EPT_W	2ull
#define EPT_X	4ull
#define EPT_RWX	(EPT_R | EPT_W | EPT_X)

/*
 * The generation handshake that keeps translations fresh on every PCPU (SDM Vol. 3C 29.4.3.1):
 * a domain's generation grows at each change of its EPT; each VCPU says which generation its
 * PCPU last flushed for and whether it runs its guest now.
 */
struct ept_user {
	volatile uint64_t gen;		/* flushed for this generation */
	volatile bool in_guest;		/* from ept_enter() until ept_leave() */
};

/*
 * Before a VM entry: u counts as in its guest from here, and the generation to flush for is
 * returned (0: none; after the INVEPT, u->gen takes it). Sequentially consistent with
 * ept_changed(): either this sees the new generation, or the changer sees u in its guest.
 */
uint64_t ept_enter(struct ept_user *u, volatile uint64_t *dom_gen);
/* After the VM exit (or a failed entry). */
void ept_leave(struct ept_user *u);
/* After a change of the EPT: its new generation (flush this PCPU for it, then ept_wait()). */
uint64_t ept_changed(volatile uint64_t *dom_gen);
/* Whether none of users[0..n) (self aside) can run its guest with a generation below gen now. */
bool ept_flushed(struct ept_user *const *users, unsigned n, const struct ept_user *self,
		 uint64_t gen);
/* Waits until none of users[0..n) (self aside) can run its guest with a generation below gen. */
void ept_wait(struct ept_user *const *users, unsigned n, const struct ept_user *self,
	      uint64_t gen);

/* Allocates an empty 4-level EPT; returns its EPTP (with memory type and walk length), 0 if out of memory. */
uint64_t ept_create(void);
/*
 * Maps [gpa, gpa+size) to host-physical hpa with perms, with 2 MiB pages where both are aligned.
 * False when out of memory for tables, and then every page keeps the mapping it had.
 */
bool ept_map(uint64_t eptp, uint64_t gpa, uint64_t hpa, uint64_t size, uint64_t perms);
/*
 * Sets the rights of the 4 KiB leaf that maps gpa (one ept_map made; no table is made or split
 * here, so it cannot fail for lack of memory). False when gpa has no 4 KiB leaf. The caller
 * holds the domain's ept_lock and flushes as any change requires.
 */
bool ept_set_perms(uint64_t eptp, uint64_t gpa, uint64_t perms);
/*
 * Code pages the soft PMU's block cache decoded (hv/step_cache.c): write-protected, marked in
 * bits the CPU ignores in a 4 KiB leaf (SDM Vol. 3C table 29-6: bit 11, bits 52-56), with how
 * often a write took the protection off. Only pages with all rights (guest RAM) are protected.
 * The caller holds the domain's ept_lock, and flushes (EPT generation) after EPT_CODE_NEW.
 */
enum ept_code {
	EPT_CODE_NO,		/* not protected: not plain RAM, written too often, no memory */
	EPT_CODE_NEW,		/* protected now: translations elsewhere may still allow writes */
	EPT_CODE_WAS,		/* protected already */
};
/*
 * Write-protects gpa's page (mapped, in RAM), splitting a 2 MiB leaf if need be; not once
 * max_drops writes took its protection off.
 */
enum ept_code ept_code_protect(uint64_t eptp, uint64_t gpa, unsigned max_drops);
/* Whether gpa's page is write-protected as a code page (no lock needed to look). */
bool ept_code_protected(uint64_t eptp, uint64_t gpa);
/*
 * A write to gpa's page exited: true when it is to be retried, because the page was a protected
 * code page and is writable again now (more rights need no INVEPT, SDM Vol. 3C 29.4.3.1), or
 * (*stale) was writable already: another PCPU took the protection off first, and the violation
 * invalidated this PCPU's old translation (SDM Vol. 3C 29.4.3.2). False: not a RAM page.
 */
bool ept_code_release(uint64_t eptp, uint64_t gpa, bool *stale);
/* Frees every table page of the EPT (not the memory it maps); returns how many frames. */
unsigned ept_destroy(uint64_t eptp);

#endif
