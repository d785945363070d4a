/* Unit tests for hv/exit_cr.c against a modelled VMCS: host-owned CR0/CR4 bits, shadows, CR8 as the virtual TPR. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "tests/unit/vmcs_model.h"
#include "hv/exit_cr.c"

struct vmx_caps vmx_caps;
static unsigned gp_injected, rip_advanced, killed;

uint64_t vcpu_guest_cr0(void)
{
	return (vmcs[VMCS_GUEST_CR0] & ~vmcs[VMCS_CR0_MASK]) |
	       (vmcs[VMCS_CR0_SHADOW] & vmcs[VMCS_CR0_MASK]);
}

uint64_t vcpu_guest_cr4(void)
{
	return (vmcs[VMCS_GUEST_CR4] & ~vmcs[VMCS_CR4_MASK]) |
	       (vmcs[VMCS_CR4_SHADOW] & vmcs[VMCS_CR4_MASK]);
}

void vcpu_inject_exception(struct vcpu *v, unsigned vector, bool has_error, uint32_t error)
{
	(void)v;
	(void)has_error;
	(void)error;
	gp_injected += vector == 13;
}

void vcpu_advance_rip(struct vcpu *v)
{
	(void)v;
	rip_advanced++;
}

void dom_kill(struct domain *d, struct vcpu *v, const char *fmt, ...)
{
	(void)d;
	(void)v;
	(void)fmt;
	killed++;
}

static struct domain dom;
static struct vcpu vcpu = { .dom = &dom };

/* A VCPU in 64-bit mode as vcpu.c starts one, on a CPU with Skylake-like fixed bits. */
static void reset(void)
{
	memset(vmcs, 0, sizeof(vmcs));
	vmx_caps.cr0_fixed0 = CR0_PE | CR0_NE | CR0_PG;
	vmx_caps.cr0_fixed1 = 0xFFFFFFFF;
	vmx_caps.cr4_fixed0 = CR4_VMXE;
	vmx_caps.cr4_fixed1 = 0x3727FF;		/* up to PKE, no LA57 */
	vmx_caps.unrestricted = true;
	cr4_guest_bits = cr4_offered(1u << 17, (1u << 0) | (1u << 7) | (1u << 20),
				     vmx_caps.cr4_fixed1);
	vmcs[VMCS_CR0_MASK] = CR0_HOST_MASK;
	vmcs[VMCS_CR4_MASK] = ~cr4_guest_bits;
	vmcs[VMCS_CR0_SHADOW] = CR0_PE | CR0_NE | CR0_PG;
	vmcs[VMCS_GUEST_CR0] = cr0_real(vmcs[VMCS_CR0_SHADOW]);
	vmcs[VMCS_CR4_SHADOW] = CR4_PAE;
	vmcs[VMCS_GUEST_CR4] = cr4_real(CR4_PAE);
	vmcs[VMCS_GUEST_EFER] = EFER_LME | EFER_LMA;
	vmcs[VMCS_ENTRY_CTLS] = ENTRY_IA32E_MODE;
	memset(vcpu.gpr, 0, sizeof(vcpu.gpr));
	vcpu.apic.tpr = 0;
	gp_injected = rip_advanced = killed = 0;
}

/* MOV to CRn from RAX (type 0) or from CRn to RAX (type 1): SDM Vol. 3C table 28-3. */
static void mov_cr(unsigned cr, unsigned type, unsigned reg, uint64_t val)
{
	vcpu.gpr[reg] = val;
	exit_cr_access(&vcpu, cr | type << 4 | reg << 8);
}

static void test_cr4_offered(void)
{
	uint64_t none = cr4_offered(0, 0, ~0ull), all = cr4_offered(~0u, ~0u, ~0ull);

	check(none == CR4_ALWAYS, "cr4: without optional features only the always-present bits "
	      "(0x%llx)", (unsigned long long)none);
	check((all & (CR4_PCIDE | CR4_FSGSBASE | CR4_SMEP | CR4_SMAP)) ==
	      (CR4_PCIDE | CR4_FSGSBASE | CR4_SMEP | CR4_SMAP),
	      "cr4: PCIDE, FSGSBASE, SMEP, SMAP when the CPU has them");
	check(!(all & (CR4_MCE | CR4_VMXE | CR4_OSXSAVE | CR4_PKE | CR4_UMIP | CR4_LA57 |
		       (1ull << 14) | ~0xFFFFFFFFull)),
	      "cr4: MCE, VMXE, SMXE, OSXSAVE, PKE, UMIP, LA57 and bits 63:32 are never offered");
	check(!(cr4_offered(~0u, ~0u, ~CR4_SMAP) & CR4_SMAP),
	      "cr4: a bit VMX does not allow (fixed-1 clear) is not offered");
}

static void test_cr4_writes(void)
{
	reset();
	mov_cr(4, 0, GPR_RAX, CR4_PAE | CR4_PKE);
	check(gp_injected == 1 && !rip_advanced && !(vmcs[VMCS_GUEST_CR4] & CR4_PKE) &&
	      vmcs[VMCS_CR4_SHADOW] == CR4_PAE, "cr4: setting PKE is #GP (PKRU stays the host's)");
	reset();
	mov_cr(4, 0, GPR_RAX, CR4_PAE | CR4_OSXSAVE);
	check(gp_injected == 1 && !(vmcs[VMCS_GUEST_CR4] & CR4_OSXSAVE),
	      "cr4: setting OSXSAVE is #GP (XCR0 stays the host's)");
	reset();
	mov_cr(4, 0, GPR_RAX, CR4_PAE | CR4_MCE);
	check(gp_injected == 1 && vcpu_guest_cr4() == CR4_PAE, "cr4: setting MCE is #GP (not "
	      "offered)");
	reset();
	check((vmcs[VMCS_GUEST_CR4] & CR4_MCE) && !(vcpu_guest_cr4() & CR4_MCE) &&
	      (vmcs[VMCS_GUEST_CR4] & CR4_VMXE) && !(vcpu_guest_cr4() & CR4_VMXE),
	      "cr4: the guest runs with MCE and VMXE set and reads them clear");
	mov_cr(4, 0, GPR_RAX, CR4_PAE | CR4_PGE | CR4_OSFXSR | CR4_VME | CR4_SMEP);
	check(!gp_injected && rip_advanced == 1 &&
	      vcpu_guest_cr4() == (CR4_PAE | CR4_PGE | CR4_OSFXSR | CR4_VME | CR4_SMEP) &&
	      vmcs[VMCS_GUEST_CR4] == (CR4_PAE | CR4_PGE | CR4_OSFXSR | CR4_VME | CR4_SMEP |
				       CR4_VMXE | CR4_MCE), "cr4: offered bits are set for real");
	check((vmcs[VMCS_CR4_MASK] & (CR4_PKE | CR4_MCE | CR4_OSXSAVE | CR4_UMIP | CR4_LA57)) &&
	      !(vmcs[VMCS_CR4_MASK] & (CR4_PAE | CR4_PGE)),
	      "cr4: the guest/host mask holds exactly the bits not offered");
}

static void test_cr0_writes(void)
{
	uint64_t base = CR0_PE | CR0_NE | CR0_PG;

	reset();
	mov_cr(0, 0, GPR_RAX, base | CR0_CD);
	check(!gp_injected && rip_advanced == 1 && (vcpu_guest_cr0() & CR0_CD) &&
	      !(vmcs[VMCS_GUEST_CR0] & CR0_CD), "cr0: CD is the guest's shadow; caches stay on");
	mov_cr(0, 0, GPR_RAX, base | CR0_CD | CR0_NW);
	check(!gp_injected && (vcpu_guest_cr0() & (CR0_CD | CR0_NW)) == (CR0_CD | CR0_NW) &&
	      !(vmcs[VMCS_GUEST_CR0] & (CR0_CD | CR0_NW)), "cr0: CD+NW likewise");
	reset();
	mov_cr(0, 0, GPR_RAX, base | CR0_NW);
	check(gp_injected == 1 && !rip_advanced, "cr0: NW without CD is #GP (SDM Vol. 2A MOV)");
	check((CR0_HOST_MASK & (CR0_CD | CR0_NW | CR0_PG | CR0_NE)) ==
	      (CR0_CD | CR0_NW | CR0_PG | CR0_NE), "cr0: CD, NW, PG and NE are host-owned");
	reset();
	mov_cr(0, 0, GPR_RAX, CR0_NE);
	check(!gp_injected && !(vmcs[VMCS_GUEST_EFER] & EFER_LMA) &&
	      !(vmcs[VMCS_ENTRY_CTLS] & ENTRY_IA32E_MODE), "cr0: paging off leaves IA-32e mode");
	reset();
	vmcs[VMCS_GUEST_CR4] |= CR4_PCIDE;
	mov_cr(0, 0, GPR_RAX, CR0_NE | CR0_PE);
	check(gp_injected == 1 && !rip_advanced && (vmcs[VMCS_GUEST_EFER] & EFER_LMA),
	      "cr0: clearing PG while CR4.PCIDE = 1 is #GP, IA-32e mode stays (SDM Vol. 2A MOV)");
}

static void test_cr8(void)
{
	reset();
	mov_cr(8, 0, GPR_RAX, 0xF);
	check(vcpu.apic.tpr == 0xF0 && rip_advanced == 1 && !gp_injected,
	      "cr8: MOV to CR8 sets the virtual TPR[7:4] (SDM Vol. 3A 11.8.6.1)");
	vcpu.apic.tpr = 0x5A;
	mov_cr(8, 1, GPR_RBX, 0);
	check(vcpu.gpr[GPR_RBX] == 0x5, "cr8: MOV from CR8 reads TPR[7:4]");
	mov_cr(8, 1, GPR_RSP, 0);
	check(vmcs[VMCS_GUEST_RSP] == 0x5, "cr8: MOV from CR8 into RSP reaches the VMCS");
	reset();
	vcpu.apic.tpr = 0x30;
	mov_cr(8, 0, GPR_RAX, 0x10);
	check(gp_injected == 1 && !rip_advanced && vcpu.apic.tpr == 0x30,
	      "cr8: reserved bits 63:4 are #GP and the TPR stays");
	reset();
	mov_cr(2, 0, GPR_RAX, 0);
	check(killed == 1 && !rip_advanced, "an access no control sends here ends the domain");
}

int main(void)
{
	test_cr4_offered();
	test_cr4_writes();
	test_cr0_writes();
	test_cr8();
	return unit_summary();
}
