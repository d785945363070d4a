/* Polled COM1 output at 115200 8N1, mirrored to port 0xE9 (Bochs/QEMU debug console). */
#include "lib/console.h"
#include "lib/cpu.h"

#define COM1		0x3F8
#define LSR_THRE	0x20	/* transmit holding register empty */
#define LSR_TEMT	0x40	/* transmitter completely idle */
/* Bounded spins: a machine with no UART reads 0xFF or 0 forever; never hang on it. */
#define SPIN_LIMIT	100000

static enum con_sink con_sinks = CON_BOTH;

void con_init(void)
{
	outb(COM1 + 1, 0x00);	/* no UART interrupts: we poll */
	outb(COM1 + 3, 0x80);	/* DLAB on to set the divisor */
	outb(COM1 + 0, 0x01);	/* 115200 baud */
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03);	/* 8N1, DLAB off */
	outb(COM1 + 2, 0xC7);	/* FIFO on and cleared */
	outb(COM1 + 4, 0x03);	/* DTR, RTS */
}

void con_set_sinks(enum con_sink sinks)
{
	con_sinks = sinks;
}

static void wait_lsr(unsigned char bit)
{
	for (int i = 0; i < SPIN_LIMIT && !(inb(COM1 + 5) & bit); i++)
		cpu_relax();
}

/* The 16550A's transmit FIFO: once THRE says it is empty, 16 bytes fit without waiting. */
#define TX_FIFO		16

static unsigned tx_room;

static void con_putc(char c)
{
	if (con_sinks & CON_SERIAL) {
		if (!tx_room) {
			wait_lsr(LSR_THRE);
			tx_room = TX_FIFO;
		}
		outb(COM1, (unsigned char)c);
		tx_room--;
	}
	if (con_sinks & CON_E9)
		outb(0xE9, (unsigned char)c);
}

void con_write(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n')
			con_putc('\r');
		con_putc(s[i]);
	}
}

void con_drain(void)
{
	if (con_sinks & CON_SERIAL)
		wait_lsr(LSR_TEMT);
}
