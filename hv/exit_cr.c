/* Control-register exits: the host owns CR0.PG/NE/CD/NW and every CR4 bit not offered; CR8 is the virtual TPR. */
#include "lib/spinlock.h"
#include "hv/domain.h"
#include "hv/exit_cr.h"
#include "hv/vmexit.h"
#include "hv/vmx.h"
#include "hv/vmx_caps.h"
#include "hv/vmx_ops.h"

/* CR4 bits of features every x86-64 CPU has and guests may use as they like. */
#define CR4_ALWAYS	(CR4_VME | CR4_PVI | CR4_TSD | CR4_DE | CR4_PSE | CR4_PAE | CR4_PGE | \
			 CR4_PCE | CR4_OSFXSR | CR4_OSXMMEXCPT)

uint64_t cr4_guest_bits = CR4_ALWAYS;

/*
 * SDM Vol. 3A 2.5: a CR4 bit of a feature CPUID does not enumerate is reserved. Only features
 * the guest's CPUID keeps (PCID; FSGSBASE, SMEP, SMAP) join the always-present ones; MCE, XSAVE,
 * PKE, UMIP, LA57, VMX, SMX... stay with the host, so PKRU and XCR0 never reach a guest.
 */
uint64_t cr4_offered(uint32_t l1_ecx, uint32_t l7_ebx, uint64_t fixed1)
{
	uint64_t bits = CR4_ALWAYS;

	if (l1_ecx & (1u << 17))
		bits |= CR4_PCIDE;
	if (l7_ebx & (1u << 0))
		bits |= CR4_FSGSBASE;
	if (l7_ebx & (1u << 7))
		bits |= CR4_SMEP;
	if (l7_ebx & (1u << 20))
		bits |= CR4_SMAP;
	return bits & fixed1;
}

uint64_t cr0_real(uint64_t guest)
{
	uint64_t fixed0 = vmx_caps.cr0_fixed0;

	if (vmx_caps.unrestricted)
		fixed0 &= ~(CR0_PE | CR0_PG);	/* SDM Vol. 3C 26.3.1.1 */
	/* Caches stay on whatever the guest asked: it reads CD/NW from its shadow. */
	return (guest | fixed0) & vmx_caps.cr0_fixed1 & ~(CR0_CD | CR0_NW);
}

uint64_t cr4_real(uint64_t guest)
{
	/* CR4.MCE stays set as the host's is: a machine check exits (hv/exit_exception.c). */
	return ((guest & cr4_guest_bits) | vmx_caps.cr4_fixed0 | CR4_MCE) & vmx_caps.cr4_fixed1;
}

/* PAE paging outside long mode: with EPT the PDPTEs are loaded when paging turns on (SDM Vol. 3A 4.4.1). */
static bool load_pdptes(struct vcpu *v, uint64_t cr3)
{
	const uint64_t *p = dom_gpa_to_hva(v->dom, cr3 & 0xFFFFFFE0, 32);

	if (!p)
		return false;
	for (unsigned i = 0; i < 4; i++)
		vmwrite(VMCS_GUEST_PDPTE0 + 2 * i, p[i]);
	return true;
}

/* MOV to CR0 (SDM Vol. 2A MOV-Control Registers; Vol. 3A 9.8.5 for the switch to IA-32e mode). */
static bool emulate_cr0_write(struct vcpu *v, uint64_t val)
{
	uint64_t old = vcpu_guest_cr0(), efer = vmread(VMCS_GUEST_EFER);
	uint64_t cr4 = vcpu_guest_cr4();
	uint64_t entry = vmread(VMCS_ENTRY_CTLS);

	if ((val >> 32) || ((val & CR0_PG) && !(val & CR0_PE)) || ((val & CR0_NW) && !(val & CR0_CD)))
		return false;
	/* SDM Vol. 2A MOV-Control Registers: clearing PG while CR4.PCIDE = 1 is #GP. */
	if (!(val & CR0_PG) && (cr4 & CR4_PCIDE))
		return false;
	if ((val & CR0_PG) && !(old & CR0_PG)) {
		if (efer & EFER_LME) {
			if (!(cr4 & CR4_PAE))
				return false;
			efer |= EFER_LMA;
			entry |= ENTRY_IA32E_MODE;
		} else if ((cr4 & CR4_PAE) && !load_pdptes(v, vmread(VMCS_GUEST_CR3))) {
			return false;
		}
	} else if (!(val & CR0_PG) && (old & CR0_PG)) {
		efer &= ~EFER_LMA;
		entry &= ~ENTRY_IA32E_MODE;
	}
	vmwrite(VMCS_GUEST_EFER, efer);
	vmwrite(VMCS_ENTRY_CTLS, entry);
	vmwrite(VMCS_CR0_SHADOW, val);
	vmwrite(VMCS_GUEST_CR0, cr0_real(val));
	return true;
}

/* MOV to CR4: a bit of a feature the guest's CPUID does not offer is reserved: #GP. */
static bool emulate_cr4_write(uint64_t val)
{
	if (val & ~cr4_guest_bits)
		return false;
	vmwrite(VMCS_CR4_SHADOW, val);
	vmwrite(VMCS_GUEST_CR4, cr4_real(val));
	return true;
}

/*
 * MOV to/from CR8 reach the VCPU's virtual TPR, never the physical one (which would stay for
 * the next domain and could mask the host's vectors): SDM Vol. 3A 11.8.6.1, CR8[3:0] is
 * TPR[7:4]; bits 63:4 are reserved (#GP).
 */
static bool emulate_cr8(struct vcpu *v, bool write, uint64_t *val)
{
	if (write && (*val >> 4))
		return false;
	spin_lock(&v->lock);
	if (write)
		v->apic.tpr = (uint32_t)*val << 4;
	else
		*val = (v->apic.tpr >> 4) & 0xF;
	spin_unlock(&v->lock);
	return true;
}

/* SDM Vol. 3C 28.2.1, table 28-3: CR number, access type and GPR in the qualification. */
void exit_cr_access(struct vcpu *v, uint64_t qual)
{
	unsigned cr = qual & 0xF, type = (qual >> 4) & 3, reg = (qual >> 8) & 0xF;
	uint64_t val;
	bool ok = true;

	if (reg == GPR_RSP)
		v->gpr[GPR_RSP] = vmread(VMCS_GUEST_RSP);
	val = v->gpr[reg];
	if (type == 0 && cr == 0) {
		ok = emulate_cr0_write(v, val);
	} else if (type == 0 && cr == 4) {
		ok = emulate_cr4_write(val);
	} else if (type == 0 && cr == 3) {
		vmwrite(VMCS_GUEST_CR3, val);
	} else if (type <= 1 && cr == 8) {
		ok = emulate_cr8(v, type == 0, &val);
		if (ok && type == 1)
			v->gpr[reg] = val;
	} else if (type == 1 && cr == 3) {
		v->gpr[reg] = vmread(VMCS_GUEST_CR3);
	} else {
		dom_kill(v->dom, v, "control-register access (CR%u, type %u) is not emulated", cr,
			 type);
		return;
	}
	if (!ok) {
		vcpu_inject_gp(v);
		return;
	}
	if (type == 1 && reg == GPR_RSP)
		vmwrite(VMCS_GUEST_RSP, v->gpr[reg]);
	vcpu_advance_rip(v);
}
