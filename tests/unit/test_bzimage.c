/* Unit tests for hv/bzimage.c: synthetic setup headers, every refusal, placement, the zero page. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "lib/printk.c"
#include "hv/bzimage.c"

#define SETUP_SECTS	2
#define SETUP_SIZE	((SETUP_SECTS + 1) * 512)
#define KERNEL_SIZE	0x2000u
#define IMG_LEN		(SETUP_SIZE + KERNEL_SIZE)
#define RAM_SIZE	(32ull << 20)
#define ZERO_PAGE	0x8000u
#define CMDLINE_AT	0x9000u

static uint8_t img[IMG_LEN];
static uint8_t *ram;

/* printk.c writes to the console; these tests use only its formatting. */
void con_write(const char *s, size_t len)
{
	(void)s;
	(void)len;
}

static void set(unsigned off, uint64_t v, unsigned n)
{
	put_le(img, off, v, n);
}

static uint64_t rd(const uint8_t *p, uint64_t off, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[off + n];
	return v;
}

/* A relocatable 2.15 kernel like Debian's: 2 setup sectors, 8 KiB of kernel, init_size 4 MiB. */
static void make_image(void)
{
	memset(img, 0, sizeof(img));
	for (unsigned i = SETUP_SIZE; i < IMG_LEN; i++)
		img[i] = (uint8_t)(i * 7 + 1);
	set(HDR_SETUP_SECTS, SETUP_SECTS, 1);
	set(HDR_SYSSIZE, KERNEL_SIZE / 16, 4);
	set(HDR_BOOT_FLAG, 0xAA55, 2);
	set(HDR_JUMP, 0x66EB, 2);		/* jmp +0x66: the header ends at 0x268 */
	set(HDR_MAGIC, 0x53726448, 4);
	set(HDR_VERSION, 0x020F, 2);
	set(HDR_LOADFLAGS, LOADED_HIGH, 1);
	set(HDR_INITRD_ADDR_MAX, 0x7FFFFFFF, 4);
	set(HDR_KERNEL_ALIGNMENT, 0x200000, 4);
	set(HDR_RELOCATABLE, 1, 1);
	set(HDR_XLOADFLAGS, XLF_KERNEL_64 | 2, 2);
	set(HDR_CMDLINE_SIZE, 2047, 4);
	set(HDR_PREF_ADDRESS, 0x1000000, 8);
	set(HDR_INIT_SIZE, 4u << 20, 4);
	set(0x264, 0x12345678, 4);		/* handover_offset: copied as it is */
}

/* True when the refusal's reason contains want and ram was not touched. */
static bool refused(const char *what, size_t len, const void *initrd, uint64_t initrd_len,
		    const char *cmd, uint64_t ram_size, const char *want)
{
	struct bzimage_boot boot;
	char err[160] = "";
	bool ok;

	memset(ram, 0xcc, RAM_SIZE);
	ok = bzimage_load(img, len, ram, ram_size, initrd, initrd_len, cmd, strlen(cmd),
			  ZERO_PAGE, CMDLINE_AT, &boot, err, sizeof(err));
	for (uint64_t i = 0; i < RAM_SIZE && !ok; i++)
		if (ram[i] != 0xcc)
			ok = true;
	return check(!ok && strstr(err, want), "%s: refused, \"%s\"", what, err);
}

static void test_detect_and_check(void)
{
	struct bzimage_info info;
	char err[160] = "";

	make_image();
	check(bzimage_is(img, IMG_LEN), "\"HdrS\" at 0x202 is a bzImage");
	check(!bzimage_is(img, 0x205), "an image ending inside the magic is not");
	check(bzimage_check(img, IMG_LEN, &info, err, sizeof(err)), "a good header passes (%s)",
	      err);
	check(info.version == 0x020F && info.hdr_end == 0x268, "version 2.15, header end 0x268");
	check(info.setup_size == SETUP_SIZE && info.kernel_size == KERNEL_SIZE,
	      "kernel at (setup_sects + 1) * 512, syssize * 16 bytes long");
	check(info.pref_address == 0x1000000 && info.kernel_alignment == 0x200000 &&
	      info.relocatable && info.init_size == 4u << 20 && info.cmdline_size == 2047 &&
	      info.initrd_addr_max == 0x7FFFFFFF, "placement fields read");
	set(HDR_SETUP_SECTS, 0, 1);
	check(!bzimage_check(img, IMG_LEN, &info, err, sizeof(err)) &&
	      strstr(err, "setup 2560 + kernel 8192"), "setup_sects 0 means 4 (%s)", err);
	make_image();
	set(HDR_MAGIC, 0x53726449, 4);
	check(!bzimage_is(img, IMG_LEN) && !bzimage_check(img, IMG_LEN, &info, err, sizeof(err)) &&
	      strstr(err, "no setup header"), "no \"HdrS\": %s", err);
}

/* One field of a good image changed, and the words its refusal must hold. */
static const struct {
	const char *what;
	unsigned off, size;
	uint64_t value;
	const char *why;
} bad_fields[] = {
	{ "bad boot_flag", HDR_BOOT_FLAG, 2, 0x1234, "boot_flag 0x1234" },
	{ "protocol 2.11", HDR_VERSION, 2, 0x020B, "boot protocol 2.11" },
	{ "no XLF_KERNEL_64", HDR_XLOADFLAGS, 2, 2, "no 64-bit entry" },
	{ "zImage", HDR_LOADFLAGS, 1, 0, "a zImage" },
	{ "syssize 0", HDR_SYSSIZE, 4, 0, "syssize 0 paragraphs" },
	{ "alignment 3 MiB", HDR_KERNEL_ALIGNMENT, 4, 0x300000, "not a power of two" },
	{ "header past boot_params' hdr", HDR_JUMP + 1, 1, 0xA0, "setup header ends at 0x2a2" },
	{ "init_size 40 MiB in 32 MiB", HDR_INIT_SIZE, 4, 40u << 20,
	  "too large for mem=32M: the kernel needs 40960 KiB (init_size)" },
};

static void test_refusals(void)
{
	static const uint8_t rd_img[4096];
	uint8_t *big = calloc(1, 6u << 20);
	char long_cmd[2100];

	make_image();
	refused("truncated in the kernel", IMG_LEN - 1, NULL, 0, "", RAM_SIZE,
		"truncated: 9727 bytes, the header says 9728 (setup 1536 + kernel 8192)");
	refused("truncated in the header", 0x250, NULL, 0, "", RAM_SIZE,
		"truncated in its setup header");
	for (unsigned i = 0; i < sizeof(bad_fields) / sizeof(bad_fields[0]); i++) {
		make_image();
		set(bad_fields[i].off, bad_fields[i].value, bad_fields[i].size);
		refused(bad_fields[i].what, IMG_LEN, NULL, 0, "", RAM_SIZE, bad_fields[i].why);
	}
	make_image();
	set(HDR_INIT_SIZE, 14u << 20, 4);
	set(HDR_RELOCATABLE, 0, 1);
	refused("not relocatable, pref_address + init_size past RAM", IMG_LEN, NULL, 0, "",
		RAM_SIZE - (4 << 20), "too large for mem=28M");
	make_image();
	refused("initrd larger than RAM", IMG_LEN, rd_img, RAM_SIZE, "", RAM_SIZE,
		"initrd of 32768 KiB does not fit");
	/* 2 MiB + 25 MiB of kernel end past the initrd at 26 MiB. */
	set(HDR_INIT_SIZE, 25u << 20, 4);
	refused("kernel and initrd together too large", IMG_LEN, big, 6u << 20, "", RAM_SIZE,
		"needs 25600 KiB (init_size) from 0x1000000 or a lower aligned address, below "
		"the initrd's 6144 KiB at 0x1a00000");
	free(big);
	make_image();
	memset(long_cmd, 'x', sizeof(long_cmd) - 1);
	long_cmd[sizeof(long_cmd) - 1] = '\0';
	refused("command line over cmdline_size", IMG_LEN, NULL, 0, long_cmd, RAM_SIZE,
		"command line of 2099 characters, the kernel takes 2047");
	refused("RAM below 1 MiB", IMG_LEN, NULL, 0, "", 1u << 20, "ends below 1 MiB");
}

static bool e820_is(const uint8_t *bp, unsigned i, uint64_t base, uint64_t len, uint32_t type)
{
	const uint8_t *e = bp + BP_E820_TABLE + i * E820_ENTRY_SIZE;

	return rd(e, 0, 8) == base && rd(e, 8, 8) == len && rd(e, 16, 4) == type;
}

static void test_load(void)
{
	static const char cmd[] = "console=ttyS0 earlyprintk=serial";
	static uint8_t rd_img[5000];
	struct bzimage_boot boot;
	char err[160] = "";
	const uint8_t *bp = ram + ZERO_PAGE;
	bool same = true;
	uint64_t initrd_at = (RAM_SIZE - sizeof(rd_img)) & ~0xFFFull;

	make_image();
	for (unsigned i = 0; i < sizeof(rd_img); i++)
		rd_img[i] = (uint8_t)(i ^ 0x5a);
	memset(ram, 0xcc, RAM_SIZE);
	check(bzimage_load(img, IMG_LEN, ram, RAM_SIZE, rd_img, sizeof(rd_img), cmd, strlen(cmd),
			   ZERO_PAGE, CMDLINE_AT, &boot, err, sizeof(err)), "loads (%s)", err);
	check(boot.load == 0x1000000 && boot.entry == 0x1000200 && boot.zero_page == ZERO_PAGE,
	      "at pref_address, entry at +0x200, RSI = the zero page");
	check(!memcmp(ram + boot.load, img + SETUP_SIZE, KERNEL_SIZE),
	      "the protected-mode kernel copied from (setup_sects + 1) * 512");
	check(boot.initrd == initrd_at && boot.initrd_size == sizeof(rd_img) &&
	      !memcmp(ram + initrd_at, rd_img, sizeof(rd_img)),
	      "initrd at the top of RAM, page-aligned (0x%llx)", (unsigned long long)boot.initrd);
	check(!strcmp((char *)ram + CMDLINE_AT, cmd), "command line copied with its NUL");

	for (unsigned i = HDR_START; i < 0x268; i++)
		if (i != HDR_TYPE_OF_LOADER && (i < HDR_RAMDISK_IMAGE || i >= 0x220) &&
		    (i < HDR_CMD_LINE_PTR || i >= HDR_CMD_LINE_PTR + 4) && bp[i] != img[i])
			same = false;
	check(same, "setup header copied from 0x1f1 to its end (0x268)");
	check(rd(bp, 0x264, 4) == 0x12345678 && bp[0x268] == 0, "its last field too, nothing past");
	check(bp[HDR_TYPE_OF_LOADER] == 0xFF, "type_of_loader 0xff (no assigned ID)");
	check(rd(bp, HDR_CMD_LINE_PTR, 4) == CMDLINE_AT, "cmd_line_ptr");
	check(rd(bp, HDR_RAMDISK_IMAGE, 4) == initrd_at &&
	      rd(bp, HDR_RAMDISK_SIZE, 4) == sizeof(rd_img), "ramdisk_image and ramdisk_size");
	check(bp[BP_E820_ENTRIES] == 4 && boot.e820_entries == 4, "four e820 entries");
	check(e820_is(bp, 0, 0, 0x9FC00, 1), "e820: 0-0x9fc00 RAM");
	check(e820_is(bp, 1, 0x9FC00, 0x400, 2), "e820: the EBDA reserved");
	check(e820_is(bp, 2, 0xE0000, 0x20000, 2), "e820: the BIOS area with the ACPI tables reserved");
	check(e820_is(bp, 3, 0x100000, RAM_SIZE - 0x100000, 1), "e820: 1 MiB to mem= RAM");
	check(bp[0] == 0 && bp[0x1E7] == 0 && bp[0x1E9] == 0 && bp[0x2CF] == 0 &&
	      rd(bp, BP_E820_TABLE + 4 * E820_ENTRY_SIZE, 8) == 0 && bp[4095] == 0,
	      "the rest of the zero page is zero");
}

static void test_placement(void)
{
	uint8_t *big = calloc(1, 8u << 20);
	struct bzimage_boot boot;
	char err[160] = "";

	make_image();
	memset(ram, 0, RAM_SIZE);
	check(bzimage_load(img, IMG_LEN, ram, 16u << 20, NULL, 0, "", 0, ZERO_PAGE, CMDLINE_AT,
			   &boot, err, sizeof(err)) && boot.load == 0x200000 && boot.entry == 0x200200,
	      "relocatable, pref_address past mem=16M: at the first 2 MiB boundary (%s)", err);
	check(boot.initrd == 0 && boot.initrd_size == 0 && rd(ram + ZERO_PAGE, HDR_RAMDISK_SIZE, 4) == 0,
	      "no initrd: ramdisk fields 0");
	check(rd(ram + ZERO_PAGE, BP_E820_TABLE + 3 * E820_ENTRY_SIZE + 8, 8) == (15u << 20),
	      "e820 follows mem=");
	set(HDR_INIT_SIZE, 12u << 20, 4);
	check(bzimage_load(img, IMG_LEN, ram, RAM_SIZE, big, 8u << 20, "", 0, ZERO_PAGE,
			   CMDLINE_AT, &boot, err, sizeof(err)) && boot.load == 0x200000 &&
	      boot.initrd == 24u << 20, "kernel [16M, 28M) would overlap the initrd [24M, 32M): "
	      "it moves down (load 0x%llx, %s)", (unsigned long long)boot.load, err);
	set(HDR_INITRD_ADDR_MAX, (20u << 20) - 1, 4);
	set(HDR_INIT_SIZE, 4u << 20, 4);
	check(bzimage_load(img, IMG_LEN, ram, RAM_SIZE, big, 1u << 20, "", 0, ZERO_PAGE,
			   CMDLINE_AT, &boot, err, sizeof(err)) && boot.initrd == 19u << 20 &&
	      boot.load == 0x200000, "initrd_addr_max bounds the initrd's last byte, the kernel "
	      "ends below it (%s)", err);
	free(big);
}

int main(void)
{
	ram = malloc(RAM_SIZE);
	test_detect_and_check();
	test_refusals();
	test_load();
	test_placement();
	free(ram);
	return unit_summary();
}
