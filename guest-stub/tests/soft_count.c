/* The soft PMU counts as Intel's counters count: REP strings, exceptions, shadows, far branches, SMC. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/rt/rt.h"
#include "guest-stub/lib/report.h"
#include "guest-stub/tests/soft_guest.h"
#include "include/perfvisor/hypercall.h"
#include "include/perfvisor/pmu.h"
#include "include/x86/apic.h"
#include "include/x86/pmu_msr.h"
#include "include/x86/rflags.h"

/* SDM Vol. 4 table 2-2; Vol. 3B 20.2.1.1 (PERFEVTSELx), table 20-1 (C0H, C4H). */
#define EVTSEL(ev)		((ev) | EVTSEL_USR | EVTSEL_OS | EVTSEL_EN)
/* The counters measured here: 0 and 1 may be the paravirtual a-mode ones (pv=1). */
#define CTR_INSNS		2
#define CTR_BRANCHES		3

#define STR_(x)		#x
#define STR(x)		STR_(x)

/* The xAPIC's EOI register (identity-mapped by rt/start.S) and the self-IPI's vector. */
#define APIC_EOI_ADDR		0xFEE000B0
#define IPI_VECTOR		0x41

_Static_assert(APIC_EOI_ADDR == APIC_DEFAULT_BASE + APIC_EOI, "the EOI register");

/* What the handlers below saw, and the far pointer of the far-jump case. */
volatile uint64_t soft_frame_flags;
volatile uint32_t soft_rep_len;
volatile uint8_t soft_far_ptr[6], soft_far_ptr64[10];
uint8_t soft_rep_src[2 << 20], soft_rep_dst[2 << 20];

/*
 * Handlers, each a known number of instructions: they record the interrupted RFLAGS from the
 * frame (SDM Vol. 3A 6.14.2: RIP, CS, RFLAGS, RSP, SS; an error code below for #GP and #PF) and skip
 * the faulting instruction. #UD and #DE: 6 instructions; #GP and #PF: 7; #BP: 5; INT 0x40: 1
 * (IRET); the self-IPI's: 5 (with the EOI).
 */
__asm__(".text\n"
	"soft_ud_entry:\n\t"
	"push %rax\n\t"
	"mov 24(%rsp), %rax\n\t"
	"mov %rax, soft_frame_flags(%rip)\n\t"
	"pop %rax\n\t"
	"addq $2, (%rsp)\n\t"		/* UD2 */
	"iretq\n"
	"soft_de_entry:\n\t"
	"push %rax\n\t"
	"mov 24(%rsp), %rax\n\t"
	"mov %rax, soft_frame_flags(%rip)\n\t"
	"pop %rax\n\t"
	"addq $3, (%rsp)\n\t"		/* DIV %RSI */
	"iretq\n"
	"soft_gp_entry:\n\t"
	"push %rax\n\t"
	"mov 32(%rsp), %rax\n\t"
	"mov %rax, soft_frame_flags(%rip)\n\t"
	"pop %rax\n\t"
	"add $8, %rsp\n\t"
	"addq $3, (%rsp)\n\t"		/* MOV (%RAX), %RAX */
	"iretq\n"
	"soft_bp_entry:\n\t"
	"push %rax\n\t"
	"mov 24(%rsp), %rax\n\t"
	"mov %rax, soft_frame_flags(%rip)\n\t"
	"pop %rax\n\t"
	"iretq\n"
	"soft_int_entry:\n\t"
	"iretq\n"
	"soft_ipi_entry:\n\t"
	"push %rax\n\t"
	"mov $" STR(APIC_EOI_ADDR) ", %eax\n\t"
	"movl $0, (%rax)\n\t"		/* EOI */
	"pop %rax\n\t"
	"iretq\n");
void soft_ud_entry(void);
void soft_de_entry(void);
void soft_gp_entry(void);
void soft_bp_entry(void);
void soft_int_entry(void);
void soft_ipi_entry(void);

struct counts {
	uint32_t insns, branches;
};

/*
 * RDPMC of both counters around `code`. Between the first RDPMC's read and the third's: that
 * RDPMC (an emulated instruction retires after its read), MOV, MOV, RDPMC, MOV, the code, XOR:
 * the code's count + 6. Between the second and the fourth, only the code's branches.
 */
#define WINDOW_INSNS	6
#define MEASURE(c, code)							\
	__asm__ volatile("mov $" STR(CTR_INSNS) ", %%ecx\n\trdpmc\n\tmov %%eax, %%r8d\n\t"	\
			 "mov $" STR(CTR_BRANCHES) ", %%ecx\n\trdpmc\n\tmov %%eax, %%r9d\n\t"	\
			 code "\n\t"						\
			 "mov $" STR(CTR_INSNS) ", %%ecx\n\trdpmc\n\tmov %%eax, %%r10d\n\t"	\
			 "mov $" STR(CTR_BRANCHES) ", %%ecx\n\trdpmc\n\t"	\
			 "sub %%r8d, %%r10d\n\tsub %%r9d, %%eax\n\t"		\
			 "mov %%r10d, %0\n\tmov %%eax, %1"			\
			 : "=m"((c).insns), "=m"((c).branches)			\
			 : : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",	\
			   "memory", "cc")

static bool pv_mode;
static bool pv_resume(bool on);
/* pv=1: the page of the paravirtual PMU's area of this one VCPU. */
static uint8_t pv_area[PV_PMU_AREA_STRIDE] __attribute__((aligned(4096)));

/*
 * Counting runs only around the windows: stepping the printing in between (newlib's printf)
 * would take long. With pv=1 an a-mode counter runs too: its page is shut while blocks run.
 */
static void counting(bool on)
{
	if (pv_mode && !pv_resume(on))
		report(false, "RESUME of the a-mode control");
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, on ? 1u << CTR_INSNS | 1u << CTR_BRANCHES : 0);
}

/* Judges one window: the code's instructions and branches, as the source says hardware counts. */
static void judge(const char *what, struct counts c, uint32_t insns, uint32_t branches)
{
	char name[96];

	snprintf(name, sizeof(name), "%s: instructions", what);
	report_value(name, c.insns, insns + WINDOW_INSNS);
	snprintf(name, sizeof(name), "%s: branches", what);
	report_value(name, c.branches, branches);
}

static void frame_clean(const char *what)
{
	report(!(soft_frame_flags & RFLAGS_TF), "%s: the frame's RFLAGS (%#llx) shows no TF", what,
	       (unsigned long long)soft_frame_flags);
}

static __attribute__((noinline)) void rep_window(struct counts *c)
{
	MEASURE(*c, "lea soft_rep_src(%%rip), %%rsi\n\tlea soft_rep_dst(%%rip), %%rdi\n\t"
		    "mov soft_rep_len(%%rip), %%ecx\n\trep movsb");
}

static __attribute__((noinline)) void loop_window(struct counts *c)
{
	MEASURE(*c, "mov soft_rep_len(%%rip), %%edx\n"
		    "1:\txor %%eax, %%eax\n\tadd $1, %%esi\n\tdec %%edx\n\tjnz 1b");
}

/* The shape of kvm-unit-tests' x86/pmu.c loop: LOOP counts RCX down. */
static __attribute__((noinline)) void loop_rcx_window(struct counts *c)
{
	MEASURE(*c, "mov soft_rep_len(%%rip), %%ecx\n"
		    "1:\txor %%eax, %%eax\n\tadd $1, %%esi\n\tloop 1b");
}

/* A window of size n long enough for exits to split it: it prints how many came around it. */
static struct counts split_window(void (*window)(struct counts *), uint32_t n, const char *what,
				  const char *unit, int64_t *exits)
{
	struct counts c;

	*exits = rt_vmcall(HC_VCPU_EXITS, 0, 0);
	soft_rep_len = n;
	counting(true);
	window(&c);
	counting(false);
	*exits = rt_vmcall(HC_VCPU_EXITS, 0, 0) - *exits;
	printf("soft_count: %s %u %s, %lld VM exits around it\n", what, n, unit, (long long)*exits);
	return c;
}

/*
 * SDM Vol. 3B 20.2.1.2 (Instructions Retired): counted at the retirement of an instruction's
 * last micro-op, so a REP string instruction is one instruction however many iterations, and
 * one split by an interrupt (Vol. 2B REP: RIP stays on it, the rest runs on return) is still
 * one, counted when it completes.
 */
static __attribute__((noinline)) void case_rep(uint32_t len, bool split)
{
	int64_t exits, one_exits;
	struct counts c = split_window(rep_window, len, "rep movsb of", "bytes", &exits);

	judge("rep movsb: one instruction", c, 4, 0);
	report(soft_rep_dst[len - 1] == soft_rep_src[len - 1], "rep movsb: copied");
	if (!split)
		return;
	/*
	 * split=1: the copy is long enough for slice ends to interrupt it (each iteration is at
	 * least one TSC tick under Bochs with one CPU, and 2 MiB of them are many 1 ms slices at
	 * any TSC rate the hypervisor calibrates): more exits than around the same window copying
	 * one byte prove it was split, and the count above is still one instruction.
	 */
	split_window(rep_window, 1, "rep movsb of", "bytes", &one_exits);
	report(exits > one_exits, "rep movsb: split by exits: %lld around it, %lld around 1 byte",
	       (long long)exits, (long long)one_exits);
}

/*
 * Faults delivered by the CPU with no VM exit of their own (#UD, #DE, #GP): the faulting
 * instruction does not retire (SDM Vol. 3B 20.2.1.2: a fault before the last micro-op's
 * retirement is not counted); the handler's instructions do, IRETQ among the branches
 * (BR_INST_RETIRED counts far branches, Vol. 3B table 20-1 and the model tables' FAR_BRANCH);
 * the frame shows the RFLAGS the guest had, without the stepper's TF.
 */
static __attribute__((noinline)) void case_faults(void)
{
	struct counts c;

	counting(true);
	MEASURE(c, "ud2");
	counting(false);
	judge("#UD: UD2 not counted, its handler's 6 are", c, 6, 1);
	frame_clean("#UD");
	counting(true);
	MEASURE(c, "xor %%esi, %%esi\n\tdiv %%rsi");
	counting(false);
	judge("#DE: XOR, not DIV, then the handler's 6", c, 1 + 6, 1);
	frame_clean("#DE");
	counting(true);
	MEASURE(c, "movabs $0x8000000000000000, %%rax\n\tmov (%%rax), %%rax");
	counting(false);
	judge("#GP (non-canonical): MOVABS, not the load, then the handler's 7", c, 1 + 7, 1);
	frame_clean("#GP");
	/*
	 * #PF (SDM Vol. 3A 6.15, a fault): 0x8000000000 is in the second 512 GiB, whose PML4 entry
	 * rt/start.S leaves empty. The hypervisor reflects it while counting (CR2 set); as for
	 * #GP the load does not retire and the handler's 7 (the same one) do.
	 */
	counting(true);
	MEASURE(c, "movabs $0x8000000000, %%rax\n\tmov (%%rax), %%rax");
	counting(false);
	judge("#PF (not present): MOVABS, not the load, then the handler's 7", c, 1 + 7, 1);
	frame_clean("#PF");
}

/*
 * INT3 and INT n are instructions: each retires, and is a far branch (SDM Vol. 3B table 20-1,
 * BR_INST_RETIRED; kvm-unit-tests x86/pmu.c counts branches the same way for its loops).
 */
static __attribute__((noinline)) void case_traps(void)
{
	struct counts c;

	counting(true);
	MEASURE(c, "int3");
	counting(false);
	judge("INT3 and its handler's 5 (IRETQ)", c, 1 + 5, 2);
	frame_clean("#BP");
	counting(true);
	MEASURE(c, "int $0x40");
	counting(false);
	judge("INT 0x40 and its IRETQ", c, 2, 2);
}

/*
 * Shadows delay interrupts and the single-step trap by one instruction (SDM Vol. 3A 6.8.3,
 * 18.3.1.4) but every instruction still retires once; PUSHF's image is the guest's own flags.
 */
static __attribute__((noinline)) void case_shadows(void)
{
	struct counts c;

	counting(true);
	MEASURE(c, "mov %%ss, %%eax\n\tmov %%eax, %%ss\n\tnop");
	counting(false);
	judge("MOV SS shadow: MOV, MOV SS, NOP", c, 3, 0);
	counting(true);
	MEASURE(c, "pushf\n\tcli\n\tsti\n\tnop\n\tpopf");
	counting(false);
	judge("STI shadow: PUSHF, CLI, STI, NOP, POPF", c, 5, 0);
	counting(true);
	MEASURE(c, "pushf\n\tpop %%rax\n\tmov %%rax, soft_frame_flags(%%rip)");
	counting(false);
	judge("PUSHF, POP, MOV", c, 3, 0);
	frame_clean("PUSHF");
}

/*
 * HLT retires like any instruction (SDM Vol. 3B 20.2.1.2; Vol. 2A HLT): a self-IPI sent with
 * interrupts masked is pending, STI's shadow lets HLT start, and the interrupt ends the halt at
 * once (SDM Vol. 3A 6.8.3: STI; HLT is the safe idiom). The handler's 5 (the EOI among them)
 * count, IRETQ as a far branch; the interrupt's delivery is no instruction.
 */
static __attribute__((noinline)) void case_hlt(void)
{
	struct counts c;

	*(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + APIC_SPIV) = APIC_SPIV_ENABLE | 0xFF;
	*(volatile uint32_t *)(uintptr_t)(APIC_DEFAULT_BASE + APIC_ICR_LO) =
		APIC_ICR_SELF | APIC_ICR_FIXED | IPI_VECTOR;
	counting(true);
	MEASURE(c, "sti\n\thlt\n\tcli");
	counting(false);
	judge("STI, HLT woken by a pending self-IPI, the handler's 5, CLI", c, 8, 1);
}

/* Far branches through memory: each one instruction, one (far) branch (SDM Vol. 3B table 20-1). */
static __attribute__((noinline)) void case_far(void)
{
	struct counts c;

	counting(true);
	MEASURE(c, "movl $1f, soft_far_ptr(%%rip)\n\tmov %%cs, %%eax\n\t"
		   "mov %%ax, soft_far_ptr+4(%%rip)\n\tljmpl *soft_far_ptr(%%rip)\n1:");
	counting(false);
	judge("far JMP m16:32: MOVL, MOV, MOV, LJMP", c, 4, 1);
	/*
	 * A far CALL through an m16:64 pointer (REX.W FF /3) to a far RET (REX.W CB), back to a
	 * near JMP: three branches, two of them far (SDM Vol. 3B table 20-1; Vol. 2A CALL, RET).
	 */
	counting(true);
	MEASURE(c, "movq $1f, soft_far_ptr64(%%rip)\n\tmov %%cs, %%eax\n\t"
		   "mov %%ax, soft_far_ptr64+8(%%rip)\n\trex.w lcall *soft_far_ptr64(%%rip)\n\t"
		   "jmp 2f\n1:\tlretq\n2:");
	counting(false);
	judge("far CALL m16:64 and far RET: MOVQ, MOV, MOV, LCALL, LRETQ, JMP", c, 6, 3);
}

/*
 * Self-modifying code: the second store turns the 2-byte XCHG %AX,%AX at 1: into two NOPs
 * before it runs (the first puts it back for the next run). A block holds stores only while
 * its code page is write-protected (the first MOVB then exits before it writes), so the NOPs it
 * counts are the ones that ran: LEA, MOVB, MOVB, NOP, NOP.
 */
static __attribute__((noinline)) void case_smc(void)
{
	struct counts c;

	counting(true);
	MEASURE(c, "lea 1f(%%rip), %%rax\n\tmovb $0x66, (%%rax)\n\tmovb $0x90, (%%rax)\n"
		   "1:\t.byte 0x66, 0x90");
	counting(false);
	judge("self-modifying code: the patched instructions count", c, 5, 0);
}

/*
 * Code the stepper has cached (docs/soft-pmu.md, "The block cache"): soft_smc_fn, CALLed, is
 * 66 90 (XCHG %AX,%AX, one instruction), NOP, RET. The guest rewrites its first two bytes
 * between runs, to two NOPs and back, each version run twice (the second run from the cache):
 * CALL, the NOPs, RET, 4 or 5 instructions and 2 branches, as the bytes are at the time. Then
 * soft_smc_loop stores into its own page at every turn of a DEC; JNZ loop of 3 instructions:
 * CALL, MOV, 100 turns, RET: 303 instructions, 102 branches (CALL, 100 JNZ, RET).
 */
__asm__(".text\n"
	".p2align 6\n"
	"soft_smc_fn:\n\t"
	".byte 0x66, 0x90\n\t"
	"nop\n\t"
	"ret\n"
	"soft_smc_loop:\n\t"
	"mov $100, %ecx\n"
	"1:\tmov %ecx, soft_smc_word(%rip)\n\t"
	"dec %ecx\n\t"
	"jnz 1b\n\t"
	"ret\n"
	"soft_smc_word:\n\t"
	".long 0\n");

extern uint8_t soft_smc_fn[];

static __attribute__((noinline)) void case_smc_cached(void)
{
	static const uint8_t nop2[2][2] = { { 0x66, 0x90 }, { 0x90, 0x90 } };
	volatile uint8_t *fn = soft_smc_fn;
	struct counts c;

	for (unsigned run = 0; run < 6; run++) {
		unsigned v = (run / 2) & 1;

		fn[0] = nop2[v][0];
		fn[1] = nop2[v][1];
		counting(true);
		MEASURE(c, "call soft_smc_fn");
		counting(false);
		judge(v ? "rewritten code page: two NOPs" : "rewritten code page: one XCHG", c,
		      4 + v, 2);
	}
	counting(true);
	MEASURE(c, "call soft_smc_loop");
	counting(false);
	judge("a loop storing into its own code page", c, 303, 102);
}

/*
 * Counted loops (DEC r; JNZ and LOOP, nothing else writing r) run all their turns as one block
 * (docs/soft-pmu.md): one exit to leave, and the interrupts that land in them. Stepped or run a
 * turn a block, each turn takes at least one exit. Interrupts come at most once a slice end or
 * timer tick, far fewer than one per 100 turns of 3 or 4 instructions (a 1 ms slice is over
 * 10^5 TSC ticks: see fastloop.c), so fewer exits than turns / 100 holds whole loops to account.
 */
static void judge_exits(const char *what, int64_t exits, uint32_t turns)
{
	if (turns >= 10000)
		report(exits < turns / 100, "%s: run whole: %lld VM exits for %u turns (under 1 in 100)",
		       what, (long long)exits, turns);
}

/*
 * split=1: the loops run again 250 times longer, so that slice ends land inside them, at every
 * point of a turn: more exits around them than around the short ones, and still exact.
 */
static __attribute__((noinline)) void case_loop(uint32_t turns, bool split)
{
	static const char *const what[2] = { "a loop of 4 (DEC; JNZ)", "a loop of 3 (LOOP)" };
	void (*const window[2])(struct counts *) = { loop_window, loop_rcx_window };

	for (unsigned k = 0; k < 2; k++) {
		int64_t exits, long_exits;
		uint32_t per = 4 - k, n = turns * 250;
		struct counts c = split_window(window[k], turns, "loop of", "turns", &exits);

		judge(what[k], c, 1 + per * turns, turns);
		judge_exits(what[k], exits, turns);
		if (!split)
			continue;
		c = split_window(window[k], n, "loop of", "turns", &long_exits);
		judge(what[k], c, 1 + per * n, n);
		report(long_exits > exits, "%s: split by exits: %lld around %u turns, %lld around %u",
		       what[k], (long long)long_exits, n, (long long)exits, turns);
	}
}

/*
 * pv=1: the a-mode counter read from its page inside a loop (the page is shut while blocks
 * run: each read exits, the block is counted up to it, and the read is stepped with the page
 * current). A read shows what retired before it (SDM Vol. 3B 20.2.1.2: the reading
 * instruction has not retired), so each turn's first read is 8 past the last turn's, and
 * SUB's read, one instruction after MOV's, is 1 past it: MOV - SUB = -1 whatever the reader.
 */
#define PV_READ_TURNS	64

static __attribute__((noinline)) void case_pv_reads(void)
{
	const volatile uint64_t *phys = ((struct pv_vcpu_area *)pv_area)->soft_phys;
	static uint64_t seen[PV_READ_TURNS][2];
	unsigned steady = 0, minus_one = 0;

	counting(true);
	__asm__ volatile("1:\tmov (%%rsi), %%rax\n\t"		/* phys before it */
			 "mov (%%rsi), %%rcx\n\t"
			 "sub (%%rsi), %%rcx\n\t"			/* -1 */
			 "mov %%rax, (%%rdi)\n\t"
			 "mov %%rcx, 8(%%rdi)\n\t"
			 "add $16, %%rdi\n\t"
			 "dec %%edx\n\t"
			 "jnz 1b"
			 : : "S"(phys), "D"(seen), "d"(PV_READ_TURNS)
			 : "rax", "rcx", "memory", "cc");
	counting(false);
	for (unsigned i = 0; i < PV_READ_TURNS; i++) {
		steady += i && seen[i][0] - seen[i - 1][0] == 8;
		minus_one += seen[i][1] == ~0ull;
	}
	report(steady == PV_READ_TURNS - 1, "a-mode reads in blocks: %u of %u turns read exactly "
	       "8 more than the turn before (first %llu, last %llu)", steady, PV_READ_TURNS - 1,
	       (unsigned long long)seen[0][0], (unsigned long long)seen[PV_READ_TURNS - 1][0]);
	report(minus_one == PV_READ_TURNS, "a-mode reads in blocks: MOV then SUB of the page read "
	       "one instruction apart in %u of %u turns", minus_one, PV_READ_TURNS);
}

/* A paravirtual a-mode counter of instructions (pv=1). */
static bool pv_resume(bool on)
{
	static const struct pv_control c = {
		.ncounters = 1,
		.evtsel = { EVTSEL(ARCH_EVENT_INST_RETIRED) },
	}, nothing;

	return rt_vmcall(HC_PMU_RESUME, (uintptr_t)(on ? &c : &nothing), 0) == 0;
}

int main(int argc, char **argv)
{
	uint32_t rep_len = soft_arg(argc, argv, "rep", 1000);
	uint32_t turns = soft_arg(argc, argv, "turns", 1000);

	if (rep_len == 0 || rep_len > sizeof(soft_rep_src))
		rep_len = sizeof(soft_rep_src);
	for (uint32_t i = 0; i < rep_len; i += 4096)
		soft_rep_src[i] = (uint8_t)(i >> 12 | 1);
	soft_rep_src[rep_len - 1] = 0x5A;
	rt_idt_set_gate(0, soft_de_entry, 0);
	rt_idt_set_gate(3, soft_bp_entry, 0);
	rt_idt_set_gate(6, soft_ud_entry, 0);
	rt_idt_set_gate(13, soft_gp_entry, 0);
	rt_idt_set_gate(14, soft_gp_entry, 0);
	rt_idt_set_gate(0x40, soft_int_entry, 0);
	rt_idt_set_gate(IPI_VECTOR, soft_ipi_entry, 0);
	pv_mode = soft_arg(argc, argv, "pv", 0);
	if (pv_mode)
		report(rt_vmcall(HC_PMU_SETUP, (uintptr_t)pv_area, 1) == 0,
		       "paravirtual PMU set up: an a-mode counter runs in every window");
	rt_wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, 0);
	rt_wrmsr(MSR_IA32_PERFEVTSEL0 + CTR_INSNS, EVTSEL(ARCH_EVENT_INST_RETIRED));
	rt_wrmsr(MSR_IA32_PERFEVTSEL0 + CTR_BRANCHES, EVTSEL(ARCH_EVENT_BRANCH_RETIRED));
	case_rep(rep_len, soft_arg(argc, argv, "split", 0));
	case_faults();
	case_traps();
	case_shadows();
	case_hlt();
	case_far();
	case_smc();
	case_smc_cached();
	case_loop(turns, soft_arg(argc, argv, "split", 0));
	if (pv_mode)
		case_pv_reads();
	return report_summary();
}
