/* Linux bzImage loading for the x86 boot protocol's 64-bit entry: header, kernel, zero page. */
#ifndef PERFVISOR_HV_BZIMAGE_H
#define PERFVISOR_HV_BZIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* boot.rst, 64-bit boot protocol: CS = __BOOT_CS, DS/ES/SS = __BOOT_DS (flat, 4 GiB). */
#define BZ_BOOT_CS		0x10
#define BZ_BOOT_DS		0x18
/* boot.rst: the 64-bit entry is 0x200 past the protected-mode kernel's load address. */
#define BZ_ENTRY64_OFFSET	0x200
#define BZ_ZERO_PAGE_SIZE	4096

/* What bzimage_check() read from the setup header; sizes in bytes. */
struct bzimage_info {
	uint16_t version;		/* boot protocol, 0x020C is 2.12 */
	uint32_t hdr_end;		/* 0x202 + the byte at 0x201: the setup header's end */
	uint32_t setup_size;		/* (setup_sects + 1) * 512: where the kernel starts */
	uint32_t kernel_size;		/* syssize * 16: the protected-mode kernel */
	uint64_t pref_address;
	uint32_t kernel_alignment;
	bool relocatable;
	uint32_t init_size;		/* memory the kernel needs from its load address on */
	uint32_t cmdline_size;		/* longest command line, without its NUL */
	uint32_t initrd_addr_max;	/* highest address an initrd byte may have */
};

/* Where bzimage_load() put things, all guest-physical. */
struct bzimage_boot {
	uint64_t load;			/* the protected-mode kernel */
	uint64_t entry;			/* load + BZ_ENTRY64_OFFSET: the VCPU's RIP */
	uint64_t zero_page;		/* struct boot_params: the VCPU's RSI */
	uint64_t initrd, initrd_size;	/* 0, 0 without an initrd */
	unsigned e820_entries;
};

/* True when the image carries a Linux setup header ("HdrS" at 0x202): it is this loader's. */
bool bzimage_is(const void *img, size_t len);

/*
 * Validate a bzImage for the 64-bit entry: header, protocol >= 2.12 with XLF_KERNEL_64, a
 * protected-mode kernel inside the file. On failure returns false with a one-line reason
 * ("bzImage: ...") in err (always NUL-terminated when errlen > 0).
 */
bool bzimage_check(const void *img, size_t len, struct bzimage_info *info, char *err,
		   size_t errlen);

/*
 * bzimage_check() the image, choose where the kernel and the initrd (initrd_len bytes, NULL
 * for none) go in ram (a buffer standing for guest-physical 0..ram_size), copy them there and
 * build the zero page at zero_page (4 KiB) and the command line (cmdline_len characters, a
 * NUL is added) at cmdline_at, both below 1 MiB and given by the caller. Nothing is written
 * unless everything fits; then returns false with the reason in err.
 */
bool bzimage_load(const void *img, size_t len, void *ram, uint64_t ram_size,
		  const void *initrd, uint64_t initrd_len, const char *cmdline, size_t cmdline_len,
		  uint64_t zero_page, uint64_t cmdline_at, struct bzimage_boot *boot, char *err,
		  size_t errlen);

#endif
