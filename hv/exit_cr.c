/* Control-register exits: CR0.PG/NE and CR4.VMXE/OSXSAVE belong to the host; paging changes keep EFER.LMA right. */
#include "hv/domain.h"
#include "hv/vmexit.h"
#include "hv/vmx.h"
#include "hv/vmx_caps.h"
#include "hv/vmx_ops.h"

#define CR0_PE		(1ull << 0)
#define CR0_NW		(1ull << 29)
#define CR0_CD		(1ull << 30)
#define CR0_PG		(1ull << 31)
#define CR4_PAE		(1ull << 5)
#define CR4_VMXE	(1ull << 13)
#define CR4_OSXSAVE	(1ull << 18)

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
	uint64_t cr4 = vcpu_guest_cr4(), fixed0 = vmx_caps.cr0_fixed0;
	uint64_t entry = vmread(VMCS_ENTRY_CTLS);

	if ((val >> 32) || ((val & CR0_PG) && !(val & CR0_PE)) || ((val & CR0_NW) && !(val & CR0_CD)))
		return false;
	if ((val & CR0_PG) && !(old & CR0_PG)) {
		if (efer & MSR_EFER_LME) {
			if (!(cr4 & CR4_PAE))
				return false;
			efer |= MSR_EFER_LMA;
			entry |= ENTRY_IA32E_MODE;
		} else if ((cr4 & CR4_PAE) && !load_pdptes(v, vmread(VMCS_GUEST_CR3))) {
			return false;
		}
	} else if (!(val & CR0_PG) && (old & CR0_PG)) {
		efer &= ~MSR_EFER_LMA;
		entry &= ~ENTRY_IA32E_MODE;
	}
	if (vmx_caps.unrestricted)
		fixed0 &= ~(CR0_PE | CR0_PG);
	vmwrite(VMCS_GUEST_EFER, efer);
	vmwrite(VMCS_ENTRY_CTLS, entry);
	vmwrite(VMCS_CR0_SHADOW, val);
	vmwrite(VMCS_GUEST_CR0, (val | fixed0) & vmx_caps.cr0_fixed1);
	return true;
}

/* MOV to CR4: VMX and XSAVE are not offered to guests, so setting them is #GP as on such a CPU. */
static bool emulate_cr4_write(uint64_t val)
{
	uint64_t real = val | vmx_caps.cr4_fixed0;

	if (val & (CR4_VMXE | CR4_OSXSAVE) || (real & ~vmx_caps.cr4_fixed1))
		return false;
	vmwrite(VMCS_CR4_SHADOW, val);
	vmwrite(VMCS_GUEST_CR4, real);
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
	} else if (type == 1 && cr == 3) {
		v->gpr[reg] = vmread(VMCS_GUEST_CR3);
		if (reg == GPR_RSP)
			vmwrite(VMCS_GUEST_RSP, v->gpr[reg]);
	} else {
		dom_kill(v->dom, v, "control-register access (CR%u, type %u) is not emulated", cr,
			 type);
		return;
	}
	if (!ok) {
		vcpu_inject_gp(v);
		return;
	}
	vcpu_advance_rip(v);
}
