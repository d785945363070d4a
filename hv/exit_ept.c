/* EPT violations: the virtual local APIC page is emulated; any other access outside the domain's RAM ends the domain. */
#include "hv/domain.h"
#include "hv/guest_mem.h"
#include "hv/insn.h"
#include "hv/sched.h"
#include "hv/vmexit.h"
#include "hv/vmx_ops.h"

/* Emulates one MOV to or from the APIC page (SDM Vol. 3A 11.4.1: the xAPIC is memory-mapped). */
static void apic_mmio(struct vcpu *v, uint64_t gpa)
{
	uint8_t bytes[INSN_MAX_LEN];
	unsigned n = guest_fetch_insn(v, bytes);
	struct insn_mmio in;
	enum insn_err err;

	err = insn_decode_mmio(bytes, n, guest_code_mode(), &in);
	if (err != INSN_OK) {
		dom_kill(v->dom, v, "APIC access at 0x%lx by an instruction perfvisor cannot emulate "
			 "(%s)", gpa, insn_strerror(err));
		return;
	}
	if (in.write) {
		uint64_t val = in.src == INSN_SRC_IMM ? in.imm :
			       insn_store_value(&in, v->gpr[in.reg]);
		struct vapic_ipi ipi;
		bool send;

		spin_lock(&v->lock);
		send = vapic_write(&v->apic, gpa & 0xFFF, in.size, (uint32_t)val,
				   sched_guest_tsc(v), &ipi);
		spin_unlock(&v->lock);
		if (send)
			sched_send_ipi(v, &ipi);
	} else {
		uint32_t val;

		spin_lock(&v->lock);
		val = vapic_read(&v->apic, gpa & 0xFFF, in.size, sched_guest_tsc(v));
		spin_unlock(&v->lock);
		v->gpr[in.reg] = insn_load_result(&in, v->gpr[in.reg], val);
	}
	vcpu_retire_insn(v, in.len);
}

/* SDM Vol. 3C 28.2.1, table 28-7: bits 0-2 say read, write or fetch. */
void exit_ept_violation(struct vcpu *v, uint64_t qual)
{
	uint64_t gpa = vmread(VMCS_GUEST_PHYS_ADDR);

	if (vapic_page(&v->apic, gpa) && !(qual & 4)) {
		apic_mmio(v, gpa);
		return;
	}
	if (gpa >= v->dom->ro_start && gpa < v->dom->ro_end) {
		dom_kill(v->dom, v, "write to its read-only PMU page at guest-physical 0x%lx", gpa);
		return;
	}
	dom_kill(v->dom, v, "%s of guest-physical 0x%lx, outside its %lu MiB of RAM",
		 (qual & 4) ? "instruction fetch" : (qual & 2) ? "write" : "read", gpa,
		 v->dom->ram_size >> 20);
}
