/* EPT violations: the local APIC page, data beyond RAM as on a PC; code outside RAM ends the domain. */
#include "hv/domain.h"
#include "hv/guest_mem.h"
#include "hv/insn.h"
#include "hv/sched.h"
#include "hv/vmexit.h"
#include "hv/vmx_ops.h"

/* One access to what answers at gpa: a write of *val, or a read that fills *val (size bytes). */
typedef void (*mmio_fn)(struct vcpu *v, uint64_t gpa, unsigned size, bool write, uint64_t *val);

/* Emulates the MOV at guest RIP, which touched gpa, with fn as what answers there. */
static void emulate_mov(struct vcpu *v, uint64_t gpa, mmio_fn fn)
{
	uint8_t bytes[INSN_MAX_LEN];
	unsigned n = guest_fetch_insn(v, bytes);
	struct insn_mmio in;
	enum insn_err err;
	uint64_t val;

	err = insn_decode_mmio(bytes, n, guest_code_mode(), &in);
	if (err != INSN_OK) {
		dom_kill(v->dom, v, "access to guest-physical 0x%lx by an instruction perfvisor "
			 "cannot emulate (%s)", gpa, insn_strerror(err));
		return;
	}
	if (in.write) {
		val = in.src == INSN_SRC_IMM ? in.imm : insn_store_value(&in, v->gpr[in.reg]);
		fn(v, gpa, in.size, true, &val);
	} else {
		val = 0;
		fn(v, gpa, in.size, false, &val);
		v->gpr[in.reg] = insn_load_result(&in, v->gpr[in.reg], val);
	}
	vcpu_retire_insn(v, in.len);
}

/* SDM Vol. 3A 11.4.1: the xAPIC is memory-mapped. */
static void apic_access(struct vcpu *v, uint64_t gpa, unsigned size, bool write, uint64_t *val)
{
	struct vapic_ipi ipi;
	bool send = false;

	spin_lock(&v->lock);
	if (write)
		send = vapic_write(&v->apic, gpa & 0xFFF, size, (uint32_t)*val, sched_guest_tsc(v),
				   &ipi);
	else
		*val = vapic_read(&v->apic, gpa & 0xFFF, size, sched_guest_tsc(v));
	spin_unlock(&v->lock);
	if (send)
		sched_send_ipi(v, &ipi);
}

/* Nothing answers: as on a PC's bus, a read floats to all ones and a write goes nowhere. */
static void unbacked_access(struct vcpu *v, uint64_t gpa, unsigned size, bool write,
			    uint64_t *val)
{
	(void)v;
	(void)gpa;
	if (!write)
		*val = ~0ull >> (64 - 8 * size);
}

/*
 * SDM Vol. 3C 28.2.1, table 28-7: bits 0-2 say read, write or fetch; bit 7 that a linear
 * address is known, and bit 8 then whether the access was to it (else to a paging structure).
 */
#define QUAL_FETCH		(1ull << 2)
#define QUAL_LINEAR_VALID	(1ull << 7)
#define QUAL_TRANSLATED		(1ull << 8)

void exit_ept_violation(struct vcpu *v, uint64_t qual)
{
	uint64_t gpa = vmread(VMCS_GUEST_PHYS_ADDR);
	bool data = (qual & QUAL_LINEAR_VALID) && (qual & QUAL_TRANSLATED) && !(qual & QUAL_FETCH);

	if ((gpa & ~0xFFFull) == VAPIC_BASE && data) {
		emulate_mov(v, gpa, apic_access);
		return;
	}
	if (gpa >= v->dom->ro_start && gpa < v->dom->ro_end) {
		dom_kill(v->dom, v, "write to its read-only PMU page at guest-physical 0x%lx", gpa);
		return;
	}
	/* Data beyond RAM behaves as on a PC; code or page tables there cannot run or walk. */
	if (data && gpa >= v->dom->ram_size) {
		emulate_mov(v, gpa, unbacked_access);
		return;
	}
	dom_kill(v->dom, v, "%s of guest-physical 0x%lx, outside its %lu MiB of RAM",
		 (qual & QUAL_FETCH) ? "instruction fetch" :
		 !(qual & QUAL_TRANSLATED) ? "page walk" : (qual & 2) ? "write" : "read", gpa,
		 v->dom->ram_size >> 20);
}
