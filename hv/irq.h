/* Virtual interrupt and NMI delivery into the guest at VM entry, and kicks between PCPUs. */
#ifndef PERFVISOR_HV_IRQ_H
#define PERFVISOR_HV_IRQ_H

struct vcpu;

/* The host vector of a kick: it only makes the guest on that PCPU exit (pmu/pmu.h has 0xF0). */
#define IRQ_KICK_VECTOR		0xF1
#define IRQ_SPURIOUS_VECTOR	0xFF

/*
 * Injects the pending NMI, else the highest pending interrupt, if the guest can take it now;
 * else asks for an NMI-window or interrupt-window exit when it can.
 */
void irq_deliver(struct vcpu *v);

/* t has a new event: if it runs on another PCPU now, a host IPI makes it exit and take it. */
void irq_kick(struct vcpu *t);

/* This PCPU's local APIC accepts kicks (software-enabled); before its scheduler runs. */
void irq_pcpu_init(void);

#endif
