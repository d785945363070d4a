/* A bzImage for its 64-bit entry: header checked, kernel and initrd placed, zero page built. */
#include <stdarg.h>

#include "lib/printk.h"
#include "lib/string.h"
#include "hv/bzimage.h"

/*
 * Offsets in the image and in boot_params alike (boot.rst "The real-mode kernel header" and
 * zero-page.rst): the setup header sits at 0x1F1 in both.
 */
#define HDR_START		0x1F1
#define HDR_SETUP_SECTS		0x1F1	/* u8, 0 means 4 */
#define HDR_SYSSIZE		0x1F4	/* u32, 16-byte paragraphs (protocol 2.04+) */
#define HDR_BOOT_FLAG		0x1FE	/* u16, 0xAA55 */
#define HDR_JUMP		0x200	/* the byte at 0x201 + 0x202 is the header's end */
#define HDR_MAGIC		0x202	/* "HdrS" */
#define HDR_VERSION		0x206	/* u16 */
#define HDR_TYPE_OF_LOADER	0x210	/* u8 */
#define HDR_LOADFLAGS		0x211	/* u8 */
#define HDR_RAMDISK_IMAGE	0x218	/* u32 */
#define HDR_RAMDISK_SIZE	0x21C	/* u32 */
#define HDR_CMD_LINE_PTR	0x228	/* u32 */
#define HDR_INITRD_ADDR_MAX	0x22C	/* u32 */
#define HDR_KERNEL_ALIGNMENT	0x230	/* u32 */
#define HDR_RELOCATABLE		0x234	/* u8 */
#define HDR_XLOADFLAGS		0x236	/* u16 (protocol 2.12+) */
#define HDR_CMDLINE_SIZE	0x238	/* u32 */
#define HDR_PREF_ADDRESS	0x258	/* u64 */
#define HDR_INIT_SIZE		0x260	/* u32 */
#define HDR_MIN_END		0x264	/* the 2.12 fields this loader reads end here */

#define HDR_MAGIC_VALUE		0x53726448u	/* "HdrS" little-endian */
#define BOOT_FLAG_VALUE		0xAA55
#define PROTOCOL_MIN		0x020C		/* 2.12: xloadflags, XLF_KERNEL_64 */
#define LOADED_HIGH		0x01		/* loadflags bit 0: a bzImage, kernel at >= 1 MiB */
#define XLF_KERNEL_64		0x01		/* xloadflags bit 0: the 64-bit entry at +0x200 */
#define LOADER_UNDEFINED	0xFF		/* type_of_loader for a loader with no assigned ID */

/* zero-page.rst: e820_entries at 0x1E8, e820_table[128] at 0x2D0, 20 bytes each. */
#define BP_E820_ENTRIES		0x1E8
#define BP_HDR_MAX_END		0x290		/* the next field (edd_mbr_sig_buffer) starts here */
#define BP_E820_TABLE		0x2D0
#define E820_ENTRY_SIZE		20
#define E820_RAM		1
#define E820_RESERVED		2

/* The PC's low memory: usable up to the EBDA, reserved from there and over the BIOS area
 * (0xE0000, where hv/acpi.c puts the ACPI tables) up to 1 MiB. */
#define LOW_RAM_END		0x9FC00ull
#define EBDA_END		0xA0000ull
#define BIOS_AREA		0xE0000ull
#define HIGH_RAM		0x100000ull

#define PAGE_MASK		0xFFFull

static uint32_t get_le(const uint8_t *p, unsigned off, unsigned n)
{
	uint32_t v = 0;

	while (n--)
		v = v << 8 | p[off + n];
	return v;
}

static uint64_t get64(const uint8_t *p, unsigned off)
{
	return (uint64_t)get_le(p, off + 4, 4) << 32 | get_le(p, off, 4);
}

static void put_le(uint8_t *p, unsigned off, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[off + i] = (uint8_t)(v >> (8 * i));
}

__attribute__((format(printf, 3, 4)))
static bool fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintk(err, errlen, fmt, ap);
		va_end(ap);
	}
	return false;
}

bool bzimage_is(const void *img, size_t len)
{
	return len >= HDR_MAGIC + 4 && get_le(img, HDR_MAGIC, 4) == HDR_MAGIC_VALUE;
}

bool bzimage_check(const void *img, size_t len, struct bzimage_info *info, char *err,
		   size_t errlen)
{
	const uint8_t *p = img;
	unsigned sects;
	uint64_t need;

	if (!bzimage_is(img, len))
		return fail(err, errlen, "bzImage: no setup header (\"HdrS\" at 0x202)");
	info->hdr_end = HDR_MAGIC + p[HDR_JUMP + 1];
	if (len < HDR_MIN_END || info->hdr_end > len)
		return fail(err, errlen, "bzImage: truncated in its setup header (%zu bytes)", len);
	if (get_le(p, HDR_BOOT_FLAG, 2) != BOOT_FLAG_VALUE)
		return fail(err, errlen, "bzImage: boot_flag 0x%x, want 0xaa55",
			    get_le(p, HDR_BOOT_FLAG, 2));
	info->version = (uint16_t)get_le(p, HDR_VERSION, 2);
	/* boot.rst: xloadflags and its XLF_KERNEL_64 (the 64-bit entry) arrived in 2.12. */
	if (info->version < PROTOCOL_MIN)
		return fail(err, errlen, "bzImage: boot protocol %u.%02u, the 64-bit entry needs 2.12",
			    info->version >> 8, info->version & 0xFF);
	if (info->hdr_end < HDR_MIN_END || info->hdr_end > BP_HDR_MAX_END)
		return fail(err, errlen, "bzImage: setup header ends at 0x%x, outside 0x%x..0x%x",
			    info->hdr_end, HDR_MIN_END, BP_HDR_MAX_END);
	if (!(get_le(p, HDR_XLOADFLAGS, 2) & XLF_KERNEL_64))
		return fail(err, errlen, "bzImage: no 64-bit entry (xloadflags bit XLF_KERNEL_64 clear)");
	if (!(p[HDR_LOADFLAGS] & LOADED_HIGH))
		return fail(err, errlen, "bzImage: a zImage (loadflags LOADED_HIGH clear)");
	/* boot.rst: setup_sects 0 means 4; the real-mode part is setup_sects + 1 sectors. */
	sects = p[HDR_SETUP_SECTS] ? p[HDR_SETUP_SECTS] : 4;
	info->setup_size = (sects + 1) * 512;
	info->kernel_size = get_le(p, HDR_SYSSIZE, 4) * 16u;
	if (get_le(p, HDR_SYSSIZE, 4) == 0 || get_le(p, HDR_SYSSIZE, 4) > UINT32_MAX / 16)
		return fail(err, errlen, "bzImage: syssize %u paragraphs is not a kernel",
			    get_le(p, HDR_SYSSIZE, 4));
	need = (uint64_t)info->setup_size + info->kernel_size;
	if (len < need)
		return fail(err, errlen, "bzImage: truncated: %zu bytes, the header says %lu "
			    "(setup %u + kernel %u)", len, need, info->setup_size,
			    info->kernel_size);
	info->kernel_alignment = get_le(p, HDR_KERNEL_ALIGNMENT, 4);
	info->relocatable = p[HDR_RELOCATABLE] != 0;
	if (info->relocatable && (info->kernel_alignment == 0 ||
				  (info->kernel_alignment & (info->kernel_alignment - 1))))
		return fail(err, errlen, "bzImage: kernel_alignment 0x%x is not a power of two",
			    info->kernel_alignment);
	info->pref_address = get64(p, HDR_PREF_ADDRESS);
	info->init_size = get_le(p, HDR_INIT_SIZE, 4);
	info->cmdline_size = get_le(p, HDR_CMDLINE_SIZE, 4);
	info->initrd_addr_max = get_le(p, HDR_INITRD_ADDR_MAX, 4);
	return true;
}

/* The memory the kernel needs from its load address: init_size, at least the kernel itself. */
static uint64_t kernel_span(const struct bzimage_info *info)
{
	return info->init_size > info->kernel_size ? info->init_size : info->kernel_size;
}

/*
 * boot.rst (pref_address, relocatable_kernel, kernel_alignment): a relocating loader tries the
 * preferred address, a relocatable kernel may go to any kernel_alignment boundary. Tries
 * pref_address, then (relocatable) the lowest aligned address at or above 1 MiB; the kernel's
 * span must end at or below `limit`. UINT64_MAX: nowhere.
 */
static uint64_t place_kernel(const struct bzimage_info *info, uint64_t limit)
{
	uint64_t span = kernel_span(info), low;

	if (info->pref_address >= HIGH_RAM && info->pref_address <= limit &&
	    span <= limit - info->pref_address)
		return info->pref_address;
	if (!info->relocatable)
		return UINT64_MAX;
	low = (HIGH_RAM + info->kernel_alignment - 1) & ~(uint64_t)(info->kernel_alignment - 1);
	return low <= limit && span <= limit - low ? low : UINT64_MAX;
}

static void e820_add(uint8_t *bp, unsigned *n, uint64_t base, uint64_t end, uint32_t type)
{
	uint8_t *e = bp + BP_E820_TABLE + *n * E820_ENTRY_SIZE;

	put_le(e, 0, base, 8);
	put_le(e, 8, end - base, 8);
	put_le(e, 16, type, 4);
	(*n)++;
}

/* The domain's RAM as a PC's e820 map: low RAM, the EBDA and BIOS area reserved, RAM above. */
static unsigned build_e820(uint8_t *bp, uint64_t ram_size)
{
	unsigned n = 0;

	e820_add(bp, &n, 0, LOW_RAM_END, E820_RAM);
	e820_add(bp, &n, LOW_RAM_END, EBDA_END, E820_RESERVED);
	e820_add(bp, &n, BIOS_AREA, HIGH_RAM, E820_RESERVED);
	e820_add(bp, &n, HIGH_RAM, ram_size, E820_RAM);
	bp[BP_E820_ENTRIES] = (uint8_t)n;
	return n;
}

bool bzimage_load(const void *img, size_t len, void *ram, uint64_t ram_size,
		  const void *initrd, uint64_t initrd_len, const char *cmdline, size_t cmdline_len,
		  uint64_t zero_page, uint64_t cmdline_at, struct bzimage_boot *boot, char *err,
		  size_t errlen)
{
	const uint8_t *p = img;
	struct bzimage_info info;
	uint64_t limit = ram_size, top, initrd_at = 0;
	uint8_t *ram8 = ram, *bp;

	if (!bzimage_check(img, len, &info, err, errlen))
		return false;
	if (ram_size <= HIGH_RAM)
		return fail(err, errlen, "bzImage: guest RAM of %lu KiB ends below 1 MiB",
			    ram_size >> 10);
	if (zero_page + BZ_ZERO_PAGE_SIZE > LOW_RAM_END || zero_page & PAGE_MASK ||
	    cmdline_at + cmdline_len + 1 > LOW_RAM_END || cmdline_at < zero_page + BZ_ZERO_PAGE_SIZE)
		return fail(err, errlen, "bzImage: zero page or command line area out of place");
	/* boot.rst cmdline_size: the longest command line without its terminating NUL. */
	if (cmdline_len > info.cmdline_size)
		return fail(err, errlen, "bzImage: command line of %zu characters, the kernel takes %u",
			    cmdline_len, info.cmdline_size);
	if (initrd) {
		/* boot.rst initrd_addr_max: the highest address the initrd's last byte may have;
		 * it goes as high as allowed, page-aligned, and the kernel must end below it. */
		top = ram_size;
		if ((uint64_t)info.initrd_addr_max + 1 < top)
			top = (uint64_t)info.initrd_addr_max + 1;
		if (initrd_len > UINT32_MAX || initrd_len + HIGH_RAM > top)
			return fail(err, errlen, "bzImage: initrd of %lu KiB does not fit below 0x%lx",
				    initrd_len >> 10, top);
		initrd_at = (top - initrd_len) & ~PAGE_MASK;
		limit = initrd_at;
	}
	boot->load = place_kernel(&info, limit);
	if (boot->load == UINT64_MAX && initrd)
		return fail(err, errlen, "bzImage: too large for mem=%luM: the kernel needs %lu KiB "
			    "(init_size) from 0x%lx%s, below the initrd's %lu KiB at 0x%lx",
			    ram_size >> 20, kernel_span(&info) >> 10, info.pref_address,
			    info.relocatable ? " or a lower aligned address" : "", initrd_len >> 10,
			    initrd_at);
	if (boot->load == UINT64_MAX)
		return fail(err, errlen, "bzImage: too large for mem=%luM: the kernel needs %lu KiB "
			    "(init_size) from 0x%lx%s", ram_size >> 20, kernel_span(&info) >> 10,
			    info.pref_address, info.relocatable ? " or a lower aligned address" : "");

	memcpy(ram8 + boot->load, p + info.setup_size, info.kernel_size);
	if (initrd)
		memcpy(ram8 + initrd_at, initrd, initrd_len);
	if (cmdline_len)
		memcpy(ram8 + cmdline_at, cmdline, cmdline_len);
	ram8[cmdline_at + cmdline_len] = '\0';

	/* boot.rst 64-bit boot protocol: a zeroed boot_params, the image's setup header copied
	 * in from 0x1F1 to its end, then the loader's fields filled. */
	bp = ram8 + zero_page;
	memset(bp, 0, BZ_ZERO_PAGE_SIZE);
	memcpy(bp + HDR_START, p + HDR_START, info.hdr_end - HDR_START);
	bp[HDR_TYPE_OF_LOADER] = LOADER_UNDEFINED;
	put_le(bp, HDR_CMD_LINE_PTR, cmdline_at, 4);
	put_le(bp, HDR_RAMDISK_IMAGE, initrd_at, 4);
	put_le(bp, HDR_RAMDISK_SIZE, initrd ? initrd_len : 0, 4);
	boot->e820_entries = build_e820(bp, ram_size);

	boot->entry = boot->load + BZ_ENTRY64_OFFSET;
	boot->zero_page = zero_page;
	boot->initrd = initrd_at;
	boot->initrd_size = initrd ? initrd_len : 0;
	return true;
}
