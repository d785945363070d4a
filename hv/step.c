/* Single-steps a guest exactly (SDM Vol. 3A 18.3.1.4) and reports each retired instruction to the PMU. */
#include "lib/cpu.h"
#include "lib/printk.h"
#include "hv/domain.h"
#include "hv/guest_mem.h"
#include "hv/step.h"
#include "hv/vcpu.h"
#include "hv/vmx_ops.h"
#include "pmu/pmu.h"

#define RFLAGS_TF	(1ull << 8)
#define RFLAGS_RF	(1ull << 16)
#define DB_B0		(1ull << 0)	/* exit qualification of a #DB exit: DR6 layout (SDM Vol. 3C 28.2.1) */
#define DB_BS		(1ull << 14)
#define DR7_L0		(1ull << 0)
#define EXC_DB		1
#define MSR_LSTAR	0xC0000082

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

		if (guest_read(v, ivt, base + vector * 4u, 4, GPT_READ, &res) != GPT_OK)
			return false;
		*la = (uint64_t)ivt[1] * 16 + ivt[0];
		return true;
	}
	if (soft_mode() == SOFT_MODE_64) {
		if (guest_read(v, g, base + vector * 16u, 16, GPT_READ, &res) != GPT_OK)
			return false;
		*la = (g[0] | (uint64_t)g[1] << 8) | ((uint64_t)(g[6] | g[7] << 8) << 16) |
		      ((uint64_t)(g[8] | g[9] << 8 | g[10] << 16 | (uint32_t)g[11] << 24) << 32);
		return true;
	}
	/* Protected mode: a flat code segment is assumed (base 0), as every guest here uses. */
	if (guest_read(v, g, base + vector * 8u, 8, GPT_READ, &res) != GPT_OK)
		return false;
	*la = (g[0] | (uint64_t)g[1] << 8) | ((uint64_t)(g[6] | g[7] << 8) << 16);
	return true;
}

/* An instruction breakpoint (DR0, execute, SDM Vol. 3A 18.2.4) where TF-less code begins. */
static void arm_breakpoint(struct vcpu *v, uint64_t la, enum step_bp why)
{
	__asm__ volatile("mov %0, %%dr0" : : "r"(la));
	vmwrite(VMCS_GUEST_DR7, 0x400 | DR7_L0);
	v->step.bp = why;
}

static void disarm_breakpoint(struct vcpu *v)
{
	if (v->step.bp == STEP_BP_NONE)
		return;
	vmwrite(VMCS_GUEST_DR7, 0x400);
	v->step.bp = STEP_BP_NONE;
}

static void set_tf(bool on)
{
	uint64_t rf = vmread(VMCS_GUEST_RFLAGS);

	vmwrite(VMCS_GUEST_RFLAGS, on ? rf | RFLAGS_TF : rf & ~RFLAGS_TF);
}

static void start(struct vcpu *v)
{
	vmwrite(VMCS_EXCEPTION_BITMAP, vmread(VMCS_EXCEPTION_BITMAP) | (1u << EXC_DB));
	v->step.active = true;
}

/* Bochs leaves the single-step bit in the pending debug exceptions on every exit: clear it. */
static void clear_pending_step(void)
{
	uint64_t pend = vmread(VMCS_GUEST_PENDING_DBG);

	if (pend & DB_BS)
		vmwrite(VMCS_GUEST_PENDING_DBG, pend & ~DB_BS);
}

static void stop(struct vcpu *v)
{
	vmwrite(VMCS_EXCEPTION_BITMAP, vmread(VMCS_EXCEPTION_BITMAP) & ~(1u << EXC_DB));
	set_tf(false);
	clear_pending_step();
	disarm_breakpoint(v);
	v->step.active = false;
	v->step.insn_valid = false;
}

void step_before_entry(struct vcpu *v)
{
	struct vcpu_step *s = &v->step;
	uint8_t bytes[INSN_MAX_LEN];
	uint64_t target;
	unsigned n;

	if (!s->want) {
		if (s->active)
			stop(v);
		return;
	}
	if (!s->active)
		start(v);
	set_tf(true);
	disarm_breakpoint(v);
	s->insn_valid = false;
	/* An injected event's handler starts with TF clear (SDM Vol. 3A 6.12.1.3): catch its entry. */
	if (vmread(VMCS_ENTRY_INTR_INFO) & INTR_INFO_VALID) {
		uint32_t info = vmread(VMCS_ENTRY_INTR_INFO);

		s->bp_error_code = info & INTR_INFO_DELIVER_ERROR;
		if (idt_handler(v, info & 0xFF, &target))
			arm_breakpoint(v, target, STEP_BP_EVENT);
		return;
	}
	n = guest_fetch_insn(v, bytes);
	soft_classify(bytes, n, soft_mode(), &s->insn);
	s->insn_valid = true;
	s->insn_cpl = vcpu_cpl();
	s->insn_rip = vmread(VMCS_GUEST_RIP);
	if (!s->insn.clears_tf)
		return;
	if (s->insn.target == SOFT_TGT_LSTAR)
		arm_breakpoint(v, rdmsr(MSR_LSTAR), STEP_BP_INSN);
	else if (s->insn.target == SOFT_TGT_IDT && idt_handler(v, s->insn.vector, &target))
		arm_breakpoint(v, target, STEP_BP_INSN);
}

void step_on_exit(struct vcpu *v)
{
	if (v->step.active)
		clear_pending_step();
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
	clear_pending_step();
	if ((qual & DB_BS) && s->insn_valid) {
		s->steps++;
		pmu_retired(v, &s->insn, s->insn_cpl);
		/* After MOV SS / POP SS the trap waits one more instruction (SDM Vol. 3A 6.8.3). */
		if (s->insn.ss_shadow)
			pmu_retired(v, (const struct soft_insn *)0, s->insn_cpl);
		hide_tf(v);
	} else if ((qual & DB_B0) && s->bp != STEP_BP_NONE) {
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
