/* Virtual interrupt and NMI delivery into the guest at VM entry, and kicks between PCPUs. */
#ifndef PERFVISOR_HV_IRQ_H
#define PERFVISOR_HV_IRQ_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

/* The host vector of a kick: it only makes the guest on that PCPU exit (pmu/pmu.h has 0xF0). */
#define IRQ_KICK_VECTOR		0xF1
#define IRQ_SPURIOUS_VECTOR	0xFF

/*
 * Injects the pending NMI, else the highest pending interrupt, if the guest can take it now;
 * else asks for an NMI-window or interrupt-window exit when it can.
 */
void irq_deliver(struct vcpu *v);

/*
 * The domain's I/O APIC: a device drives pin to level; a local APIC's EOI of a level-triggered
 * vector. Either may send an interrupt message, routed to the VCPUs like an IPI.
 */
void irq_ioapic_line(struct vcpu *v, unsigned pin, bool level);
void irq_ioapic_eoi(struct vcpu *v, uint8_t vector);

/* t has a new event: if it runs on another PCPU now, a host IPI makes it exit and take it. */
void irq_kick(struct vcpu *t);

/* This PCPU's local APIC accepts kicks (software-enabled); before its scheduler runs. */
void irq_pcpu_init(void);

#endif
