/* Shared by the vPMU test guests: SDM constants, #GP-safe MSR/PMC access, counted window, report */
#ifndef GUEST_STUB_VPMU_TEST_H
#define GUEST_STUB_VPMU_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "guest-stub/rt/rt.h"

/*
 * Architectural PMU MSRs (SDM Vol. 4 table 2-2), written down again from the SDM rather than
 * taken from include/x86/pmu_msr.h, so that a wrong number there is a failed check here.
 */
#define MSR_PMC0		0xC1
#define MSR_PERFEVTSEL0		0x186
#define MSR_FIXED_CTR0		0x309
#define MSR_PERF_CAPABILITIES	0x345
#define MSR_FIXED_CTR_CTRL	0x38D
#define MSR_GLOBAL_STATUS	0x38E
#define MSR_GLOBAL_CTRL		0x38F
#define MSR_GLOBAL_OVF_CTRL	0x390
#define MSR_A_PMC0		0x4C1

/* IA32_PERFEVTSELx (SDM Vol. 3B 20.2.1.1) and the event counted here (table 20-1). */
#define EVTSEL_USR		(1ull << 16)
#define EVTSEL_OS		(1ull << 17)
#define EVTSEL_INT		(1ull << 20)
#define EVTSEL_ANY		(1ull << 21)
#define EVTSEL_EN		(1ull << 22)
#define EV_INSTRUCTIONS		0xC0

/* IA32_FIXED_CTR_CTRL: 4 bits per fixed counter (SDM Vol. 3B 20.2.2). */
#define FIXED_OS		0x1ull
#define FIXED_USR		0x2ull
#define FIXED_ANY		0x4ull
#define FIXED_PMI		0x8ull

/* IA32_PERF_GLOBAL_*: GP counter i is bit i, fixed counter j bit 32 + j (SDM Vol. 3B 20.2.2). */
#define GLOBAL_FIXED(j)		(1ull << (32 + (j)))
#define RDPMC_FIXED		(1u << 30)	/* SDM Vol. 2B RDPMC: ECX type 4000H */
#define PERF_CAP_FW_WRITE	(1ull << 13)	/* SDM Vol. 3B 20.2.6 */

/* What the README promises: version 2, 4 general and 3 fixed counters of 48 bits. */
#define VT_VERSION		2
#define VT_GP			4
#define VT_FIXED		3
#define VT_WIDTH		48
#define VT_TOP			(1ull << VT_WIDTH)
#define VT_ALL_CTRS		(((1ull << VT_GP) - 1) | ((1ull << VT_FIXED) - 1) << 32)

/* The PMU MSRs the guest has, with their power-on values (SDM Vol. 3A table 10-1). */
static const struct vt_msr {
	uint32_t msr;
	const char *name;
	uint64_t reset;
	bool read_only;		/* Vol. 4 table 2-2: GLOBAL_STATUS, PERF_CAPABILITIES */
} vt_msrs[] = {
	/* First, so that vt_pmu_quiet() stops every counter before it touches the others. */
	{ MSR_GLOBAL_CTRL, "GLOBAL_CTRL", (1ull << VT_GP) - 1, false },
	{ MSR_PERFEVTSEL0, "PERFEVTSEL0", 0, false },
	{ MSR_PERFEVTSEL0 + 1, "PERFEVTSEL1", 0, false },
	{ MSR_PERFEVTSEL0 + 2, "PERFEVTSEL2", 0, false },
	{ MSR_PERFEVTSEL0 + 3, "PERFEVTSEL3", 0, false },
	{ MSR_PMC0, "PMC0", 0, false },
	{ MSR_PMC0 + 1, "PMC1", 0, false },
	{ MSR_PMC0 + 2, "PMC2", 0, false },
	{ MSR_PMC0 + 3, "PMC3", 0, false },
	{ MSR_A_PMC0, "A_PMC0", 0, false },
	{ MSR_A_PMC0 + 1, "A_PMC1", 0, false },
	{ MSR_A_PMC0 + 2, "A_PMC2", 0, false },
	{ MSR_A_PMC0 + 3, "A_PMC3", 0, false },
	{ MSR_FIXED_CTR0, "FIXED_CTR0", 0, false },
	{ MSR_FIXED_CTR0 + 1, "FIXED_CTR1", 0, false },
	{ MSR_FIXED_CTR0 + 2, "FIXED_CTR2", 0, false },
	{ MSR_FIXED_CTR_CTRL, "FIXED_CTR_CTRL", 0, false },
	{ MSR_GLOBAL_STATUS, "GLOBAL_STATUS", 0, true },
	{ MSR_GLOBAL_OVF_CTRL, "GLOBAL_OVF_CTRL", 0, false },
	{ MSR_PERF_CAPABILITIES, "PERF_CAPABILITIES", PERF_CAP_FW_WRITE, true },
};

#define VT_NMSRS	(sizeof(vt_msrs) / sizeof(vt_msrs[0]))

/* Bumped by the #GP handler for each fault it recovers from. */
static volatile unsigned vt_gp_faults __attribute__((used));
/* The runtime's #GP gate, where faults the handler does not expect still go. */
static uint64_t vt_gp_next __attribute__((used));

uint64_t vt_rdmsr_raw(uint32_t msr);
void vt_wrmsr_raw(uint32_t msr, uint64_t val);
uint64_t vt_rdpmc_raw(uint32_t ecx);
void vt_gp_entry(void);
/* WRMSR(msr, on), VT_SLED NOPs from vt_sled, WRMSR(msr, 0): VT_WINDOW instructions count. */
void vt_window(uint32_t msr, uint64_t on);
extern const uint8_t vt_sled[];

#define VT_SLED		1100
/* The enabling WRMSR retires while counting, then the NOPs and the two XORs; not the last WRMSR. */
#define VT_WINDOW	(1 + VT_SLED + 2)
#define VT_STR_(x)	#x
#define VT_STR(x)	VT_STR_(x)

/*
 * Each accessor's RDMSR, WRMSR or RDPMC (2 bytes each) sits at a label; the #GP handler skips
 * the instruction when the fault is at one of them (from CPL 0 or 3) and counts it, and
 * passes any other #GP on to the runtime, which reports it and ends the guest.
 */
__asm__(".text\n"
	"vt_rdmsr_raw:\n\t"
	"mov %edi, %ecx\n"
	"vt_rdmsr_at:\n\t"
	"rdmsr\n\t"
	"shl $32, %rdx\n\t"
	"or %rdx, %rax\n\t"
	"ret\n"
	"vt_wrmsr_raw:\n\t"
	"mov %edi, %ecx\n\t"
	"mov %esi, %eax\n\t"
	"mov %rsi, %rdx\n\t"
	"shr $32, %rdx\n"
	"vt_wrmsr_at:\n\t"
	"wrmsr\n\t"
	"ret\n"
	"vt_rdpmc_raw:\n\t"
	"mov %edi, %ecx\n"
	"vt_rdpmc_at:\n\t"
	"rdpmc\n\t"
	"shl $32, %rdx\n\t"
	"or %rdx, %rax\n\t"
	"ret\n"
	/* Error code at 0(%rsp), then RIP: 8(%rsp), 16(%rsp) after the push. */
	"vt_gp_entry:\n\t"
	"push %rax\n\t"
	"mov 16(%rsp), %rax\n\t"
	"cmp $vt_rdmsr_at, %rax\n\t"
	"je 1f\n\t"
	"cmp $vt_wrmsr_at, %rax\n\t"
	"je 1f\n\t"
	"cmp $vt_rdpmc_at, %rax\n\t"
	"je 1f\n\t"
	"pop %rax\n\t"
	"jmp *vt_gp_next(%rip)\n"
	"1:\taddq $2, 16(%rsp)\n\t"
	"incl vt_gp_faults(%rip)\n\t"
	"pop %rax\n\t"
	"add $8, %rsp\n\t"
	"iretq\n"
	"vt_window:\n\t"
	"mov %edi, %ecx\n\t"
	"mov %esi, %eax\n\t"
	"mov %rsi, %rdx\n\t"
	"shr $32, %rdx\n\t"
	"wrmsr\n"
	"vt_sled:\n\t"
	".rept " VT_STR(VT_SLED) "\n\t"
	"nop\n\t"
	".endr\n\t"
	"xor %eax, %eax\n\t"
	"xor %edx, %edx\n\t"
	"wrmsr\n\t"
	"ret\n");

/* SDM Vol. 3A "64-Bit Mode IDT": the handler offset is split over bytes 0-1, 6-7 and 8-11. */
static inline void vt_gp_install(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) idtr;
	const volatile uint8_t *g;

	__asm__ volatile("sidt %0" : "=m"(idtr));
	g = (const volatile uint8_t *)(uintptr_t)(idtr.base + 16 * 13);
	vt_gp_next = (uint64_t)(g[0] | g[1] << 8) | (uint64_t)(g[6] | g[7] << 8) << 16 |
		     (uint64_t)(g[8] | g[9] << 8 | g[10] << 16 | (uint32_t)g[11] << 24) << 32;
	rt_idt_set_gate(13, vt_gp_entry, 0);
}

/* RDMSR: false when it raised #GP. */
static inline bool vt_rdmsr(uint32_t msr, uint64_t *val)
{
	unsigned before = vt_gp_faults;
	uint64_t v = vt_rdmsr_raw(msr);

	if (vt_gp_faults != before)
		return false;
	*val = v;
	return true;
}

/* WRMSR: false when it raised #GP. */
static inline bool vt_wrmsr(uint32_t msr, uint64_t val)
{
	unsigned before = vt_gp_faults;

	vt_wrmsr_raw(msr, val);
	return vt_gp_faults == before;
}

/* RDPMC: false when it raised #GP. */
static inline bool vt_rdpmc(uint32_t ecx, uint64_t *val)
{
	unsigned before = vt_gp_faults;
	uint64_t v = vt_rdpmc_raw(ecx);

	if (vt_gp_faults != before)
		return false;
	*val = v;
	return true;
}

/* RDMSR of an MSR that must be there; ~0 (wider than any counter) if it faulted. */
static inline uint64_t vt_read(uint32_t msr)
{
	uint64_t v;

	return vt_rdmsr(msr, &v) ? v : ~0ull;
}

/* Every counter stopped and zero, no event programmed, no overflow pending. */
static inline void vt_pmu_quiet(void)
{
	for (size_t i = 0; i < VT_NMSRS; i++) {
		if (vt_msrs[i].read_only)
			continue;
		/* SDM Vol. 3B 20.2.2: a set OVF_CTRL bit clears its GLOBAL_STATUS bit. */
		vt_wrmsr(vt_msrs[i].msr, vt_msrs[i].msr == MSR_GLOBAL_OVF_CTRL ? VT_ALL_CTRS : 0);
	}
}

static int vt_checks, vt_failed;

/* One "ok N - what" or "not ok N - what" line (kvm-unit-tests' report() idea). */
static bool __attribute__((format(printf, 2, 3))) vt_report(bool ok, const char *fmt, ...)
{
	va_list ap;

	vt_checks++;
	if (!ok)
		vt_failed++;
	printf("%s %d - ", ok ? "ok" : "not ok", vt_checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return ok;
}

/* The last line, which the system tests match; the guest's exit code is the failure count. */
static int vt_summary(const char *guest)
{
	printf("%s: %d of %d checks failed\n", guest, vt_failed, vt_checks);
	return vt_failed;
}

#endif
