/* Unit tests for hv/step.c on a modelled VMCS and guest RAM: hidden TF, breakpoints, blocks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "tests/unit/vmcs_model.h"

/* RDMSR would fault in a host process: step.c's reads IA32_LSTAR from the model. */
#include "lib/cpu.h"
#define rdmsr model_rdmsr
#define GUEST_LSTAR	0x6000ull
static uint64_t model_rdmsr(uint32_t msr)
{
	return msr == 0xC0000082 ? GUEST_LSTAR : 0;
}

/* The block cache's EPT tables and frames come from host memory: "physical" = pointer. */
uint64_t frame_alloc_contig(uint64_t npages, uint64_t align_pages)
{
	(void)align_pages;
	return (uint64_t)(uintptr_t)aligned_alloc(4096, npages * 4096);
}

uint64_t frame_alloc(void)
{
	return frame_alloc_contig(1, 1);
}

int frame_free_contig(uint64_t pa, uint64_t npages)
{
	(void)npages;
	free((void *)(uintptr_t)pa);
	return 0;
}

int frame_free(uint64_t pa)
{
	return frame_free_contig(pa, 1);
}

#include "hv/ept.c"
#include "hv/step.c"
#include "hv/step_block.c"
#include "hv/step_cache.c"
#include "hv/step_fast.c"
#include "pmu/soft_classify.c"

struct vmx_caps vmx_caps;
enum pmu_backend_kind pmu_backend = PMU_BACKEND_SOFT;

/* The fast path's entries (the speculation barrier before them). */
static unsigned spec_entries;

void spec_before_entry(void)
{
	spec_entries++;
}

/* The fast path's stepping exits: the guest's TSC stands still through each (hv/sched.c). */
static unsigned tsc_freezes, tsc_thaws;

void sched_tsc_freeze(struct vcpu *v, uint64_t exit_tsc)
{
	(void)v;
	(void)exit_tsc;
	tsc_freezes++;
}

void sched_tsc_thaw(struct vcpu *v)
{
	(void)v;
	tsc_thaws += tsc_freezes > tsc_thaws;
}

/*
 * Guest RAM: linear = physical from 0, flat segments, nothing mapped above it; page-aligned like
 * a domain's RAM, since the block cache's EPT maps it at its host address.
 */
static uint8_t ram[0x10000] __attribute__((aligned(4096)));

#define CODE	0x1000ull
#define IDT	0x2000ull
#define HANDLER	0x5000ull
#define STACK	0x8000ull

static unsigned cpl;
static enum insn_mode mode;
static uint64_t cr0;
static uint64_t room = ~0ull, branch_room = ~0ull;
static unsigned guest_free_slots = 0xF;	/* the DR slots the guest's DR7 leaves off */

/* What the stepper told the PMU and the debug registers. */
static unsigned retired, retired_null, blocks_told, warned;
static struct soft_insn last_insn;
static uint64_t block_n, block_branches, first_told_n;
static uint64_t slot_la[4], entry_dr7;
static unsigned slot_writes, dr_entries, translations;

enum gpt_status guest_read(struct vcpu *v, void *dst, uint64_t la, size_t len,
			   enum gpt_access acc, struct gpt_result *res)
{
	(void)v;
	(void)acc;
	if (la >= sizeof(ram) || len > sizeof(ram) - la) {
		res->la = la;
		return GPT_PAGE_FAULT;
	}
	memcpy(dst, ram + la, len);
	return GPT_OK;
}

enum gpt_status guest_write(struct vcpu *v, uint64_t la, const void *src, size_t len,
			    struct gpt_result *res)
{
	(void)v;
	if (la >= sizeof(ram) || len > sizeof(ram) - la) {
		res->la = la;
		return GPT_PAGE_FAULT;
	}
	memcpy(ram + la, src, len);
	return GPT_OK;
}

/*
 * The guest's page tables for the block cache: identity, but linear page remap_la maps to
 * physical page remap_pa (a page-table change, which takes no exit).
 */
static uint64_t remap_la = ~0ull, remap_pa;

enum gpt_status guest_translate(struct vcpu *v, uint64_t la, enum gpt_access acc,
				struct gpt_memo *memo, struct gpt_result *res)
{
	(void)v;
	(void)acc;
	(void)memo;
	translations++;
	res->la = la;
	if (la >= sizeof(ram))
		return GPT_PAGE_FAULT;
	res->gpa = (la & ~0xFFFull) == remap_la ? remap_pa | (la & 0xFFF) : la;
	return GPT_OK;
}

enum insn_mode guest_code_mode(void)
{
	return mode;
}

unsigned guest_fetch_insn(struct vcpu *v, uint8_t bytes[INSN_MAX_LEN])
{
	struct gpt_result res;

	return guest_read(v, bytes, vmcs[VMCS_GUEST_RIP], INSN_MAX_LEN, GPT_FETCH, &res) == GPT_OK ?
	       INSN_MAX_LEN : 0;
}

uint64_t vcpu_guest_cr0(void)
{
	return cr0;
}

unsigned vcpu_cpl(void)
{
	return cpl;
}

uint64_t pmu_step_room(struct vcpu *v, unsigned c)
{
	(void)v;
	(void)c;
	return room;
}

uint64_t pmu_step_branch_room(struct vcpu *v, unsigned c)
{
	(void)v;
	(void)c;
	return branch_room;
}

void pmu_retired(struct vcpu *v, const struct soft_insn *insn, unsigned c)
{
	(void)v;
	(void)c;
	if (!insn) {
		retired_null++;
		return;
	}
	retired++;
	last_insn = *insn;
}

void pmu_retired_block(struct vcpu *v, uint64_t n, uint64_t branches, unsigned c)
{
	(void)v;
	(void)c;
	if (!blocks_told++)
		first_told_n = n;
	block_n += n;
	block_branches += branches;
}

unsigned dr_free_slots(const struct vcpu *v)
{
	(void)v;
	return guest_free_slots;
}

void dr_set_slot(unsigned k, uint64_t la)
{
	slot_la[k] = la;
	slot_writes++;
}

void dr_before_entry(struct vcpu *v, uint64_t step_dr7)
{
	(void)v;
	entry_dr7 = step_dr7;
	dr_entries++;
}

/* The PV page guard (hv/step_pv.c, its own test): whether it lets a block run, and what it saw. */
static bool guard_lets;
static unsigned guard_starts, guard_ends;

bool step_pv_block_start(struct vcpu *v)
{
	(void)v;
	guard_starts++;
	return guard_lets;
}

void step_pv_block_end(struct vcpu *v)
{
	(void)v;
	guard_ends++;
}

/* Whether the other VCPUs of the domain have flushed their EPT translations (hv/step_pv.c). */
static bool others_flushed;

bool step_flushed_everywhere(struct vcpu *v, uint64_t gen)
{
	(void)v;
	(void)gen;
	return others_flushed;
}

void printk_level(enum log_level level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
	warned++;
}

static struct domain dom;
static struct vcpu vcpu = { .dom = &dom };

/* A one-VCPU domain whose RAM is `ram`, in an EPT of 4 KiB pages with all rights. */
static void reset_domain(void)
{
	step_cache_free(&vcpu);
	if (dom.eptp)
		ept_destroy(dom.eptp);
	memset(&dom, 0, sizeof(dom));
	dom.ram_hpa = (uint64_t)(uintptr_t)ram;
	dom.ram_size = sizeof(ram);
	dom.eptp = ept_create();
	ept_map(dom.eptp, 0, dom.ram_hpa, sizeof(ram), EPT_RWX);
	dom.nvcpus = 1;
	dom.vcpus[0] = &vcpu;
	others_flushed = true;
	remap_la = ~0ull;
}

#define GUEST_EXC_BITMAP	(1u << 14)	/* what the VCPU intercepted before stepping */

/* A 64-bit guest at CODE with `code` there, RSP at STACK, RFLAGS with IF, not stepping. */
static void reset(const uint8_t *code, size_t len)
{
	memset(vmcs, 0, sizeof(vmcs));
	reset_domain();
	memset(ram, 0xf4, sizeof(ram));	/* HLT everywhere else: never in a block */
	memcpy(ram + CODE, code, len);
	memset(&vcpu.step, 0, sizeof(vcpu.step));
	memset(vcpu.gpr, 0, sizeof(vcpu.gpr));
	vmcs[VMCS_GUEST_RIP] = CODE;
	vmcs[VMCS_GUEST_RSP] = STACK;
	vmcs[VMCS_GUEST_RFLAGS] = 0x202;
	vmcs[VMCS_GUEST_IDTR_BASE] = IDT;
	vmcs[VMCS_EXCEPTION_BITMAP] = GUEST_EXC_BITMAP;
	cpl = 0;
	mode = INSN_MODE_64;
	cr0 = 1;	/* PE: IDT gates, not the real-mode IVT */
	room = branch_room = ~0ull;
	guest_free_slots = 0xF;
	retired = retired_null = blocks_told = warned = 0;
	block_n = block_branches = first_told_n = 0;
	memset(&last_insn, 0, sizeof(last_insn));
	memset(slot_la, 0, sizeof(slot_la));
	entry_dr7 = 0;
	slot_writes = dr_entries = translations = spec_entries = tsc_freezes = tsc_thaws = 0;
	vcpu.pmu.pv_guard = false;
	vcpu.pmu.step_batch = false;
	memset(&vcpu.apic, 0, sizeof(vcpu.apic));
	vcpu.state = VCPU_RUNNABLE;
	vcpu.resched = false;
	vcpu.ept.gen = 0;
	vcpu.hv_tsc = vcpu.run_tsc = 0;
	guard_lets = true;
	guard_starts = guard_ends = 0;
}

/* A 64-bit interrupt gate for vector at IDT (SDM Vol. 3A 6.14.1, figure 6-8). */
static void idt_gate(unsigned vector, uint64_t handler)
{
	uint8_t *g = ram + IDT + vector * 16;

	memset(g, 0, 16);
	g[0] = handler;
	g[1] = handler >> 8;
	g[6] = handler >> 16;
	g[7] = handler >> 24;
	memcpy(g + 8, (uint32_t[]){ handler >> 32 }, 4);
	g[5] = 0x8E;
}

static uint64_t ram_u64(uint64_t la)
{
	uint64_t x;

	memcpy(&x, ram + la, 8);
	return x;
}

static void ram_put_u64(uint64_t la, uint64_t x)
{
	memcpy(ram + la, &x, 8);
}

static bool tf(void)
{
	return vmcs[VMCS_GUEST_RFLAGS] & RFLAGS_TF;
}

/* The guest trapped after one instruction: RIP moved to next, #DB exit with DR6.BS. */
static bool single_step_to(uint64_t next)
{
	vmcs[VMCS_GUEST_RIP] = next;
	step_on_exit(&vcpu);
	return step_handle_db(&vcpu, DR6_BS);
}

/* TF only while counting; the exception bitmap widened and restored (docs/soft-pmu.md, How 3). */
static void test_tf_only_while_counting(void)
{
	static const uint8_t pushf[] = { 0x9c };	/* pushfq: never in a block */

	reset(pushf, sizeof(pushf));
	step_before_entry(&vcpu);
	check(!tf() && vmcs[VMCS_EXCEPTION_BITMAP] == GUEST_EXC_BITMAP && !entry_dr7,
	      "not counting: TF clear, exception bitmap and DR7 the guest's own");
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(tf() && vcpu.step.active, "counting, an instruction no block holds: RFLAGS.TF set "
	      "before entry (SDM Vol. 3A 18.3.1.4)");
	check(vmcs[VMCS_EXCEPTION_BITMAP] == (GUEST_EXC_BITMAP | STEP_EXCEPTIONS) &&
	      (STEP_EXCEPTIONS & 1u << EXC_DB) && !(STEP_EXCEPTIONS & (1u << 3 | 1u << 4 | 1u << 18)),
	      "counting: every exception but #BP, #OF, #MC exits (docs/soft-pmu.md, exceptions)");
	vcpu.step.want = false;
	vmcs[VMCS_GUEST_PENDING_DBG] = DR6_BS | 1;
	step_before_entry(&vcpu);
	check(!tf() && !vcpu.step.active &&
	      vmcs[VMCS_EXCEPTION_BITMAP] == (GUEST_EXC_BITMAP | 1u << EXC_DB),
	      "stopped: TF cleared, the guest's bitmap back with #DB kept (its DR6 is a shadow)");
	check(vmcs[VMCS_GUEST_PENDING_DBG] == 1,
	      "stopped: the stray single-step bit is cleared from the pending debug exceptions, "
	      "the rest kept (PLATFORM-NOTES, Bochs; SDM Vol. 3C 25.4.2)");
}

/* Bochs copies BS into the pending debug exceptions at every exit (PLATFORM-NOTES). */
static void test_stray_single_step(void)
{
	static const uint8_t nop_hlt[] = { 0x90, 0xf4 };

	reset(nop_hlt, sizeof(nop_hlt));
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	vmcs[VMCS_GUEST_PENDING_DBG] = DR6_BS | 2;
	step_on_exit(&vcpu);
	check(vmcs[VMCS_GUEST_PENDING_DBG] == 2,
	      "any exit while stepping: pending BS cleared, other pending bits kept (PLATFORM-NOTES)");
	vmcs[VMCS_GUEST_PENDING_DBG] = DR6_BS;
	step_handle_db(&vcpu, 1u << 0);
	check(!vmcs[VMCS_GUEST_PENDING_DBG], "a #DB exit while stepping: pending BS cleared");
}

/* PUSHF pushes RFLAGS with the stepping TF: the image loses it (docs/soft-pmu.md, rules). */
static void test_pushf_image(void)
{
	static const uint8_t pushf[] = { 0x9c };

	reset(pushf, sizeof(pushf));
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	/* What PUSHFQ did with TF set (SDM Vol. 2B PUSHF): RSP - 8 = RFLAGS. */
	vmcs[VMCS_GUEST_RSP] = STACK - 8;
	ram_put_u64(STACK - 8, 0x202 | RFLAGS_TF);
	check(single_step_to(CODE + 1) && retired == 1 && last_insn.pushes_flags,
	      "PUSHF's trap: the stepper's own #DB, PUSHF told to the PMU once");
	check(ram_u64(STACK - 8) == 0x202, "TF cleared from the PUSHF image the guest wrote, "
	      "nothing else changed");
	ram_put_u64(STACK - 8, 0x202 | RFLAGS_TF);
	step_before_entry(&vcpu);
	vmcs[VMCS_GUEST_RIP] = CODE + 2;
	check(!step_handle_db(&vcpu, 1u << 1) && retired == 1,
	      "a #DB the stepper did not arm (guest's DR1) is the guest's, nothing counted");
}

/* SYSCALL with FMASK.TF: no trap; a breakpoint at LSTAR in a free slot; R11 without TF. */
static void test_syscall(void)
{
	static const uint8_t syscall[] = { 0x0f, 0x05 };

	reset(syscall, sizeof(syscall));
	guest_free_slots = 0x6;	/* the guest's DR7 enables DR0 and DR3 */
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.bp == STEP_BP_INSN && slot_la[1] == GUEST_LSTAR && !slot_la[0] &&
	      vcpu.step.bp_slots == 1u << 1 && entry_dr7 == 1ull << 2,
	      "SYSCALL: execute breakpoint at IA32_LSTAR in DR1, the first slot the guest's DR7 "
	      "leaves off; L1 only (SDM Vol. 3A 18.2.4, docs/soft-pmu.md isolation)");
	/* SYSCALL ran (SDM Vol. 2B SYSCALL): R11 = RFLAGS with TF, RIP = LSTAR, breakpoint fires. */
	vcpu.gpr[GPR_R11] = 0x202 | RFLAGS_TF;
	vmcs[VMCS_GUEST_RIP] = GUEST_LSTAR;
	step_on_exit(&vcpu);
	check(step_handle_db(&vcpu, 1u << 1) && retired == 1 && last_insn.flags_to_r11,
	      "the breakpoint at LSTAR: SYSCALL told to the PMU once");
	check(vcpu.gpr[GPR_R11] == 0x202, "TF cleared from SYSCALL's R11 (docs/soft-pmu.md rules)");
	check(vmcs[VMCS_GUEST_RFLAGS] & RFLAGS_RF,
	      "RF set so the breakpoint does not fire again at once (SDM Vol. 3A 18.3.1.1)");
}

/* INT n: TF cleared through the gate; its handler's breakpoint finds TF in the frame. */
static void test_int_frame(void)
{
	static const uint8_t int80[] = { 0xcd, 0x80 };

	reset(int80, sizeof(int80));
	idt_gate(0x80, HANDLER);
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.bp == STEP_BP_INSN && slot_la[0] == HANDLER,
	      "INT 0x80: breakpoint on its IDT gate's handler (SDM Vol. 3A 6.14.1)");
	/* The delivery pushed SS, RSP, RFLAGS (with TF), CS, RIP (SDM Vol. 3A 6.14.2). */
	vmcs[VMCS_GUEST_RSP] = STACK - 40;
	ram_put_u64(STACK - 40, CODE + 2);
	ram_put_u64(STACK - 32, 8);
	ram_put_u64(STACK - 24, 0x202 | RFLAGS_TF);
	vmcs[VMCS_GUEST_RIP] = HANDLER;
	vmcs[VMCS_GUEST_RFLAGS] = 0x2;
	step_on_exit(&vcpu);
	check(step_handle_db(&vcpu, 1u << 0) && retired == 1 && last_insn.branch,
	      "at the handler: INT n told once, as a branch (SDM Vol. 3B table 20-1)");
	check(ram_u64(STACK - 24) == 0x202 && ram_u64(STACK - 40) == CODE + 2,
	      "TF cleared from the interrupt frame's RFLAGS, RIP slot untouched");
}

/* A reflected fault: the faulting instruction does not retire (SDM Vol. 3B 20.2.1.2). */
static void test_fault_reflected(void)
{
	static const uint8_t pushf[] = { 0x9c };

	reset(pushf, sizeof(pushf));
	idt_gate(14, HANDLER);
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	/* PUSHF faulted (#PF exit): RIP stays, the exit handler reflects the #PF with an error code. */
	step_on_exit(&vcpu);
	vmcs[VMCS_ENTRY_INTR_INFO] = INTR_INFO_VALID | INTR_TYPE_HW_EXCEPTION |
				     INTR_INFO_DELIVER_ERROR | 14;
	step_before_entry(&vcpu);
	check(tf() && vcpu.step.bp == STEP_BP_EVENT && slot_la[0] == HANDLER && !retired,
	      "reflected #PF: nothing told for the faulting PUSHF, breakpoint on the #PF handler");
	/* Delivery pushed SS, RSP, RFLAGS (TF), CS, RIP, error code (SDM Vol. 3A 6.14.2). */
	vmcs[VMCS_ENTRY_INTR_INFO] = 0;
	vmcs[VMCS_GUEST_RSP] = STACK - 48;
	ram_put_u64(STACK - 48, 2);
	ram_put_u64(STACK - 40, CODE);
	ram_put_u64(STACK - 32, 8);
	ram_put_u64(STACK - 24, 0x202 | RFLAGS_TF);
	vmcs[VMCS_GUEST_RIP] = HANDLER;
	step_on_exit(&vcpu);
	check(step_handle_db(&vcpu, 1u << 0) && !retired && !blocks_told,
	      "at the handler's breakpoint: an exception is no instruction, nothing told");
	check(ram_u64(STACK - 24) == 0x202 && ram_u64(STACK - 48) == 2,
	      "TF cleared from the exception frame above its error code, error code untouched");
}

/* Real mode: the handler is the IVT's segment:offset (SDM Vol. 3A 20.1.4). */
static void test_real_mode_event(void)
{
	static const uint8_t nop[] = { 0x90 };

	reset(nop, sizeof(nop));
	mode = INSN_MODE_16;
	cr0 = 0;
	vmcs[VMCS_GUEST_IDTR_BASE] = 0;
	memcpy(ram + 8 * 4, (uint16_t[]){ 0x0123, 0x0400 }, 4);	/* vector 8: 0400:0123 */
	vmcs[VMCS_ENTRY_INTR_INFO] = INTR_INFO_VALID | 8;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.bp == STEP_BP_EVENT && slot_la[0] == 0x4123,
	      "real mode, injected vector 8: breakpoint at 0x400 * 16 + 0x123");
}

/* 32-bit code: frame slots are 4 bytes, EFLAGS third (SDM Vol. 3A 6.12.1, figure 6-4). */
static void test_frame32(void)
{
	static const uint8_t int3[] = { 0xcc };
	uint8_t *g = ram + IDT + 3 * 8;

	reset(int3, sizeof(int3));
	mode = INSN_MODE_32;
	memset(g, 0, 8);
	g[0] = HANDLER & 0xFF;
	g[1] = HANDLER >> 8;
	g[5] = 0x8E;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.bp == STEP_BP_INSN && slot_la[0] == HANDLER,
	      "32-bit INT3: breakpoint on its 8-byte gate's handler");
	vmcs[VMCS_GUEST_RSP] = STACK - 12;
	memcpy(ram + STACK - 12, (uint32_t[]){ CODE + 1, 8, 0x202 | RFLAGS_TF }, 12);
	vmcs[VMCS_GUEST_RIP] = HANDLER;
	step_on_exit(&vcpu);
	check(step_handle_db(&vcpu, 1u << 0) && retired == 1 &&
	      !memcmp(ram + STACK - 12, (uint32_t[]){ CODE + 1, 8, 0x202 }, 12),
	      "at the handler: INT3 told once, TF cleared from the 32-bit frame's EFLAGS");
}

/* A block's RET goes where the stack says: a breakpoint there (docs/soft-pmu.md How 1). */
static void test_ret_block(void)
{
	static const uint8_t pop_ret[] = { 0x5b, 0xc3 };	/* pop %rbx; ret */

	reset(pop_ret, sizeof(pop_ret));
	ram_put_u64(STACK + 8, 0x3000);
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block_on && vcpu.step.block.n == 2 && slot_la[0] == 0x3000,
	      "POP; RET: one block, breakpoint at the return address at RSP + 8");
	vmcs[VMCS_GUEST_RIP] = 0x3000;
	step_on_exit(&vcpu);
	check(block_n == 2 && block_branches == 1, "at the return address: 2 told, 1 branch");
	reset(pop_ret, sizeof(pop_ret));
	vmcs[VMCS_GUEST_RSP] = sizeof(ram) - 8;	/* the return address is not readable */
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block_on && vcpu.step.block.n == 1 && slot_la[0] == CODE + 1,
	      "return address unreadable: the RET is left out, to be stepped");
}

/* Plain instructions run as a block to a breakpoint, counted at the next exit (soft-pmu.md How). */
static const uint8_t block3[] = {
	0x31, 0xc0,		/* xor %eax,%eax */
	0x83, 0xc0, 0x01,	/* add $0x1,%eax */
	0x48, 0x89, 0xd8,	/* mov %rbx,%rax */
	0x9c,			/* pushfq: ends the block, stepped */
};

static void test_block_at_breakpoint(void)
{
	reset(block3, sizeof(block3));
	guest_free_slots = 0x8;	/* the guest uses DR0-DR2 */
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(!tf() && vcpu.step.block_on && slot_la[3] == CODE + 8 && entry_dr7 == 1ull << 6 &&
	      !slot_la[0] && !slot_la[1] && !slot_la[2],
	      "three plain instructions: TF clear, one breakpoint at the block's end in DR3, the "
	      "only slot the guest leaves (SDM Vol. 3A 18.2.4)");
	vmcs[VMCS_GUEST_RIP] = CODE + 8;
	step_on_exit(&vcpu);
	check(blocks_told == 1 && block_n == 3 && !block_branches && !retired,
	      "exit at the breakpoint: the block told once, 3 instructions, no branch");
	check(step_handle_db(&vcpu, 1u << 3) && blocks_told == 1 && block_n == 3 && !retired,
	      "the breakpoint's #DB is the stepper's and counts nothing more");
	step_before_entry(&vcpu);
	check(tf() && !vcpu.step.block_on, "then the PUSHF is single-stepped");
}

static void test_block_mid(void)
{
	reset(block3, sizeof(block3));
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	/* An interrupt (any exit) after the xor and the add (docs/soft-pmu.md How 2). */
	vmcs[VMCS_GUEST_RIP] = CODE + 5;
	step_on_exit(&vcpu);
	check(blocks_told == 1 && block_n == 2 && !warned,
	      "exit mid-block: the 2 instructions before RIP told once");
	check(vcpu.step.run_insns == 2,
	      "and the run's guest TSC may be charged as those 2 (no RDTSC in the block)");
	step_on_exit(&vcpu);
	check(blocks_told == 1, "a second exit without an entry counts nothing again");
	step_before_entry(&vcpu);
	check(vcpu.step.block_on && slot_la[0] == CODE + 8,
	      "the next block starts at RIP, same end breakpoint");
	vmcs[VMCS_GUEST_RIP] = CODE + 8;
	step_on_exit(&vcpu);
	check(blocks_told == 2 && block_n == 3, "its end: 1 more, 3 in all, none twice");
	reset(block3, sizeof(block3));
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	step_on_exit(&vcpu);
	check(!blocks_told, "exit before the block's first instruction: nothing told");
	for (int i = 0; i < 2; i++) {
		vmcs[VMCS_GUEST_RIP] = CODE;
		step_before_entry(&vcpu);
		vmcs[VMCS_GUEST_RIP] = CODE + 1;
		step_on_exit(&vcpu);
	}
	check(warned == 1, "exit inside an instruction of the block: said once, not at every exit");
	check(!vcpu.step.run_insns,
	      "a block lost track of is not charged by its instructions (unseen code ran)");
}

/* No free slot, a shadow, or no room: no block, the instruction is stepped. */
static void test_no_block(void)
{
	reset(block3, sizeof(block3));
	guest_free_slots = 0;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(tf() && !vcpu.step.block_on && !entry_dr7,
	      "the guest enables all four breakpoints: no block, stepped (docs/soft-pmu.md isolation)");
	reset(block3, sizeof(block3));
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = 1;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(tf() && !vcpu.step.block_on,
	      "under an STI shadow: stepped (SDM Vol. 3C 25.4.2; docs/soft-pmu.md rules)");
	reset(block3, sizeof(block3));
	room = 0;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(tf() && !vcpu.step.block_on, "a counter overflows at the next instruction: stepped");
	reset(block3, sizeof(block3));
	room = 2;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block_on && vcpu.step.block.n == 2 && slot_la[0] == CODE + 5,
	      "a counter overflows after 2: the block is cut there (docs/soft-pmu.md, Overflow)");
}

/* REP MOVSB retires once, after its last iteration (docs/soft-pmu.md rules; SDM Vol. 2B REP). */
static void test_rep(void)
{
	static const uint8_t rep_movsb[] = { 0xf3, 0xa4, 0x9c };
	static const uint8_t xor_rep[] = { 0x31, 0xc0, 0xf3, 0xa4, 0x9c };

	reset(rep_movsb, sizeof(rep_movsb));
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = 1;	/* stepped, not a block */
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = 0;
	check(tf() && vcpu.step.insn.rep_string, "REP MOVSB stepped, known as a REP string");
	check(single_step_to(CODE) && !retired,
	      "trap after an iteration, RIP still on it: the stepper's, nothing told");
	room = 0;	/* keep stepping it */
	step_before_entry(&vcpu);
	check(single_step_to(CODE) && !retired, "another iteration: still nothing");
	step_before_entry(&vcpu);
	check(single_step_to(CODE + 2) && retired == 1 && vcpu.step.steps == 1,
	      "the last iteration moves RIP: told once");

	/* In a block: interrupted mid-string, then completed (docs/soft-pmu.md How 2). */
	reset(xor_rep, sizeof(xor_rep));
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	vmcs[VMCS_GUEST_RIP] = CODE + 2;
	step_on_exit(&vcpu);
	step_before_entry(&vcpu);
	vmcs[VMCS_GUEST_RIP] = CODE + 2;
	step_on_exit(&vcpu);
	step_before_entry(&vcpu);
	vmcs[VMCS_GUEST_RIP] = CODE + 4;
	step_on_exit(&vcpu);
	check(block_n == 2 && !retired,
	      "XOR then REP MOVSB interrupted twice in blocks: 2 instructions in all");
}

/* MOV SS holds the trap back one instruction: both retire at it (SDM Vol. 3A 6.8.3). */
static void test_mov_ss(void)
{
	static const uint8_t mov_ss[] = { 0x8e, 0xd0, 0x90, 0x9c };	/* mov %eax,%ss; nop */

	reset(mov_ss, sizeof(mov_ss));
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(tf() && vcpu.step.insn.ss_shadow, "MOV SS stepped, known to hold the trap back");
	check(single_step_to(CODE + 3) && retired == 1 && retired_null == 1,
	      "the trap after MOV SS and the NOP: two instructions told");
}

/*
 * STI with IF clear: interrupts wait until the next instruction has run (SDM Vol. 2B STI), and
 * the VMCS shows no blocking once STI's trap exited (Bochs): the stepper holds the shadow.
 */
static void test_sti_shadow(void)
{
	static const uint8_t sti[] = { 0xfb, 0x90, 0x90, 0x90 };	/* sti; nop; nop; nop */

	reset(sti, sizeof(sti));
	vmcs[VMCS_GUEST_RFLAGS] = 0x2;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(tf() && vcpu.step.insn.sti, "STI stepped, known as STI");
	vmcs[VMCS_GUEST_RFLAGS] |= RFLAGS_IF;
	check(single_step_to(CODE + 1) && retired == 1 && step_sti_shadow(&vcpu),
	      "its trap: STI told, the NOP after it in its shadow");
	step_before_entry(&vcpu);
	check(tf() && !vcpu.step.block_on, "no block starts in the shadow: the NOP is stepped");
	vmcs[VMCS_GUEST_RIP] = CODE + 1;
	step_on_exit(&vcpu);
	check(step_sti_shadow(&vcpu), "an exit before the NOP ran (HLT's own) keeps the shadow");
	step_before_entry(&vcpu);
	check(single_step_to(CODE + 2) && retired == 2 && !step_sti_shadow(&vcpu),
	      "the NOP retired: the shadow is over");

	reset(sti, sizeof(sti));
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(single_step_to(CODE + 1) && !step_sti_shadow(&vcpu),
	      "STI with IF already set: no shadow");
}

/* A loop's block is entered with RF so its own start does not fire (SDM Vol. 3A 18.3.1.1). */
static void test_loop_block(void)
{
	static const uint8_t loop[] = {
		0xff, 0xc8,	/* dec %eax */
		0x75, 0xfc,	/* jne CODE */
	};

	reset(loop, sizeof(loop));
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block_on && (vmcs[VMCS_GUEST_RFLAGS] & RFLAGS_RF) &&
	      vcpu.step.bp_slots == 3 && (slot_la[0] == CODE + 4 || slot_la[1] == CODE + 4) &&
	      (slot_la[0] == CODE || slot_la[1] == CODE),
	      "DEC; JNE back: breakpoints on both targets, entered with RF");
	/* One turn: the branch went back, RF cleared by the completed instructions. */
	vmcs[VMCS_GUEST_RFLAGS] &= ~RFLAGS_RF;
	vmcs[VMCS_GUEST_RIP] = CODE;
	step_on_exit(&vcpu);
	check(blocks_told == 1 && block_n == 2 && block_branches == 1,
	      "back at its start with RF clear: one whole turn, 2 instructions, 1 branch");

	/* EAX = 1000: a counted loop, all its turns one block, left by the fall-through. */
	reset(loop, sizeof(loop));
	vcpu.gpr[GPR_RAX] = 1000;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block_on && vcpu.step.bp_slots == 1 && slot_la[0] == CODE + 4,
	      "DEC %%EAX; JNE with EAX 1000: one breakpoint, at the fall-through");
	vmcs[VMCS_GUEST_RIP] = CODE + 2;
	vcpu.gpr[GPR_RAX] = 400;
	step_on_exit(&vcpu);
	check(blocks_told == 1 && block_n == 1199 && block_branches == 599,
	      "an interrupt at the JNE with EAX 400: 599 turns and this turn's DEC, 1199");
	reset(loop, sizeof(loop));
	vcpu.gpr[GPR_RAX] = 1000;
	branch_room = 999;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block_on && vcpu.step.bp_slots == 3,
	      "a branches counter overflowing at turn 999: one turn a block");
}

/* An a-mode counter of instructions: a block runs only when the guard shut the page. */
static void test_pv_guard(void)
{
	reset(block3, sizeof(block3));
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block_on && !guard_starts, "no a-mode page to guard: the guard is not asked");
	reset(block3, sizeof(block3));
	vcpu.pmu.pv_guard = true;
	guard_lets = false;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(guard_starts == 1 && tf() && !vcpu.step.block_on && !entry_dr7,
	      "the page cannot be shut yet: no block, no breakpoint, the instruction stepped");
	guard_lets = true;
	step_before_entry(&vcpu);
	check(guard_starts == 2 && !tf() && vcpu.step.block_on && slot_la[0] == CODE + 8,
	      "the page shut: the block runs to its breakpoint");
	/* A read of the page after the xor and the add exits (EPT violation) at the MOV. */
	vmcs[VMCS_GUEST_RIP] = CODE + 5;
	step_on_exit(&vcpu);
	check(block_n == 2 && guard_ends == 1,
	      "an exit at the reading instruction: the 2 before it told, then the guard told");
}

#define EFER_LONG	(EFER_LME | EFER_LMA | EFER_NXE)

/* A 64-bit kernel at CPL 0 whose only counters count CPL 3 (docs/soft-pmu.md, rings). */
static void reset_ring0(const uint8_t *code, size_t len)
{
	reset(code, len);
	vmcs[VMCS_PIN_CTLS] = PIN_VIRTUAL_NMIS;
	vmcs[VMCS_GUEST_EFER] = EFER_LONG | EFER_SCE;
	vcpu.step.want = true;
	vcpu.step.ring0_free = true;
	vcpu.exit_reason = EXIT_REASON_EXCEPTION_NMI;
	vcpu.apic.nmi_pending = 0;
}

static bool ring0_armed(void)
{
	return !tf() && !vcpu.step.active && !entry_dr7 &&
	       (vmcs[VMCS_EXCEPTION_BITMAP] & 1u << EXC_UD) &&
	       vmcs[VMCS_GUEST_EFER] == EFER_LONG &&
	       (vmcs[VMCS_GUEST_INTERRUPTIBILITY] & INTERRUPTIBILITY_NMI) &&
	       (vmcs[VMCS_CPU_CTLS] & CPU_NMI_WINDOW_EXITING);
}

/* Kernel code runs unstepped; an IRET back to CPL 3 exits before its first instruction. */
static void test_ring0_iret(void)
{
	static const uint8_t kernel[] = { 0x90, 0x48, 0xcf };	/* nop; iretq */

	reset_ring0(kernel, sizeof(kernel));
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = INTERRUPTIBILITY_STI;
	step_before_entry(&vcpu);
	check(ring0_armed() && vcpu.step.ring0_runs == 1 &&
	      vmcs[VMCS_GUEST_INTERRUPTIBILITY] == (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_NMI),
	      "CPL 0, only CPL 3 counted: no TF, no breakpoint; #UD, SCE clear, virtual-NMI "
	      "blocking and NMI-window exiting for the ways out (SDM Vol. 3C 26.2, 26.3)");
	/* An exit inside the kernel (an interrupt): the guest's own EFER and blocking back. */
	vmcs[VMCS_GUEST_RIP] = CODE + 1;
	step_on_exit(&vcpu);
	check(vmcs[VMCS_GUEST_EFER] == (EFER_LONG | EFER_SCE) &&
	      vmcs[VMCS_GUEST_INTERRUPTIBILITY] == INTERRUPTIBILITY_STI && !warned,
	      "an exit at CPL 0: EFER.SCE and the guest's interruptibility back for the handlers");
	step_before_entry(&vcpu);
	check(ring0_armed() && vcpu.step.ring0_runs == 2 && !retired && !blocks_told,
	      "still CPL 0: unstepped again, nothing told to the PMU");
	/* The IRET ran: virtual-NMI blocking gone, CPL 3, the NMI-window exit. */
	check(!vcpu.step.exits, "an interrupt's exit is not the stepper's own");
	/* A kernel-to-kernel IRET: its NMI-window exit at CPL 0, the run goes on. */
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = 0;
	vcpu.exit_reason = EXIT_REASON_NMI_WINDOW;
	vcpu.apic.nmi_pending = 1;
	step_on_exit(&vcpu);
	check(!vcpu.step.exits, "an NMI-window exit an NMI waited for is not the stepper's own");
	vcpu.apic.nmi_pending = 0;
	step_before_entry(&vcpu);
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = 0;
	step_on_exit(&vcpu);
	check(vcpu.step.exits == 1 && !vmcs[VMCS_GUEST_INTERRUPTIBILITY],
	      "a kernel IRET's NMI-window exit nothing else wanted: the stepper's own (left out "
	      "of HC_VCPU_EXITS)");
	step_before_entry(&vcpu);
	check(ring0_armed(), "IRET to CPL 0: the kernel runs on unstepped");
	vmcs[VMCS_GUEST_RIP] = 0x3000;
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = 0;
	cpl = 3;
	step_on_exit(&vcpu);
	check(vmcs[VMCS_GUEST_EFER] == (EFER_LONG | EFER_SCE) &&
	      !vmcs[VMCS_GUEST_INTERRUPTIBILITY] && !warned && vcpu.step.exits == 2,
	      "the IRET's NMI-window exit at CPL 3: SCE back, no blocking left, no warning");
	step_before_entry(&vcpu);
	check(tf() && vcpu.step.active && !(vmcs[VMCS_GUEST_INTERRUPTIBILITY] &
					     INTERRUPTIBILITY_NMI) &&
	      vmcs[VMCS_EXCEPTION_BITMAP] == (GUEST_EXC_BITMAP | 1u << EXC_DB | STEP_EXCEPTIONS),
	      "CPL 3: stepped from its first instruction, the exception bitmap the stepper's");
	vcpu.step.want = false;
	step_before_entry(&vcpu);
	check(!tf() && vmcs[VMCS_EXCEPTION_BITMAP] == (GUEST_EXC_BITMAP | 1u << EXC_DB),
	      "counting stopped: the guest's bitmap (with #DB) back, no #UD left");
	/* Stopped inside a ring-0 run. */
	reset_ring0(kernel, sizeof(kernel));
	step_before_entry(&vcpu);
	step_on_exit(&vcpu);
	vcpu.step.want = false;
	step_before_entry(&vcpu);
	check(vmcs[VMCS_EXCEPTION_BITMAP] == GUEST_EXC_BITMAP && !vcpu.step.ring0 &&
	      vmcs[VMCS_GUEST_EFER] == (EFER_LONG | EFER_SCE),
	      "counting stopped at CPL 0: the guest's own bitmap and EFER");
}

/* SYSRET raises #UD with SCE clear: the stepper's, stepped with SCE; the guest's own #UDs not. */
static void test_ring0_sysret(void)
{
	static const uint8_t sysret[] = { 0x48, 0x0f, 0x07 };

	reset_ring0(sysret, sizeof(sysret));
	step_before_entry(&vcpu);
	step_on_exit(&vcpu);
	check(step_handle_ud(&vcpu) && vcpu.step.exits == 1,
	      "a #UD of a run with SCE cleared is the stepper's, its exit its own");
	step_before_entry(&vcpu);
	check(tf() && vcpu.step.active && vcpu.step.insn_valid &&
	      vmcs[VMCS_GUEST_EFER] == (EFER_LONG | EFER_SCE) &&
	      !(vmcs[VMCS_GUEST_INTERRUPTIBILITY] & INTERRUPTIBILITY_NMI),
	      "the SYSRET is stepped at CPL 0 with SCE back (SDM Vol. 2B SYSRET)");
	vmcs[VMCS_GUEST_RIP] = 0x3000;
	cpl = 3;
	check(single_step_to(0x3000) && retired == 1 && last_insn.branch && last_insn.loads_flags,
	      "its trap at CPL 3: the SYSRET told once, as a branch at CPL 0");
	step_before_entry(&vcpu);
	check(tf() && vcpu.step.active, "then CPL 3 is stepped");
	/* A guest whose EFER.SCE is clear: its #UD is its own. */
	reset_ring0(sysret, sizeof(sysret));
	vmcs[VMCS_GUEST_EFER] = EFER_LONG;
	step_before_entry(&vcpu);
	step_on_exit(&vcpu);
	check(!step_handle_ud(&vcpu) && vmcs[VMCS_GUEST_EFER] == EFER_LONG,
	      "SCE clear by the guest: its #UD is reflected, EFER untouched");
	step_before_entry(&vcpu);
	check(ring0_armed() && !vcpu.step.active, "and the kernel runs on unstepped");
}

/* When a ring-0 run is not possible, or its catch must not be the stepper's. */
static void test_ring0_limits(void)
{
	static const uint8_t nop[] = { 0x9c };	/* pushfq: stepped, never a block */

	reset_ring0(nop, sizeof(nop));
	vcpu.step.ring0_free = false;
	step_before_entry(&vcpu);
	check(tf() && vcpu.step.active && !vcpu.step.ring0_runs,
	      "something counts at CPL 0: CPL 0 stepped as before");
	reset_ring0(nop, sizeof(nop));
	vmcs[VMCS_PIN_CTLS] = 0;
	step_before_entry(&vcpu);
	check(tf() && !vcpu.step.ring0_runs,
	      "no virtual NMIs (no NMI-window exits to catch IRET): CPL 0 stepped");
	/* The guest's own NMI blocking (in its NMI handler): left alone, its IRET exits. */
	reset_ring0(nop, sizeof(nop));
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = INTERRUPTIBILITY_NMI;
	step_before_entry(&vcpu);
	check(!tf() && !vcpu.step.ring0_nmi &&
	      (vmcs[VMCS_CPU_CTLS] & CPU_NMI_WINDOW_EXITING), "in the guest's NMI handler: "
	      "its own blocking, NMI-window exiting for its IRET");
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = INTERRUPTIBILITY_NMI;
	step_on_exit(&vcpu);
	check(vmcs[VMCS_GUEST_INTERRUPTIBILITY] == INTERRUPTIBILITY_NMI,
	      "an exit there: the guest's blocking kept");
	/* An NMI injected at this entry: no blocking may be set with it (SDM Vol. 3C 26.3.1.5). */
	reset_ring0(nop, sizeof(nop));
	vmcs[VMCS_ENTRY_INTR_INFO] = INTR_INFO_VALID | INTR_TYPE_NMI | 2;
	step_before_entry(&vcpu);
	check(!tf() && !vmcs[VMCS_GUEST_INTERRUPTIBILITY] && !vcpu.step.ring0_nmi,
	      "an NMI injected: no blocking set, the delivery sets it");
	/* Back at CPL 3 with the stepper's blocking still set: neither IRET nor SYSRET ran. */
	reset_ring0(nop, sizeof(nop));
	step_before_entry(&vcpu);
	cpl = 3;
	step_on_exit(&vcpu);
	check(warned == 1 && !vmcs[VMCS_GUEST_INTERRUPTIBILITY],
	      "CPL 3 reached unseen (SYSEXIT, far RET): said, the blocking taken off");
	step_before_entry(&vcpu);
	check(tf() && vcpu.step.active, "and CPL 3 stepped from there");
}

/* An interrupt delivered at CPL 3 stops counting at the handler; the kernel then runs free. */
static void test_ring0_event_from_user(void)
{
	static const uint8_t user[] = { 0x9c };

	reset_ring0(user, sizeof(user));
	cpl = 3;
	idt_gate(0x20, HANDLER);
	vmcs[VMCS_ENTRY_INTR_INFO] = INTR_INFO_VALID | 0x20;
	step_before_entry(&vcpu);
	check(tf() && vcpu.step.bp == STEP_BP_EVENT && slot_la[0] == HANDLER && !vcpu.step.ring0,
	      "at CPL 3 an injected interrupt: TF and a breakpoint on its handler");
	vmcs[VMCS_ENTRY_INTR_INFO] = 0;
	vmcs[VMCS_GUEST_RIP] = HANDLER;
	vmcs[VMCS_GUEST_RSP] = STACK - 40;
	cpl = 0;
	step_on_exit(&vcpu);
	check(step_handle_db(&vcpu, 1u << 0) && !retired, "the handler's breakpoint: nothing told");
	step_before_entry(&vcpu);
	check(ring0_armed() && vcpu.step.ring0_runs == 1, "then the handler runs unstepped");
}

/* The block cache (hv/step_cache.c, docs/soft-pmu.md "The block cache"). */
static const struct step_cache *cache_of(void)
{
	return vcpu.step.cache;
}

/* The rights the EPT gives page gpa. */
static uint64_t ept_perms(uint64_t gpa)
{
	return *leaf_4k(dom.eptp, gpa) & EPT_RWX;
}

/* One block from RIP, and the exit at its breakpoint (slot 0) that counts it. */
static void run_block(void)
{
	step_before_entry(&vcpu);
	vmcs[VMCS_GUEST_RIP] = slot_la[0];
	step_on_exit(&vcpu);
	vmcs[VMCS_GUEST_RIP] = CODE;
}

static void test_cache_hit(void)
{
	reset(block3, sizeof(block3));
	vcpu.step.want = true;
	run_block();
	check(cache_of() && cache_of()->fills == 1 && !cache_of()->hits &&
	      ept_perms(CODE) == (EPT_R | EPT_X) && ept_perms(CODE + 4096) == EPT_RWX,
	      "cache: a block decoded once is cached, its code page write-protected in the EPT");
	run_block();
	check(cache_of()->hits == 1 && cache_of()->fills == 1 && block_n == 6 &&
	      vcpu.step.block.n == 3 && slot_la[0] == CODE + 8,
	      "cache: the second entry takes it from the cache, the same 3 instructions");
	reset(block3, sizeof(block3));
	room = 2;
	vcpu.step.want = true;
	run_block();
	run_block();
	check(cache_of()->hits == 1 && vcpu.step.block.n == 2 && slot_la[0] == CODE + 5,
	      "cache: a cached block is cut where a counter overflows");
	reset(block3, sizeof(block3));
	mode = INSN_MODE_32;
	vcpu.step.want = true;
	run_block();
	mode = INSN_MODE_64;
	run_block();
	check(cache_of()->fills == 2 && !cache_of()->hits,
	      "cache: the same bytes in another code mode (CS.L/D) are another block");
	reset(block3, sizeof(block3));
	others_flushed = false;
	vcpu.step.want = true;
	run_block();
	check(!cache_of()->fills && ept_perms(CODE) == (EPT_R | EPT_X),
	      "cache: protected, but not cached while another PCPU may hold a writable translation");
	others_flushed = true;
	run_block();
	check(cache_of()->fills == 1, "cache: cached once every PCPU flushed");
}

/* A guest write to a cached block's page exits, drops the block and proceeds. */
static void test_cache_write(void)
{
	static const uint8_t nops[] = { 0x90, 0x90, 0x90 };

	reset(block3, sizeof(block3));
	vcpu.step.want = true;
	run_block();
	memcpy(ram + CODE + 2, nops, sizeof(nops));	/* add $1 becomes three NOPs */
	check(step_cache_write_fault(&vcpu, CODE + 2) && ept_perms(CODE) == EPT_RWX &&
	      cache_of()->drops == 1 && vcpu.step.exits == 1,
	      "cache: a write to a protected code page: its block dropped, the page writable, "
	      "the write retried (the stepping's own exit)");
	block_n = 0;
	run_block();
	check(vcpu.step.block.n == 5 && block_n == 5 && !cache_of()->hits &&
	      cache_of()->fills == 1 && ept_perms(CODE) == EPT_RWX,
	      "cache: the next entry decodes the new bytes (5 instructions), the page left "
	      "writable for the write that is retried");
	run_block();
	check(cache_of()->fills == 2 && ept_perms(CODE) == (EPT_R | EPT_X),
	      "cache: the entry after that protects and caches it again");
	check(step_cache_write_fault(&vcpu, CODE) && cache_of()->drops == 2 &&
	      step_cache_write_fault(&vcpu, CODE) && cache_of()->drops == 2,
	      "cache: a second violation on a page already writable (a stale translation) is "
	      "only retried");
	check(!step_cache_write_fault(&vcpu, sizeof(ram)), "cache: a write beyond RAM is not its");

	for (unsigned i = 2; i < STEP_CACHE_DROPS; i++) {
		run_block();
		run_block();
		step_cache_write_fault(&vcpu, CODE);
	}
	run_block();
	run_block();
	check(cache_of()->drops == STEP_CACHE_DROPS && ept_perms(CODE) == EPT_RWX &&
	      vcpu.step.block.n == 5,
	      "cache: after %u writes the page stays writable (data), its blocks decoded anew",
	      STEP_CACHE_DROPS);

	/* The test device's memory, beyond RAM: its code runs in blocks but is never protected. */
	reset(block3, sizeof(block3));
	dom.testdev_hpa = (uint64_t)(uintptr_t)(ram + 0x9000);
	ept_map(dom.eptp, TESTDEV_IOMEM_BASE, dom.testdev_hpa, 4096, EPT_RWX);
	memcpy(ram + 0x9000, block3, sizeof(block3));
	remap_la = CODE;
	remap_pa = TESTDEV_IOMEM_BASE;
	vcpu.step.want = true;
	run_block();
	check(vcpu.step.block.n == 3 && !cache_of()->fills &&
	      ept_perms(TESTDEV_IOMEM_BASE) == EPT_RWX,
	      "cache: code in the test device's memory (beyond RAM) runs uncached, never protected "
	      "(its write violation would not come back to the cache)");

	reset(block3, sizeof(block3));
	vcpu.step.want = true;
	run_block();
	memcpy(ram + CODE + 2, nops, sizeof(nops));
	step_cache_hv_write(&dom, CODE + 2, 3);
	run_block();
	check(cache_of()->drops == 1 && vcpu.step.block.n == 5 && ept_perms(CODE) != EPT_RWX,
	      "cache: the hypervisor's own write there drops the block; the page stays protected");
}

/* A block whose decode read two pages: both protected, both in its key. */
static void test_cache_two_pages(void)
{
	static const uint8_t nops[8] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90 };
	const uint64_t at = 0x4000 - 4;

	reset(nops, sizeof(nops));
	memcpy(ram + at, nops, sizeof(nops));
	memcpy(ram + 0x6000, nops, 2);	/* another physical page: NOP, NOP, then HLT */
	vmcs[VMCS_GUEST_RIP] = at;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block.n == 8 && slot_la[0] == at + 8 && cache_of()->fills == 1 &&
	      ept_perms(0x3000) == (EPT_R | EPT_X) && ept_perms(0x4000) == (EPT_R | EPT_X),
	      "cache: a block across a page boundary: 8 NOPs, both pages protected");
	step_on_exit(&vcpu);
	remap_la = 0x4000;
	remap_pa = 0x6000;
	step_before_entry(&vcpu);
	check(vcpu.step.block.n == 6 && slot_la[0] == at + 6 && !cache_of()->hits,
	      "cache: the guest's page tables map the second page elsewhere: not a hit, 6 NOPs");
	step_on_exit(&vcpu);
	remap_la = ~0ull;
	step_before_entry(&vcpu);
	step_on_exit(&vcpu);
	check(vcpu.step.block.n == 8 && slot_la[0] == at + 8,
	      "cache: mapped back: the 8 NOPs again");
	ram[0x4000] = 0xf4;
	check(step_cache_write_fault(&vcpu, 0x4000) && ept_perms(0x4000) == EPT_RWX,
	      "cache: a write to the second page");
	step_before_entry(&vcpu);
	check(vcpu.step.block.n == 4 && slot_la[0] == 0x4000,
	      "cache: drops the block too: 4 NOPs up to the HLT written there");
	step_on_exit(&vcpu);

	/* A store before the crossing could remap the second page through the guest's own PTE. */
	reset(nops, sizeof(nops));
	memcpy(ram + at, (const uint8_t[]){ 0x89, 0x07 }, 2);	/* mov %eax,(%rdi), NOP, NOP */
	memcpy(ram + at + 2, nops, 6);
	vmcs[VMCS_GUEST_RIP] = at;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block.n == 1 && slot_la[0] == at + 2,
	      "cache: a block across a page boundary keeps no store inside: cut after the store");
	step_on_exit(&vcpu);

	reset(nops, sizeof(nops));
	memcpy(ram + sizeof(ram) - 4, nops, 4);
	vmcs[VMCS_GUEST_RIP] = sizeof(ram) - 4;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block.n == 4 && !cache_of()->fills,
	      "cache: a block that ends where fetching stops (the next page is not there) runs "
	      "but is not cached: it depends on that page staying absent");
	step_on_exit(&vcpu);
}

/* A branch first: its targets are relative to RIP, which is in the key. */
static void test_cache_branch_first(void)
{
	static const uint8_t jnz[] = { 0x75, 0x10 };	/* jnz .+0x12 */

	reset(jnz, sizeof(jnz));
	vcpu.step.want = true;
	run_block();
	step_before_entry(&vcpu);
	check(cache_of()->hits == 1 && vcpu.step.block.n == 1 && vcpu.step.block.branch &&
	      vcpu.step.block.target[0] == CODE + 2 && vcpu.step.block.target[1] == CODE + 0x12,
	      "cache: a branch as the first instruction: cached with its two targets");
	vmcs[VMCS_GUEST_RIP] = CODE + 0x12;
	step_on_exit(&vcpu);
	check(block_n == 2 && block_branches == 2, "cache: taken: 1 instruction, 1 branch");
	remap_la = 0x9000;
	remap_pa = CODE;
	vmcs[VMCS_GUEST_RIP] = 0x9000;
	step_before_entry(&vcpu);
	check(cache_of()->hits == 1 && vcpu.step.block.target[0] == 0x9002 &&
	      vcpu.step.block.target[1] == 0x9012,
	      "cache: the same code at another RIP: its own targets, not the cached ones");
	step_on_exit(&vcpu);
}

/* An exit inside a cached block counts what retired before RIP, as an uncached one. */
static void test_cache_exit_mid_block(void)
{
	reset(block3, sizeof(block3));
	vcpu.step.want = true;
	run_block();
	block_n = blocks_told = 0;
	step_before_entry(&vcpu);
	vmcs[VMCS_GUEST_RIP] = CODE + 5;	/* an interrupt after the XOR and the ADD */
	step_on_exit(&vcpu);
	check(cache_of()->hits == 1 && blocks_told == 1 && block_n == 2 && !warned,
	      "cache: an interrupt mid-block: the 2 instructions before RIP");
	step_before_entry(&vcpu);
	vmcs[VMCS_GUEST_RIP] = CODE + 8;
	step_on_exit(&vcpu);
	check(cache_of()->fills == 2 && block_n == 3 && vcpu.step.block.n == 1,
	      "cache: the rest from RIP is its own block (cached too): 3 in all");
}

/* Stores inside blocks, while their code pages are write-protected (docs/soft-pmu.md How 1). */
static void test_cache_stores(void)
{
	static const uint8_t store3[] = {
		0x31, 0xc0,		/* xor %eax,%eax */
		0x89, 0x07,		/* mov %eax,(%rdi) */
		0x48, 0x89, 0xd8,	/* mov %rbx,%rax */
		0x9c,			/* pushfq: ends the block, stepped */
	};

	reset(store3, sizeof(store3));
	others_flushed = false;
	vcpu.step.want = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block.n == 2 && slot_la[0] == CODE + 4 && !cache_of()->fills,
	      "stores: not cached (another PCPU may write unseen): the block ends after the store");
	step_on_exit(&vcpu);
	others_flushed = true;
	step_before_entry(&vcpu);
	check(vcpu.step.block.n == 3 && slot_la[0] == CODE + 7 && cache_of()->fills == 1,
	      "stores: cached, its page write-protected: the store stays inside, 3 instructions");
	/* The store writes the block's own page: an EPT violation before it retires. */
	vmcs[VMCS_GUEST_RIP] = CODE + 2;
	step_on_exit(&vcpu);
	check(block_n == 1 && step_cache_write_fault(&vcpu, CODE + 0x10),
	      "stores: a store to its own page exits before it: the XOR counted, up to RIP");
	step_before_entry(&vcpu);
	check(vcpu.step.block.n == 1 && slot_la[0] == CODE + 4,
	      "stores: the store runs again in a block of its own, the page writable");
	vmcs[VMCS_GUEST_RIP] = CODE + 4;
	step_on_exit(&vcpu);
	step_before_entry(&vcpu);
	vmcs[VMCS_GUEST_RIP] = CODE + 7;
	step_on_exit(&vcpu);
	check(block_n == 3 && !warned, "stores: 3 instructions in all, none twice");
}

/*
 * The fast path (hv/step_fast.c). A loop of 4 that is not a counted one: nop; nop; sub $1,%esi;
 * jne back; then a block of 2 at its fall-through that jumps back to it.
 */
static const uint8_t fast_code[] = {
	0x90, 0x90,		/* CODE: nop; nop */
	0x83, 0xee, 0x01,	/* sub $1,%esi */
	0x75, 0xf9,		/* jne CODE */
	0x90,			/* CODE + 7: nop */
	0xeb, 0xf6,		/* jmp CODE */
};

/* Counting with the fast path allowed (pmu_step_batch()), the timer's value saved at exits. */
static void fast_reset(const uint8_t *code, size_t len)
{
	reset(code, len);
	vcpu.pmu.step_batch = true;
	vmcs[VMCS_EXIT_CTLS] = EXIT_SAVE_PREEMPTION_TIMER;
	vcpu.step.want = true;
}

/* A #DB exit at the stepper's breakpoint in DRk, the guest at rip, the timer's value saved. */
static void breakpoint_exit(unsigned k, uint64_t rip, uint64_t timer)
{
	vmcs[VMCS_EXIT_INTR_INFO] = INTR_INFO_VALID | INTR_TYPE_HW_EXCEPTION | EXC_DB;
	vmcs[VMCS_EXIT_QUALIFICATION] = 1u << k;
	vmcs[VMCS_GUEST_RIP] = rip;
	/* The block's instructions completed: RF is clear (SDM Vol. 3A 18.3.1.1). */
	vmcs[VMCS_GUEST_RFLAGS] &= ~RFLAGS_RF;
	vmcs[VMCS_PREEMPTION_TIMER] = timer;
	/* The entry before flushed for the EPT changes the cache made (run_slice()). */
	vcpu.ept.gen = dom.ept_gen;
}

/* Turns of the loop in the fast path: counted once, at the next ordinary exit, exactly. */
static void test_fast_loop(void)
{
	uint64_t timer;

	fast_reset(fast_code, sizeof(fast_code));
	step_before_entry(&vcpu);
	check(vcpu.step.fast.on && vcpu.step.bp_slots == 3 && slot_la[0] == CODE + 7 &&
	      slot_la[1] == CODE && slot_writes == 2,
	      "fast: the entry that arms the loop's block plans the fast path");
	breakpoint_exit(1, CODE, 1u << 30);
	check(step_fast_block(&vcpu) && !blocks_told && vcpu.step.fast.pend_insns == 4 &&
	      vcpu.step.fast.pend_branches == 1 && vcpu.step.exits == 1 && spec_entries == 1,
	      "fast: a turn's breakpoint is taken, 4 instructions and 1 branch kept for the PMU");
	check(tsc_freezes == 1 && tsc_thaws == 1,
	      "fast: the guest's TSC stood still from its exit and runs again (a stepping exit)");
	check((vmcs[VMCS_GUEST_RFLAGS] & RFLAGS_RF) && vcpu.step.bp_slots == 3 &&
	      slot_writes == 2 && dr_entries == 1,
	      "fast: the same block again, RF set at its start, no debug register written");
	timer = vmcs[VMCS_PREEMPTION_TIMER];
	check(timer && timer < 1u << 30 && vcpu.hv_tsc && vcpu.run_tsc == -vcpu.hv_tsc,
	      "fast: its time is the hypervisor's, and the timer counts it down");
	breakpoint_exit(1, CODE, 1u << 31);
	check(step_fast_block(&vcpu) && vmcs[VMCS_PREEMPTION_TIMER] < timer && translations == 2,
	      "fast: the timer ends where it was going to (not from the value saved), and the "
	      "page's translation is taken again with no walk");
	vmcs[VMCS_GUEST_RIP] = CODE + 2;
	step_on_exit(&vcpu);
	check(blocks_told == 2 && first_told_n == 8 && block_n == 10 && block_branches == 2 &&
	      !vcpu.step.fast.pend_insns,
	      "fast: an interrupt at the third instruction: the 2 turns told first, then the 2 "
	      "instructions before RIP: 10 and 2 branches, none twice");
}

/* Anything but a quiet block end goes the ordinary way, with nothing changed. */
static void test_fast_refused(void)
{
	static const char *const why[] = {
		"an interrupt pending", "an NMI pending", "an interrupt window asked for",
		"a guest breakpoint hit too", "a single step with it", "the timer at 0",
		"an EPT change to flush for", "a reschedule asked for", "an STI shadow",
		"a #PF, not a #DB", "RIP inside the block", "no room for the next block",
		"the block reaching an overflow", "a branch counter overflowing", "not batched",
		"an event being delivered", "its domain killed",
	};

	for (unsigned c = 0; c < sizeof(why) / sizeof(why[0]); c++) {
		fast_reset(fast_code, sizeof(fast_code));
		room = c == 11 ? 9 : c == 12 ? 4 : ~0ull;
		branch_room = c == 13 ? 1 : ~0ull;
		vcpu.pmu.step_batch = c != 14;
		step_before_entry(&vcpu);
		breakpoint_exit(1, CODE, 1000);
		vcpu.apic.irr[1] = c == 0;
		vcpu.apic.nmi_pending = c == 1;
		vmcs[VMCS_CPU_CTLS] = c == 2 ? CPU_INTR_WINDOW_EXITING : 0;
		vmcs[VMCS_EXIT_QUALIFICATION] |= c == 3 ? 1u << 2 : c == 4 ? DR6_BS : 0;
		vmcs[VMCS_PREEMPTION_TIMER] = c == 5 ? 0 : 1000;
		dom.ept_gen += c == 6;
		vcpu.resched = c == 7;
		vmcs[VMCS_GUEST_INTERRUPTIBILITY] = c == 8;
		vmcs[VMCS_IDT_VECTORING_INFO] = c == 15 ? INTR_INFO_VALID | 0x20 : 0;
		dom.state = c == 16 ? DOM_KILLED : DOM_RUNNING;
		if (c == 9)
			vmcs[VMCS_EXIT_INTR_INFO] = INTR_INFO_VALID | INTR_TYPE_HW_EXCEPTION | 14;
		if (c == 10)
			vmcs[VMCS_GUEST_RIP] = CODE + 2;
		if (c == 11) {
			/* Room 9: a turn and the next fit (8); then the next would be cut. */
			check(step_fast_block(&vcpu), "fast: a turn with room for the next");
			breakpoint_exit(1, CODE, 1000);
		}
		check(!step_fast_block(&vcpu) && !vcpu.step.fast.pend_insns == (c != 11) &&
		      !(vmcs[VMCS_GUEST_RFLAGS] & RFLAGS_RF) && spec_entries == (c == 11),
		      "fast: refused with %s: the ordinary path takes the exit", why[c]);
	}
	dom.state = DOM_RUNNING;
	step_on_exit(&vcpu);
	check(blocks_told == 1 && block_n == 4 && block_branches == 1,
	      "fast: refused, the ordinary exit counts the block itself");
}

/* A block at CODE that writes memory and goes back to CODE (its breakpoint in DRk), twice. */
static void fast_writer(const uint8_t *code, size_t len, unsigned k, const char *what)
{
	fast_reset(code, len);
	step_before_entry(&vcpu);
	for (unsigned i = 0; i < 2; i++) {
		breakpoint_exit(k, CODE, 1u << 30);
		check(step_fast_block(&vcpu) && translations == 2 + i,
		      "fast: %s: its page is translated again at its end", what);
	}
}

/* A translation is taken again only while nothing wrote memory; DRs written when they change. */
static void test_fast_translation(void)
{
	static const uint8_t store_loop[] = {
		0x89, 0x07,	/* mov %eax,(%rdi) */
		0x75, 0xfc,	/* jne CODE */
	};
	static const uint8_t call_self[] = {
		0xe8, 0xfb, 0xff, 0xff, 0xff,	/* call CODE */
	};

	fast_writer(store_loop, sizeof(store_loop), 1, "a block with a store");
	fast_writer(call_self, sizeof(call_self), 0, "a CALL writes its return address");
	fast_reset(fast_code, sizeof(fast_code));
	step_before_entry(&vcpu);
	breakpoint_exit(0, CODE + 7, 1u << 30);
	check(!step_fast_block(&vcpu), "fast: the block at the fall-through is not cached yet");
	step_on_exit(&vcpu);
	step_before_entry(&vcpu);
	check(vcpu.step.bp_slots == 1 && slot_la[0] == CODE && slot_writes == 3 && dr_entries == 2,
	      "fast: the ordinary entry caches it, its JMP's target in DR0");
	breakpoint_exit(0, CODE, 1u << 30);
	check(step_fast_block(&vcpu) && slot_la[0] == CODE + 7 && slot_la[1] == CODE &&
	      slot_writes == 5 && dr_entries == 3 && entry_dr7 == (1ull | 1ull << 2),
	      "fast: back in the loop, DR0 and DR1 written, DR7 with both");
	breakpoint_exit(1, CODE, 1u << 30);
	check(step_fast_block(&vcpu) && slot_writes == 5 && dr_entries == 3,
	      "fast: its next turn writes no debug register");
	vmcs[VMCS_GUEST_RIP] = CODE;
	step_on_exit(&vcpu);
	check(block_n == 2 + 4 + 4 && block_branches == 3,
	      "fast: the blocks of both paths counted once: 2, 4, 4 and 3 branches");
}

int main(void)
{
	test_tf_only_while_counting();
	test_stray_single_step();
	test_pushf_image();
	test_syscall();
	test_int_frame();
	test_fault_reflected();
	test_real_mode_event();
	test_frame32();
	test_ret_block();
	test_block_at_breakpoint();
	test_block_mid();
	test_no_block();
	test_rep();
	test_mov_ss();
	test_sti_shadow();
	test_loop_block();
	test_pv_guard();
	test_ring0_iret();
	test_ring0_sysret();
	test_ring0_limits();
	test_ring0_event_from_user();
	test_cache_hit();
	test_cache_write();
	test_cache_two_pages();
	test_cache_branch_first();
	test_cache_exit_mid_block();
	test_cache_stores();
	test_fast_loop();
	test_fast_refused();
	test_fast_translation();
	reset_domain();
	step_cache_free(&vcpu);
	ept_destroy(dom.eptp);
	return unit_summary();
}
