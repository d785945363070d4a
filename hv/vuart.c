/* A 16550A UART model (one per domain) that turns the guest's transmitted bytes into lines. */
#include "hv/vuart.h"

/*
 * Register numbers and bits from the PC16550D data sheet. Output is instantaneous, so the
 * transmitter holding register is always empty. Interrupts (IIR, by priority): receiver line
 * status (an overrun), received data (loopback only: nothing else feeds the receiver) and THR
 * empty; modem status never changes, so it never interrupts. The IRQ pin is the OR of the
 * enabled ones gated by OUT2, as PC boards wire it (vuart_irq()).
 */
#define REG_DATA	0	/* RBR/THR, or DLL when LCR.DLAB */
#define REG_IER		1	/* or DLM when LCR.DLAB */
#define REG_IIR		2	/* FCR on write */
#define REG_LCR		3
#define REG_MCR		4
#define REG_LSR		5
#define REG_MSR		6
#define REG_SCR		7

#define IER_MASK	0x0f
#define IIR_NONE	0x01
#define IIR_LSR		0x06	/* receiver line status */
#define IIR_RX		0x04	/* received data available */
#define IIR_THRE	0x02	/* transmitter holding register empty */
#define IER_RX		0x01
#define IER_THRE	0x02
#define IER_LSR		0x04
#define MCR_OUT2	0x08
#define IIR_FIFO_ON	0xc0
#define FCR_ENABLE	0x01
#define FCR_CLEAR_RX	0x02
#define LCR_DLAB	0x80
#define MCR_MASK	0x1f
#define MCR_LOOP	0x10
#define LSR_DR		0x01
#define LSR_OE		0x02
#define LSR_THRE	0x20
#define LSR_TEMT	0x40
#define MSR_CTS		0x10
#define MSR_DSR		0x20
#define MSR_DCD		0x80

void vuart_init(struct vuart *u, vuart_emit_fn emit, void *ctx)
{
	__builtin_memset(u, 0, sizeof(*u));
	u->dll = 1;	/* 115200 baud; the divisor has no effect here */
	u->emit = emit;
	u->ctx = ctx;
}

static void emit_line(struct vuart *u)
{
	u->line[u->len] = '\0';
	u->emit(u->ctx, u->line, u->len);
	u->len = 0;
}

void vuart_flush(struct vuart *u)
{
	if (u->len)
		emit_line(u);
}

/* Loopback receive; the FIFO holds 16 bytes, or 1 when FIFOs are off. */
static void rx_push(struct vuart *u, uint8_t c)
{
	if (u->rx_count == (u->fifo_on ? VUART_RX_FIFO : 1u)) {
		u->overrun = true;
		return;
	}
	u->rx[(u->rx_head + u->rx_count++) % VUART_RX_FIFO] = c;
}

static uint8_t rx_pop(struct vuart *u)
{
	uint8_t c;

	if (!u->rx_count)
		return 0;
	c = u->rx[u->rx_head];
	u->rx_head = (u->rx_head + 1) % VUART_RX_FIFO;
	u->rx_count--;
	return c;
}

static void transmit(struct vuart *u, uint8_t c)
{
	/* A THR write clears the THRE interrupt; the byte leaves at once and THR is empty again. */
	u->thre_pending = true;
	/* In loopback the transmitter feeds the receiver and the line stays idle. */
	if (u->mcr & MCR_LOOP) {
		rx_push(u, c);
		return;
	}
	vuart_put(u, c);
}

void vuart_put(struct vuart *u, uint8_t c)
{
	/* '\r' is dropped: the console adds its own line ends. */
	if (c == '\r')
		return;
	if (c == '\n') {
		emit_line(u);
		return;
	}
	u->line[u->len++] = c;
	if (u->len == VUART_LINE_MAX)
		emit_line(u);
}

static void write_reg(struct vuart *u, unsigned reg, uint8_t v)
{
	bool dlab = u->lcr & LCR_DLAB;

	switch (reg) {
	case REG_DATA:
		if (dlab)
			u->dll = v;
		else
			transmit(u, v);
		break;
	case REG_IER:
		if (dlab)
			u->dlm = v;
		else {
			/* Enabling ETBEI while THR is empty raises the THRE interrupt (PC16550D). */
			if ((v & IER_THRE) && !(u->ier & IER_THRE))
				u->thre_pending = true;
			u->ier = v & IER_MASK;
		}
		break;
	case REG_IIR:
		/* Changing the FIFO enable, or FCR bit 1, empties the receive FIFO. */
		if ((v & FCR_CLEAR_RX) || u->fifo_on != (v & FCR_ENABLE))
			u->rx_count = 0;
		u->fifo_on = v & FCR_ENABLE;
		break;
	case REG_LCR:
		u->lcr = v;
		break;
	case REG_MCR:
		u->mcr = v & MCR_MASK;
		break;
	case REG_SCR:
		u->scr = v;
		break;
	default:	/* LSR and MSR writes are factory-test only: ignored */
		break;
	}
}

/* The highest-priority enabled interrupt, as IIR bits 3:0. */
static uint8_t pending(const struct vuart *u)
{
	if ((u->ier & IER_LSR) && u->overrun)
		return IIR_LSR;
	if ((u->ier & IER_RX) && u->rx_count)
		return IIR_RX;
	if ((u->ier & IER_THRE) && u->thre_pending)
		return IIR_THRE;
	return IIR_NONE;
}

bool vuart_irq(const struct vuart *u)
{
	return (u->mcr & MCR_OUT2) && pending(u) != IIR_NONE;
}

static uint8_t read_reg(struct vuart *u, unsigned reg)
{
	bool dlab = u->lcr & LCR_DLAB;
	uint8_t v;

	switch (reg) {
	case REG_DATA:
		return dlab ? u->dll : rx_pop(u);
	case REG_IER:
		return dlab ? u->dlm : u->ier;
	case REG_IIR:
		v = pending(u);
		/* Reading IIR while it names THRE clears that interrupt (PC16550D table 4). */
		if (v == IIR_THRE)
			u->thre_pending = false;
		return v | (u->fifo_on ? IIR_FIFO_ON : 0);
	case REG_LCR:
		return u->lcr;
	case REG_MCR:
		return u->mcr;
	case REG_LSR:
		v = LSR_THRE | LSR_TEMT | (u->rx_count ? LSR_DR : 0) | (u->overrun ? LSR_OE : 0);
		u->overrun = false;
		return v;
	case REG_MSR:
		/* Loopback wires DTR->DSR, RTS->CTS, OUT1->RI, OUT2->DCD; else a ready peer. */
		if (u->mcr & MCR_LOOP)
			return (u->mcr & 0x02) << 3 | (u->mcr & 0x01) << 5 | (u->mcr & 0x0c) << 4;
		return MSR_CTS | MSR_DSR | MSR_DCD;
	case REG_SCR:
		return u->scr;
	default:
		return 0xff;	/* beyond the 8 ports: nothing drives the bus */
	}
}

void vuart_io(struct vuart *u, unsigned off, bool write, unsigned size, uint32_t *val)
{
	uint32_t out = 0;
	unsigned i;

	for (i = 0; i < size && i < 4; i++) {
		unsigned reg = off < 8 ? off + i : 8;

		if (write)
			write_reg(u, reg, *val >> 8 * i);
		else
			out |= (uint32_t)read_reg(u, reg) << 8 * i;
	}
	if (!write)
		*val = out;
}
