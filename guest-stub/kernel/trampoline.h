/* Where the AP start-up code runs, shared by trampoline.S and smpboot.c. */
#ifndef GUEST_STUB_KERNEL_TRAMPOLINE_H
#define GUEST_STUB_KERNEL_TRAMPOLINE_H

/*
 * A SIPI starts an AP in real mode at CS:IP = (vector << 8):0, so the code must sit in a
 * page below 1 MiB: one above the loader's data (below 0x10000) and below the image.
 */
#define TRAMPOLINE_BASE	0x70000
#define TRAMPOLINE_SIPI_VECTOR	(TRAMPOLINE_BASE >> 12)

#endif
