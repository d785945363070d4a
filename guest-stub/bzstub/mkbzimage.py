#!/usr/bin/env python3
"""Wraps a flat 64-bit kernel in a Linux setup header (boot.rst facts), for the loader's tests."""
import argparse
import struct

SETUP_SECTS = 1                      # the real-mode part: (1 + 1) * 512 bytes, no code in it
MiB = 1 << 20


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("flat", help="the protected-mode kernel, 64-bit entry at +0x200")
    ap.add_argument("out")
    ap.add_argument("--init-size", type=lambda s: int(s, 0), default=None,
                    help="init_size in bytes (default: the kernel rounded up to 1 MiB)")
    ap.add_argument("--cut", type=int, default=None,
                    help="write only the first CUT bytes: a truncated image")
    a = ap.parse_args()

    kernel = open(a.flat, "rb").read()
    kernel += b"\0" * (-len(kernel) % 16)
    init_size = a.init_size if a.init_size is not None else -(-len(kernel) // MiB) * MiB
    setup = bytearray((SETUP_SECTS + 1) * 512)

    def put(off, fmt, v):
        struct.pack_into("<" + fmt, setup, off, v)

    put(0x1F1, "B", SETUP_SECTS)
    put(0x1F4, "I", len(kernel) // 16)          # syssize, 16-byte paragraphs
    put(0x1FE, "H", 0xAA55)                     # boot_flag
    put(0x200, "B", 0xEB)                       # jmp short: the header ends at 0x202 + 0x66
    put(0x201, "B", 0x66)
    setup[0x202:0x206] = b"HdrS"
    put(0x206, "H", 0x020F)                     # protocol 2.15
    put(0x211, "B", 0x01)                       # loadflags: LOADED_HIGH
    put(0x22C, "I", 0x7FFFFFFF)                 # initrd_addr_max
    put(0x230, "I", 2 * MiB)                    # kernel_alignment
    put(0x234, "B", 1)                          # relocatable_kernel
    put(0x236, "H", 0x0001)                     # xloadflags: XLF_KERNEL_64
    put(0x238, "I", 2047)                       # cmdline_size
    put(0x258, "Q", 16 * MiB)                   # pref_address
    put(0x260, "I", init_size)
    image = bytes(setup) + kernel
    if a.cut is not None:
        image = image[:a.cut]
    open(a.out, "wb").write(image)


if __name__ == "__main__":
    main()
