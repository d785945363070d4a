/* The exit table ({handler, name} per basic exit reason), exit accounting, and re-injection of interrupted events. */
#include <stddef.h>

#include "lib/cpu.h"
#include "lib/printk.h"
#include "hv/domain.h"
#include "hv/step.h"
#include "hv/vcpu.h"
#include "hv/vmexit.h"
#include "hv/vmx.h"
#include "hv/vmx_ops.h"

typedef void (*exit_handler_t)(struct vcpu *v, uint64_t qual);

/* One row per basic exit reason: its handler (none: unexpected) and its name in dumps. */
struct exit_entry {
	exit_handler_t handler;
	const char *name;
};

/* Reasons without a row, or whose row has no handler, get the default: exit_unexpected. */
static const struct exit_entry exit_table[EXIT_REASON_MAX] = {
	[EXIT_REASON_EXCEPTION_NMI]	= { exit_exception, "exception" },
	[EXIT_REASON_EXTERNAL_INTR]	= { exit_external_intr, "interrupt" },
	[EXIT_REASON_TRIPLE_FAULT]	= { exit_triple_fault, "triple-fault" },
	[EXIT_REASON_INIT]		= { NULL, "INIT" },
	[EXIT_REASON_SIPI]		= { NULL, "SIPI" },
	[EXIT_REASON_INTR_WINDOW]	= { exit_intr_window, "intr-window" },
	[EXIT_REASON_NMI_WINDOW]	= { exit_nmi_window, "nmi-window" },
	[EXIT_REASON_TASK_SWITCH]	= { NULL, "task-switch" },
	[EXIT_REASON_CPUID]		= { exit_cpuid, "cpuid" },
	[EXIT_REASON_GETSEC]		= { exit_inject_ud, NULL },
	[EXIT_REASON_HLT]		= { exit_hlt, "hlt" },
	[EXIT_REASON_INVD]		= { exit_skip, "invd" },
	[EXIT_REASON_INVLPG]		= { NULL, "invlpg" },
	[EXIT_REASON_RDPMC]		= { exit_rdpmc, "rdpmc" },
	[EXIT_REASON_RDTSC]		= { NULL, "rdtsc" },
	[EXIT_REASON_VMCALL]		= { exit_vmcall, "vmcall" },
	/* Guests get no VMX of their own (CPUID hides it): the instructions are #UD. */
	[EXIT_REASON_VMCLEAR]		= { exit_inject_ud, NULL },
	[EXIT_REASON_VMLAUNCH]		= { exit_inject_ud, NULL },
	[EXIT_REASON_VMPTRLD]		= { exit_inject_ud, NULL },
	[EXIT_REASON_VMPTRST]		= { exit_inject_ud, NULL },
	[EXIT_REASON_VMREAD]		= { exit_inject_ud, NULL },
	[EXIT_REASON_VMRESUME]		= { exit_inject_ud, NULL },
	[EXIT_REASON_VMWRITE]		= { exit_inject_ud, NULL },
	[EXIT_REASON_VMXOFF]		= { exit_inject_ud, NULL },
	[EXIT_REASON_VMXON]		= { exit_inject_ud, NULL },
	[EXIT_REASON_INVEPT]		= { exit_inject_ud, NULL },
	[EXIT_REASON_INVVPID]		= { exit_inject_ud, NULL },
	[EXIT_REASON_VMFUNC]		= { exit_inject_ud, NULL },
	[EXIT_REASON_CR_ACCESS]		= { exit_cr_access, "cr-access" },
	[EXIT_REASON_DR_ACCESS]		= { exit_dr_access, "dr-access" },
	[EXIT_REASON_IO]		= { exit_io, "io" },
	[EXIT_REASON_RDMSR]		= { exit_rdmsr, "rdmsr" },
	[EXIT_REASON_WRMSR]		= { exit_wrmsr, "wrmsr" },
	[EXIT_REASON_ENTRY_BAD_GUEST]	= { NULL, "entry-bad-guest" },
	/* MONITOR/MWAIT are hidden in CPUID (SDM Vol. 2B: #UD when not supported). */
	[EXIT_REASON_MWAIT]		= { exit_inject_ud, NULL },
	[EXIT_REASON_MTF]		= { NULL, "mtf" },
	[EXIT_REASON_MONITOR]		= { exit_inject_ud, NULL },
	[EXIT_REASON_EPT_VIOLATION]	= { exit_ept_violation, "ept-violation" },
	[EXIT_REASON_EPT_MISCONFIG]	= { NULL, "ept-misconfig" },
	[EXIT_REASON_PREEMPTION_TIMER]	= { exit_preemption_timer, "preemption-timer" },
	[EXIT_REASON_WBINVD]		= { exit_skip, NULL },
	/* XSAVE is hidden in CPUID, so XSETBV is #UD as on a CPU without it. */
	[EXIT_REASON_XSETBV]		= { exit_inject_ud, "xsetbv" },
};

const char *exit_reason_name(uint32_t reason)
{
	const char *n = reason < EXIT_REASON_MAX ? exit_table[reason].name : NULL;

	return n ? n : "other";
}

/* The default row: an exit the VMCS set-up never asks for ends the domain, not the run. */
static void exit_unexpected(struct vcpu *v, uint64_t qual)
{
	uint32_t basic = v->exit_reason & 0xFFFF;

	dom_kill(v->dom, v, "unexpected VM exit %u (%s) qualification 0x%lx", basic,
		 exit_reason_name(basic), qual);
}

/*
 * An exit during event delivery (e.g. an EPT violation while pushing an interrupt frame)
 * loses the event unless it is injected again (SDM Vol. 3C 28.2.4, 27.2.3).
 */
static void reinject_vectoring_event(void)
{
	uint32_t info = vmread(VMCS_IDT_VECTORING_INFO);

	if (!(info & INTR_INFO_VALID))
		return;
	if (info & INTR_INFO_DELIVER_ERROR)
		vmwrite(VMCS_ENTRY_EXC_ERROR, vmread(VMCS_IDT_VECTORING_ERROR));
	vmwrite(VMCS_ENTRY_INSN_LEN, vmread(VMCS_EXIT_INSN_LEN));
	vmwrite(VMCS_ENTRY_INTR_INFO, info & ~(1u << 12));
}

/*
 * Nothing but the exit itself needs the hypervisor: no stepping, no counter beyond paravirtual
 * a-mode ones whose exit hooks the fast path runs itself (pmu_exit_light()), the VCPU stays on
 * its PCPU, and the VMX-preemption timer keeps counting down across the exit (its value is saved
 * at exit, SDM Vol. 3C 25.7.1, 28.3.4), so slice ends and virtual timer deadlines still come on
 * time.
 */
static inline bool fast_path_quiet(const struct vcpu *v)
{
	return !v->step.want && !v->step.active && !v->resched && v->state == VCPU_RUNNABLE &&
	       v->dom->state == DOM_RUNNING && pmu_exit_light(&v->pmu) &&
	       (vmread(VMCS_EXIT_CTLS) & EXIT_SAVE_PREEMPTION_TIMER);
}

/* The exits the fast path may answer, before it looks at the VCPU. */
static inline bool fast_candidate(const struct vcpu *v, uint32_t basic)
{
	if (basic == EXIT_REASON_VMCALL || basic == EXIT_REASON_CPUID)
		return true;
	/* Only the vPMU's MSRs: others move the TSC or the APIC, which the entry path reads. */
	return (basic == EXIT_REASON_RDMSR || basic == EXIT_REASON_WRMSR) &&
	       pmu_owns_msr((uint32_t)v->gpr[GPR_RCX]);
}

/*
 * After a fast handler with a counter live: one that started stepping or a vPMU counter needs
 * the entry path's PMU work; else the PMU's entry hook runs here.
 */
static __attribute__((noinline)) bool fast_pmu_entry(struct vcpu *v)
{
	if (v->step.want || !pmu_exit_light(&v->pmu)) {
		v->exit_done = true;
		return false;
	}
	pmu_light_before_entry(v, &v->pmu, vcpu_cpl());
	return true;
}

bool vmexit_fast(struct vcpu *v)
{
	uint32_t reason = (uint32_t)vmread(VMCS_EXIT_REASON);
	uint32_t basic = reason & 0xFFFF;

	v->exit_reason = reason;
	v->total_exits++;
	if (basic < EXIT_REASON_MAX)
		v->exits[basic]++;
	/* While the soft PMU runs blocks, most exits are their breakpoints (hv/step_fast.c). */
	if (!fast_candidate(v, basic))
		return basic == EXIT_REASON_EXCEPTION_NMI && v->step.fast.on && step_fast_block(v);
	if (!fast_path_quiet(v))
		return false;
	/* The guest's run ends here, before a handler changes what counts (once: see run_slice). */
	if (__builtin_expect(v->pmu.run_counts, 0))
		pmu_light_after_exit(&v->pmu);
	if (basic == EXIT_REASON_VMCALL) {
		if (!exit_vmcall_fast(v))
			return false;
	} else {
		exit_table[basic].handler(v, 0);
	}
	/*
	 * Nothing counts (the common case): straight back. Only the soft backend or none gets here
	 * (pmu_exit_light()), and the soft one steps only for an active counter.
	 */
	if (__builtin_expect(!v->pmu.active, 1))
		return true;
	return fast_pmu_entry(v);
}

void vmexit_handle(struct vcpu *v)
{
	uint32_t reason = v->exit_reason;
	uint32_t basic = reason & 0xFFFF;
	uint64_t qual = vmread(VMCS_EXIT_QUALIFICATION);
	struct exit_record *r = &v->ring[v->ring_pos++ % EXIT_RING_LEN];
	exit_handler_t h = NULL;

	r->reason = reason;
	r->rip = vmread(VMCS_GUEST_RIP);
	r->qualification = qual;
	r->tsc = rdtsc();
	if (v->exit_done) {
		v->exit_done = false;
		return;
	}
	if (reason & EXIT_REASON_ENTRY_FAILED) {
		vmx_explain_entry_failure(v, false, reason);
		dom_kill(v->dom, v, "VM entry failed (exit reason %u)", basic);
		return;
	}
	step_on_exit(v);
	reinject_vectoring_event();
	if (basic < EXIT_REASON_MAX)
		h = exit_table[basic].handler;
	(h ? h : exit_unexpected)(v, qual);
}

void vcpu_dump(struct vcpu *v, const char *why)
{
	static const char *const names[16] = {
		"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	};

	v->gpr[GPR_RSP] = vmread(VMCS_GUEST_RSP);
	printk("[%s] vcpu %u: %s\n", v->dom->cfg.name, v->id, why);
	printk("  rip %016lx rflags %08lx cr0 %08lx cr3 %016lx cr4 %08lx efer %lx cpl %u\n",
	       vmread(VMCS_GUEST_RIP), vmread(VMCS_GUEST_RFLAGS), vcpu_guest_cr0(),
	       vmread(VMCS_GUEST_CR3), vcpu_guest_cr4(), vmread(VMCS_GUEST_EFER),
	       vcpu_cpl());
	for (unsigned i = 0; i < 16; i += 4)
		printk("  %-3s %016lx %-3s %016lx %-3s %016lx %-3s %016lx\n", names[i], v->gpr[i],
		       names[i + 1], v->gpr[i + 1], names[i + 2], v->gpr[i + 2], names[i + 3],
		       v->gpr[i + 3]);
	printk("  last exits (oldest first):\n");
	for (unsigned i = 0; i < EXIT_RING_LEN; i++) {
		struct exit_record *r = &v->ring[(v->ring_pos + i) % EXIT_RING_LEN];

		if (!r->tsc)	/* never filled */
			continue;
		printk("    %-16s rip %016lx qual %016lx tsc %lu\n",
		       exit_reason_name(r->reason & 0xFFFF), r->rip, r->qualification, r->tsc);
	}
}
