/* QEMU's pc-testdev for kvm-unit-tests: a scratch I/O register, a page-flush port, the test RAM. */
#ifndef PERFVISOR_HV_TESTDEV_H
#define PERFVISOR_HV_TESTDEV_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The device's addresses as QEMU places them (`-device pc-testdev`, what kvm-unit-tests' x86
 * scripts add): a 32-bit register at ports 0xE0-0xE3; a page-flush port at 0xE4 (32-bit
 * writes); 64 KiB at guest-physical 0xFF000000 that reads back what was written
 * (kvm-unit-tests' x86/ioram.h IORAM_BASE_PHYS, IORAM_LEN). QEMU's byte-wise copy of the
 * register at 0xE8-0xEB, which no kvm-unit-tests test uses, is left out: 0xE9 stays the
 * debug console. Its IRQ lines at 0x2000 are hv/exit_io.c's, for every domain.
 */
#define TESTDEV_PORT_DATA	0xE0
#define TESTDEV_PORT_FLUSH	0xE4
#define TESTDEV_IOMEM_BASE	0xFF000000ull
#define TESTDEV_IOMEM_LEN	0x10000ull

struct testdev {
	uint32_t data;		/* the scratch register */
};

/* Whether port belongs to the device's register or flush port. */
bool testdev_claims(uint16_t port);

/*
 * A guest IN/OUT of size (1, 2, 4) bytes at port, one testdev_claims() accepts. The register
 * is four byte lanes, port & 3 the first: a write replaces only the lanes it covers, a read
 * returns them; lanes past the register's end are dropped on writes and read as 0. The
 * flush port takes writes and reads 0: QEMU re-protects the named page so that KVM's shadow
 * translations of it go, which EPT never holds, so here it does nothing.
 */
void testdev_io(struct testdev *t, uint16_t port, bool write, unsigned size, uint32_t *val);

#endif
