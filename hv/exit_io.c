/* Port I/O exits: IN/OUT to the domain's devices (COM1, fw_cfg, exits, PIC, testdev). */
#include "include/x86/rflags.h"
#include "lib/printk.h"
#include "hv/domain.h"
#include "hv/guest_mem.h"
#include "hv/irq.h"
#include "hv/vmexit.h"
#include "hv/vmx_caps.h"
#include "hv/vmx_ops.h"

#define PORT_COM1	0x3F8
#define PORT_PIC1	0x20
#define PORT_PIC2	0xA0
#define PORT_POST	0x80
#define PORT_E9		0xE9
#define PORT_EXIT	0xF4
#define PORT_SHUTDOWN	0x8900
#define PORT_IRQ_LINES	0x2000

/* SDM Vol. 3C 28.2.1, table 28-5. */
#define IO_QUAL_IN	0x08
#define IO_QUAL_STRING	0x10
#define IO_QUAL_REP	0x20

/* IA32_VMX_BASIC[54]: INS/OUTS exits give the instruction information (SDM Vol. 3D A.1). */
#define VMX_BASIC_INSOUTS_INFO	(1ull << 54)

/* Bochs's shutdown port takes the bytes of "Shutdown" one by one; any other byte restarts the match. */
static void shutdown_byte(struct domain *d, uint8_t c)
{
	static const char word[] = "Shutdown";

	if (c == (uint8_t)word[d->shutdown_match])
		d->shutdown_match++;
	else
		d->shutdown_match = c == (uint8_t)word[0];
	if (d->shutdown_match == sizeof(word) - 1)
		dom_exit(d, 0);
}

/* One access of `size` bytes, to whichever device decodes the port. */
static void port_access(struct vcpu *v, uint16_t port, bool in, unsigned size, uint32_t *val)
{
	struct domain *d = v->dom;

	if (port >= PORT_COM1 && port < PORT_COM1 + 8) {
		dom_uart_io(v, port - PORT_COM1, !in, size, val);
	} else if (port >= FWCFG_PORT_SELECTOR && port <= FWCFG_PORT_DATA) {
		fwcfg_io(&d->fwcfg, port - FWCFG_PORT_SELECTOR, !in, size, val);
	} else if (port == PORT_EXIT && !in) {
		/* QEMU's isa-debug-exit convention: the value written is the guest's exit code. */
		dom_exit(d, (int)*val);
	} else if (port == PORT_SHUTDOWN && !in) {
		for (unsigned i = 0; i < size; i++)
			shutdown_byte(d, (uint8_t)(*val >> (8 * i)));
	} else if (port == PORT_E9 && !in) {
		/* The debug console: the same line buffer as COM1's transmitter. */
		dom_uart_write(d, &(char){ (char)(*val & 0xFF) }, 1);
	} else if (d->cfg.testdev && testdev_claims(port)) {
		testdev_io(&d->testdev, port, !in, size, val);
	} else if (port >= PORT_IRQ_LINES && port < PORT_IRQ_LINES + VIOAPIC_PINS && !in) {
		/* QEMU's pc-testdev IRQ lines, what kvm-unit-tests drives: the I/O APIC's pins. */
		irq_ioapic_line(v, port - PORT_IRQ_LINES, *val & 1);
	} else if ((port & ~1) == PORT_PIC1 || (port & ~1) == PORT_PIC2) {
		/* 8259 PICs: masking writes are accepted and ignored; reads see all masked. */
		if (in)
			*val = 0xFF;
	} else if (in) {
		/* Nothing decodes this port: the bus floats high, as on hardware. */
		*val = 0xFFFFFFFFu >> (32 - 8 * size);
		if (port != PORT_POST)
			pr_debug("[%s] read of unclaimed port 0x%x\n", d->cfg.name, port);
	} else if (port != PORT_POST) {
		pr_debug("[%s] write 0x%x to unclaimed port 0x%x\n", d->cfg.name, *val, port);
	}
}

/* The address size of the INS/OUTS that exited, as a mask of its offsets and count. */
static uint64_t string_addr_mask(void)
{
	unsigned code;

	/* SDM Vol. 3C 28.2.5, table 28-8: bits 9:7, 0 16-bit, 1 32-bit, 2 64-bit. */
	if (vmx_caps.basic & VMX_BASIC_INSOUTS_INFO)
		code = (vmread(VMCS_EXIT_INSN_INFO) >> 7) & 7;
	else	/* Without it, the code's default address size (an 0x67 prefix is not seen). */
		code = guest_code_mode() == INSN_MODE_16 ? 0 : guest_code_mode() == INSN_MODE_32;
	return code == 0 ? 0xFFFF : code == 1 ? 0xFFFFFFFFull : ~0ull;
}

/*
 * reg moved by delta within the address size: a 16-bit result keeps the bits above it, a
 * 32-bit one zero-extends (SDM Vol. 1 3.4.1.1).
 */
static uint64_t addr_step(uint64_t reg, int64_t delta, uint64_t mask)
{
	uint64_t r = (reg + (uint64_t)delta) & mask;

	return mask == 0xFFFF ? (reg & ~mask) | r : r;
}

/*
 * INS/OUTS, one element per exit at the linear address of its memory operand, which the exit
 * gives (SDM Vol. 3C 28.2.1, guest-linear address; the segment and address size are already
 * in it). With REP the instruction stays at RIP until rCX reaches 0, so each element is its
 * own exit and interrupts come between elements, as on hardware (SDM Vol. 2B, REP); it
 * retires once. Memory outside RAM reads all ones and takes no writes, as for MOV; INS reads
 * the port before its memory write faults.
 */
static void string_io(struct vcpu *v, uint64_t qual, uint16_t port, bool in, unsigned size)
{
	uint64_t mask = string_addr_mask(), la = vmread(VMCS_GUEST_LINEAR_ADDR);
	int64_t step = vmread(VMCS_GUEST_RFLAGS) & RFLAGS_DF ? -(int64_t)size : (int64_t)size;
	bool rep = qual & IO_QUAL_REP;
	struct gpt_result res;
	enum gpt_status st;
	uint32_t val = 0xFFFFFFFFu;

	if (rep && !(v->gpr[GPR_RCX] & mask)) {
		vcpu_advance_rip(v);
		return;
	}
	if (in) {
		port_access(v, port, true, size, &val);
		st = guest_write(v, la, &val, size, &res);
	} else {
		st = guest_read(v, &val, la, size, GPT_READ, &res);
		val &= 0xFFFFFFFFu >> (32 - 8 * size);
		if (st == GPT_OK || st == GPT_BAD_GPA)
			port_access(v, port, false, size, &val);
	}
	if (st == GPT_PAGE_FAULT) {
		v->cr2 = res.la;
		vcpu_inject_exception(v, 14, true, res.pf_ec);
		return;
	}
	if (st == GPT_NON_CANONICAL) {
		vcpu_inject_gp(v);
		return;
	}
	if (st == GPT_BAD_MODE) {
		dom_kill(v->dom, v, "string I/O to port 0x%x under 5-level paging is not emulated",
			 port);
		return;
	}
	if (in)
		v->gpr[GPR_RDI] = addr_step(v->gpr[GPR_RDI], step, mask);
	else
		v->gpr[GPR_RSI] = addr_step(v->gpr[GPR_RSI], step, mask);
	if (rep) {
		v->gpr[GPR_RCX] = addr_step(v->gpr[GPR_RCX], -1, mask);
		if (v->gpr[GPR_RCX] & mask)
			return;
	}
	vcpu_advance_rip(v);
}

/* SDM Vol. 3C 28.2.1, table 28-5: size, direction, string, REP and port in the qualification. */
void exit_io(struct vcpu *v, uint64_t qual)
{
	unsigned size = (qual & 7) + 1;
	bool in = qual & IO_QUAL_IN;
	uint16_t port = qual >> 16;
	uint32_t val;

	if (qual & IO_QUAL_STRING) {
		string_io(v, qual, port, in, size);
		return;
	}
	val = in ? 0 : (uint32_t)v->gpr[GPR_RAX] & (0xFFFFFFFFu >> (32 - 8 * size));
	port_access(v, port, in, size, &val);
	if (in) {
		/* IN of 32 bits zero-extends into RAX; 8 and 16 bits keep the rest (SDM Vol. 1 3.4.1.1). */
		uint64_t mask = 0xFFFFFFFFull >> (32 - 8 * size);

		v->gpr[GPR_RAX] = size == 4 ? val : (v->gpr[GPR_RAX] & ~mask) | (val & mask);
	}
	vcpu_advance_rip(v);
}
