/* Turns VMX on per PCPU, owns the shared MSR bitmap, enters guests, and explains failed VM entries in words. */
#include "lib/cpu.h"
#include "lib/frame.h"
#include "lib/printk.h"
#include "hv/exit_cr.h"
#include "hv/pcpu.h"
#include "hv/spec.h"
#include "hv/vcpu.h"
#include "hv/vmx.h"
#include "hv/vmx_caps.h"
#include "hv/vmx_msr_bitmap.h"
#include "hv/vmx_ops.h"

uint64_t vmx_msr_bitmap_pa;

int vmx_run(struct vcpu *v, int launched);

bool vmx_enable_cpu(void)
{
	struct pcpu *p = this_pcpu();
	uint64_t pa = frame_alloc();

	if (!pa) {
		printk("perfvisor: cpu %u: no memory for the VMXON region\n", p->index);
		return false;
	}
	/*
	 * SDM Vol. 3C 24.8: CR0 and CR4 must satisfy the fixed bits, including CR4.VMXE and CR0.NE.
	 * CR4.MCE (where CPUID.1:EDX.MCE): a machine check is an exception, not a shutdown
	 * (SDM Vol. 3B 15.1); guests run with it set too (hv/exit_cr.c).
	 */
	write_cr0((read_cr0() | vmx_caps.cr0_fixed0) & vmx_caps.cr0_fixed1);
	write_cr4((read_cr4() | vmx_caps.cr4_fixed0 | CR4_VMXE |
		   ((cpuid(1, 0).edx & (1u << 7)) ? CR4_MCE : 0)) & vmx_caps.cr4_fixed1);
	*(uint32_t *)pa = vmx_caps.basic & 0x7FFFFFFF;
	if (!vmxon(pa)) {
		printk("perfvisor: cpu %u: VMXON failed (CR0 0x%lx CR4 0x%lx)\n", p->index,
		       read_cr0(), read_cr4());
		return false;
	}
	p->vmxon_pa = pa;
	return true;
}

bool vmx_init_global(void)
{
	/* Without it a guest that never exits keeps its PCPU for ever: slices would not end. */
	if (!vmx_caps.preemption_timer) {
		printk("perfvisor: this CPU's VT-x has no VMX preemption timer, which perfvisor "
		       "needs to end scheduling slices; not starting\n");
		return false;
	}
	spec_init();
	cr4_guest_bits = cr4_offered(cpuid(1, 0).ecx, cpuid(0, 0).eax >= 7 ? cpuid(7, 0).ebx : 0,
				     vmx_caps.cr4_fixed1);
	vmx_msr_bitmap_pa = frame_alloc();
	if (!vmx_msr_bitmap_pa)
		return false;
	/* The MSR_PASS rows of hv/msr_table.c, and IA32_TSC reads: nothing else. */
	if (!vmx_msr_bitmap_fill((uint8_t *)vmx_msr_bitmap_pa)) {
		printk("perfvisor: an MSR_PASS row of the MSR table is outside the MSR bitmap\n");
		return false;
	}
	return true;
}

void vmx_host_segs(struct vmx_host_segs *h)
{
	struct desc_ptr gdtr, idtr;
	const uint64_t *tss_desc;

	__asm__ volatile("sgdt %0\n\tsidt %1" : "=m"(gdtr), "=m"(idtr));
	__asm__ volatile("mov %%cs, %0\n\tmov %%ds, %1\n\tstr %2"
			 : "=r"(h->cs), "=r"(h->ds), "=r"(h->tr));
	h->gdt_base = gdtr.base;
	h->idt_base = idtr.base;
	/* SDM Vol. 3A 7.2.3: the 16-byte TSS descriptor scatters base bits 0-23, 24-31, 32-63. */
	tss_desc = (const uint64_t *)(gdtr.base + (h->tr & ~7u));
	h->tr_base = ((tss_desc[0] >> 16) & 0xFFFFFF) | (((tss_desc[0] >> 56) & 0xFF) << 24) |
		     (tss_desc[1] << 32);
}

bool vmx_enter(struct vcpu *v)
{
	if (vmx_run(v, v->launched)) {
		vmx_explain_entry_failure(v, true, 0);
		return false;
	}
	v->launched = true;
	return true;
}

/* SDM Vol. 3C 31.4: VM-instruction error numbers that a VM entry can give. */
static const char *insn_error_text(uint32_t n)
{
	switch (n) {
	case 4: return "VMLAUNCH with a non-clear VMCS";
	case 5: return "VMRESUME with a non-launched VMCS";
	case 7: return "invalid control field(s)";
	case 8: return "invalid host-state field(s)";
	case 26: return "events blocked by MOV SS";
	default: return "see SDM Vol. 3C 31.4";
	}
}

struct ctl_check {
	const char *name;
	enum vmcs_field field;
	const uint64_t *cap;
};

/* Prints every control bit that is set but not allowed, or clear but required. */
static void check_controls(void)
{
	const struct ctl_check checks[] = {
		{ "pin-based controls", VMCS_PIN_CTLS, &vmx_caps.pinbased },
		{ "processor-based controls", VMCS_CPU_CTLS, &vmx_caps.procbased },
		{ "secondary controls", VMCS_CPU2_CTLS, &vmx_caps.procbased2 },
		{ "VM-exit controls", VMCS_EXIT_CTLS, &vmx_caps.exit },
		{ "VM-entry controls", VMCS_ENTRY_CTLS, &vmx_caps.entry },
	};

	for (unsigned i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		uint32_t val = vmread(checks[i].field);
		uint32_t must1 = (uint32_t)*checks[i].cap, may1 = *checks[i].cap >> 32;

		if (val & ~may1)
			printk("  %s (field 0x%x) = 0x%x: bits 0x%x are not allowed\n",
			       checks[i].name, checks[i].field, val, val & ~may1);
		if (~val & must1)
			printk("  %s (field 0x%x) = 0x%x: bits 0x%x must be 1\n", checks[i].name,
			       checks[i].field, val, ~val & must1);
	}
}

/* Checks a CR value against the VMX fixed bits (SDM Vol. 3C 26.2.2, 26.3.1.1). */
static void check_cr(const char *name, uint64_t val, uint64_t fixed0, uint64_t fixed1)
{
	if (~val & fixed0)
		printk("  %s = 0x%lx: bits 0x%lx must be 1\n", name, val, ~val & fixed0);
	if (val & ~fixed1)
		printk("  %s = 0x%lx: bits 0x%lx must be 0\n", name, val, val & ~fixed1);
}

static void check_guest_state(void)
{
	uint64_t cr0_fixed0 = vmx_caps.cr0_fixed0;
	uint64_t efer = vmread(VMCS_GUEST_EFER);
	bool ia32e = vmread(VMCS_ENTRY_CTLS) & ENTRY_IA32E_MODE;
	uint32_t cs_ar = vmread(VMCS_GUEST_CS_AR), tr_ar = vmread(VMCS_GUEST_TR_AR);

	if (vmx_caps.unrestricted)
		cr0_fixed0 &= ~0x80000001ull;
	check_cr("guest CR0 (field 0x6800)", vmread(VMCS_GUEST_CR0), cr0_fixed0,
		 vmx_caps.cr0_fixed1);
	check_cr("guest CR4 (field 0x6804)", vmread(VMCS_GUEST_CR4), vmx_caps.cr4_fixed0,
		 vmx_caps.cr4_fixed1);
	if (!!(efer & EFER_LMA) != ia32e)
		printk("  guest EFER (field 0x2806) = 0x%lx: LMA must equal the IA-32e mode "
		       "entry control (%d)\n", efer, ia32e);
	if (ia32e && (cs_ar & (1u << 13)) && (cs_ar & (1u << 14)))
		printk("  guest CS access rights = 0x%x: L and D/B both set\n", cs_ar);
	if ((tr_ar & 0x10000) || ((tr_ar & 0xF) != 11 && (ia32e || (tr_ar & 0xF) != 3)))
		printk("  guest TR access rights = 0x%x: must be a usable busy TSS\n", tr_ar);
	if (vmread(VMCS_LINK_POINTER) != ~0ull)
		printk("  VMCS link pointer = 0x%lx: must be all ones\n", vmread(VMCS_LINK_POINTER));
	if (!(vmread(VMCS_GUEST_RFLAGS) & 2))
		printk("  guest RFLAGS = 0x%lx: bit 1 must be 1\n", vmread(VMCS_GUEST_RFLAGS));
}

void vmx_explain_entry_failure(struct vcpu *v, bool insn_error, uint32_t reason)
{
	(void)v;
	if (insn_error) {
		uint32_t n = vmread(VMCS_INSN_ERROR);

		printk("perfvisor: VM entry failed: VM-instruction error %u (%s)\n", n,
		       insn_error_text(n));
		if (n == 7)
			check_controls();
		if (n == 8) {
			check_cr("host CR0", read_cr0(), vmx_caps.cr0_fixed0, vmx_caps.cr0_fixed1);
			check_cr("host CR4", read_cr4(), vmx_caps.cr4_fixed0, vmx_caps.cr4_fixed1);
		}
		return;
	}
	printk("perfvisor: VM entry failed: exit reason %u (%s), qualification %lu\n",
	       reason & 0xFFFF,
	       (reason & 0xFFFF) == EXIT_REASON_ENTRY_BAD_GUEST ? "invalid guest state" :
	       (reason & 0xFFFF) == EXIT_REASON_ENTRY_BAD_MSR ? "MSR loading" : "machine check",
	       vmread(VMCS_EXIT_QUALIFICATION));
	check_guest_state();
}
