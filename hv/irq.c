/* Interrupt injection at VM entry (SDM Vol. 3C 27.6): when RFLAGS.IF allows, else via interrupt-window exiting. */
#include "hv/irq.h"
#include "hv/sched.h"
#include "hv/vcpu.h"
#include "hv/vmx_ops.h"

#define RFLAGS_IF	(1ull << 9)

static void set_window_exiting(bool on)
{
	uint64_t ctls = vmread(VMCS_CPU_CTLS);
	uint64_t want = on ? ctls | CPU_INTR_WINDOW_EXITING : ctls & ~(uint64_t)CPU_INTR_WINDOW_EXITING;

	if (want != ctls)
		vmwrite(VMCS_CPU_CTLS, want);
}

void irq_deliver(struct vcpu *v)
{
	int vector;

	spin_lock(&v->lock);
	vapic_timer_update(&v->apic, sched_guest_tsc(v));
	vector = vapic_pending(&v->apic);
	if (vector < 0) {
		spin_unlock(&v->lock);
		set_window_exiting(false);
		return;
	}
	/* An event is already queued (an exception, a re-injection): ours waits for the window. */
	if ((vmread(VMCS_ENTRY_INTR_INFO) & INTR_INFO_VALID) ||
	    !(vmread(VMCS_GUEST_RFLAGS) & RFLAGS_IF) ||
	    (vmread(VMCS_GUEST_INTERRUPTIBILITY) & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOV_SS))) {
		spin_unlock(&v->lock);
		set_window_exiting(true);
		return;
	}
	vapic_ack(&v->apic, (uint8_t)vector);
	spin_unlock(&v->lock);
	vmwrite(VMCS_ENTRY_INTR_INFO, INTR_INFO_VALID | INTR_TYPE_EXT_INTR | (uint32_t)vector);
	set_window_exiting(false);
}
