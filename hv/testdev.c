/* QEMU's pc-testdev I/O ports for one domain: the scratch register kvm-unit-tests reads back. */
#include "hv/testdev.h"

bool testdev_claims(uint16_t port)
{
	return port >= TESTDEV_PORT_DATA && port < TESTDEV_PORT_FLUSH + 4;
}

void testdev_io(struct testdev *t, uint16_t port, bool write, unsigned size, uint32_t *val)
{
	unsigned lane = port & 3;
	uint32_t mask = 0xFFFFFFFFu >> (32 - 8 * size);

	if (port >= TESTDEV_PORT_FLUSH && port < TESTDEV_PORT_FLUSH + 4) {
		if (!write)
			*val = 0;
		return;
	}
	if (write) {
		t->data = (t->data & ~(mask << 8 * lane)) | (*val & mask) << 8 * lane;
		return;
	}
	*val = (uint32_t)((t->data >> 8 * lane) & mask);
}
