/* QEMU's fw_cfg legacy I/O interface and the items guests read, which perfvisor offers too. */
#ifndef PERFVISOR_FWCFG_H
#define PERFVISOR_FWCFG_H

/* QEMU docs/specs/fw_cfg.rst: a 16-bit write to the selector picks an item, bytes follow. */
#define FWCFG_PORT_SELECTOR	0x510
#define FWCFG_PORT_DATA		0x511

/*
 * Items: "QEMU" (4 bytes), the interface ID (u32: bit 0 the traditional I/O interface, bit 1
 * DMA), RAM size (u64) and CPU count (u16), little-endian.
 */
#define FWCFG_SIGNATURE		0x0000
#define FWCFG_ID		0x0001
#define FWCFG_RAM_SIZE		0x0003
#define FWCFG_NB_CPUS		0x0005

#define FWCFG_ID_TRADITIONAL	0x1

#endif
