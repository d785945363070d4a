#!/usr/bin/env python3
# Writes tests/fuzz/corpus/: a few valid inputs per target, in the layout its target reads.
import os
import struct
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def u8(v):
    return struct.pack("<B", v & 0xFF)


def u16(v):
    return struct.pack("<H", v & 0xFFFF)


def u32(v):
    return struct.pack("<I", v & 0xFFFFFFFF)


def u64(v):
    return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


def write(subject, name, data):
    os.makedirs(os.path.join(OUT, subject), exist_ok=True)
    with open(os.path.join(OUT, subject, name), "wb") as f:
        f.write(data)


class Mem:
    """Bytes standing for physical [base, base + size)."""

    def __init__(self, base, size):
        self.base, self.b = base, bytearray(size)

    def put(self, pa, data):
        self.b[pa - self.base:pa - self.base + len(data)] = data


def multiboot():
    # fuzz_multiboot.c: window page, info, image start, image end, message size; the window.
    def seed(name, page, info, img, msg_size, mem):
        write("multiboot", name, u8(page) + u32(info) + u32(img[0]) + u32(img[1]) +
              u8(msg_size) + bytes(mem.b))

    m = Mem(0x1000, 0x500)
    m.put(0x1000, u32(0x24D) + u32(639) + u32(64512) + u32(0) + u32(0x1080) + u32(2) +
          u32(0x1200) + bytes(16) + u32(72) + u32(0x1100) + bytes(12) + u32(0x1280))
    m.put(0x1080, b"/boot/perfvisor.elf loglevel=7 console=both\0")
    m.put(0x1100, u32(20) + u64(0) + u64(0x9FC00) + u32(1))
    m.put(0x1118, u32(20) + u64(0x9FC00) + u64(0x400) + u32(2))
    m.put(0x1130, u32(20) + u64(0x100000) + u64(0x3F00000) + u32(1))
    m.put(0x1200, u32(0x1300) + u32(0x1400) + u32(0x1240) + u32(0))
    m.put(0x1210, u32(0x1400) + u32(0x1480) + u32(0) + u32(0))
    m.put(0x1240, b"/boot/guest.elf name=a vcpus=2 mem=32M\0")
    m.put(0x1280, b"GRUB 2.06\0")
    seed("grub-like", 1, 0x1000, (0x100000, 0x180000), 160, m)

    m = Mem(0, 0x40)
    m.put(0x10, u32(0x1) + u32(639) + u32(130048))
    seed("memory-only", 0, 0x10, (0x100000, 0x180000), 80, m)

    m = Mem(0x2000, 0x200)
    m.put(0x2000, u32(0x48) + bytes(20) + u32(1) + u32(0x2080) + bytes(16) + u32(24) +
          u32(0x2040))
    m.put(0x2040, u32(20) + u64(0) + u64(0x100000) + u32(1))
    m.put(0x2080, u32(0x2100) + u32(0x2180) + u32(0) + u32(0))
    seed("module-on-image", 2, 0x2000, (0x2100, 0x2200), 100, m)


def elf_image(is64, syms):
    """An ET_EXEC with text and data+bss segments, a multiboot header and maybe a symbol table."""
    w = 8 if is64 else 4
    p = (lambda v: u64(v)) if is64 else (lambda v: u32(v))
    ehsize, phsize, shsize, symsize = (64, 56, 64, 24) if is64 else (52, 32, 40, 16)
    img = bytearray(0x180)
    img[0:7] = b"\x7fELF" + bytes([2 if is64 else 1, 1, 1])
    phoff = ehsize
    strtab = b"\0start\0helper\0table\0"
    sym_off = 0x180
    str_off = sym_off + 4 * symsize
    sh_off = (str_off + len(strtab) + 7) & ~7
    hdr = u16(2) + u16(62 if is64 else 3) + u32(1) + p(0x1010) + p(phoff) + \
        p(sh_off if syms else 0) + u32(0) + u16(ehsize) + u16(phsize) + u16(2) + \
        u16(shsize) + u16(3 if syms else 0) + u16(0)
    img[16:16 + len(hdr)] = hdr

    def phdr(off, vaddr, paddr, filesz, memsz):
        if is64:
            return u32(1) + u32(7) + u64(off) + u64(vaddr) + u64(paddr) + u64(filesz) + \
                u64(memsz) + u64(0x1000)
        return u32(1) + u32(off) + u32(vaddr) + u32(paddr) + u32(filesz) + u32(memsz) + \
            u32(7) + u32(0x1000)

    ph = phdr(0x100, 0x1000, 0x1000, 0x40, 0x40) + phdr(0x140, 0x2000, 0x2000, 0x20, 0x200)
    img[phoff:phoff + len(ph)] = ph
    img[0x100:0x10C] = u32(0x1BADB002) + u32(3) + u32(-(0x1BADB002 + 3))
    img[0x110:0x114] = b"\xf4\xeb\xfd\x90"
    if not syms:
        return bytes(img)

    def sym(name, value, size, info, shndx):
        if is64:
            return u32(name) + u8(info) + u8(0) + u16(shndx) + u64(value) + u64(size)
        return u32(name) + u32(value) + u32(size) + u8(info) + u8(0) + u16(shndx)

    img += sym(0, 0, 0, 0, 0) + sym(1, 0x1010, 4, 0x12, 1) + sym(7, 0x1020, 8, 0x02, 1) + \
        sym(14, 0x2000, 0x20, 0x11, 2)
    img += strtab
    img += bytes(sh_off - len(img))

    def shdr(typ, off, size, link, entsize):
        return u32(0) + u32(typ) + p(0) + p(0) + p(off) + p(size) + u32(link) + u32(0) + \
            p(8) + p(entsize)

    img += bytes(shsize) + shdr(2, sym_off, 4 * symsize, 2, symsize) + \
        shdr(3, str_off, len(strtab), 0, 0)
    return bytes(img)


def elf():
    # fuzz_elf.c: RAM size in 32-byte units, error buffer size, symbol stop count; the image.
    write("elf", "elf64-syms", u16(2048) + u8(160) + u8(255) + elf_image(True, True))
    write("elf", "elf32-syms-1mib", u16(32768) + u8(160) + u8(1) + elf_image(False, True))
    write("elf", "elf32-small-ram", u16(200) + u8(20) + u8(0) + elf_image(False, False))


def cmdline():
    write("cmdline", "hypervisor", b"/boot/perfvisor.elf loglevel=7 console=e9 slice=500 "
          b"cpus=2 seed=0x10 pmu=soft migrate=random")
    write("cmdline", "every-kind", b"size=16M verbose label=abc-def word=hi list=2,4-9 "
          b"set=a0,h7 --  guest args")
    write("cmdline", "problems", b"loglevel=9 loglevel=3 bogus=1 cpus= console verbose=maybe "
          b"list=9-2 size=0x1001 label=UP set=a0,zz")


def domcfg():
    # fuzz_domcfg.c: index, PCPU count byte, flags (event names, reporter); the module string.
    write("domcfg", "full", u32(1) + u8(1) + u8(3) + b"/boot/guest.elf name=web vcpus=2 "
          b"mem=32M pin=0,1 acct=vcpu tsc=host events=instructions,cycles -- mode=loop n=5")
    write("domcfg", "fatal", u32(7) + u8(3) + u8(3) + b"name=Bad! vcpus=9 mem=3M pin=0-5 "
          b"acct=x events=llc name=ok")
    write("domcfg", "quiet", u32(0) + u8(0) + u8(0) + b"pin=0 vcpus=4 mem=0x200000 --")


def vpmu():
    # fuzz_vpmu.c: enabled/version, GP and fixed counters, width - 1, unavailable events; then
    # operations: opcode (op % 6, CPL in bits 6:5), event byte, operands.
    def wrmsr(msr, val, cpl=0):
        return u8(1 + 96 * (cpl == 3)) + u8(0) + u8(0x80) + u32(msr) + u64(val)

    def rdmsr(msr):
        return u8(0) + u8(0) + u8(0x80) + u32(msr)

    def count(ev, n, cpl=0):
        return u8(3 + 96 * (cpl == 3)) + u8(ev) + u64(n)

    ops = wrmsr(0x186, 0x5300C0) + wrmsr(0x187, 0x4200C4) + wrmsr(0x38D, 0xBB0) + \
        wrmsr(0x38F, 0x70000000F) + wrmsr(0x4C1, (1 << 48) - 10) + wrmsr(0xC2, 0x80000000) + \
        count(0, 20) + count(1, 3, 3) + count(2, 1 << 40) + u8(4) + u8(0) + \
        rdmsr(0x38E) + wrmsr(0x390, 1) + u8(2) + u8(0) + u32(0x40000001) + \
        u8(2 + 96) + u8(0) + u32(0) + u8(5) + u8(0) + u64(0x4300C0) + rdmsr(0x345)
    write("vpmu", "v2-4gp-3fixed", u8(3) + u8(4) + u8(3) + u8(47) + u8(0x58) + ops)
    write("vpmu", "v3-narrow", u8(5) + u8(2) + u8(1) + u8(31) + u8(0) + ops)
    write("vpmu", "off", u8(2) + u8(4) + u8(3) + u8(47) + u8(0) + ops)


def instructions():
    # fuzz_soft_classify.c: the bytes; fuzz_insn.c: a register and a loaded value, the bytes.
    for name, code in (("syscall", b"\x0f\x05"), ("int80", b"\xcd\x80"),
                       ("popf-o16", b"\x66\x9d"), ("mov-ss", b"\x8e\xd0\x90"),
                       ("call-far-mem", b"\xff\x1d\x00\x10\x00\x00"),
                       ("lock-rex-jmp", b"\xf0\x48\xff\xe0"), ("vmcall", b"\x0f\x01\xc1")):
        write("soft_classify", name, code)
    regs = u64(0x1122334455667788) + u64(0xFFFFFFFF8899AABB)
    for name, code in (("mov-store", b"\x89\x08"),
                       ("mov-imm64", b"\x48\xc7\x80\x00\x03\x00\x00\x01\x00\x00\x00"),
                       ("movzx-riprel", b"\x0f\xb6\x05\x20\x00\x00\x00"),
                       ("mov-ah-sib", b"\x8a\x64\x24\x08"),
                       ("moffs", b"\xa1\x20\x03\xe0\xfe\x00\x00\x00\x00"),
                       ("movsx-16bit", b"\x67\x66\x0f\xbf\x46\x10")):
        write("insn", name, regs + code)


def gpt():
    # fuzz_gpt.c: CR0, CR4, EFER, CR3, CPL, PDPTE source, 4 PDPTEs, address, access, copy
    # length, record count; records of an 8-byte slot index and a value.
    def seed(name, cr0, cr4, efer, cr3, cpl, la, acc, length, entries, pdptes=None):
        data = u64(cr0) + u64(cr4) + u64(efer) + u64(cr3) + u8(cpl) + \
            u8(1 if pdptes else 0) + b"".join(u64(v) for v in (pdptes or [0] * 4)) + \
            u64(la) + u8(acc) + u16(length) + u8(len(entries))
        for gpa, val in entries:
            data += u16(gpa // 8) + u64(val)
        write("gpt", name, data)

    seed("4-level", 0x80010001, 0x120, 0xD00, 0x1000, 0, 0x5FF0, 0, 0x20,
         [(0x1000, 0x2007), (0x2000, 0x3007), (0x3000, 0x4007), (0x3008, 0x200087),
          (0x4028, 0x5007), (0x4030, 0x6003 | 1 << 63)])
    seed("pae-user", 0x80000001, 0x20, 0, 0x1000, 3, 0x4010, 1, 0x10,
         [(0x1000, 0x2001), (0x2000, 0x3007), (0x3020, 0x4007)])
    seed("pae-vmcs-pdptes", 0x80000001, 0x20, 0x800, 0, 0, 0x40000000, 2, 8,
         [(0x2000, 0x3007), (0x3000, 0x4007)], [0, 0x2001, 0, 0])
    seed("32-bit-pse", 0x80000001, 0x10, 0, 0x1000, 0, 0x3008, 1, 0x1000,
         [(0x1000, 0x2007), (0x1004, 0x400087), (0x2008, 0x3007), (0x2010, 0x4005)])


def pv():
    # fuzz_pv.c: backend | (VCPUs - 1) << 2 | (arch: GP counters - 1) << 4 | no 2 MiB EPT
    # pages << 6 | few EPT frames << 7, arch: width - 32, few: frames; record count, records;
    # then operations: opcode, VCPU, event, operands. Arguments: a multiple of 4 below
    # 128 KiB as (x / 2), an offset into the fuzzed RAM (2 MiB - 0x9000 in the EPT), else
    # 1 + u64.
    def arg(x):
        return u16(x // 2) if x % 4 == 0 and x < 0x20000 else u16(1) + u64(x)

    def hc(vcpu, nr, *args):
        args = list(args) + [0] * (3 - len(args))
        return u8(0) + u8(vcpu) + u8(0) + u8(nr) + b"".join(arg(a) for a in args)

    ctl = [(0x1000, 2 | 1 << 32), (0x1008, 0x5300C0), (0x1010, 0x4300C4),
           (0x1028, (1 << 48) - 100), (0x1100, (1 << 48) - 5)]
    records = u8(len(ctl)) + b"".join(u16(gpa // 8) + u64(v) for gpa, v in ctl)
    ops = hc(0, 0, 0x8000, 2) + hc(0, 4, 0xF0) + hc(0, 3, 0x1000, 0x1100) + hc(1, 1, 0x1000) + \
        u8(3) + u8(0) + u8(0) + u64(10) + u8(8) + u8(1) + u8(0) + u8(5) + u32(1000) + \
        hc(1, 5, 0) + hc(0, 2, 0x1200) + hc(0, 6) + u8(4) + u8(1) + u8(0) + \
        u8(1) + u8(0) + u8(0) + u16(0x1000) + u64(4) + u8(5) + u8(0) + u8(0) + u32(77)
    write("pv", "soft-2-vcpus", u8(1 | 1 << 2) + records + ops)
    write("pv", "arch-1-vcpu", u8(2 | 3 << 4) + u8(16) + records + hc(0, 0, 0x8000, 1) +
          hc(0, 1, 0x1000) + u8(3) + u8(0) + u8(0) + u64(1 << 47) + hc(0, 5, 1))
    # SETUP, then ISUSPEND saving over the read-only area (libFuzzer's first crash).
    write("pv", "isuspend-into-area", u8(1) + u8(0) + hc(0, 0, 0, 1) + hc(0, 2, 0))
    # Two pages across the 2 MiB EPT boundary with one table frame: SETUP must fail whole
    # (before, the first page stayed read-only); a retry fails the same way and claims nothing.
    write("pv", "setup-out-of-tables", u8(1 | 1 << 2 | 1 << 7) + u8(1) + u8(0) +
          hc(0, 0, 0x8000, 2) + hc(1, 0, 0x8000, 2))
    # SETUP across the boundary (two leaves split), then the other VCPU's SETUP: refused.
    write("pv", "setup-twice", u8(1 | 1 << 2) + u8(0) + hc(0, 0, 0x8000, 2) +
          hc(1, 0, 0x4000, 2) + u8(1) + u8(1) + u8(0) + u16(0x8000) + u64(7))


def devices():
    # fuzz_vuart.c: opcode (bit 0 write, bits 2:1 size 1/2/4/1, 6 any offset, 7 any size),
    # offset, value.
    def out(off, val, size=1):
        return u8(1 | {1: 0, 2: 2, 4: 4}[size]) + u8(off) + u32(val)

    def inb(off):
        return u8(0) + u8(off) + u32(0)

    text = b"".join(out(0, c) for c in b"hello, world\r\n")
    setup = out(3, 0x80) + out(0, 1) + out(1, 0) + out(3, 3) + out(2, 0xC7) + out(1, 0xFF)
    loop = out(4, 0x1F) + b"".join(out(0, c) for c in b"0123456789abcdefgh") + \
        b"".join(inb(r) for r in (5, 0, 0, 6, 5, 2)) + out(4, 0x03)
    write("vuart", "init-and-lines", setup + text + out(0, 0x0A0D6968, 4))
    write("vuart", "loopback", setup + loop + inb(9) + u8(0x41) + u8(200) + u32(0))

    # fuzz_fwcfg.c: RAM size, CPUs; opcode (bit 0 write, 2:1 port offset, 5:3 size, 6 a 4-byte
    # value, 7 jump to the end of the item), value.
    def select(key):
        return u8(0x11) + u16(key)

    def reads(n):
        return (u8(0x0A) + u16(0)) * n

    write("fwcfg", "items", u64(64 << 20) + u16(2) + reads(5) + select(1) + reads(4) +
          select(3) + reads(9) + select(5) + reads(3) + select(0x19) + reads(2) +
          u8(0x8A) + u16(0) + reads(2) + u8(0x50) + u32(3))

    # fuzz_vapic.c: APIC ID; opcode (2:0 operation, 4:3 size, 5 byte offset 2, 6 timer update),
    # register byte (offset >> 4), operands.
    def wr(reg, val):
        return u8(1) + u8(reg >> 4) + u32(val)

    def rd(reg, size=4, byte2=False):
        return u8({1: 0, 2: 8, 4: 16, 8: 24}[size] | (0x20 if byte2 else 0)) + u8(reg >> 4)

    def advance(ticks):
        return u8(6 | 0x40) + u8(0) + u16(ticks)

    ops = wr(0xF0, 0x1FF) + wr(0x80, 0x20) + wr(0x320, 0x20040) + wr(0x3E0, 0xB) + \
        wr(0x380, 100) + advance(250) + rd(0x390) + u8(4) + u8(0) + rd(0x100) + \
        wr(0xB0, 0) + wr(0x310, 0x3000000) + wr(0x300, 0x40050) + wr(0x300, 0x4500) + \
        wr(0x340, 0x60) + u8(5) + u8(0) + wr(0x370, 0x30) + wr(0x400, 1) + wr(0x280, 0) + \
        rd(0x280) + rd(0x20, 1) + rd(0x30, 2, True) + u8(3) + u8(0) + u8(0x77) + \
        u8(3) + u8(0) + u8(7) + wr(0xD0, 0x1000000) + wr(0xE0, 0x0FFFFFFF) + \
        wr(0x300, 0x80A50) + u8(7) + u8(0) + u8(1)
    write("vapic", "timer-ipi-pmi", u8(0) + ops)

    # Operation 7: sub-operation byte (1: IA32_APIC_BASE with EN, EXTD in bits 3:2; 2, 3: RDMSR,
    # WRMSR of 0x800 + the register byte), then a 64-bit operand.
    def base(en, extd):
        return u8(7) + u8(0) + u8(1 | en << 3 | extd << 2) + u64(0)

    def msr(n, val=None):
        return u8(7) + u8(n - 0x800) + u8(2 if val is None else 3) + u64(val or 0)

    x2 = wr(0xF0, 0x1FF) + base(1, 1) + msr(0x802) + msr(0x80D) + msr(0x80F, 0x1FF) + \
        msr(0x808, 0x20) + msr(0x832, 0x20040) + msr(0x83E, 0xB) + msr(0x838, 100) + \
        advance(250) + msr(0x839) + msr(0x830, (5 << 32) | 0x4050) + msr(0x83F, 0x51) + \
        msr(0x80B, 1) + msr(0x80B, 0) + msr(0x828, 0) + msr(0x80E) + base(1, 0) + \
        base(0, 0) + base(0, 1) + base(1, 0) + u8(7) + u8(0) + u8(0)
    write("vapic", "x2apic", u8(3) + x2)


def bzimage_image(init_size, kernel_len=4096):
    """A setup header as guest-stub/bzstub/mkbzimage.py writes it, and a kernel of zeros."""
    setup = bytearray(1024)
    for off, v, n in ((0x1F1, 1, 1), (0x1F4, kernel_len // 16, 4), (0x1FE, 0xAA55, 2),
                      (0x200, 0x66EB, 2), (0x206, 0x020F, 2), (0x211, 1, 1),
                      (0x22C, 0x7FFFFFFF, 4), (0x230, 0x200000, 4), (0x234, 1, 1),
                      (0x236, 1, 2), (0x238, 2047, 4), (0x258, 0x1000000, 8),
                      (0x260, init_size, 4)):
        setup[off:off + n] = v.to_bytes(n, "little")
    setup[0x202:0x206] = b"HdrS"
    return bytes(setup) + bytes(kernel_len)


def bzimage():
    # fuzz_bzimage.c: RAM in 4 KiB units, initrd and command line lengths, error buffer size;
    # then the initrd, the command line and the image.
    cmd = b"console=ttyS0"
    write("bzimage", "with-initrd", u16(1024) + u16(64) + u8(len(cmd)) + u8(160) +
          b"pv" * 32 + cmd + bzimage_image(0x100000))
    write("bzimage", "too-large", u16(512) + u16(0) + u8(0) + u8(160) +
          bzimage_image(0x400000))
    write("bzimage", "cut", u16(1024) + u16(0) + u8(0) + u8(20) + bzimage_image(0x100000)[:1500])


def main():
    for make in (multiboot, elf, cmdline, domcfg, vpmu, instructions, gpt, pv, devices,
                 bzimage):
        make()
    return 0


if __name__ == "__main__":
    sys.exit(main())
