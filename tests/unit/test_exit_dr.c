/* Unit tests for hv/exit_dr.c against a modelled VMCS: MOV DR on per-VCPU shadows, #DB's DR6, the DR7 merge. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "tests/unit/vmcs_model.h"

/* The physical DR0-DR3 become an array: hv/dr_ops.h stays out. */
#define PERFVISOR_HV_DR_OPS_H
static uint64_t phys_dr[4];
static unsigned phys_writes;

static void dr_write_phys(unsigned k, uint64_t la)
{
	phys_dr[k] = la;
	phys_writes |= 1u << k;
}

#include "hv/exit_dr.c"

/* Exception vectors (SDM Vol. 3A table 6-1). */
#define EXC_UD	6
#define EXC_GP	13

static uint64_t guest_cr4;
static enum insn_mode code_mode;
static unsigned cpl, rip_advanced, injected[32];

uint64_t vcpu_guest_cr4(void)
{
	return guest_cr4;
}

enum insn_mode guest_code_mode(void)
{
	return code_mode;
}

unsigned vcpu_cpl(void)
{
	return cpl;
}

void vcpu_inject_exception(struct vcpu *v, unsigned vector, bool has_error, uint32_t error)
{
	(void)v;
	(void)has_error;
	(void)error;
	injected[vector]++;
}

void vcpu_advance_rip(struct vcpu *v)
{
	(void)v;
	rip_advanced++;
}

static struct vcpu vcpu;
#define D	(vcpu.debug)

static unsigned faults(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < 32; i++)
		n += injected[i];
	return n;
}

/* A 64-bit VCPU at CPL 0, CR4.DE clear, its debug registers at reset (SDM Vol. 3A 18.2). */
static void reset(void)
{
	memset(vmcs, 0, sizeof(vmcs));
	memset(&vcpu, 0, sizeof(vcpu));
	memset(injected, 0, sizeof(injected));
	memset(phys_dr, 0, sizeof(phys_dr));
	phys_writes = 0;
	guest_cr4 = CR4_PAE;
	code_mode = INSN_MODE_64;
	cpl = 0;
	rip_advanced = 0;
}

/* MOV to DRn from reg (from = 0) or from DRn to reg (1): SDM Vol. 3C table 28-4. */
static void mov_dr(unsigned dr, unsigned from, unsigned reg, uint64_t val)
{
	if (!from)
		vcpu.gpr[reg] = val;
	exit_dr_access(&vcpu, dr | from << 4 | reg << 8);
}

static uint64_t read_dr(unsigned dr)
{
	vcpu.gpr[GPR_RBX] = 0xBAD;
	mov_dr(dr, 1, GPR_RBX, 0);
	return vcpu.gpr[GPR_RBX];
}

static void test_shadows(void)
{
	reset();
	check(read_dr(6) == DR6_FIXED1 && read_dr(7) == DR7_FIXED1 && !faults() &&
	      rip_advanced == 2, "reset values: DR6 0xFFFF0FF0, DR7 0x400 (SDM Vol. 3A 18.2)");
	for (unsigned k = 0; k < 4; k++)
		mov_dr(k, 0, GPR_RAX, 0x1000 * (k + 1));
	check(read_dr(0) == 0x1000 && read_dr(1) == 0x2000 && read_dr(2) == 0x3000 &&
	      read_dr(3) == 0x4000 && !phys_writes,
	      "DR0-DR3 read back as written, and MOV DR never touches the physical registers");
	mov_dr(6, 0, GPR_RAX, 0);
	check(read_dr(6) == DR6_FIXED1, "DR6 written 0 reads its fixed-1 bits (0x%llx)",
	      (unsigned long long)read_dr(6));
	mov_dr(6, 0, GPR_RAX, 0xFFFFFFFF);
	check(read_dr(6) == (DR6_FIXED1 | DR6_BITS), "DR6: B0-B3, BD, BS, BT writable, the rest "
	      "fixed (0x%llx)", (unsigned long long)read_dr(6));
	mov_dr(7, 0, GPR_RAX, 0xFFFFFFFF & ~DR7_GD);
	check(read_dr(7) == ((DR7_BITS & ~DR7_GD) | DR7_FIXED1),
	      "DR7: bit 10 reads 1, bits 11, 12, 14, 15 read 0 (0x%llx)",
	      (unsigned long long)read_dr(7));
	mov_dr(0, 1, GPR_RSP, 0);
	check(vmcs[VMCS_GUEST_RSP] == 0x1000, "MOV from DR0 into RSP reaches the VMCS's RSP");
	vmcs[VMCS_GUEST_RSP] = 0x7000;
	mov_dr(1, 0, GPR_RSP, 0);
	check(read_dr(1) == 0x7000, "MOV to DR1 from RSP takes the VMCS's RSP");
}

/* SDM Vol. 3A 18.2.2: DR4/DR5 alias DR6/DR7 with CR4.DE = 0 and are #UD with CR4.DE = 1. */
static void test_dr4_dr5(void)
{
	reset();
	mov_dr(6, 0, GPR_RAX, DR6_FIXED1 | DR6_B(1));
	mov_dr(7, 0, GPR_RAX, DR7_FIXED1 | DR7_L(3));
	check(read_dr(4) == (DR6_FIXED1 | DR6_B(1)) && read_dr(5) == (DR7_FIXED1 | DR7_L(3)),
	      "CR4.DE = 0: MOV from DR4/DR5 reads DR6/DR7");
	mov_dr(4, 0, GPR_RAX, DR6_FIXED1 | DR6_BS);
	mov_dr(5, 0, GPR_RAX, DR7_FIXED1 | DR7_L(0));
	check(read_dr(6) == (DR6_FIXED1 | DR6_BS) && read_dr(7) == (DR7_FIXED1 | DR7_L(0)) &&
	      !faults(), "CR4.DE = 0: MOV to DR4/DR5 writes DR6/DR7");
	guest_cr4 |= CR4_DE;
	rip_advanced = 0;
	mov_dr(4, 1, GPR_RBX, 0);
	mov_dr(5, 0, GPR_RAX, DR7_FIXED1);
	check(injected[EXC_UD] == 2 && faults() == 2 && !rip_advanced &&
	      D.dr7 == (DR7_FIXED1 | DR7_L(0)), "CR4.DE = 1: MOV from or to DR4/DR5 is #UD, "
	      "nothing changes");
	rip_advanced = 0;
	check(read_dr(7) == (DR7_FIXED1 | DR7_L(0)) && rip_advanced == 1 && faults() == 2,
	      "CR4.DE = 1: DR7 itself still works");
}

/* SDM Vol. 2A MOV-Move to/from Debug Registers: bits 63:32 of DR6 and DR7 are reserved. */
static void test_reserved(void)
{
	reset();
	mov_dr(6, 0, GPR_RAX, DR6_FIXED1 | DR6_B(0));
	mov_dr(7, 0, GPR_RAX, DR7_FIXED1 | DR7_L(1));
	rip_advanced = 0;
	mov_dr(6, 0, GPR_RAX, 1ull << 32 | DR6_FIXED1);
	mov_dr(7, 0, GPR_RAX, 1ull << 63 | DR7_FIXED1);
	check(injected[EXC_GP] == 2 && !rip_advanced && D.dr6 == (DR6_FIXED1 | DR6_B(0)) &&
	      D.dr7 == (DR7_FIXED1 | DR7_L(1)), "a 1 in bits 63:32 of DR6 or DR7 is #GP, "
	      "nothing changes");
	reset();
	mov_dr(0, 0, GPR_RAX, 0xFFFF800000001000ull);
	check(!faults() && read_dr(0) == 0xFFFF800000001000ull,
	      "DR0-DR3 take all 64 bits (an address)");
	reset();
	code_mode = INSN_MODE_32;
	mov_dr(7, 0, GPR_RAX, 0xFFFFFFFF00000000ull | DR7_FIXED1 | DR7_L(2));
	check(!faults() && D.dr7 == (DR7_FIXED1 | DR7_L(2)),
	      "outside 64-bit mode the upper half of the register is not used: no #GP");
	mov_dr(0, 0, GPR_RAX, 0x1234567890ull);
	vcpu.gpr[GPR_RCX] = ~0ull;
	mov_dr(0, 1, GPR_RCX, 0);
	check(D.db[0] == 0x34567890 && vcpu.gpr[GPR_RCX] == 0x34567890,
	      "outside 64-bit mode MOV DR moves 32 bits, zero-extended");
}

/* SDM Vol. 3C 26.1.3: the MOV-DR exit comes before the CPL check: the VMM raises the #GP. */
static void test_cpl(void)
{
	reset();
	mov_dr(0, 0, GPR_RAX, 0x5000);
	cpl = 3;
	rip_advanced = 0;
	mov_dr(0, 0, GPR_RAX, 0x6000);
	vcpu.gpr[GPR_RBX] = 0xBAD;
	mov_dr(0, 1, GPR_RBX, 0);
	check(injected[EXC_GP] == 2 && !rip_advanced && D.db[0] == 0x5000 &&
	      vcpu.gpr[GPR_RBX] == 0xBAD, "at CPL 3 MOV to or from DR0 is #GP, nothing changes");
}

/*
 * SDM Vol. 3A 18.2.4: with DR7.GD set, an instruction that accesses a debug register raises
 * #DB (a fault: BD set in DR6, GD cleared so the handler may use them); the MOV-DR exit takes
 * priority over it, so the VMM raises it.
 */
static void test_gd(void)
{
	reset();
	mov_dr(0, 0, GPR_RAX, 0x5000);
	mov_dr(6, 0, GPR_RAX, DR6_FIXED1 | DR6_B(1) | DR6_BS);
	mov_dr(7, 0, GPR_RAX, DR7_FIXED1 | DR7_GD | DR7_L(0));
	rip_advanced = 0;
	mov_dr(0, 0, GPR_RAX, 0x6000);
	check(injected[EXC_DB] == 1 && !rip_advanced && D.db[0] == 0x5000,
	      "DR7.GD: the next MOV DR is #DB, a fault (DR0 unchanged, RIP stays)");
	check(D.dr6 == (DR6_FIXED1 | DR6_BD | DR6_BS) && D.dr7 == (DR7_FIXED1 | DR7_L(0)),
	      "DR7.GD: DR6 says BD (B0-B3 cleared, BS kept), DR7.GD cleared (0x%llx, 0x%llx)",
	      (unsigned long long)D.dr6, (unsigned long long)D.dr7);
	mov_dr(0, 0, GPR_RAX, 0x6000);
	check(injected[EXC_DB] == 1 && rip_advanced == 1 && D.db[0] == 0x6000,
	      "DR7.GD: the handler's MOV DR then works");
	reset();
	mov_dr(7, 0, GPR_RAX, DR7_FIXED1 | DR7_GD);
	dr_reflect_db(&vcpu, DR6_B(0), 0);
	check(!(D.dr7 & DR7_GD), "any #DB the guest takes clears DR7.GD");
}

static void test_reflect(void)
{
	reset();
	mov_dr(6, 0, GPR_RAX, DR6_FIXED1 | DR6_B(3) | DR6_BT);
	dr_reflect_db(&vcpu, DR6_B(0) | DR6_B(2), 1u << 0);
	check(read_dr(6) == (DR6_FIXED1 | DR6_B(2) | DR6_BT),
	      "a #DB's DR6: the stepper's slot (B0) masked out, the guest's B2 shown, the last "
	      "B0-B3 replaced, BT kept (0x%llx)", (unsigned long long)read_dr(6));
	dr_reflect_db(&vcpu, DR6_BS | DR6_B(1) | DR6_B(3), (1u << 1) | (1u << 3));
	check(read_dr(6) == (DR6_FIXED1 | DR6_BS | DR6_BT),
	      "a single step with only the stepper's slots hit: BS, no B bits (0x%llx)",
	      (unsigned long long)read_dr(6));
	dr_reflect_db(&vcpu, 0xFFFF0000ull | DR6_B(1), 0);
	check(read_dr(6) == (DR6_FIXED1 | DR6_BS | DR6_BT | DR6_B(1)),
	      "bits of the qualification outside DR6's writable ones do not reach it");
}

static void test_before_entry(void)
{
	uint64_t want;

	reset();
	vmcs[VMCS_EXCEPTION_BITMAP] = 1u << 14;
	dr_before_entry(&vcpu, 0);
	check(vmcs[VMCS_EXCEPTION_BITMAP] == ((1u << 14) | (1u << EXC_DB)) &&
	      vmcs[VMCS_GUEST_DR7] == DR7_FIXED1,
	      "the first entry intercepts #DB (DR6 stays the shadow's) and loads DR7 0x400");
	/* The guest: a 4-byte write watchpoint in DR2; R/W0 and LEN0 bits left over, L0 off. */
	mov_dr(2, 0, GPR_RAX, 0x9000);
	mov_dr(0, 0, GPR_RAX, 0x8000);
	mov_dr(7, 0, GPR_RAX, DR7_FIXED1 | DR7_L(2) | 0xDull << 24 | 0xFull << 16);
	check(dr_free_slots(&vcpu) == 0xB, "free slots: those the guest's DR7 leaves off (0x%x)",
	      dr_free_slots(&vcpu));
	/* The stepper: an execute breakpoint in slot 0, its address set by the stepper. */
	dr_set_slot(0, 0x4000);
	phys_writes = 0;
	dr_before_entry(&vcpu, DR7_L(0));
	want = DR7_FIXED1 | DR7_L(2) | 0xDull << 24 | DR7_L(0);
	check(vmcs[VMCS_GUEST_DR7] == want,
	      "the VMCS's DR7: the guest's, plus the stepper's L0 with R/W0 = LEN0 = 0 (0x%llx)",
	      (unsigned long long)vmcs[VMCS_GUEST_DR7]);
	check(phys_writes == 1u << 2 && phys_dr[2] == 0x9000 && phys_dr[0] == 0x4000,
	      "only the guest's enabled DR2 is loaded; DR0 keeps the stepper's address");
	check(read_dr(7) == (DR7_FIXED1 | DR7_L(2) | 0xDull << 24 | 0xFull << 16) &&
	      read_dr(0) == 0x8000, "the guest reads its own DR7 and DR0, not the merged ones");
	check(vmcs[VMCS_EXCEPTION_BITMAP] == ((1u << 14) | (1u << EXC_DB)),
	      "#DB stays intercepted");
	dr_before_entry(&vcpu, 0);
	check(vmcs[VMCS_GUEST_DR7] == (DR7_FIXED1 | DR7_L(2) | 0xDull << 24 | 0xFull << 16),
	      "without the stepper the VMCS's DR7 is the guest's");
}

int main(void)
{
	test_shadows();
	test_dr4_dr5();
	test_reserved();
	test_cpl();
	test_gd();
	test_reflect();
	test_before_entry();
	return unit_summary();
}
