/* Virtual interrupt delivery from a VCPU's virtual APIC into the guest, at VM entry. */
#ifndef PERFVISOR_HV_IRQ_H
#define PERFVISOR_HV_IRQ_H

struct vcpu;

/* Injects the highest pending interrupt if the guest can take it now, else asks for an exit when it can. */
void irq_deliver(struct vcpu *v);

#endif
