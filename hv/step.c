/* Single-steps a guest exactly (SDM Vol. 3A 18.3.1.4) and reports each retired instruction to the PMU. */
#include "lib/cpu.h"
#include "lib/printk.h"
#include "hv/domain.h"
#include "hv/exit_dr.h"
#include "hv/guest_mem.h"
#include "hv/step.h"
#include "hv/vcpu.h"
#include "hv/vmx_ops.h"
#include "pmu/pmu.h"
#include "include/x86/dr.h"
#include "include/x86/msr.h"
#include "include/x86/rflags.h"
#include "include/x86/trap.h"

/*
 * While counting, every exception the guest raises exits, so that none reaches a handler that
 * would run unseen (it is reflected, and the handler's entry caught like an injected event's);
 * not #BP and #OF, which INT3 and INTO raise as instructions the stepper already follows, nor #MC.
 */
#define STEP_EXCEPTIONS	(0xFFFFFFFFu & ~(1u << 3 | 1u << 4 | 1u << 18))
#define INTR_BLOCKING	3u	/* STI and MOV SS blocking (SDM Vol. 3C 25.4.2, table 25-3) */

static enum soft_mode soft_mode(void)
{
	switch (guest_code_mode()) {
	case INSN_MODE_64:
		return SOFT_MODE_64;
	case INSN_MODE_32:
		return SOFT_MODE_32;
	default:
		return SOFT_MODE_16;
	}
}

/* The linear address of the handler of IDT vector `vector` (SDM Vol. 3A 6.10, 6.14.1; 20.1.4 for real mode). */
static bool idt_handler(struct vcpu *v, uint8_t vector, uint64_t *la)
{
	uint64_t base = vmread(VMCS_GUEST_IDTR_BASE);
	struct gpt_result res;
	uint8_t g[16];

	if (!(vcpu_guest_cr0() & 1)) {
		uint16_t ivt[2];

		if (guest_read(v, ivt, base + vector * 4u, 4, GPT_READ_SYS, &res) != GPT_OK)
			return false;
		*la = (uint64_t)ivt[1] * 16 + ivt[0];
		return true;
	}
	if (soft_mode() == SOFT_MODE_64) {
		if (guest_read(v, g, base + vector * 16u, 16, GPT_READ_SYS, &res) != GPT_OK)
			return false;
		*la = (g[0] | (uint64_t)g[1] << 8) | ((uint64_t)(g[6] | g[7] << 8) << 16) |
		      ((uint64_t)(g[8] | g[9] << 8 | g[10] << 16 | (uint32_t)g[11] << 24) << 32);
		return true;
	}
	/* Protected mode: a flat code segment is assumed (base 0), as every guest here uses. */
	if (guest_read(v, g, base + vector * 8u, 8, GPT_READ_SYS, &res) != GPT_OK)
		return false;
	*la = (g[0] | (uint64_t)g[1] << 8) | ((uint64_t)(g[6] | g[7] << 8) << 16);
	return true;
}

/*
 * An instruction breakpoint (execute, SDM Vol. 3A 18.2.4) at la, in a debug-register slot the
 * guest's own breakpoints leave free (hv/exit_dr.c keeps the guest's). False: none is free.
 */
static bool arm(struct vcpu *v, uint64_t la, enum step_bp why)
{
	struct vcpu_step *s = &v->step;
	unsigned free = dr_free_slots(v) & ~s->bp_slots, k;

	if (!free)
		return false;
	k = __builtin_ctz(free);
	dr_set_slot(k, la);
	s->fast.slot_la[k] = la;
	s->bp_slots |= 1u << k;
	s->bp_dr7 |= 1ull << (2 * k);
	s->bp = why;
	return true;
}

static void disarm_breakpoint(struct vcpu *v)
{
	v->step.bp = STEP_BP_NONE;
	v->step.bp_slots = 0;
	v->step.bp_dr7 = 0;
}

static void set_tf(bool on)
{
	uint64_t rf = vmread(VMCS_GUEST_RFLAGS);

	vmwrite(VMCS_GUEST_RFLAGS, on ? rf | RFLAGS_TF : rf & ~RFLAGS_TF);
}

static void start(struct vcpu *v)
{
	v->step.exc_saved = vmread(VMCS_EXCEPTION_BITMAP);
	vmwrite(VMCS_EXCEPTION_BITMAP, v->step.exc_saved | STEP_EXCEPTIONS);
	v->step.active = true;
}

void step_clear_pending(void)
{
	uint64_t pend = vmread(VMCS_GUEST_PENDING_DBG);

	if (pend & DR6_BS)
		vmwrite(VMCS_GUEST_PENDING_DBG, pend & ~DR6_BS);
}

static void stop(struct vcpu *v)
{
	/* #DB stays intercepted: the guest's DR6 is a shadow (hv/exit_dr.c). */
	vmwrite(VMCS_EXCEPTION_BITMAP, v->step.exc_saved | 1u << EXC_DB);
	set_tf(false);
	step_clear_pending();
	disarm_breakpoint(v);
	v->step.active = false;
	v->step.insn_valid = false;
	v->step.sti_shadow = false;
}

/*
 * A block ending in RET: its target is the return address on the stack, which nothing in the
 * block before it wrote (stores end blocks). False when no block is left without the RET.
 */
static bool ret_target(struct vcpu *v, struct step_block *b)
{
	uint64_t la = vmread(VMCS_GUEST_SS_BASE) + vmread(VMCS_GUEST_RSP) + b->ret_pop, to;
	struct gpt_result res;

	if (guest_read(v, &to, la, sizeof(to), GPT_READ, &res) == GPT_OK)
		return step_block_ret_target(b, to) || b->n;
	b->n--;
	b->branch = b->ret = false;
	return b->n;
}

/*
 * Lets the guest run the straight-line code at RIP with TF clear, up to one instruction
 * breakpoint per place it can leave by (SDM Vol. 3A 18.2.4: execute, length 0): the block's
 * end, or a final direct branch's targets. False: the instruction at RIP must be stepped.
 */
static bool start_block(struct vcpu *v)
{
	struct vcpu_step *s = &v->step;
	uint64_t rip, cs_base, room;
	unsigned cpl, max;

	/* An interrupt shadow must end with the next instruction's trap, as stepping gives it. */
	if ((vmread(VMCS_GUEST_INTERRUPTIBILITY) & INTR_BLOCKING) || step_sti_shadow(v))
		return false;
	cpl = vcpu_cpl();
	room = pmu_step_room(v, cpl);
	if (!room)
		return false;
	max = room < BLOCK_MAX ? (unsigned)room : BLOCK_MAX;
	rip = vmread(VMCS_GUEST_RIP);
	cs_base = vmread(VMCS_GUEST_CS_BASE);
	if (!step_cache_block(v, rip, rip + cs_base, guest_code_mode(), max, &s->block))
		return false;
	if (s->block.ret && !ret_target(v, &s->block))
		return false;
	if (s->block.branch) {
		/* A counted loop run whole leaves only by its fall-through, target 0. */
		unsigned nt = s->block.counted &&
			      step_block_whole(&s->block, v->gpr[s->block.ctr], room,
					       pmu_step_branch_room(v, cpl)) ? 1 : s->block.ntargets;

		for (unsigned t = 0; t < nt; t++) {
			if (!arm(v, s->block.target[t] + cs_base, STEP_BP_BLOCK)) {
				disarm_breakpoint(v);
				return false;
			}
		}
	} else if (!arm(v, rip + s->block.off[s->block.n] + cs_base, STEP_BP_BLOCK)) {
		return false;
	}
	/* A paravirtual page with counts that every instruction moves is shut while it runs. */
	if (pmu_pv_guard(&v->pmu) && !step_pv_block_start(v)) {
		disarm_breakpoint(v);
		return false;
	}
	/* Its start is a target too: RF keeps the breakpoint there from firing now (18.3.1.1). */
	if (s->block.loops)
		vmwrite(VMCS_GUEST_RFLAGS, vmread(VMCS_GUEST_RFLAGS) | RFLAGS_RF);
	s->block_on = true;
	s->block_cpl = cpl;
	step_fast_plan(v, cpl, room);
	return true;
}

/* The block ran up to the exit: what retired of it is told by where the guest is now. */
static void end_block(struct vcpu *v)
{
	struct vcpu_step *s = &v->step;
	uint64_t rip = vmread(VMCS_GUEST_RIP);
	bool rf = vmread(VMCS_GUEST_RFLAGS) & RFLAGS_RF;
	uint64_t insns, branches;
	bool seen;

	s->block_on = false;
	seen = step_block_retired(&s->block, rip, rf, v->gpr[s->block.ctr], &insns, &branches);
	if (!seen && !s->block_lost_said) {
		s->block_lost_said = true;
		pr_warn("[%s] vcpu %u: soft PMU: exit at rip %lx, inside no instruction of the "
			"block at %lx: counted %llu\n", v->dom->cfg.name, v->id, rip, s->block.start,
			(unsigned long long)insns);
	}
	s->blocks++;
	s->block_insns += insns;
	/* Lost track of (unseen code ran, an RDTSC maybe): not charged by its instructions. */
	s->run_insns = seen && !s->block.reads_tsc ? insns : 0;
	if (insns)
		pmu_retired_block(v, insns, branches, s->block_cpl);
	step_pv_block_end(v);
}

/*
 * Ring-0 runs, while nothing counted at CPL 0 needs a step there (only CPL 1-3 is counted): the
 * guest's CPL 0 code runs with TF clear and no breakpoint, and each way out to an outer ring
 * exits before the first instruction there, where stepping resumes:
 * - IRET ends virtual-NMI blocking (SDM Vol. 3C 26.3, "virtual NMIs"), and NMI-window exiting
 *   then exits before the next instruction (SDM Vol. 3C 26.2). The stepper sets the blocking
 *   for the run when the guest has none (an NMI being injected sets its own), and takes it
 *   off at the exit: irq_deliver() and the guest's NMIs only ever see the guest's own.
 * - SYSRET raises #UD while EFER.SCE is clear (SDM Vol. 2B SYSRET): the #UD exits, and the
 *   SYSRET is single-stepped with SCE back (step_handle_ud()). SCE is back at every exit, so
 *   the guest's RDMSR of EFER (which exits) and every handler see its own value.
 * The way in needs nothing new: CPL 3 code is stepped, so SYSCALL, INT n and injected or
 * reflected events reach CPL 0 at a breakpoint on where they go (plan_entry). Not caught:
 * SYSEXIT and a far RET to an outer ring; the exit after one tells (ring0_after_run()).
 */
static bool ring0_possible(struct vcpu *v)
{
	/* NMI-window exiting exists only with virtual NMIs (SDM Vol. 3C 26.2.1.1). */
	return v->step.ring0_free && !v->step.ring0_step && vcpu_cpl() == 0 &&
	       (vmread(VMCS_PIN_CTLS) & PIN_VIRTUAL_NMIS);
}

static void ring0_run(struct vcpu *v)
{
	struct vcpu_step *s = &v->step;
	uint32_t intr = vmread(VMCS_GUEST_INTERRUPTIBILITY), info = vmread(VMCS_ENTRY_INTR_INFO);
	uint64_t efer = vmread(VMCS_GUEST_EFER);

	if (s->active)
		stop(v);
	if (!s->ring0) {
		s->ring0_exc = vmread(VMCS_EXCEPTION_BITMAP);
		vmwrite(VMCS_EXCEPTION_BITMAP, s->ring0_exc | 1u << EXC_UD);
		s->ring0 = true;
	}
	s->ring0_runs++;
	s->ring0_armed = true;
	if (efer & EFER_SCE) {
		vmwrite(VMCS_GUEST_EFER, efer & ~EFER_SCE);
		s->ring0_sce = true;
	}
	/* SDM Vol. 3C 26.3.1.5: an injected NMI wants no blocking; its delivery sets it. */
	if (!(intr & INTERRUPTIBILITY_NMI) &&
	    !((info & INTR_INFO_VALID) && (info & INTR_TYPE_MASK) == INTR_TYPE_NMI)) {
		vmwrite(VMCS_GUEST_INTERRUPTIBILITY, intr | INTERRUPTIBILITY_NMI);
		s->ring0_nmi = true;
	}
	vmwrite(VMCS_CPU_CTLS, vmread(VMCS_CPU_CTLS) | CPU_NMI_WINDOW_EXITING);
}

/* Out of ring-0 runs: the exception bitmap as it was (irq_deliver() sets the window exits). */
static void ring0_end(struct vcpu *v)
{
	if (!v->step.ring0)
		return;
	vmwrite(VMCS_EXCEPTION_BITMAP, v->step.ring0_exc);
	v->step.ring0 = false;
}

/* At the exit ending a ring-0 run: the guest's own EFER and NMI blocking back. */
static void ring0_after_run(struct vcpu *v)
{
	struct vcpu_step *s = &v->step;
	uint32_t intr = vmread(VMCS_GUEST_INTERRUPTIBILITY);
	bool no_iret = s->ring0_nmi && (intr & INTERRUPTIBILITY_NMI);

	s->ring0_armed = false;
	/* An IRET's NMI-window exit no NMI waited for is the stepper's own (HC_VCPU_EXITS). */
	if ((v->exit_reason & 0xFFFF) == EXIT_REASON_NMI_WINDOW && !v->apic.nmi_pending)
		s->exits++;
	if (s->ring0_sce)
		vmwrite(VMCS_GUEST_EFER, vmread(VMCS_GUEST_EFER) | EFER_SCE);
	if (no_iret)
		vmwrite(VMCS_GUEST_INTERRUPTIBILITY, intr & ~INTERRUPTIBILITY_NMI);
	/* In an outer ring with neither IRET nor SYSRET run: what ran there was not counted. */
	if (no_iret && vcpu_cpl() != 0 && !s->ring0_lost_said) {
		s->ring0_lost_said = true;
		pr_warn("[%s] vcpu %u: soft PMU: left CPL 0 by neither IRET nor SYSRET (SYSEXIT "
			"or a far RET?): uncounted up to rip %lx\n", v->dom->cfg.name, v->id,
			vmread(VMCS_GUEST_RIP));
	}
}

bool step_handle_ud(struct vcpu *v)
{
	/* A SYSRET (or SYSCALL) of a run with SCE cleared: stepped next, with SCE. A real #UD
	 * comes again there, and is reflected as the stepper reflects every exception. */
	if (!v->step.ring0_sce)
		return false;
	v->step.ring0_step = true;
	v->step.exits++;
	return true;
}

static void plan_entry(struct vcpu *v)
{
	struct vcpu_step *s = &v->step;
	uint8_t bytes[INSN_MAX_LEN];
	uint64_t target;
	unsigned n;

	s->ring0_sce = s->ring0_nmi = false;
	s->fast.on = false;
	if (!s->want) {
		if (s->active)
			stop(v);
		ring0_end(v);
		return;
	}
	if (ring0_possible(v)) {
		ring0_run(v);
		return;
	}
	s->ring0_step = false;
	ring0_end(v);
	if (!s->active)
		start(v);
	disarm_breakpoint(v);
	s->insn_valid = false;
	/* An injected event's handler starts with TF clear (SDM Vol. 3A 6.12.1.3): catch its entry. */
	if (vmread(VMCS_ENTRY_INTR_INFO) & INTR_INFO_VALID) {
		uint32_t info = vmread(VMCS_ENTRY_INTR_INFO);

		set_tf(true);
		s->bp_error_code = info & INTR_INFO_DELIVER_ERROR;
		if (idt_handler(v, info & 0xFF, &target))
			arm(v, target, STEP_BP_EVENT);
		return;
	}
	if (start_block(v)) {
		set_tf(false);
		return;
	}
	set_tf(true);
	n = guest_fetch_insn(v, bytes);
	soft_classify(bytes, n, soft_mode(), &s->insn);
	s->insn_valid = true;
	s->insn_cpl = vcpu_cpl();
	s->insn_rip = vmread(VMCS_GUEST_RIP);
	s->insn_if = vmread(VMCS_GUEST_RFLAGS) & RFLAGS_IF;
	if (!s->insn.clears_tf)
		return;
	if (s->insn.target == SOFT_TGT_LSTAR)
		arm(v, rdmsr(MSR_LSTAR), STEP_BP_INSN);
	else if (s->insn.target == SOFT_TGT_IDT && idt_handler(v, s->insn.vector, &target))
		arm(v, target, STEP_BP_INSN);
}

void step_before_entry(struct vcpu *v)
{
	plan_entry(v);
	dr_before_entry(v, v->step.bp_dr7);
}

void step_on_exit(struct vcpu *v)
{
	if (v->step.ring0_armed)
		ring0_after_run(v);
	if (!v->step.active)
		return;
	step_clear_pending();
	step_fast_flush(v);
	/* The shadow ends when the instruction it covers retires or an event is delivered. */
	if (v->step.sti_shadow && vmread(VMCS_GUEST_RIP) != v->step.sti_shadow_rip)
		v->step.sti_shadow = false;
	if (v->step.block_on)
		end_block(v);
}

/*
 * SDM Vol. 2B STI, Vol. 3A 6.8.3: after an STI that set IF, interrupts wait until the next
 * instruction has run (STI; HLT wakes from an interrupt already pending, after HLT retired).
 * The single-step trap of the STI exits at that boundary, and Bochs then reports no STI
 * blocking; nor could the VMCS hold it, since with TF set an entry with STI blocking needs a
 * pending single step (SDM Vol. 3C 26.3.1.5), which would trap again before the instruction.
 * The stepper holds the shadow: no interrupt window either, the next step exits anyway.
 */
bool step_sti_shadow(struct vcpu *v)
{
	return v->step.active && v->step.sti_shadow &&
	       vmread(VMCS_GUEST_RIP) == v->step.sti_shadow_rip;
}

/* Clears TF in the guest byte at linear address la + 1 (TF is bit 8 of any flags image). */
static void clear_tf_image(struct vcpu *v, uint64_t la)
{
	struct gpt_result res;
	uint8_t b;

	if (guest_read(v, &b, la + 1, 1, GPT_READ, &res) == GPT_OK && (b & 1)) {
		b &= ~1u;
		guest_write(v, la + 1, &b, 1, &res);
	}
}

/* The stepping TF must not show in the flags images the instruction just wrote. */
static void hide_tf(struct vcpu *v)
{
	const struct soft_insn *in = &v->step.insn;

	if (in->flags_to_r11)
		v->gpr[GPR_R11] &= ~RFLAGS_TF;
	if (in->pushes_flags)
		clear_tf_image(v, vmread(VMCS_GUEST_RSP) + vmread(VMCS_GUEST_SS_BASE));
}

/*
 * At a handler's first instruction: the frame the delivery pushed (SDM Vol. 3A 6.14.2, 6.12.1)
 * holds the interrupted RFLAGS with the stepping TF: hide it. IRET then clears TF, but IRET is
 * itself stepped, and the trap after it sets TF again.
 */
static void hide_tf_in_frame(struct vcpu *v, bool error_code)
{
	unsigned slot = guest_code_mode() == INSN_MODE_64 ? 8 : 4;
	uint64_t rsp = vmread(VMCS_GUEST_RSP) + vmread(VMCS_GUEST_SS_BASE);

	clear_tf_image(v, rsp + (error_code ? 3 : 2) * slot);
}

bool step_handle_db(struct vcpu *v, uint64_t qual)
{
	struct vcpu_step *s = &v->step;

	if (!s->active)
		return false;
	step_clear_pending();
	if ((qual & DR6_BS) && s->insn_valid && s->insn.rep_string &&
	    vmread(VMCS_GUEST_RIP) == s->insn_rip) {
		/*
		 * One iteration of a REP string instruction: it retires once, after its last, as
		 * INST_RETIRED counts instructions (SDM Vol. 2B REP: RIP stays on it until then).
		 */
	} else if ((qual & DR6_BS) && s->insn_valid) {
		s->steps++;
		pmu_retired(v, &s->insn, s->insn_cpl);
		/* After MOV SS / POP SS the trap waits one more instruction (SDM Vol. 3A 6.8.3). */
		if (s->insn.ss_shadow)
			pmu_retired(v, (const struct soft_insn *)0, s->insn_cpl);
		if (s->insn.sti && !s->insn_if) {
			s->sti_shadow = true;
			s->sti_shadow_rip = vmread(VMCS_GUEST_RIP);
		}
		hide_tf(v);
	} else if ((qual & s->bp_slots) && s->bp == STEP_BP_BLOCK) {
		/* A block's breakpoint: step_on_exit counted the block. */
	} else if ((qual & s->bp_slots) && s->bp != STEP_BP_NONE) {
		/* The TF-clearing instruction (not an injected event) retired on its way here. */
		if (s->bp == STEP_BP_INSN && s->insn_valid) {
			pmu_retired(v, &s->insn, s->insn_cpl);
			if (s->insn.flags_to_r11)
				v->gpr[GPR_R11] &= ~RFLAGS_TF;
			else
				hide_tf_in_frame(v, false);
		} else if (s->bp == STEP_BP_EVENT) {
			hide_tf_in_frame(v, s->bp_error_code);
		}
		vmwrite(VMCS_GUEST_RFLAGS, vmread(VMCS_GUEST_RFLAGS) | RFLAGS_RF);
	} else {
		return false;
	}
	s->insn_valid = false;
	s->exits++;
	return true;
}
