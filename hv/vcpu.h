/* A virtual CPU: guest registers, its VMCS, its virtual local APIC, exit statistics and scheduling state. */
#ifndef PERFVISOR_HV_VCPU_H
#define PERFVISOR_HV_VCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/spinlock.h"
#include "hv/ept.h"
#include "hv/exit_dr.h"
#include "hv/gpt.h"
#include "hv/msr_table.h"
#include "hv/step.h"
#include "hv/vapic.h"
#include "hv/vmx_defs.h"
#include "pmu/pmu.h"

/* GPR indexes in x86 encoding order, so decoded ModRM register numbers index gpr[] directly. */
enum gpr {
	GPR_RAX, GPR_RCX, GPR_RDX, GPR_RBX, GPR_RSP, GPR_RBP, GPR_RSI, GPR_RDI,
	GPR_R8, GPR_R9, GPR_R10, GPR_R11, GPR_R12, GPR_R13, GPR_R14, GPR_R15,
};

enum vcpu_state {
	VCPU_WAIT_SIPI,		/* an application processor before its start-up IPI */
	VCPU_RUNNABLE,
	VCPU_HALTED,		/* in HLT until an interrupt is pending */
	VCPU_DEAD,		/* its domain has ended */
};

#define EXIT_RING_LEN	16

struct exit_record {
	uint32_t reason;
	uint64_t rip, qualification, tsc;
};

/* Syscall MSRs VMX does not switch; passed through, so swapped on every VCPU switch. */
enum { SMSR_STAR, SMSR_LSTAR, SMSR_CSTAR, SMSR_FMASK, SMSR_KERNEL_GS_BASE,
       SMSR_TSC_AUX,	/* last: only where RDTSCP or RDPID make it exist */
       SMSR_COUNT };

struct domain;
struct pcpu;

/* One VM-entry/VM-exit MSR-load list entry (SDM Vol. 3C 25.7.2, table 25-15). */
struct vmx_msr_entry {
	uint32_t index, reserved;
	uint64_t value;
} __attribute__((aligned(16)));

struct vcpu {
	uint64_t gpr[16];		/* hv/entry.S knows this layout: keep it first */
	uint64_t cr2;
	/* x87/SSE state, switched with the VCPU (FXSAVE layout, SDM Vol. 1 10.5.1). */
	uint8_t fpu[512] __attribute__((aligned(16)));
	struct domain *dom;
	unsigned id;			/* index in the domain, and its APIC ID */
	struct pcpu *pcpu;		/* the PCPU whose run queue holds it */
	struct pcpu *pcpu_last;		/* where it ran last */
	uint64_t vmcs_pa;
	bool launched;
	volatile enum vcpu_state state;
	/* Guards apic and state against other PCPUs (IPIs, wake-ups). */
	struct spinlock lock;
	struct vapic apic;
	bool nmi_blocks;		/* an NMI it was given may block the next (hv/irq.c) */
	uint8_t sipi_vector;		/* start page of a SIPI not yet applied to the VMCS */
	bool sipi_pending;
	uint64_t smsr[SMSR_COUNT];
	struct msr_vcpu msr;		/* the emulated MSRs (hv/msr_table.c) */
	/* TSC virtualization (seed 003, 4.2.5): the TSC stops while the VCPU waits for a PCPU. */
	uint64_t tsc_offset;
	uint64_t desched_tsc;
	uint64_t tsc_frozen;		/* host TSC of a stepping exit it stands at, or 0 */
	/* Host TSC just before the last VM entry, ordinary or the stepper's fast path's. */
	uint64_t entry_tsc;
	/* Why to leave the run loop at the next exit. */
	bool resched;
	/* Statistics and the post-mortem ring. */
	uint64_t exits[EXIT_REASON_MAX];
	uint64_t total_exits;
	uint32_t exit_reason;		/* of the last exit, read once by vmexit_fast() */
	bool exit_done;			/* vmexit_fast() handled it; only the entry work remains */
	uint64_t run_tsc;		/* host TSC while loaded on a PCPU */
	uint64_t hv_tsc;		/* host TSC spent handling this VCPU's exits */
	struct exit_record ring[EXIT_RING_LEN];
	unsigned ring_pos;
	unsigned migrations;
	struct ept_user ept;		/* the domain EPT generation its PCPU flushed for */
	/* The virtual PMU and, for the soft backend, the single-stepping that feeds it. */
	struct pmu_vcpu pmu;
	struct gpt_memo pmu_walk;	/* the PV PMU's last look at guest memory (vcpu_pmu_guest_bytes) */
	struct vcpu_step step;
	struct vcpu_debug debug;	/* its DR0-DR3, DR6, DR7 (hv/exit_dr.c) */
	uint64_t pmu_run_limit;		/* host TSC ticks the next guest run may last (0: no limit) */
	/* VM-entry/VM-exit MSR-load lists of one entry each (SDM Vol. 3C 25.7.2: 16-byte aligned). */
	struct vmx_msr_entry msr_entry_load, msr_exit_load;
	bool halted_for_good;		/* HLT with IF clear: only INIT could wake it */
};

/* VMCS set-up for a new VCPU; first-instruction state comes from the domain loader. */
int vcpu_init(struct vcpu *v, struct domain *d, unsigned id);
/* Makes v's VMCS current on this PCPU and writes the per-PCPU host state into it. */
void vcpu_load(struct vcpu *v);
/* Saves the state VMX does not switch, when v stops running on this PCPU. */
void vcpu_put(struct vcpu *v);
/* Takes v off this PCPU (VMCLEAR) so another PCPU may load it. */
void vcpu_unload(struct vcpu *v);

/* Guest state helpers used by exit handlers. */
/* The guest instruction at RIP was emulated: it retires (RIP moves on by len, the PMU counts it). */
void vcpu_retire_insn(struct vcpu *v, unsigned len);
/* The same for an instruction-caused exit, whose length the VMCS gives. */
void vcpu_advance_rip(struct vcpu *v);
/* The same on the exit fast path, where nothing steps and pmu_exit_light() holds. */
void vcpu_advance_rip_light(struct vcpu *v);
void vcpu_inject_exception(struct vcpu *v, unsigned vector, bool has_error, uint32_t error);
static inline void vcpu_inject_gp(struct vcpu *v)
{
	vcpu_inject_exception(v, 13, true, 0);
}
static inline void vcpu_inject_ud(struct vcpu *v)
{
	vcpu_inject_exception(v, 6, false, 0);
}
unsigned vcpu_cpl(void);
/* CR0 and CR4 as the guest sees them (its own bits, and the shadow of the host-owned ones). */
uint64_t vcpu_guest_cr0(void);
uint64_t vcpu_guest_cr4(void);
/* First-instruction states, written into the current VMCS; code at cs_sel, data at cs_sel + 8. */
void vcpu_start_long_mode(struct vcpu *v, uint64_t rip, uint64_t cr3, uint64_t gdt,
			  uint16_t cs_sel);
void vcpu_start_protected32(struct vcpu *v, uint32_t eip, uint64_t gdt);
/* An application processor at a SIPI vector, in real mode (SDM Vol. 3A 10.4.4). */
void vcpu_start_real_mode(struct vcpu *v, uint8_t vector);
/* Prints the exit ring and guest registers: for unexpected exits and kills. */
void vcpu_dump(struct vcpu *v, const char *why);

#endif
