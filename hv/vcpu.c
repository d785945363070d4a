/* Builds and loads VMCSs: controls derived from the capability MSRs, host state per PCPU, guest start states. */
#include "lib/cpu.h"
#include "lib/frame.h"
#include "lib/printk.h"
#include "lib/string.h"
#include "hv/domain.h"
#include "hv/exit_cr.h"
#include "hv/guest_regs.h"
#include "hv/pcpu.h"
#include "hv/vcpu.h"
#include "hv/vmx.h"
#include "hv/vmx_caps.h"
#include "hv/vmx_ops.h"
#include "include/x86/rflags.h"
#include "include/x86/trap.h"

#define PENDING_DBG_BS	(1ull << 14)	/* single step, SDM Vol. 3C 25.4.2 table 25-4 */
/* Fault-class exceptions (SDM Vol. 3A Table 6-1): #DE #BR #UD #NM #TS #NP #SS #GP #PF #MF #AC
 * #XM #VE #CP; #DB is left out (an injected #DB here is a trap). */
#define FAULT_VECTORS	(1u << 0 | 1u << 5 | 1u << 6 | 1u << 7 | 1u << 10 | 1u << 11 | \
			 1u << 12 | 1u << 13 | 1u << 14 | 1u << 16 | 1u << 17 | 1u << 19 | \
			 1u << 20 | 1u << 21)

/* VMX access rights (SDM Vol. 3C 25.4.1, table 25-2). */
#define AR_CODE64	0xA09B
#define AR_CODE32	0xC09B
#define AR_DATA32	0xC093
#define AR_CODE16	0x009B
#define AR_DATA16	0x0093
#define AR_TSS_BUSY	0x008B
#define AR_UNUSABLE	0x10000

extern const char vmx_exit_entry[];

static uint16_t next_vpid = 1;

/* Only the bits the CPU really lets us set, plus those it insists on (SDM Vol. 3D A.3-A.5). */
static uint32_t ctl(uint64_t cap, uint32_t want)
{
	return (want | (uint32_t)cap) & (uint32_t)(cap >> 32);
}

static void write_segment(enum vmcs_field sel, uint16_t selector, uint64_t base, uint32_t limit,
			  uint32_t ar)
{
	/* Selector, limit, AR and base fields of one segment are at fixed strides. */
	unsigned idx = (sel - VMCS_GUEST_ES_SEL) / 2;

	vmwrite(sel, selector);
	vmwrite(VMCS_GUEST_ES_LIMIT + idx * 2, limit);
	vmwrite(VMCS_GUEST_ES_AR + idx * 2, ar);
	vmwrite(VMCS_GUEST_ES_BASE + idx * 2, base);
}

static void write_controls(struct vcpu *v)
{
	struct vmx_caps *c = &vmx_caps;
	/* WBINVD flushes every domain's cached data: it exits and is a no-op (hv/vmexit.c). */
	uint32_t cpu2 = CPU2_ENABLE_EPT | CPU2_UNRESTRICTED_GUEST | CPU2_ENABLE_VPID |
			CPU2_WBINVD_EXITING;

	/* External interrupts and NMIs belong to the host; the timer ends slices; virtual NMIs
	 * give the guest's NMIs blocking until IRET and NMI-window exits (hv/irq.c). */
	vmwrite(VMCS_PIN_CTLS, ctl(c->pinbased, PIN_EXTINT_EXITING | PIN_NMI_EXITING |
				   PIN_VIRTUAL_NMIS | PIN_PREEMPTION_TIMER));
	/*
	 * Every port traps (the device model is all emulated); CR3 accesses need no exit with EPT.
	 * MOV CR8 exits: the TPR is the virtual APIC's (SDM Vol. 3C 25.6.2), not the PCPU's.
	 */
	vmwrite(VMCS_CPU_CTLS, ctl(c->procbased, CPU_HLT_EXITING | CPU_UNCOND_IO_EXITING |
				   CPU_USE_MSR_BITMAPS | CPU_RDPMC_EXITING | CPU_TSC_OFFSETTING |
				   CPU_MOV_DR_EXITING |
				   CPU_MWAIT_EXITING | CPU_MONITOR_EXITING | CPU_SECONDARY_CTLS |
				   CPU_CR8_LOAD_EXITING | CPU_CR8_STORE_EXITING));
	if (cpuid(0x80000001, 0).edx & (1u << 27))
		cpu2 |= CPU2_ENABLE_RDTSCP;
	vmwrite(VMCS_CPU2_CTLS, ctl(c->procbased2, cpu2));
	/* DR7 and DEBUGCTL are guest state; DR0-DR3/DR6 are per VCPU by MOV DR exits (exit_dr.c). */
	vmwrite(VMCS_EXIT_CTLS, ctl(c->exit, EXIT_HOST_ADDR_SPACE_SIZE | EXIT_ACK_INTR_ON_EXIT |
				    EXIT_SAVE_EFER | EXIT_LOAD_EFER | EXIT_SAVE_PAT | EXIT_LOAD_PAT |
				    EXIT_SAVE_DEBUG | EXIT_SAVE_PREEMPTION_TIMER));
	vmwrite(VMCS_ENTRY_CTLS, ctl(c->entry, ENTRY_LOAD_EFER | ENTRY_LOAD_PAT | ENTRY_LOAD_DEBUG));
	/* A machine check while a guest runs is the host's (SDM Vol. 3C 26.2, 27.1). */
	vmwrite(VMCS_EXCEPTION_BITMAP, 1u << EXC_MC);
	vmwrite(VMCS_PF_ERR_MASK, 0);
	vmwrite(VMCS_PF_ERR_MATCH, 0);
	vmwrite(VMCS_CR3_TARGET_COUNT, 0);
	vmwrite(VMCS_MSR_BITMAP, vmx_msr_bitmap_pa);
	vmwrite(VMCS_EXIT_MSR_STORE_COUNT, 0);
	vmwrite(VMCS_EXIT_MSR_LOAD_COUNT, 0);
	vmwrite(VMCS_ENTRY_MSR_LOAD_COUNT, 0);
	vmwrite(VMCS_ENTRY_INTR_INFO, 0);
	vmwrite(VMCS_EPT_POINTER, v->dom->eptp);
	if (c->vpid)
		vmwrite(VMCS_VPID, next_vpid++);
	vmwrite(VMCS_LINK_POINTER, ~0ull);
	vmwrite(VMCS_TSC_OFFSET, 0);
	/*
	 * Host-owned bits exit when written and read from the shadow (SDM Vol. 3C 25.6.6): those
	 * of hv/exit_cr.h for CR0, every CR4 bit of a feature guests are not offered.
	 */
	vmwrite(VMCS_CR0_MASK, guest_regs_cr0_mask());
	vmwrite(VMCS_CR4_MASK, guest_regs_cr4_mask());
}

int vcpu_init(struct vcpu *v, struct domain *d, unsigned id)
{
	uint64_t pa = frame_alloc();

	if (!pa)
		return -1;
	*(uint32_t *)pa = vmx_caps.basic & 0x7FFFFFFF;	/* VMCS revision (SDM Vol. 3C 25.2) */
	v->vmcs_pa = pa;
	v->dom = d;
	v->id = id;
	v->state = id ? VCPU_WAIT_SIPI : VCPU_RUNNABLE;
	vapic_init(&v->apic, id);
	v->apic.no_x2apic = !d->cfg.x2apic;
	pmu_vcpu_init(&v->pmu, &d->pmu, id);
	/* The x87/SSE power-on state (SDM Vol. 1 table 8-1 and 10.2.3): FCW 0x37F, MXCSR 0x1F80. */
	*(uint16_t *)&v->fpu[0] = 0x37F;
	*(uint32_t *)&v->fpu[24] = 0x1F80;
	if (!vmclear(pa) || !vmptrld(pa))
		return -1;
	this_pcpu()->loaded = v;
	write_controls(v);
	vmwrite(VMCS_GUEST_DEBUGCTL, 0);
	vmwrite(VMCS_GUEST_DR7, 0x400);
	vmwrite(VMCS_GUEST_PAT, 0x0007040600070406ull);	/* the power-on PAT */
	vmwrite(VMCS_GUEST_SYSENTER_CS, 0);
	vmwrite(VMCS_GUEST_SYSENTER_ESP, 0);
	vmwrite(VMCS_GUEST_SYSENTER_EIP, 0);
	vmwrite(VMCS_GUEST_INTERRUPTIBILITY, 0);
	vmwrite(VMCS_GUEST_ACTIVITY_STATE, ACTIVITY_ACTIVE);
	vmwrite(VMCS_GUEST_PENDING_DBG, 0);
	vmwrite(VMCS_GUEST_RFLAGS, 0x2);
	write_segment(VMCS_GUEST_LDTR_SEL, 0, 0, 0, AR_UNUSABLE);
	write_segment(VMCS_GUEST_TR_SEL, 0, 0, 0x67, AR_TSS_BUSY);
	return 0;
}

/* Guest CR0/CR4 with the bits VMX insists on (SDM Vol. 3D A.7-A.8), and what the guest reads. */
static void write_crs(uint64_t cr0, uint64_t cr3, uint64_t cr4)
{
	vmwrite(VMCS_GUEST_CR0, cr0_real(cr0));
	vmwrite(VMCS_CR0_SHADOW, cr0);
	vmwrite(VMCS_GUEST_CR3, cr3);
	vmwrite(VMCS_GUEST_CR4, cr4_real(cr4));
	vmwrite(VMCS_CR4_SHADOW, cr4);
}

static void set_ia32e(bool on)
{
	uint64_t entry = vmread(VMCS_ENTRY_CTLS);

	vmwrite(VMCS_ENTRY_CTLS, on ? entry | ENTRY_IA32E_MODE : entry & ~ENTRY_IA32E_MODE);
}

/*
 * Flat segments from the boot GDT: code at cs_sel (access rights cs_ar), data at the next
 * descriptor, the GDT ending there; an empty IDT, and the entry point.
 */
static void write_flat_start(uint32_t cs_ar, uint16_t cs_sel, uint64_t gdt, uint32_t idt_limit,
			     uint64_t rip)
{
	write_segment(VMCS_GUEST_CS_SEL, cs_sel, 0, 0xFFFFFFFF, cs_ar);
	for (enum vmcs_field f = VMCS_GUEST_ES_SEL; f <= VMCS_GUEST_GS_SEL; f += 2)
		if (f != VMCS_GUEST_CS_SEL)
			write_segment(f, cs_sel + 8, 0, 0xFFFFFFFF, AR_DATA32);
	vmwrite(VMCS_GUEST_GDTR_BASE, gdt);
	vmwrite(VMCS_GUEST_GDTR_LIMIT, cs_sel + 8 + 7);
	vmwrite(VMCS_GUEST_IDTR_BASE, 0);
	vmwrite(VMCS_GUEST_IDTR_LIMIT, idt_limit);
	vmwrite(VMCS_GUEST_RIP, rip);
	vmwrite(VMCS_GUEST_RSP, 0);
}

void vcpu_start_long_mode(struct vcpu *v, uint64_t rip, uint64_t cr3, uint64_t gdt,
			  uint16_t cs_sel)
{
	(void)v;
	write_crs(CR0_PE | CR0_ET | CR0_NE | CR0_PG, cr3, CR4_PAE);
	vmwrite(VMCS_GUEST_EFER, EFER_LME | EFER_LMA);
	set_ia32e(true);
	write_flat_start(AR_CODE64, cs_sel, gdt, 0xFFFF, rip);
}

void vcpu_start_protected32(struct vcpu *v, uint32_t eip, uint64_t gdt)
{
	(void)v;
	/* Multiboot 0.6.96 3.2: protected mode, paging off, flat 32-bit segments. */
	write_crs(CR0_PE | CR0_ET | CR0_NE, 0, 0);
	vmwrite(VMCS_GUEST_EFER, 0);
	set_ia32e(false);
	write_flat_start(AR_CODE32, GUEST_SEL_CODE, gdt, 0x3FF, eip);
}

void vcpu_start_real_mode(struct vcpu *v, uint8_t vector)
{
	(void)v;
	/* SDM Vol. 3A 10.4.4 / 9.1.1: after INIT+SIPI, CS = vector << 8, IP = 0, real mode. */
	write_crs(CR0_ET | CR0_NE, 0, 0);
	vmwrite(VMCS_GUEST_EFER, 0);
	set_ia32e(false);
	write_segment(VMCS_GUEST_CS_SEL, (uint16_t)vector << 8, (uint64_t)vector << 12, 0xFFFF,
		      AR_CODE16);
	for (enum vmcs_field f = VMCS_GUEST_ES_SEL; f <= VMCS_GUEST_GS_SEL; f += 2)
		if (f != VMCS_GUEST_CS_SEL)
			write_segment(f, 0, 0, 0xFFFF, AR_DATA16);
	vmwrite(VMCS_GUEST_GDTR_BASE, 0);
	vmwrite(VMCS_GUEST_GDTR_LIMIT, 0xFFFF);
	vmwrite(VMCS_GUEST_IDTR_BASE, 0);
	vmwrite(VMCS_GUEST_IDTR_LIMIT, 0xFFFF);
	vmwrite(VMCS_GUEST_RIP, 0);
	vmwrite(VMCS_GUEST_RSP, 0);
	vmwrite(VMCS_GUEST_RFLAGS, 0x2);
	vmwrite(VMCS_GUEST_ACTIVITY_STATE, ACTIVITY_ACTIVE);
	vmwrite(VMCS_GUEST_INTERRUPTIBILITY, 0);
}

/* Host state that differs per PCPU (SDM Vol. 3C 25.5); the rest is the same everywhere. */
static void write_host_state(struct pcpu *p)
{
	struct vmx_host_segs h;

	vmx_host_segs(&h);
	vmwrite(VMCS_HOST_CR0, read_cr0());
	vmwrite(VMCS_HOST_CR3, read_cr3());
	vmwrite(VMCS_HOST_CR4, read_cr4());
	vmwrite(VMCS_HOST_CS_SEL, h.cs);
	vmwrite(VMCS_HOST_SS_SEL, h.ds);
	vmwrite(VMCS_HOST_DS_SEL, h.ds);
	vmwrite(VMCS_HOST_ES_SEL, h.ds);
	vmwrite(VMCS_HOST_FS_SEL, 0);
	vmwrite(VMCS_HOST_GS_SEL, 0);
	vmwrite(VMCS_HOST_TR_SEL, h.tr);
	vmwrite(VMCS_HOST_FS_BASE, 0);
	vmwrite(VMCS_HOST_GS_BASE, (uint64_t)p);
	vmwrite(VMCS_HOST_TR_BASE, h.tr_base);
	vmwrite(VMCS_HOST_GDTR_BASE, h.gdt_base);
	vmwrite(VMCS_HOST_IDTR_BASE, h.idt_base);
	vmwrite(VMCS_HOST_SYSENTER_CS, 0);
	vmwrite(VMCS_HOST_SYSENTER_ESP, 0);
	vmwrite(VMCS_HOST_SYSENTER_EIP, 0);
	vmwrite(VMCS_HOST_EFER, rdmsr(MSR_EFER));
	vmwrite(VMCS_HOST_PAT, rdmsr(MSR_IA32_PAT));
	vmwrite(VMCS_HOST_RIP, (uint64_t)vmx_exit_entry);
}

static const uint32_t smsr_index[SMSR_COUNT] = {
	[SMSR_STAR] = MSR_STAR, [SMSR_LSTAR] = MSR_LSTAR, [SMSR_CSTAR] = MSR_CSTAR,
	[SMSR_FMASK] = MSR_FMASK, [SMSR_KERNEL_GS_BASE] = MSR_KERNEL_GS_BASE,
	[SMSR_TSC_AUX] = MSR_IA32_TSC_AUX,
};

/* IA32_TSC_AUX exists only with RDTSCP or RDPID (SDM Vol. 4 table 2-2). */
static unsigned smsr_count(void)
{
	static int count;

	if (!count)
		count = (cpuid(0x80000001, 0).edx & (1u << 27)) || (cpuid(7, 0).ecx & (1u << 22)) ?
			SMSR_COUNT : SMSR_TSC_AUX;
	return count;
}

void vcpu_load(struct vcpu *v)
{
	struct pcpu *p = this_pcpu();

	if (p->loaded != v) {
		vmptrld(v->vmcs_pa);
		p->loaded = v;
	}
	if (v->pcpu != p || !v->launched)
		write_host_state(p);
	for (unsigned i = 0; i < smsr_count(); i++)
		wrmsr(smsr_index[i], v->smsr[i]);
	/* VMX does not switch x87/SSE state; the hypervisor never touches it, so a swap here is enough. */
	__asm__ volatile("fxrstor64 %0" : : "m"(*(const uint8_t(*)[512])v->fpu));
}

void vcpu_put(struct vcpu *v)
{
	__asm__ volatile("fxsave64 %0" : "=m"(*(uint8_t(*)[512])v->fpu));
	for (unsigned i = 0; i < smsr_count(); i++)
		v->smsr[i] = rdmsr(smsr_index[i]);
}

void vcpu_unload(struct vcpu *v)
{
	struct pcpu *p = this_pcpu();

	/* SDM Vol. 3C 25.11.1: a VMCS moves between processors only after VMCLEAR. */
	vmclear(v->vmcs_pa);
	v->launched = false;
	if (p->loaded == v)
		p->loaded = (struct vcpu *)0;
}

/*
 * light: the caller knows that nothing steps and pmu_exit_light() holds (the exit fast path),
 * so neither is looked at again.
 */
static inline __attribute__((always_inline)) void retire(struct vcpu *v, unsigned len, bool light)
{
	uint64_t intr = vmread(VMCS_GUEST_INTERRUPTIBILITY);

	/* Light: no counter counts retirements (instructions and branches need stepping). */
	if (!light && !pmu_exit_light(&v->pmu))
		pmu_retired(v, (const struct soft_insn *)0, vcpu_cpl());
	vmwrite(VMCS_GUEST_RIP, vmread(VMCS_GUEST_RIP) + len);
	/* An emulated instruction ends STI / MOV SS blocking (SDM Vol. 3C 25.4.2). */
	if (intr & (INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOV_SS))
		vmwrite(VMCS_GUEST_INTERRUPTIBILITY,
			intr & ~(uint64_t)(INTERRUPTIBILITY_STI | INTERRUPTIBILITY_MOV_SS));
	/* The guest's own TF: the emulated instruction ends with its single-step trap, pending
	 * until the next entry delivers it (SDM Vol. 3A 17.3.1.4, Vol. 3C 27.7.3). */
	if ((light || !v->step.active) && (vmread(VMCS_GUEST_RFLAGS) & RFLAGS_TF))
		vmwrite(VMCS_GUEST_PENDING_DBG, vmread(VMCS_GUEST_PENDING_DBG) | PENDING_DBG_BS);
}

void vcpu_retire_insn(struct vcpu *v, unsigned len)
{
	retire(v, len, false);
}

void vcpu_advance_rip(struct vcpu *v)
{
	retire(v, vmread(VMCS_EXIT_INSN_LEN), false);
}

void vcpu_advance_rip_light(struct vcpu *v)
{
	retire(v, vmread(VMCS_EXIT_INSN_LEN), true);
}

void vcpu_inject_exception(struct vcpu *v, unsigned vector, bool has_error, uint32_t error)
{
	uint32_t info = INTR_INFO_VALID | INTR_TYPE_HW_EXCEPTION | vector;

	(void)v;
	/* SDM Vol. 3A 17.3.1.1, 6.15: a fault's frame holds RFLAGS with RF set (the instruction is
	 * restarted without a second instruction breakpoint); traps and aborts leave RF. */
	if (vector < 32 && (FAULT_VECTORS >> vector & 1))
		vmwrite(VMCS_GUEST_RFLAGS, vmread(VMCS_GUEST_RFLAGS) | RFLAGS_RF);
	/* SDM Vol. 3C 26.2.1.3: in real mode (CR0.PE = 0) no exception pushes an error code. */
	if (has_error && (vcpu_guest_cr0() & 1)) {
		info |= INTR_INFO_DELIVER_ERROR;
		vmwrite(VMCS_ENTRY_EXC_ERROR, error);
	}
	vmwrite(VMCS_ENTRY_INTR_INFO, info);
}

uint64_t vcpu_guest_cr0(void)
{
	return guest_regs_cr0();
}

uint64_t vcpu_guest_cr4(void)
{
	return guest_regs_cr4();
}

unsigned vcpu_cpl(void)
{
	return guest_regs_cpl();
}
