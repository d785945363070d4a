/* Unit tests for hv/irq.c's NMI delivery against a modelled VMCS: whose blocking by NMI holds. */
#include <stdbool.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "tests/unit/vmcs_model.h"
#include "hv/vapic.c"
#include "hv/irq.c"

/* What hv/irq.c links against but NMI delivery never reaches, or reaches with nothing to do. */
uint64_t lapic_base;

uint64_t sched_guest_tsc(struct vcpu *v)
{
	(void)v;
	return 0;
}

bool step_sti_shadow(struct vcpu *v)
{
	(void)v;
	return false;
}

void sched_send_ipi(struct vcpu *from, const struct vapic_ipi *ipi)
{
	(void)from;
	(void)ipi;
}

bool vioapic_set_irq(struct vioapic *io, unsigned pin, bool level, struct vapic_ipi *msg)
{
	(void)io;
	(void)pin;
	(void)level;
	(void)msg;
	return false;
}

bool vioapic_eoi(struct vioapic *io, uint8_t vector, struct vapic_ipi *msg)
{
	(void)io;
	(void)vector;
	(void)msg;
	return false;
}

static struct vcpu vcpu;

#define ENTRY_NMI	(INTR_INFO_VALID | INTR_TYPE_NMI | 2u)

/* A VCPU at an exit with NMI exiting and virtual NMIs, its APIC on, no event queued. */
static void reset(void)
{
	memset(vmcs, 0, sizeof(vmcs));
	memset(&vcpu, 0, sizeof(vcpu));
	vapic_init(&vcpu.apic, 0);
	vmcs[VMCS_PIN_CTLS] = PIN_NMI_EXITING | PIN_VIRTUAL_NMIS;
}

/* The guest's PMI (LVTPC in NMI mode, what Linux perf programs) latched as its NMI. */
static void pmi(void)
{
	vcpu.apic.lvt[VAPIC_LVT_PMC] = VAPIC_DM_NMI << 8;
	vapic_pmi(&vcpu.apic);
}

/* The entry ran and the guest took what it injected: the CPU clears the valid bit (27.6). */
static void entered(void)
{
	vmcs[VMCS_ENTRY_INTR_INFO] &= ~(uint64_t)INTR_INFO_VALID;
}

static bool nmi_window(void)
{
	return vmcs[VMCS_CPU_CTLS] & CPU_NMI_WINDOW_EXITING;
}

static void test_stale_blocking(void)
{
	/* No NMI was ever injected, yet the exit saved blocking by NMI (Bochs 2.7). */
	reset();
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = INTERRUPTIBILITY_NMI;
	pmi();
	irq_deliver(&vcpu);
	check(vmcs[VMCS_ENTRY_INTR_INFO] == ENTRY_NMI && !nmi_window() && !vcpu.apic.nmi_pending,
	      "blocking by NMI no injected NMI explains: the PMI's NMI is injected now, not held "
	      "for an NMI window (SDM Vol. 3C 27.6.1.1, 26.3)");
	check(!(vmcs[VMCS_GUEST_INTERRUPTIBILITY] & INTERRUPTIBILITY_NMI),
	      "and bit 3 cleared, as injecting an NMI wants (SDM Vol. 3C 27.3.1.5)");
	/* The same with the stepper's blocking left behind, STI blocking kept. */
	reset();
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = INTERRUPTIBILITY_NMI | INTERRUPTIBILITY_STI;
	irq_deliver(&vcpu);
	check(vmcs[VMCS_GUEST_INTERRUPTIBILITY] == INTERRUPTIBILITY_STI && !nmi_window(),
	      "with no NMI pending: only bit 3 goes, STI blocking stays, no window asked for");
}

static void test_own_blocking(void)
{
	/* A PMI injected: the guest's handler runs with blocking by NMI. */
	reset();
	pmi();
	irq_deliver(&vcpu);
	entered();
	check(vmcs[VMCS_GUEST_INTERRUPTIBILITY] == 0 && vcpu.nmi_blocks,
	      "an NMI injected: it blocks the next from its delivery on");
	/* An exit in the handler, which has unmasked LVTPC, and a second PMI. */
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = INTERRUPTIBILITY_NMI;
	pmi();
	irq_deliver(&vcpu);
	check(!(vmcs[VMCS_ENTRY_INTR_INFO] & INTR_INFO_VALID) && nmi_window() &&
	      vcpu.apic.nmi_pending == 1 &&
	      (vmcs[VMCS_GUEST_INTERRUPTIBILITY] & INTERRUPTIBILITY_NMI),
	      "a second NMI in its handler waits for the NMI window (SDM Vol. 3A 6.7.1)");
	/* The handler's IRET: the window's exit shows the blocking gone. */
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = 0;
	irq_deliver(&vcpu);
	entered();
	check(vcpu.nmi_blocks && !nmi_window() && !vcpu.apic.nmi_pending,
	      "after its IRET the waiting NMI goes in, and blocks in its turn");
	/* That one's IRET, then blocking again from nowhere (another VCPU's, Bochs 2.7). */
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = 0;
	irq_deliver(&vcpu);
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = INTERRUPTIBILITY_NMI;
	pmi();
	irq_deliver(&vcpu);
	check(vmcs[VMCS_ENTRY_INTR_INFO] == ENTRY_NMI && !nmi_window(),
	      "blocking after an exit showed the last one's gone is not the guest's: injected");
}

static void test_reinjected(void)
{
	/* An exit cut an NMI's delivery short (IDT-vectoring information): hv/vmexit.c injects it
	 * again, before irq_deliver(); its blocking is the guest's as the first one's. */
	reset();
	vmcs[VMCS_ENTRY_INTR_INFO] = ENTRY_NMI;
	irq_deliver(&vcpu);
	entered();
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = INTERRUPTIBILITY_NMI;
	pmi();
	irq_deliver(&vcpu);
	check(!(vmcs[VMCS_ENTRY_INTR_INFO] & INTR_INFO_VALID) && nmi_window(),
	      "an NMI injected again after an exit in its delivery blocks the next one too");
}

int main(void)
{
	test_stale_blocking();
	test_own_blocking();
	test_reinjected();
	return unit_summary();
}
