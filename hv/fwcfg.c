/* The QEMU fw_cfg legacy I/O interface (selector 0x510, data 0x511) for one domain. */
#include "hv/fwcfg.h"

void fwcfg_init(struct fwcfg *f, uint64_t ram_size, uint16_t ncpus)
{
	f->ram_size = ram_size;
	f->ncpus = ncpus;
	f->key = FWCFG_SIGNATURE;
	f->offset = 0;
}

/* Byte i of the selected item; integers are little-endian. */
static uint8_t item_byte(const struct fwcfg *f, uint32_t i)
{
	switch (f->key) {
	case FWCFG_SIGNATURE:
		return i < 4 ? "QEMU"[i] : 0;
	case FWCFG_ID:
		return i < 4 ? (uint32_t)FWCFG_ID_TRADITIONAL >> 8 * i : 0;
	case FWCFG_RAM_SIZE:
		return i < 8 ? f->ram_size >> 8 * i : 0;
	case FWCFG_NB_CPUS:
		return i < 2 ? f->ncpus >> 8 * i : 0;
	default:
		return 0;
	}
}

void fwcfg_io(struct fwcfg *f, unsigned off, bool write, unsigned size, uint32_t *val)
{
	if (write) {
		if (off == 0 && size == 2) {
			f->key = *val;
			f->offset = 0;
		}
		return;
	}
	*val = 0;
	if (off == 1 && size == 1) {
		*val = item_byte(f, f->offset);
		/* Saturate instead of wrapping back to the item's first byte. */
		if (f->offset != UINT32_MAX)
			f->offset++;
	}
}
