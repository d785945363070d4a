/* The PMU as hv/ sees it: backend choice, per-domain configuration, per-VCPU state, and the hooks hv/ calls. */
#ifndef PERFVISOR_PMU_PMU_H
#define PERFVISOR_PMU_PMU_H

#include <stdbool.h>
#include <stdint.h>

#include "pmu/pmu_probe.h"
#include "pmu/pv.h"
#include "pmu/soft_classify.h"
#include "pmu/vpmu.h"

struct vcpu;

enum pmu_choice {
	PMU_CHOICE_AUTO,	/* arch if a PMU is found by behaviour, else soft */
	PMU_CHOICE_ARCH,
	PMU_CHOICE_SOFT,
	PMU_CHOICE_OFF,
};

enum pmu_backend_kind {
	PMU_BACKEND_OFF,
	PMU_BACKEND_SOFT,
	PMU_BACKEND_ARCH,
};

extern enum pmu_backend_kind pmu_backend;

/* Names for events= on module strings, in enum vpmu_event order, NULL-terminated. */
extern const char *const pmu_event_names[];

/* Accounting modes (the VMware seed): what a counter includes besides the guest's own execution. */
enum pmu_acct {
	PMU_ACCT_GUEST,		/* only guest execution: counting pauses during VM exits */
	PMU_ACCT_VCPU,		/* also the hypervisor's work on this VCPU's exits */
	PMU_ACCT_HYBRID,	/* instructions and branches as guest, cycles as vcpu */
};

struct pmu_domain {
	struct vpmu_config cfg;
	enum pmu_acct acct;
	struct pv_domain pv;
};

struct pmu_vcpu {
	struct vpmu vpmu;
	struct pmu_domain *pd;
	unsigned id;			/* the VCPU's index in its domain: its page of the PV area */
	uint64_t entry_tsc;		/* host TSC at the last VM entry */
	uint64_t exit_tsc;		/* host TSC at the last VM exit (0: none since switch-in) */
	uint64_t hv_ticks;		/* hypervisor time on this VCPU's exits (vcpu, hybrid modes) */
	uint64_t hv_counted;		/* of which an enabled instructions counter took (vcpu mode) */
	uint64_t hv_counted_branches;	/* hypervisor branches an enabled branches counter took */
	uint64_t retired;		/* guest instructions the soft backend saw retire */
	unsigned entry_cpl;		/* guest CPL at the last VM entry */
	uint32_t active;		/* events some counter counts at some ring (enum vpmu_event bits),
					 * cached when the counters are programmed: the exit path's fast test */
	uint32_t vpmu_events;		/* of which the vPMU's own counters count (cached likewise) */
	bool stepping;			/* the soft backend single-steps this VCPU (cached likewise) */
	bool step_ring0;		/* at CPL 0 too: something counts instructions or branches there */
	bool pv_guard;			/* its PV page shows soft counts of instructions or branches
					 * (cached likewise): see pmu_pv_guard() */
	bool step_batch;		/* the stepper may hand blocks' counts over in batches
					 * (cached likewise): see pmu_step_batch() */
	bool run_counts;		/* the PMU was live at the last VM entry and the exit ending
					 * that run is not accounted yet (pmu_after_exit) */
	enum pmu_acct acct;
};

/* The host interrupt vector of physical counter overflows (arch backend). */
#define PMU_HOST_PMI_VECTOR	0xF0

/* Picks the backend after the platform probe; prints the choice. */
void pmu_init(enum pmu_choice choice);
/* A domain's PMU: shown to its guests as version 2; allow is a bit mask of enum vpmu_event. */
void pmu_domain_init(struct pmu_domain *pd, uint64_t allow, int acct);
void pmu_vcpu_init(struct pmu_vcpu *pv, struct pmu_domain *pd, unsigned id);

/* Whether msr is one of the vPMU's (pmu_rdmsr/pmu_wrmsr answer it, maybe with #GP). */
bool pmu_owns_msr(uint32_t msr);
/* Trap-and-emulate: VPMU_OK, VPMU_GP (inject #GP) or VPMU_NOT_PMU (not ours). */
enum vpmu_result pmu_rdmsr(struct vcpu *v, uint32_t msr, uint64_t *val);
enum vpmu_result pmu_wrmsr(struct vcpu *v, uint32_t msr, uint64_t val);
/* What pmu_wrmsr would answer, with no effect: a WRMSR retires before it takes effect. */
enum vpmu_result pmu_wrmsr_check(struct vcpu *v, uint32_t msr, uint64_t val);
enum vpmu_result pmu_rdpmc(struct vcpu *v, uint32_t ecx, bool pce, uint64_t *val);
void pmu_cpuid(struct vcpu *v, uint32_t *eax, uint32_t *ebx, uint32_t *ecx, uint32_t *edx);

/* pmu_before_entry() and pmu_after_exit() have nothing to do: no backend, or no soft counter counts. */
static inline bool pmu_exit_quiet(const struct pmu_vcpu *pv)
{
	return pmu_backend == PMU_BACKEND_OFF || (pmu_backend == PMU_BACKEND_SOFT && !pv->active);
}

/*
 * Only paravirtual a-mode counters that need no stepping are live, if any: the exit hooks move
 * their soft counts and nothing else (no overflow, PMI or run limit), so the exit fast path
 * (hv/vmexit.c) can run the hooks itself.
 */
static inline bool pmu_exit_light(const struct pmu_vcpu *pv)
{
	return pmu_exit_quiet(pv) ||
	       (pmu_backend == PMU_BACKEND_SOFT && !pv->stepping && !pv->vpmu_events);
}

/* Around every guest run and every VCPU switch; pmu_after_exit() accounts a run once. */
void pmu_before_entry(struct vcpu *v);
void pmu_after_exit(struct vcpu *v);
/*
 * The same for the exit fast path, while pmu_exit_light(pv) holds: pmu_light_after_exit() when
 * the run counts (run_counts), pmu_light_before_entry() at guest CPL cpl when a counter is
 * active (pv is v's state, looked up once).
 */
void pmu_light_after_exit(struct pmu_vcpu *pv);
void pmu_light_before_entry(struct vcpu *v, struct pmu_vcpu *pv, unsigned cpl);
void pmu_switch_in(struct vcpu *v);
void pmu_switch_out(struct vcpu *v);
/* One guest instruction retired at cpl: stepped (insn classified) or emulated (insn NULL). */
void pmu_retired(struct vcpu *v, const struct soft_insn *insn, unsigned cpl);
/* A block of n guest instructions retired at cpl, `branches` of them branches. */
void pmu_retired_block(struct vcpu *v, uint64_t n, uint64_t branches, unsigned cpl);
/* Guest instructions that may retire at cpl before the stepper must see one (0: each one). */
uint64_t pmu_step_room(struct vcpu *v, unsigned cpl);
/* Guest branches that may retire at cpl before the stepper must see one (a whole loop's turns). */
uint64_t pmu_step_branch_room(struct vcpu *v, unsigned cpl);
/*
 * The VCPU's paravirtual page shows soft a-mode counts that every guest instruction moves, and
 * guests read it without an exit: the stepper runs a block only while the page is unreadable.
 */
static inline bool pmu_pv_guard(const struct pmu_vcpu *pv)
{
	return pv->pv_guard;
}
/*
 * The stepper may count blocks itself and tell the PMU their sum at its next ordinary exit
 * (hv/step_fast.c), short of every overflow: nothing that the guest can see without an exit
 * moves with them (no soft count in a paravirtual page), the exit hooks have no cycles to count
 * and guest accounting charges the hypervisor's time to no counter.
 */
static inline bool pmu_step_batch(const struct pmu_vcpu *pv)
{
	return pmu_backend == PMU_BACKEND_SOFT && pv->step_batch;
}
/* The paravirtual PMU's hypercalls (HC_PMU_*). */
static inline int64_t pmu_hypercall(struct vcpu *v, uint64_t nr, const uint64_t args[3])
{
	return pv_hypercall(v, nr, args);
}
/* HC_PMU_RESUME with the control at ctl_la: pmu_hypercall() of it, with no dispatch. */
static inline int64_t pmu_resume(struct vcpu *v, uint64_t ctl_la)
{
	return pv_resume(v, ctl_la);
}
/*
 * Hypercall nr only reads guest memory and changes the calling VCPU's own PMU state: not SETUP
 * (EPT changes, every VCPU's PCPU waited for) nor ISUSPEND (writes guest memory).
 */
static inline bool pmu_hypercall_fast(uint64_t nr)
{
	return nr == HC_PMU_RESUME || nr == HC_PMU_IRESUME || nr == HC_PMU_READ ||
	       nr == HC_PMU_IACK;
}
/* The backend's live counter values into the vPMU (before PV reads or changes them). */
void pmu_sync(struct vcpu *v);
/* The counters' programming changed (a vPMU MSR write or a PV resume/suspend). */
void pmu_reprogrammed(struct vcpu *v);
/* A host PMI arrived while v ran (arch backend): fold the overflow into v's vPMU. */
void pmu_host_pmi(struct vcpu *v);
/* Per-PCPU set-up of the physical PMU (host LVTPC), on every PCPU before it runs guests. */
void pmu_cpu_init(void);

#endif
