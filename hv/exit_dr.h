/* Debug registers per VCPU: MOV DR works on shadows, so no guest sees another's or the stepper's. */
#ifndef PERFVISOR_HV_EXIT_DR_H
#define PERFVISOR_HV_EXIT_DR_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

/*
 * The guest's DR0-DR3, DR6 and DR7 as it wrote them (SDM Vol. 3A 18.2). The physical DR0-DR3
 * are shared by every VCPU of a PCPU and borrowed by the stepper: a guest only ever reads
 * these, and its enabled breakpoints are loaded before each entry. DEBUGCTL is in the VMCS.
 */
struct vcpu_debug {
	uint64_t db[4];
	uint64_t dr6, dr7;
	bool ready;		/* set up, and #DB intercepted, at the first entry */
};

/* Breakpoint slots (bit k: DRk) the guest's DR7 leaves off, which the stepper may take. */
unsigned dr_free_slots(const struct vcpu *v);
/* Physical DRk = la (k 0..3). */
void dr_set_slot(unsigned k, uint64_t la);
/*
 * Before every entry: the guest's enabled breakpoints into DR0-DR3, and the VMCS's DR7 = the
 * guest's, plus step_dr7 (the stepper's enable bits, execute breakpoints in its free slots).
 */
void dr_before_entry(struct vcpu *v, uint64_t step_dr7);
/* A #DB the guest takes (qual: the exit qualification, DR6's layout): its DR6 shows it. */
void dr_reflect_db(struct vcpu *v, uint64_t qual, unsigned stepper_slots);

#endif
