/* Unit tests for hv/vcpu.c against a modelled VMCS: CR0/CR4 as the guest reads them, retirement. */
#include <stdbool.h>

#include "tests/unit/unit.h"
#include "tests/unit/vmcs_model.h"

static bool vmclear(uint64_t pa)
{
	(void)pa;
	return true;
}

static bool vmptrld(uint64_t pa)
{
	(void)pa;
	return true;
}

#include "hv/vcpu.c"

/* What hv/vcpu.c links against but retiring never reaches. */
struct vmx_caps vmx_caps;
uint64_t vmx_msr_bitmap_pa, cr4_guest_bits;
const char vmx_exit_entry[1];
enum pmu_backend_kind pmu_backend;

uint64_t cr0_real(uint64_t guest)
{
	return guest;
}

uint64_t cr4_real(uint64_t guest)
{
	return guest;
}

uint64_t frame_alloc(void)
{
	return 0;
}

void vmx_host_segs(struct vmx_host_segs *h)
{
	*h = (struct vmx_host_segs){ 0 };
}

void vapic_init(struct vapic *a, uint32_t id)
{
	(void)a;
	(void)id;
}

void pmu_vcpu_init(struct pmu_vcpu *pv, struct pmu_domain *pd, unsigned id)
{
	(void)pv;
	(void)pd;
	(void)id;
}

static unsigned retired;

void pmu_retired(struct vcpu *v, const struct soft_insn *insn, unsigned cpl)
{
	(void)v;
	(void)insn;
	(void)cpl;
	retired++;
}

static struct vcpu vcpu;

/* A 3-byte instruction at 0x1000 under STI blocking, with the guest's TF set. */
static void guest_at_sti_tf(void)
{
	vmcs[VMCS_GUEST_RIP] = 0x1000;
	vmcs[VMCS_EXIT_INSN_LEN] = 3;
	vmcs[VMCS_GUEST_INTERRUPTIBILITY] = INTERRUPTIBILITY_STI;
	vmcs[VMCS_GUEST_RFLAGS] = 0x2 | RFLAGS_TF;
	vmcs[VMCS_GUEST_PENDING_DBG] = 0;
	retired = 0;
}

static bool retired_as_guest_sees(void)
{
	return vmcs[VMCS_GUEST_RIP] == 0x1003 && !vmcs[VMCS_GUEST_INTERRUPTIBILITY] &&
	       vmcs[VMCS_GUEST_PENDING_DBG] == PENDING_DBG_BS;
}

/* The fast path's retirement does to the guest what the ordinary one does, without the PMU. */
static void test_light(void)
{
	pmu_backend = PMU_BACKEND_SOFT;
	guest_at_sti_tf();
	vcpu_advance_rip_light(&vcpu);
	check(retired_as_guest_sees() && !retired,
	      "light: RIP past the exit's instruction, STI blocking ended, TF's trap pending");
	guest_at_sti_tf();
	vcpu_advance_rip(&vcpu);
	check(retired_as_guest_sees() && !retired,
	      "ordinary, nothing counts: the same, and the PMU not told");
	vcpu.pmu.active = 1;
	vcpu.pmu.stepping = true;
	guest_at_sti_tf();
	vcpu_advance_rip(&vcpu);
	check(retired_as_guest_sees() && retired == 1,
	      "ordinary, a counter steps: the PMU counts the retirement");
	vcpu.pmu.active = 0;
	vcpu.pmu.stepping = false;
	vcpu.step.active = true;
	guest_at_sti_tf();
	vcpu_advance_rip(&vcpu);
	check(vmcs[VMCS_GUEST_RIP] == 0x1003 && !vmcs[VMCS_GUEST_PENDING_DBG],
	      "ordinary, the stepper active: TF's trap is the stepper's to give");
	vcpu.step.active = false;
}

/* The guest reads its own bits from the register, the host-owned ones from the shadow. */
static void test_guest_crs(void)
{
	cr4_guest_bits = CR4_PAE | CR4_PGE;
	vmcs[VMCS_GUEST_CR0] = CR0_PE | CR0_NE | CR0_PG | CR0_WP;
	vmcs[VMCS_CR0_SHADOW] = CR0_PE | CR0_CD;
	check(vcpu_guest_cr0() == (CR0_PE | CR0_WP | CR0_CD),
	      "CR0: PE, WP from the register; NE, PG, CD, NW (host-owned) from the shadow");
	vmcs[VMCS_GUEST_CR4] = CR4_PAE | CR4_VMXE;
	vmcs[VMCS_CR4_SHADOW] = CR4_PGE;
	check(vcpu_guest_cr4() == CR4_PAE,
	      "CR4: PAE, PGE (offered) from the register; VMXE (not offered) from the shadow");
}

int main(void)
{
	test_guest_crs();
	test_light();
	return unit_summary();
}
