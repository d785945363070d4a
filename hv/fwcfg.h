/* The QEMU fw_cfg legacy I/O interface (selector 0x510, data 0x511) for one domain. */
#ifndef PERFVISOR_HV_FWCFG_H
#define PERFVISOR_HV_FWCFG_H

#include <stdbool.h>
#include <stdint.h>

#include "include/perfvisor/fwcfg.h"

struct fwcfg {
	uint64_t ram_size;
	uint16_t ncpus;
	uint16_t key;		/* selected item */
	uint32_t offset;	/* next data byte of it */
};

void fwcfg_init(struct fwcfg *f, uint64_t ram_size, uint16_t ncpus);

/*
 * A guest IN/OUT of size bytes at FWCFG_PORT_SELECTOR + off. As in QEMU, only a 16-bit
 * write to the selector and a byte read of the data port do anything: a 16-bit
 * selector write picks an item and rewinds it, a data byte read returns its next
 * byte (0 past its end or for an unknown key). Every other access (byte or 32-bit
 * selector writes, data writes, wider data reads) is ignored, and reads of
 * anything but a data byte return 0.
 */
void fwcfg_io(struct fwcfg *f, unsigned off, bool write, unsigned size, uint32_t *val);

#endif
