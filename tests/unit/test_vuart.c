/* Unit tests for hv/vuart.c: registers, DLAB, loopback, wide accesses and line splitting. */
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/vuart.c"

struct lines {
	unsigned n;
	char line[8][VUART_LINE_MAX + 1];
	size_t len[8];
	bool nul_ok;
};

static void on_line(void *ctx, const char *line, size_t len)
{
	struct lines *l = ctx;

	if (l->n < 8) {
		memcpy(l->line[l->n], line, len + 1);
		l->len[l->n] = len;
	}
	l->nul_ok = line[len] == '\0';
	l->n++;
}

static void out8(struct vuart *u, unsigned off, uint32_t v)
{
	vuart_io(u, off, true, 1, &v);
}

static uint32_t in8(struct vuart *u, unsigned off)
{
	uint32_t v = 0xdeadbeef;

	vuart_io(u, off, false, 1, &v);
	return v;
}

static void puts_uart(struct vuart *u, const char *s)
{
	while (*s)
		out8(u, 0, (uint8_t)*s++);
}

static void test_registers(void)
{
	struct lines l = { 0 };
	struct vuart u;

	vuart_init(&u, on_line, &l);
	check(in8(&u, 5) == 0x60, "LSR: THRE and TEMT set, no data (0x%x)", in8(&u, 5));
	check(in8(&u, 2) == 0x01, "IIR: no interrupt pending");
	check(in8(&u, 6) == 0xb0, "MSR: CTS, DSR, DCD");

	/* The usual init: DLAB on, divisor 3, DLAB off with 8N1. */
	out8(&u, 3, 0x80);
	out8(&u, 0, 0x03);
	out8(&u, 1, 0x00);
	check(in8(&u, 0) == 0x03 && in8(&u, 1) == 0x00, "DLAB=1: offsets 0/1 are DLL/DLM");
	out8(&u, 3, 0x03);
	check(in8(&u, 3) == 0x03, "LCR reads back");
	out8(&u, 1, 0xff);
	check(in8(&u, 1) == 0x0f, "DLAB=0: offset 1 is IER, 4 bits wide");
	out8(&u, 0, 'A');
	out8(&u, 3, 0x83);
	check(in8(&u, 0) == 0x03 && in8(&u, 1) == 0x00, "divisor untouched by THR/IER writes");
	out8(&u, 3, 0x03);
	check(l.n == 0 && u.len == 1 && u.line[0] == 'A',
	      "THR byte went to the line, DLL bytes did not");

	out8(&u, 2, 0xc7);
	check(in8(&u, 2) == 0xc2, "IIR shows FIFOs enabled after FCR bit 0, and the THRE "
	      "interrupt IER 0x0f enabled after the THR write");
	out8(&u, 2, 0);
	check(in8(&u, 2) == 0x01, "FIFOs off again, THRE cleared by the IIR read before");
	out8(&u, 4, 0xef);
	check(in8(&u, 4) == 0x0f, "MCR keeps bits 0-3 (0x%x)", in8(&u, 4));
	out8(&u, 7, 0x5a);
	check(in8(&u, 7) == 0x5a, "SCR is a scratch byte");
	out8(&u, 5, 0);
	out8(&u, 6, 0);
	check(in8(&u, 5) == 0x60 && in8(&u, 6) == 0xb0, "LSR and MSR writes ignored");
	check(in8(&u, 8) == 0xff && in8(&u, 1000) == 0xff, "offsets beyond 7 read 0xff");
	out8(&u, 1000, 'x');
	check(u.len == 1 && l.n == 0, "offsets beyond 7 write nothing");
}

/* The serial self-test many small kernels run before using the port. */
static void test_loopback(void)
{
	struct lines l = { 0 };
	struct vuart u;
	unsigned i, ok;

	vuart_init(&u, on_line, &l);
	out8(&u, 4, 0x1e);
	check(in8(&u, 6) == 0xd0, "loopback MSR mirrors RTS, OUT1, OUT2 (0x%x)", in8(&u, 6));
	out8(&u, 0, 0xae);
	check(in8(&u, 5) == 0x61, "loopback byte sets LSR.DR");
	check(in8(&u, 0) == 0xae, "and reads back from RBR");
	check(in8(&u, 5) == 0x60 && in8(&u, 0) == 0, "then the receiver is empty");

	/* Without FIFOs the holding register takes one byte; the second overruns. */
	out8(&u, 0, 1);
	out8(&u, 0, 2);
	check(in8(&u, 5) == 0x63, "overrun: LSR has OE and DR");
	check(in8(&u, 5) == 0x61, "reading LSR clears OE");
	check(in8(&u, 0) == 1, "the first byte survives");

	out8(&u, 2, 0x01);
	for (i = 0; i < VUART_RX_FIFO + 1; i++)
		out8(&u, 0, 0x30 + i);
	for (i = 0, ok = 0; i < VUART_RX_FIFO; i++)
		ok += in8(&u, 0) == 0x30 + i;
	check(ok == VUART_RX_FIFO && (in8(&u, 5) & 0x03) == 0x02,
	      "FIFO: 16 bytes in order, 17th overruns");
	out8(&u, 0, 'z');
	out8(&u, 2, 0x03);
	check(!(in8(&u, 5) & 1), "FCR bit 1 empties the receive FIFO");

	out8(&u, 4, 0x0f);
	puts_uart(&u, "ok\n");
	check(l.n == 1 && !strcmp(l.line[0], "ok"), "out of loopback, bytes reach the line again");
}

static void test_lines(void)
{
	struct lines l = { 0 };
	struct vuart u;
	char big[VUART_LINE_MAX + 1];

	vuart_init(&u, on_line, &l);
	puts_uart(&u, "hello\r\nworld\n\n");
	check(l.n == 3 && !strcmp(l.line[0], "hello") && l.len[0] == 5 &&
	      !strcmp(l.line[1], "world"),
	      "lines split at '\\n', '\\r' dropped");
	check(l.len[2] == 0 && l.nul_ok, "an empty line is handed over too, NUL-terminated");

	memset(&l, 0, sizeof(l));
	memset(big, 'x', VUART_LINE_MAX);
	big[VUART_LINE_MAX] = '\0';
	puts_uart(&u, big);
	check(l.n == 1 && l.len[0] == VUART_LINE_MAX && l.nul_ok,
	      "a full buffer is handed over at once");
	puts_uart(&u, "yz\n");
	check(l.n == 2 && !strcmp(l.line[1], "yz"), "the rest follows as its own piece");

	puts_uart(&u, "partial");
	vuart_flush(&u);
	check(l.n == 3 && !strcmp(l.line[2], "partial"), "flush hands over a partial line");
	vuart_flush(&u);
	check(l.n == 3, "flush with nothing pending does nothing");
}

static void test_wide(void)
{
	struct lines l = { 0 };
	struct vuart u;
	uint32_t v;

	vuart_init(&u, on_line, &l);
	v = 0x0241;
	vuart_io(&u, 0, true, 2, &v);
	check(u.len == 1 && u.line[0] == 'A' && in8(&u, 1) == 0x02, "16-bit write: THR then IER");
	out8(&u, 7, 0x77);
	vuart_io(&u, 4, false, 4, &v);
	check(v == 0x77b06000, "32-bit read at 4: MCR, LSR, MSR, SCR (0x%08x)", v);
	vuart_io(&u, 7, false, 2, &v);
	check(v == 0xff77, "16-bit read at 7: SCR, then an unclaimed 0xff");
}

/* Interrupts by priority, THRE's set and clear rules, and the IRQ pin gated by OUT2 (PC16550D). */
static void test_interrupts(void)
{
	struct lines l = { 0 };
	struct vuart u;

	vuart_init(&u, on_line, &l);
	out8(&u, 0, 'x');
	check(in8(&u, 2) == 0x01 && !vuart_irq(&u), "IER 0: no interrupt, the pin low");
	out8(&u, 4, 0x08);
	out8(&u, 1, 0x02);
	check(vuart_irq(&u), "ETBEI enabled with THR empty: THRE pending, the pin high (OUT2)");
	check(in8(&u, 2) == 0x02, "IIR names THRE");
	check(in8(&u, 2) == 0x01 && !vuart_irq(&u), "that read cleared it: the pin low");
	out8(&u, 0, 'y');
	check(vuart_irq(&u) && in8(&u, 2) == 0x02, "a THR write: THR empty again, THRE again");
	out8(&u, 1, 0x02);
	check(!vuart_irq(&u), "ETBEI written again while on: no new THRE");
	out8(&u, 0, 'z');
	out8(&u, 4, 0x00);
	check(!vuart_irq(&u) && in8(&u, 2) == 0x02, "OUT2 clear: the pin low, IIR still names it");
	/* Loopback feeds the receiver: received data goes before THRE, the line status first. */
	out8(&u, 4, 0x18);
	out8(&u, 1, 0x07);
	out8(&u, 0, 'a');
	check(in8(&u, 2) == 0x04, "loopback byte received: IIR names received data (before THRE)");
	check(in8(&u, 0) == 'a' && in8(&u, 2) == 0x02, "read: THRE is next");
	for (unsigned i = 0; i < 2; i++)
		out8(&u, 0, 'b');
	check(in8(&u, 2) == 0x06, "FIFOs off, a second byte overran: line status first");
	in8(&u, 5);
	check(in8(&u, 2) == 0x04, "LSR read clears the overrun: received data next");
	out8(&u, 1, 0x00);
	check(!vuart_irq(&u) && in8(&u, 2) == 0x01, "IER 0: nothing pending, the pin low");
}

int main(void)
{
	test_interrupts();
	test_registers();
	test_loopback();
	test_lines();
	test_wide();
	return unit_summary();
}
