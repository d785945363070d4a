/* The exit dispatch table (indexed by basic exit reason), exit accounting, and re-injection of interrupted events. */
#include "lib/cpu.h"
#include "lib/printk.h"
#include "hv/domain.h"
#include "hv/step.h"
#include "hv/vcpu.h"
#include "hv/vmexit.h"
#include "hv/vmx.h"
#include "hv/vmx_ops.h"

typedef void (*exit_handler_t)(struct vcpu *v, uint64_t qual);

static const exit_handler_t exit_table[EXIT_REASON_MAX] = {
	[EXIT_REASON_EXCEPTION_NMI]	= exit_exception,
	[EXIT_REASON_EXTERNAL_INTR]	= exit_external_intr,
	[EXIT_REASON_TRIPLE_FAULT]	= exit_triple_fault,
	[EXIT_REASON_INTR_WINDOW]	= exit_intr_window,
	[EXIT_REASON_NMI_WINDOW]	= exit_nmi_window,
	[EXIT_REASON_CPUID]		= exit_cpuid,
	[EXIT_REASON_GETSEC]		= exit_inject_ud,
	[EXIT_REASON_HLT]		= exit_hlt,
	[EXIT_REASON_INVD]		= exit_skip,
	[EXIT_REASON_RDPMC]		= exit_rdpmc,
	[EXIT_REASON_VMCALL]		= exit_vmcall,
	/* Guests get no VMX of their own (CPUID hides it): the instructions are #UD. */
	[EXIT_REASON_VMCLEAR]		= exit_inject_ud,
	[EXIT_REASON_VMLAUNCH]		= exit_inject_ud,
	[EXIT_REASON_VMPTRLD]		= exit_inject_ud,
	[EXIT_REASON_VMPTRST]		= exit_inject_ud,
	[EXIT_REASON_VMREAD]		= exit_inject_ud,
	[EXIT_REASON_VMRESUME]		= exit_inject_ud,
	[EXIT_REASON_VMWRITE]		= exit_inject_ud,
	[EXIT_REASON_VMXOFF]		= exit_inject_ud,
	[EXIT_REASON_VMXON]		= exit_inject_ud,
	[EXIT_REASON_INVEPT]		= exit_inject_ud,
	[EXIT_REASON_INVVPID]		= exit_inject_ud,
	[EXIT_REASON_VMFUNC]		= exit_inject_ud,
	[EXIT_REASON_CR_ACCESS]		= exit_cr_access,
	[EXIT_REASON_IO]		= exit_io,
	[EXIT_REASON_RDMSR]		= exit_rdmsr,
	[EXIT_REASON_WRMSR]		= exit_wrmsr,
	/* MONITOR/MWAIT are hidden in CPUID (SDM Vol. 2B: #UD when not supported). */
	[EXIT_REASON_MWAIT]		= exit_inject_ud,
	[EXIT_REASON_MONITOR]		= exit_inject_ud,
	[EXIT_REASON_EPT_VIOLATION]	= exit_ept_violation,
	[EXIT_REASON_PREEMPTION_TIMER]	= exit_preemption_timer,
	[EXIT_REASON_WBINVD]		= exit_skip,
	/* XSAVE is hidden in CPUID, so XSETBV is #UD as on a CPU without it. */
	[EXIT_REASON_XSETBV]		= exit_inject_ud,
};

static const char *const reason_names[EXIT_REASON_MAX] = {
	[EXIT_REASON_EXCEPTION_NMI] = "exception", [EXIT_REASON_EXTERNAL_INTR] = "interrupt",
	[EXIT_REASON_TRIPLE_FAULT] = "triple-fault", [EXIT_REASON_INIT] = "INIT",
	[EXIT_REASON_SIPI] = "SIPI", [EXIT_REASON_INTR_WINDOW] = "intr-window",
	[EXIT_REASON_NMI_WINDOW] = "nmi-window",
	[EXIT_REASON_TASK_SWITCH] = "task-switch", [EXIT_REASON_CPUID] = "cpuid",
	[EXIT_REASON_HLT] = "hlt", [EXIT_REASON_INVD] = "invd", [EXIT_REASON_INVLPG] = "invlpg",
	[EXIT_REASON_RDPMC] = "rdpmc", [EXIT_REASON_RDTSC] = "rdtsc",
	[EXIT_REASON_VMCALL] = "vmcall", [EXIT_REASON_CR_ACCESS] = "cr-access",
	[EXIT_REASON_DR_ACCESS] = "dr-access", [EXIT_REASON_IO] = "io",
	[EXIT_REASON_RDMSR] = "rdmsr", [EXIT_REASON_WRMSR] = "wrmsr",
	[EXIT_REASON_ENTRY_BAD_GUEST] = "entry-bad-guest", [EXIT_REASON_MTF] = "mtf",
	[EXIT_REASON_EPT_VIOLATION] = "ept-violation",
	[EXIT_REASON_EPT_MISCONFIG] = "ept-misconfig",
	[EXIT_REASON_PREEMPTION_TIMER] = "preemption-timer", [EXIT_REASON_XSETBV] = "xsetbv",
};

const char *exit_reason_name(uint32_t reason)
{
	const char *n = reason < EXIT_REASON_MAX ? reason_names[reason] : (const char *)0;

	return n ? n : "other";
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

void vmexit_handle(struct vcpu *v)
{
	uint32_t reason = vmread(VMCS_EXIT_REASON);
	uint32_t basic = reason & 0xFFFF;
	uint64_t qual = vmread(VMCS_EXIT_QUALIFICATION);
	struct exit_record *r = &v->ring[v->ring_pos++ % EXIT_RING_LEN];
	exit_handler_t h;

	r->reason = reason;
	r->rip = vmread(VMCS_GUEST_RIP);
	r->qualification = qual;
	r->tsc = rdtsc();
	v->total_exits++;
	if (basic < EXIT_REASON_MAX)
		v->exits[basic]++;
	if (reason & EXIT_REASON_ENTRY_FAILED) {
		vmx_explain_entry_failure(v, false, reason);
		dom_kill(v->dom, v, "VM entry failed (exit reason %u)", basic);
		return;
	}
	step_on_exit(v);
	reinject_vectoring_event();
	h = basic < EXIT_REASON_MAX ? exit_table[basic] : (exit_handler_t)0;
	if (!h) {
		dom_kill(v->dom, v, "unexpected VM exit %u (%s) qualification 0x%lx", basic,
			 exit_reason_name(basic), qual);
		return;
	}
	h(v, qual);
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
