/* Virtual interrupt and NMI delivery into the guest at VM entry, and kicks between PCPUs. */
#ifndef PERFVISOR_HV_IRQ_H
#define PERFVISOR_HV_IRQ_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;
struct vapic_ipi;

/*
 * Host vectors (pmu/pmu.h has 0xF0). A kick makes the guest on that PCPU exit, or wakes that PCPU
 * from its idle HLT; the idle timer ends an idle HLT at the next deadline.
 */
#define IRQ_KICK_VECTOR		0xF1
#define IRQ_TIMER_VECTOR	0xF2
#define IRQ_SPURIOUS_VECTOR	0xFF

struct pcpu;

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

/*
 * After v wrote a register of its own local APIC (MMIO or x2APIC MSR; v->lock released): sends
 * the IPI the write asked for (ipi, or NULL), and gives the EOI of a level-triggered vector to
 * the I/O APIC.
 */
void irq_apic_write_done(struct vcpu *v, const struct vapic_ipi *ipi);

/*
 * t has a new event or became runnable: if it runs on another PCPU now, a host IPI makes it exit
 * and take it; if that PCPU is idle, the IPI wakes it.
 */
void irq_kick(struct vcpu *t);
/* A host IPI to PCPU p (not this one): its guest exits, or its idle HLT ends. */
void irq_kick_pcpu(struct pcpu *p);

/*
 * This PCPU's local APIC accepts kicks (software-enabled) and, where the CPU has the TSC-deadline
 * timer, runs it for idle waits; before its scheduler runs.
 */
void irq_pcpu_init(void);

/*
 * An idle PCPU halts until a kick or host TSC deadline: false (at once) where it cannot, on a CPU
 * without the TSC-deadline timer or with a host PMI waiting for the next guest exit.
 */
bool irq_idle_halt(uint64_t deadline);

#endif
