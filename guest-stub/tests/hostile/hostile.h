/* What the hostile guest's case files share: its tools, its constants and the cases. */
#ifndef GUEST_STUB_TESTS_HOSTILE_HOSTILE_H
#define GUEST_STUB_TESTS_HOSTILE_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/kernel/kernel.h"
#include "guest-stub/lib/report.h"
#include "guest-stub/lib/vpmu_test.h"
#include "guest-stub/rt/rt.h"
#include "include/perfvisor/fwcfg.h"
#include "include/perfvisor/hypercall.h"
#include "include/perfvisor/pmu.h"
#include "include/x86/apic.h"
#include "include/x86/cr.h"
#include "include/x86/msr.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* Vectors of this guest's own interrupt handlers; any other vector from 32 up is "stray". */
#define VEC_PMI			0x50
#define VEC_TIMER		0x51
#define VEC_FIXED_IPI		0x60

/* Real-mode code for VCPU 1 after a SIPI: a page below the image, above the loader's data. */
#define SIPI_PAGE		0x80000ull
#define SIPI_VECTOR		(SIPI_PAGE >> 12)
#define SIPI_COUNTER		(SIPI_PAGE + 0x800)	/* cs:0x800 in sipi_count_code */
#define SIPI_GP_HANDLER		0x100			/* offset of the real-mode #GP handler */

/* Paging-entry bits (SDM Vol. 3A 4.5). */
#define PTE_P			0x001ull
#define PTE_RW			0x002ull
#define PTE_PS			0x080ull

#define EVT_INSTRUCTIONS	(EV_INSTRUCTIONS | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN)
#define EV_CORE_CYCLES		0x3C
#define EV_REF_CYCLES		0x13C

/* The real-mode code that counts a start at cs:0x800 (common.c). */
#define SIPI_COUNT_CODE_LEN	9

/*
 * Interrupt gates of this guest: each stub saves the registers a C function may clobber and
 * returns with IRETQ. Handlers use no SSE (general-regs-only): they interrupt any code.
 */
#define IRQ_ENTRY(entry, handler)						\
	__asm__(".text\n" #entry ":\n\t"					\
		"push %rax\n\tpush %rcx\n\tpush %rdx\n\tpush %rsi\n\tpush %rdi\n\t"	\
		"push %r8\n\tpush %r9\n\tpush %r10\n\tpush %r11\n\t"		\
		"call " #handler "\n\t"						\
		"pop %r11\n\tpop %r10\n\tpop %r9\n\tpop %r8\n\t"		\
		"pop %rdi\n\tpop %rsi\n\tpop %rdx\n\tpop %rcx\n\tpop %rax\n\t"	\
		"iretq\n")
#define IRQ_HANDLER		__attribute__((used, target("general-regs-only")))

/* Linear addresses no hypercall may read or write, with why. */
struct bad_ptr {
	const char *what;
	uint64_t la;
};

#define NBAD_PTRS		13

int64_t hypercall(uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2);
/* One check: what got, and what it should have been. */
void expect(const char *what, int64_t got, int64_t want);
/* xorshift64: a fixed sequence, so every run sweeps the same "random" indexes. */
uint64_t rnd(void);
extern uint64_t rng_state;	/* saved and put back to sweep the same indexes again */
uint64_t fwcfg_number(uint16_t key, size_t len);
void apic_write(unsigned off, uint32_t val);
uint32_t apic_read(unsigned off);
void apic_ipi(uint8_t dest, uint32_t icr_lo);
/* INIT, then SIPI: VCPU id starts over in real mode at SIPI_PAGE with code. */
void start_vcpu(uint8_t id, const uint8_t *code, size_t len);
extern volatile uint32_t *const sipi_counter;
extern const uint8_t sipi_count_code[SIPI_COUNT_CODE_LEN];
/* Every vector from 32 up reaches a handler that counts strays, until a case sets its own. */
void install_stray_gates(void);
/* The bad pointers, among them addresses through page tables made to trip the page walk. */
extern struct bad_ptr bad_ptrs[NBAD_PTRS];
void bad_pointers_init(uint64_t ram);

/* The cases, each returning the guest's exit code (the failed checks). */
int case_apic(unsigned ncpus);
int case_timer(void);
int case_fwcfg(uint64_t ram, unsigned ncpus);
int case_forge(void);
int case_pmi(void);
int case_pv(uint64_t ram);
int case_pvforge(uint64_t turns);
int case_pvcount(uint64_t rounds, uint64_t k);
int case_hc(uint64_t ram);
int case_ring3(void);
int case_cpuid(void);
int case_msr(void);
void case_spin(uint64_t loops) __attribute__((noreturn));
int case_realgp(void);
int case_haltgood(void);

#endif
