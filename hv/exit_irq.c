/* Time and interrupt exits: HLT, the interrupt and NMI windows, the preemption timer, host interrupts. */
#include "lib/printk.h"
#include "hv/domain.h"
#include "hv/irq.h"
#include "hv/lapic.h"
#include "hv/vmexit.h"
#include "hv/vmx_ops.h"
#include "include/x86/rflags.h"

/* HLT: the VCPU blocks until an interrupt is pending (the scheduler wakes it). */
void exit_hlt(struct vcpu *v, uint64_t qual)
{
	(void)qual;
	vcpu_advance_rip(v);
	v->state = VCPU_HALTED;
	v->resched = true;
	/* With IF clear nothing can wake it: a guest that ends with CLI; HLT has stopped. */
	if (!(vmread(VMCS_GUEST_RFLAGS) & RFLAGS_IF)) {
		struct domain *d = v->dom;
		bool all_stopped = true;

		v->halted_for_good = true;
		for (unsigned i = 0; i < d->nvcpus; i++)
			if (!d->vcpus[i]->halted_for_good && d->vcpus[i]->state != VCPU_WAIT_SIPI)
				all_stopped = false;
		if (all_stopped)
			dom_kill(d, v, "every VCPU halted with interrupts disabled, without an exit code");
	}
}

/* The guest can take an interrupt now; irq_deliver() injects it before the next entry. */
void exit_intr_window(struct vcpu *v, uint64_t qual)
{
	(void)v;
	(void)qual;
}

/* The guest can take an NMI now (its IRET unblocked them); irq_deliver() injects it. */
void exit_nmi_window(struct vcpu *v, uint64_t qual)
{
	(void)v;
	(void)qual;
}

/* The slice or the VCPU's APIC timer is due; the scheduling loop decides which. */
void exit_preemption_timer(struct vcpu *v, uint64_t qual)
{
	(void)v;
	(void)qual;
}

/*
 * A host interrupt arrived while the guest ran, acknowledged on exit (SDM Vol. 3C 25.7.1): the
 * host PMI of the arch backend, or a kick from another PCPU (the exit was its purpose:
 * irq_deliver() takes the new event before the next entry), or an idle timer that fired after
 * its idle wait. The host APIC still needs its EOI.
 */
void exit_external_intr(struct vcpu *v, uint64_t qual)
{
	uint8_t vector = vmread(VMCS_EXIT_INTR_INFO) & 0xFF;

	(void)qual;
	if (vector == PMU_HOST_PMI_VECTOR)
		pmu_host_pmi(v);
	else if (vector != IRQ_KICK_VECTOR && vector != IRQ_TIMER_VECTOR)
		pr_debug("[%s] vcpu %u: host interrupt 0x%x during guest execution\n",
			 v->dom->cfg.name, v->id, vector);
	lapic_write(APIC_EOI, 0);
}
