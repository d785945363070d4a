/* Port I/O exits: routes IN/OUT to the domain's devices (COM1, fw_cfg, exit ports, PIC); other ports float. */
#include "lib/printk.h"
#include "hv/domain.h"
#include "hv/irq.h"
#include "hv/vmexit.h"
#include "hv/vmx_ops.h"

#define PORT_COM1	0x3F8
#define PORT_PIC1	0x20
#define PORT_PIC2	0xA0
#define PORT_POST	0x80
#define PORT_E9		0xE9
#define PORT_EXIT	0xF4
#define PORT_SHUTDOWN	0x8900
#define PORT_IRQ_LINES	0x2000

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
		dom_uart_put(d, *val & 0xFF);
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

/* SDM Vol. 3C 28.2.1, table 28-5: size, direction, string, REP and port in the qualification. */
void exit_io(struct vcpu *v, uint64_t qual)
{
	unsigned size = (qual & 7) + 1;
	bool in = qual & 8;
	uint16_t port = qual >> 16;
	uint32_t val;

	if (qual & 0x10) {
		/* INS/OUTS: not offered by the device model; the domain is stopped, not misled. */
		dom_kill(v->dom, v, "string I/O (%s) to port 0x%x is not emulated",
			 in ? "INS" : "OUTS", port);
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
