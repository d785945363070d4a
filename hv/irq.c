/* Event injection at VM entry (SDM Vol. 3C 27.6): NMIs, then interrupts, else window exiting; kicks. */
#include "lib/cpu.h"
#include "hv/domain.h"
#include "hv/irq.h"
#include "hv/lapic.h"
#include "hv/pcpu.h"
#include "hv/sched.h"
#include "hv/step.h"
#include "hv/vcpu.h"
#include "hv/vmx_ops.h"
#include "include/x86/msr.h"
#include "include/x86/rflags.h"
#include "include/x86/trap.h"

/*
 * SDM Vol. 3C 25.4.2, 26.3.1.5: an NMI waits while virtual NMIs are blocked (until the guest's
 * IRET) and in a MOV SS shadow; in an STI shadow too, which some CPUs require for injection.
 */
#define NMI_BLOCKED	(INTERRUPTIBILITY_NMI | INTERRUPTIBILITY_MOV_SS | INTERRUPTIBILITY_STI)
#define INTR_BLOCKED	(INTERRUPTIBILITY_MOV_SS | INTERRUPTIBILITY_STI)
/*
 * Debug traps pending from the last instruction (single step, data breakpoints: SDM Vol. 3C
 * 25.4.2 table 25-4) go before NMIs and interrupts (SDM Vol. 3A 6.9), and a VM entry that
 * injects an event would lose them (SDM Vol. 3C 27.7.3): events wait for the window then.
 */
#define PENDING_DBG_TRAPS	(0xfull | 1ull << 14)
/* SDM Vol. 3A 11.5.4.1: CPUID.1:ECX[24] enumerates the APIC timer's TSC-deadline mode. */
#define CPUID1_ECX_TSC_DEADLINE	(1u << 24)

/* Every PCPU has the TSC-deadline timer: idle PCPUs halt instead of spinning. */
static bool idle_halts;

/*
 * The guest's interruptibility state, with blocking by NMI only while an NMI this file injected
 * may still block: with NMI exiting the guest takes no NMI but those, and the blocking begins
 * with one's delivery (SDM Vol. 3C 27.6.1.1) and ends with the guest's IRET (26.3) or an entry
 * with bit 3 clear (27.7.1). Bochs 2.7 leaves other blocking behind: its VM entry sets
 * virtual-NMI blocking for bit 3 set but never clears it for bit 3 clear (fixed in Bochs 2.8),
 * so the stepper's own blocking (hv/step.c) outlives the write that takes it off, and a PCPU
 * hands whatever blocking its last VCPU had on to the next one, whose next exit saves it
 * (28.3.4). Trusted, it held a PMI back for an NMI window until some later IRET in the kernel,
 * often after perf had switched the counter out: a sample lost (docs/linux-guest.md).
 */
static uint32_t guest_interruptibility(struct vcpu *v)
{
	uint32_t intr = vmread(VMCS_GUEST_INTERRUPTIBILITY);

	if (!(intr & INTERRUPTIBILITY_NMI)) {
		v->nmi_blocks = false;
	} else if (!v->nmi_blocks) {
		/* Not the guest's; and an NMI is injected only with bit 3 clear (27.3.1.5). */
		intr &= ~INTERRUPTIBILITY_NMI;
		vmwrite(VMCS_GUEST_INTERRUPTIBILITY, intr);
	}
	return intr;
}

static void set_exiting(uint32_t ctl, bool on)
{
	uint64_t ctls = vmread(VMCS_CPU_CTLS);
	uint64_t want = on ? ctls | ctl : ctls & ~(uint64_t)ctl;

	if (want != ctls)
		vmwrite(VMCS_CPU_CTLS, want);
}

void irq_deliver(struct vcpu *v)
{
	uint32_t intr = guest_interruptibility(v), inject = 0;
	bool queued = (vmread(VMCS_ENTRY_INTR_INFO) & INTR_INFO_VALID) ||
		      (vmread(VMCS_GUEST_PENDING_DBG) & PENDING_DBG_TRAPS);
	bool if_set = vmread(VMCS_GUEST_RFLAGS) & RFLAGS_IF;
	/* NMI-window exiting exists only with virtual NMIs (SDM Vol. 3C 26.2.1.1). */
	bool vnmi = vmread(VMCS_PIN_CTLS) & PIN_VIRTUAL_NMIS;
	bool nmi_wait = false, intr_wait = false;
	/* A stepped STI's shadow, which the stepper holds (hv/step.c): its next exit ends it. */
	bool shadow = step_sti_shadow(v);
	int vector;

	/* It runs again: whatever HLT with IF clear said, something woke it. */
	v->halted_for_good = false;
	spin_lock(&v->lock);
	vapic_timer_update(&v->apic, sched_guest_tsc(v));
	/* SDM Vol. 3A 6.7.1: while a handler runs, only one more NMI is latched. */
	if (intr & INTERRUPTIBILITY_NMI)
		vapic_nmi_blocked(&v->apic);
	/* SDM Vol. 3A 6.9: an NMI goes before a maskable interrupt; an event queued already first. */
	if (v->apic.nmi_pending) {
		if (queued || shadow || (intr & NMI_BLOCKED) || (!vnmi && !if_set)) {
			nmi_wait = true;
		} else {
			vapic_take_nmi(&v->apic);
			inject = INTR_INFO_VALID | INTR_TYPE_NMI | EXC_NMI;
			queued = true;
		}
	}
	vector = vapic_pending(&v->apic);
	if (vector >= 0) {
		if (queued || shadow || !if_set || (intr & INTR_BLOCKED)) {
			intr_wait = true;
		} else {
			vapic_ack(&v->apic, (uint8_t)vector);
			inject = INTR_INFO_VALID | INTR_TYPE_EXT_INTR | (uint32_t)vector;
		}
	}
	spin_unlock(&v->lock);
	if (inject)
		vmwrite(VMCS_ENTRY_INTR_INFO, inject);
	/* An NMI delivered at this entry (this one, or one an exit cut short) blocks the next. */
	if ((vmread(VMCS_ENTRY_INTR_INFO) & (INTR_INFO_VALID | INTR_TYPE_MASK)) ==
	    (INTR_INFO_VALID | INTR_TYPE_NMI))
		v->nmi_blocks = true;
	/* SDM Vol. 3C 26.7.6: without virtual NMIs an interrupt window stands in for the NMI's. */
	set_exiting(CPU_NMI_WINDOW_EXITING, !shadow && nmi_wait && vnmi);
	set_exiting(CPU_INTR_WINDOW_EXITING, !shadow && (intr_wait || (nmi_wait && !vnmi)));
}

void irq_ioapic_line(struct vcpu *v, unsigned pin, bool level)
{
	struct domain *d = v->dom;
	struct vapic_ipi msg;
	bool send;

	spin_lock(&d->ioapic_lock);
	send = vioapic_set_irq(&d->ioapic, pin, level, &msg);
	spin_unlock(&d->ioapic_lock);
	if (send)
		sched_send_ipi(v, &msg);
}

void irq_ioapic_eoi(struct vcpu *v, uint8_t vector)
{
	struct domain *d = v->dom;
	struct vapic_ipi msg;
	bool send;

	spin_lock(&d->ioapic_lock);
	send = vioapic_eoi(&d->ioapic, vector, &msg);
	spin_unlock(&d->ioapic_lock);
	if (send)
		sched_send_ipi(v, &msg);
}

void irq_apic_write_done(struct vcpu *v, const struct vapic_ipi *ipi)
{
	int eoi;

	spin_lock(&v->lock);
	eoi = v->apic.level_eoi;
	v->apic.level_eoi = -1;
	spin_unlock(&v->lock);
	if (ipi)
		sched_send_ipi(v, ipi);
	if (eoi >= 0)
		irq_ioapic_eoi(v, (uint8_t)eoi);
}

void irq_kick_pcpu(struct pcpu *p)
{
	/* SDM Vol. 3A 11.6.1: wait for the previous IPI to leave, then a fixed physical IPI. */
	for (int i = 0; i < 1000 && (lapic_read(APIC_ICR_LO) & APIC_ICR_BUSY); i++)
		__asm__ volatile("pause");
	lapic_write(APIC_ICR_HI, p->apic_id << 24);
	lapic_write(APIC_ICR_LO, IRQ_KICK_VECTOR);
}

void irq_kick(struct vcpu *t)
{
	struct pcpu *p = t->pcpu;

	if (!p || p == this_pcpu())
		return;
	/* Pairs with the idle loop (hv/sched.c): the event is visible before p->idle is read. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (p->running == t || __atomic_load_n(&p->idle, __ATOMIC_RELAXED))
		irq_kick_pcpu(p);
}

/*
 * SDM Vol. 3A 11.4.7.2: a software-disabled APIC drops fixed interrupts. The host runs with
 * IF clear: a kick is taken by a VM exit (acknowledged on exit, SDM Vol. 3C 25.7.1), or ends an
 * idle HLT, the one place where the host sets IF (boot/ has the handlers: an EOI).
 */
void irq_pcpu_init(void)
{
	lapic_write(APIC_SPIV, lapic_read(APIC_SPIV) | APIC_SPIV_ENABLE | IRQ_SPURIOUS_VECTOR);
	idle_halts = cpuid(1, 0).ecx & CPUID1_ECX_TSC_DEADLINE;
	if (!idle_halts)
		return;
	/* SDM Vol. 3A 11.5.4.1: in TSC-deadline mode a write of 0 disarms the timer. */
	lapic_write(APIC_LVT_TIMER, APIC_LVT_TSC_DEADLINE | IRQ_TIMER_VECTOR);
	wrmsr(MSR_IA32_TSC_DEADLINE, 0);
}

bool irq_idle_halt(uint64_t deadline)
{
	unsigned pmi = PMU_HOST_PMI_VECTOR;

	/* A host PMI left from the last guest run is for the next VM exit to take. */
	if (!idle_halts || (lapic_read(APIC_IRR + pmi / 32 * 0x10) >> pmi % 32 & 1))
		return false;
	/* A deadline already passed interrupts at once (SDM Vol. 3A 11.5.4.1). */
	wrmsr(MSR_IA32_TSC_DEADLINE, deadline);
	/* SDM Vol. 2B STI: interrupts wait for the end of the next instruction, so a kick pending
	 * now is taken in the HLT and ends it. */
	__asm__ volatile("sti; hlt; cli" : : : "memory");
	wrmsr(MSR_IA32_TSC_DEADLINE, 0);
	return true;
}
