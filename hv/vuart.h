/* A 16550A UART model (one per domain) that turns the guest's transmitted bytes into lines. */
#ifndef PERFVISOR_HV_VUART_H
#define PERFVISOR_HV_VUART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VUART_LINE_MAX	320	/* a longer line is handed over in pieces of this size */
#define VUART_RX_FIFO	16	/* 16550A receive FIFO depth */

/* Gets one completed line: without its '\n', NUL-terminated at line[len]. */
typedef void (*vuart_emit_fn)(void *ctx, const char *line, size_t len);

struct vuart {
	uint8_t ier, lcr, mcr, scr, dll, dlm;
	bool fifo_on;		/* FCR bit 0 */
	bool overrun;		/* LSR bit 1, cleared by reading LSR */
	bool thre_pending;	/* the THRE interrupt: set when THR empties, cleared by IIR */
	uint8_t rx[VUART_RX_FIFO];	/* only loopback (MCR bit 4) fills it */
	unsigned rx_head, rx_count;
	char line[VUART_LINE_MAX + 1];
	size_t len;
	vuart_emit_fn emit;
	void *ctx;
};

/* Power-on state; emit (not NULL) receives every completed line with ctx. */
void vuart_init(struct vuart *u, vuart_emit_fn emit, void *ctx);

/* The IRQ pin (COM1: ISA IRQ 4, edge-triggered): an enabled interrupt pending, with MCR.OUT2. */
bool vuart_irq(const struct vuart *u);

/*
 * A guest IN/OUT of size 1, 2 or 4 bytes at port base + off (off 0..7). A wider
 * access touches consecutive registers one byte each, as an 8-bit device on the
 * ISA bus sees it; bytes beyond off 7 are not ours: writes dropped, reads 0xFF.
 * Writes take *val, reads store into *val.
 */
void vuart_io(struct vuart *u, unsigned off, bool write, unsigned size, uint32_t *val);

/* A byte for the line buffer from elsewhere (port 0xE9, the console hypercall): no THR. */
void vuart_put(struct vuart *u, uint8_t c);

/* Hand over a partial last line (at domain exit). */
void vuart_flush(struct vuart *u);

#endif
