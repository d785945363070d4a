/* QEMU's fw_cfg interface (selector 0x510, data 0x511), which perfvisor offers too. */
#include <stdbool.h>

#include "guest-stub/rt/rt.h"

#define FW_CFG_SELECTOR	0x510
#define FW_CFG_DATA	0x511
#define FW_CFG_SIGNATURE 0x0000

static void read_item(uint16_t key, uint8_t *buf, size_t len)
{
	/* QEMU docs/specs/fw_cfg.rst: select with a 16-bit write, then read the bytes in order. */
	rt_outw(FW_CFG_SELECTOR, key);
	for (size_t i = 0; i < len; i++)
		buf[i] = rt_inb(FW_CFG_DATA);
}

bool rt_fwcfg_read(uint16_t key, void *buf, size_t len)
{
	uint8_t sig[4];

	/* Without the device the port reads all-ones: the signature tells. */
	read_item(FW_CFG_SIGNATURE, sig, sizeof(sig));
	if (sig[0] != 'Q' || sig[1] != 'E' || sig[2] != 'M' || sig[3] != 'U')
		return false;
	read_item(key, buf, len);
	return true;
}
