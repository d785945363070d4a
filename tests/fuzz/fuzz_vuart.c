/* Fuzz target for hv/vuart.c: any sequence of port accesses of any offset, size and direction. */
#include "hv/vuart.c"
#include "tests/fuzz/fakes.h"

static void emit(void *ctx, const char *line, size_t len)
{
	(void)ctx;
	FZ_CHECK(len <= VUART_LINE_MAX && line[len] == '\0', "line of %zu bytes", len);
	FZ_CHECK(!memchr(line, '\n', len) && !memchr(line, '\r', len), "line end inside a line");
}

static void check_state(const struct vuart *u)
{
	FZ_CHECK(u->len < VUART_LINE_MAX, "line buffer %zu", u->len);
	FZ_CHECK(u->rx_head < VUART_RX_FIFO && u->rx_count <= (u->fifo_on ? VUART_RX_FIFO : 1u),
		 "receive FIFO %u at %u", u->rx_count, u->rx_head);
	FZ_CHECK(!(u->ier & ~IER_MASK) && !(u->mcr & ~MCR_MASK), "IER 0x%x, MCR 0x%x", u->ier,
		 u->mcr);
}

static const unsigned sizes[] = { 1, 2, 4, 1 };

/* Input: accesses of an opcode byte (direction, size), an offset byte and a 4-byte value. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_sequence(data, size);
	struct vuart u;

	vuart_init(&u, emit, NULL);
	while (in.n) {
		uint8_t op = fz_u8(&in);
		bool write = op & 1;
		/* Mostly the sizes IN/OUT have, sometimes anything. */
		unsigned bytes = op & 0x80 ? op >> 1 & 0x3f : sizes[op >> 1 & 3];
		unsigned off = fz_u8(&in);
		uint32_t val = fz_u32(&in), before = val;

		if (!(op & 0x40))
			off &= 0xf;
		vuart_io(&u, off, write, bytes, &val);
		if (write)
			FZ_CHECK(val == before, "a write changed the value");
		else if (bytes < 4)
			FZ_CHECK(!(val >> 8 * bytes), "%u-byte read 0x%x", bytes, val);
		check_state(&u);
	}
	vuart_flush(&u);
	FZ_CHECK(u.len == 0, "flush left %zu bytes", u.len);
	return 0;
}
