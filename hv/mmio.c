/* Guest MMIO dispatch: a small table of emulated regions, each reached by emulating one MOV. */
#include "hv/domain.h"
#include "hv/guest_mem.h"
#include "hv/insn.h"
#include "hv/irq.h"
#include "hv/mmio.h"
#include "hv/sched.h"
#include "hv/vcpu.h"
#include "hv/vioapic.h"
#include "hv/vmx_ops.h"

/* SDM Vol. 3A 11.4.1: the xAPIC is memory-mapped, at the base IA32_APIC_BASE gives. */
static void apic_access(struct vcpu *v, uint64_t gpa, unsigned size, bool write, uint64_t *val)
{
	struct vapic_ipi ipi;
	bool send;

	spin_lock(&v->lock);
	if (!write) {
		*val = vapic_read(&v->apic, gpa & 0xFFF, size, sched_guest_tsc(v));
		spin_unlock(&v->lock);
		return;
	}
	send = vapic_write(&v->apic, gpa & 0xFFF, size, (uint32_t)*val, sched_guest_tsc(v), &ipi);
	spin_unlock(&v->lock);
	irq_apic_write_done(v, send ? &ipi : NULL);
}

static void ioapic_access(struct vcpu *v, uint64_t gpa, unsigned size, bool write, uint64_t *val)
{
	struct domain *d = v->dom;
	struct vapic_ipi msg;
	bool send = false;

	spin_lock(&d->ioapic_lock);
	if (write)
		send = vioapic_write(&d->ioapic, gpa - IOAPIC_DEFAULT_BASE, size, (uint32_t)*val,
				     &msg);
	else
		*val = vioapic_read(&d->ioapic, gpa - IOAPIC_DEFAULT_BASE, size);
	spin_unlock(&d->ioapic_lock);
	if (send)
		sched_send_ipi(v, &msg);
}

static bool apic_here(struct vcpu *v, uint64_t gpa)
{
	return vapic_page(&v->apic, gpa);
}

static bool ioapic_here(struct vcpu *v, uint64_t gpa)
{
	(void)v;
	return gpa >= IOAPIC_DEFAULT_BASE && gpa < IOAPIC_DEFAULT_BASE + VIOAPIC_SIZE;
}

/* The emulated regions, looked up in order; the local APIC first, as on a PC. */
static const struct mmio_region {
	bool (*here)(struct vcpu *v, uint64_t gpa);
	mmio_fn fn;
} regions[] = {
	{ apic_here, apic_access },
	{ ioapic_here, ioapic_access },
};

void mmio_emulate(struct vcpu *v, uint64_t gpa, mmio_fn fn)
{
	uint8_t bytes[INSN_MAX_LEN];
	unsigned n = guest_fetch_insn(v, bytes);
	struct insn_mmio in;
	enum insn_err err;
	uint64_t val;

	err = insn_decode_mmio(bytes, n, guest_code_mode(), &in);
	if (err != INSN_OK) {
		dom_kill(v->dom, v, "MMIO access at 0x%lx by an instruction perfvisor cannot "
			 "emulate (%s)", gpa, insn_strerror(err));
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

/* SDM Vol. 3C 28.2.1, table 28-7: bit 2 of the qualification is an instruction fetch. */
bool mmio_handle(struct vcpu *v, uint64_t gpa, uint64_t qual)
{
	if (qual & 4)
		return false;
	for (unsigned i = 0; i < sizeof(regions) / sizeof(regions[0]); i++) {
		if (regions[i].here(v, gpa)) {
			mmio_emulate(v, gpa, regions[i].fn);
			return true;
		}
	}
	return false;
}
