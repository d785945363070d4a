/* Debug registers per VCPU: MOV DR works on shadows, so no guest sees another's or the stepper's. */
#include "hv/exit_dr.h"
#include "hv/guest_mem.h"
#include "hv/vcpu.h"
#include "hv/vmexit.h"
#include "hv/vmx_ops.h"
#include "include/x86/cr.h"
#include "include/x86/dr.h"
#include "include/x86/trap.h"

static void init(struct vcpu_debug *d)
{
	d->dr6 = DR6_FIXED1;
	d->dr7 = DR7_FIXED1;
	d->ready = true;
}

/* Breakpoint k is on when its L or G bit is. */
static unsigned enabled_slots(uint64_t dr7)
{
	unsigned slots = 0;

	for (unsigned k = 0; k < 4; k++)
		if (dr7 >> (2 * k) & 3)
			slots |= 1u << k;
	return slots;
}

unsigned dr_free_slots(const struct vcpu *v)
{
	return ~enabled_slots(v->debug.dr7) & 0xF;
}

void dr_set_slot(unsigned k, uint64_t la)
{
	switch (k) {
	case 0:
		__asm__ volatile("mov %0, %%dr0" : : "r"(la));
		break;
	case 1:
		__asm__ volatile("mov %0, %%dr1" : : "r"(la));
		break;
	case 2:
		__asm__ volatile("mov %0, %%dr2" : : "r"(la));
		break;
	default:
		__asm__ volatile("mov %0, %%dr3" : : "r"(la));
		break;
	}
}

void dr_before_entry(struct vcpu *v, uint64_t step_dr7)
{
	struct vcpu_debug *d = &v->debug;
	uint64_t want = d->dr7;
	unsigned mine;

	/* First entry: every #DB exits, so that DR6 stays the shadow's (exit_exception). */
	if (!d->ready) {
		init(d);
		vmwrite(VMCS_EXCEPTION_BITMAP, vmread(VMCS_EXCEPTION_BITMAP) | 1u << EXC_DB);
	}
	mine = enabled_slots(d->dr7);
	for (unsigned m = mine; m; m &= m - 1)
		dr_set_slot(__builtin_ctz(m), d->db[__builtin_ctz(m)]);
	/* The stepper's slots are execute breakpoints: R/W and LEN 0 (SDM Vol. 3A 18.2.4). */
	for (unsigned m = enabled_slots(step_dr7); m; m &= m - 1)
		want &= ~(0xFull << (16 + 4 * __builtin_ctz(m)));
	vmwrite(VMCS_GUEST_DR7, want | step_dr7);
}

void dr_reflect_db(struct vcpu *v, uint64_t qual, unsigned stepper_slots)
{
	struct vcpu_debug *d = &v->debug;

	/* B0-B3 report the last exception's breakpoints; BD, BS, BT stay until cleared (18.2.3). */
	d->dr6 = (d->dr6 & ~0xFull) | (qual & DR6_BITS & ~(uint64_t)stepper_slots) | DR6_FIXED1;
	/* A #DB clears GD, so that its handler may use the debug registers (18.2.4). */
	d->dr7 &= ~DR7_GD;
}

/* MOV to/from DRn (SDM Vol. 2A MOV-Move to/from Debug Registers; Vol. 3C 28.2.1 table 28-4). */
void exit_dr_access(struct vcpu *v, uint64_t qual)
{
	struct vcpu_debug *d = &v->debug;
	unsigned dr = qual & 7, reg = (qual >> 8) & 0xF;
	bool from = qual >> 4 & 1;
	uint64_t val;

	if (!d->ready)
		init(d);
	/*
	 * SDM Vol. 3A 18.2.4: with DR7.GD set, a MOV DR raises a #DB fault (DR6.BD) before it
	 * executes, ahead of its own #UD or #GP. The MOV-DR exit has priority over that #DB (every
	 * MOV DR exits here), so it is raised here; its delivery clears GD.
	 */
	if (d->dr7 & DR7_GD) {
		dr_reflect_db(v, DR6_BD, 0);
		vcpu_inject_exception(v, EXC_DB, false, 0);
		return;
	}
	/* DR4 and DR5 alias DR6 and DR7 unless CR4.DE makes them #UD. */
	if (dr == 4 || dr == 5) {
		if (vcpu_guest_cr4() & CR4_DE) {
			vcpu_inject_ud(v);
			return;
		}
		dr += 2;
	}
	if (reg == GPR_RSP)
		v->gpr[GPR_RSP] = vmread(VMCS_GUEST_RSP);
	if (from) {
		val = dr < 4 ? d->db[dr] : dr == 6 ? d->dr6 : d->dr7;
		if (guest_code_mode() == INSN_MODE_64)
			v->gpr[reg] = val;
		else
			v->gpr[reg] = (uint32_t)val;
		if (reg == GPR_RSP)
			vmwrite(VMCS_GUEST_RSP, v->gpr[reg]);
	} else {
		val = guest_code_mode() == INSN_MODE_64 ? v->gpr[reg] : (uint32_t)v->gpr[reg];
		/* Bits 63:32 of DR6 and DR7 are reserved: writing a 1 there is #GP. */
		if (dr >= 6 && (val >> 32)) {
			vcpu_inject_gp(v);
			return;
		}
		if (dr < 4)
			d->db[dr] = val;
		else if (dr == 6)
			d->dr6 = (val & DR6_BITS) | DR6_FIXED1;
		else
			d->dr7 = (val & DR7_BITS) | DR7_FIXED1;
	}
	vcpu_advance_rip(v);
}
