/* Builds the multiboot v1 information structure a guest kernel receives in EBX. */
#ifndef PERFVISOR_HV_GUEST_MBI_H
#define PERFVISOR_HV_GUEST_MBI_H

#include <stddef.h>
#include <stdint.h>

/* The first page the boot data may use: page 0 stays the guest's (real-mode IVT, BIOS data). */
#define GUEST_BOOT_LOW		0x1000ull

/*
 * Where `size` bytes of boot data (GDT, page tables, this info) go in low RAM, below the
 * EBDA, without touching the image [image_lo, image_hi): at GUEST_BOOT_LOW if the image
 * leaves room there, else on the page after the image. UINT64_MAX: nowhere.
 */
uint64_t guest_boot_area(uint64_t image_lo, uint64_t image_hi, uint64_t size);

/* The one module a guest may get (its initrd=): already in guest RAM at [start, end). */
struct guest_mbi_module {
	uint32_t start, end;
	const char *string;	/* the module's string, NUL-terminated */
};

/*
 * Where a len-byte module goes in RAM of ram_size bytes beside an image that ends at
 * image_hi: on the page after the image, as QEMU's and GRUB's multiboot loaders put
 * modules, and at 1 MiB at least (low RAM holds the boot data, the ACPI tables and the
 * BIOS area). UINT64_MAX: it does not fit below the end of RAM.
 */
uint64_t guest_module_place(uint64_t image_hi, uint64_t len, uint64_t ram_size);

/*
 * Bytes guest_mbi_build() needs for a cmdline_len-character command line and module mod
 * (NULL: none); UINT64_MAX: too long.
 */
uint64_t guest_mbi_size(size_t cmdline_len, const struct guest_mbi_module *mod);

/*
 * Write the info structure, its memory map, the command line (cmdline_len bytes, a
 * NUL is added; NULL means empty), the module list (mod, or none when NULL) and the boot
 * loader name into the free guest area [area, area + area_size) of ram (guest-physical
 * 0..ram_size, at least 1 MiB). On success stores the structure's guest-physical address
 * (the guest's EBX) in *mbi and returns NULL; otherwise returns why, and ram is untouched.
 */
const char *guest_mbi_build(void *ram, uint64_t ram_size, uint64_t area, uint64_t area_size,
			    const char *cmdline, size_t cmdline_len,
			    const struct guest_mbi_module *mod, uint32_t *mbi);

#endif
