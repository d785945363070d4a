/* The vPMU test guests' shared code: the MSR table, #GP-safe accessors, the counted window. */
#include "guest-stub/lib/vpmu_test.h"
#include "guest-stub/rt/rt.h"

const struct vt_msr vt_msrs[] = {
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

const size_t vt_nmsrs = sizeof(vt_msrs) / sizeof(vt_msrs[0]);

/* Bumped by the #GP handler for each fault it recovers from. */
static volatile unsigned vt_gp_faults __attribute__((used));
/* The runtime's #GP gate, where faults the handler does not expect still go. */
static uint64_t vt_gp_next __attribute__((used));

uint64_t vt_rdmsr_raw(uint32_t msr);
void vt_wrmsr_raw(uint32_t msr, uint64_t val);
uint64_t vt_rdpmc_raw(uint32_t ecx);
void vt_gp_entry(void);

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
	".globl vt_window, vt_sled\n"
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
void vt_gp_install(void)
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

/* One read by raw(index): the value unless the #GP handler counted a fault meanwhile. */
static bool vt_read_safe(uint64_t (*raw)(uint32_t), uint32_t index, uint64_t *val)
{
	unsigned before = vt_gp_faults;
	uint64_t v = raw(index);

	if (vt_gp_faults != before)
		return false;
	*val = v;
	return true;
}

bool vt_rdmsr(uint32_t msr, uint64_t *val)
{
	return vt_read_safe(vt_rdmsr_raw, msr, val);
}

bool vt_wrmsr(uint32_t msr, uint64_t val)
{
	unsigned before = vt_gp_faults;

	vt_wrmsr_raw(msr, val);
	return vt_gp_faults == before;
}

bool vt_rdpmc(uint32_t ecx, uint64_t *val)
{
	return vt_read_safe(vt_rdpmc_raw, ecx, val);
}

uint64_t vt_read(uint32_t msr)
{
	uint64_t v;

	return vt_rdmsr(msr, &v) ? v : ~0ull;
}

void vt_pmu_quiet(void)
{
	for (size_t i = 0; i < vt_nmsrs; i++) {
		if (vt_msrs[i].read_only)
			continue;
		/* SDM Vol. 3B 20.2.2: a set OVF_CTRL bit clears its GLOBAL_STATUS bit. */
		vt_wrmsr(vt_msrs[i].msr, vt_msrs[i].msr == MSR_GLOBAL_OVF_CTRL ? VT_ALL_CTRS : 0);
	}
}
