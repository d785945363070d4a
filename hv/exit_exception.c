/* Exception-or-NMI exits: #DB belongs to the single-stepping soft PMU, #MC to the host; the rest is reflected. */
#include "hv/domain.h"
#include "hv/step.h"
#include "hv/vmexit.h"
#include "hv/vmx_ops.h"
#include "include/x86/trap.h"

void exit_exception(struct vcpu *v, uint64_t qual)
{
	uint32_t info = vmread(VMCS_EXIT_INTR_INFO);
	unsigned vector = info & 0xFF;

	/* A host NMI: nothing sends one; the guest is not concerned. */
	if ((info & INTR_TYPE_MASK) == INTR_TYPE_NMI)
		return;
	if (vector == 1 && step_handle_db(v, qual))
		return;
	if (vector == EXC_UD && step_handle_ud(v))
		return;
	/*
	 * A machine check while the guest ran (intercepted: SDM Vol. 3C 26.2) reports the
	 * hardware's error, not the guest's: it never reaches the guest's IDT. The host does not
	 * recover from hardware errors, so the domain that was running stops, by name.
	 */
	if (vector == EXC_MC) {
		dom_kill(v->dom, v, "machine check (#MC) while it ran: a hardware error; the "
			 "domain is stopped");
		return;
	}
	/*
	 * Give the guest its own exception back, as it would have been delivered (SDM Vol. 3C
	 * 27.6.1). INT1 (ICEBP) is none of DR6's conditions (SDM Vol. 3A 18.2.3): what the
	 * qualification holds then is a debug trap pending across it, which the injection of a
	 * privileged software exception drops (SDM Vol. 3C 27.7.3).
	 */
	if (vector == 1)
		dr_reflect_db(v, (info & INTR_TYPE_MASK) == INTR_TYPE_PRIV_SW_EXCEPTION ? 0 : qual,
			      v->step.bp_slots);
	/* A #PF exit leaves CR2 alone: the faulting address is the qualification (SDM Vol. 3C 28.2.1). */
	if (vector == 14)
		v->cr2 = qual;
	if (info & INTR_INFO_DELIVER_ERROR)
		vmwrite(VMCS_ENTRY_EXC_ERROR, vmread(VMCS_EXIT_INTR_ERROR));
	vmwrite(VMCS_ENTRY_INSN_LEN, vmread(VMCS_EXIT_INSN_LEN));
	vmwrite(VMCS_ENTRY_INTR_INFO, info & (INTR_INFO_VALID | INTR_TYPE_MASK |
					      INTR_INFO_DELIVER_ERROR | 0xFF));
}
