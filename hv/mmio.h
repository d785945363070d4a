/* Guest MMIO: the table of emulated regions (local APIC, I/O APIC) and the one-MOV emulation. */
#ifndef PERFVISOR_HV_MMIO_H
#define PERFVISOR_HV_MMIO_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

/* One access to a device: a write of *val, or a read that fills *val (size bytes). */
typedef void (*mmio_fn)(struct vcpu *v, uint64_t gpa, unsigned size, bool write, uint64_t *val);

/*
 * An EPT violation at gpa (qual: its exit qualification): if a region of the table claims it,
 * the MOV is emulated and true returned; false leaves it to the caller (RAM, unbacked).
 */
bool mmio_handle(struct vcpu *v, uint64_t gpa, uint64_t qual);

/* Emulates the MOV at guest RIP, which touched gpa, with fn as the device (retires it). */
void mmio_emulate(struct vcpu *v, uint64_t gpa, mmio_fn fn);

#endif
