/* QEMU's fw_cfg interface (selector 0x510, data 0x511), which perfvisor offers too. */
#include <stdbool.h>

#include "guest-stub/rt/rt.h"
#include "include/perfvisor/fwcfg.h"

static void read_item(uint16_t key, uint8_t *buf, size_t len)
{
	/* QEMU docs/specs/fw_cfg.rst: select with a 16-bit write, then read the bytes in order. */
	rt_outw(FWCFG_PORT_SELECTOR, key);
	for (size_t i = 0; i < len; i++)
		buf[i] = rt_inb(FWCFG_PORT_DATA);
}

bool rt_fwcfg_read(uint16_t key, void *buf, size_t len)
{
	uint8_t sig[4];

	/* Without the device the port reads all-ones: the signature tells. */
	read_item(FWCFG_SIGNATURE, sig, sizeof(sig));
	if (sig[0] != 'Q' || sig[1] != 'E' || sig[2] != 'M' || sig[3] != 'U')
		return false;
	read_item(key, buf, len);
	return true;
}
