/* Unit tests for hv/bzimage.c on Debian's own kernel and initramfs (build/linux, make deps). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "lib/printk.c"
#include "hv/bzimage.c"

/* tests/scenarios/linux-perf.cfg's domain: mem=256M, its command line; hv/domain.c's places. */
#define RAM_SIZE	(256ull << 20)
#define ZERO_PAGE	(0x1000ull + 0x7000)
#define CMDLINE_AT	(0x1000ull + 0x8000)
#define CMDLINE		"console=ttyS0 earlyprintk=serial,ttyS0,115200 nokaslr printk.devkmsg=on " \
			"nmi_watchdog=0 perfvisor.kcount"

/* printk.c writes to the console; these tests use only its formatting. */
void con_write(const char *s, size_t len)
{
	(void)s;
	(void)len;
}

/* The whole file, or NULL with the reason printed (make deps builds build/linux). */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
			*len = (size_t)n;
		} else {
			free(buf);
			buf = NULL;
		}
	}
	if (f)
		fclose(f);
	if (!buf)
		printf("# cannot read %s: make deps builds the Linux guest\n", path);
	return buf;
}

/* boot.rst: protocol 2.12 or later with the 64-bit entry, which Debian's 6.1 kernel has. */
static void test_header(const uint8_t *k, size_t klen, struct bzimage_info *info)
{
	char err[160] = "";

	check(bzimage_is(k, klen), "Debian's vmlinuz has a Linux setup header");
	if (!check(bzimage_check(k, klen, info, err, sizeof(err)), "it passes the check: %s", err))
		return;
	check(info->version >= 0x020C, "boot protocol %u.%02u >= 2.12", info->version >> 8,
	      info->version & 0xFF);
	check(get_le(k, HDR_XLOADFLAGS, 2) & XLF_KERNEL_64, "XLF_KERNEL_64: the 64-bit entry");
	check(info->setup_size + info->kernel_size <= klen,
	      "setup (%u) and kernel (%u bytes) inside the file (%zu)", info->setup_size,
	      info->kernel_size, klen);
	check(strlen(CMDLINE) <= info->cmdline_size, "the scenario's command line fits (%u)",
	      info->cmdline_size);
}

/* The scenario's load: every placement rule of boot.rst holds, the bytes are the files'. */
static void test_load(const uint8_t *k, size_t klen, const struct bzimage_info *info,
		      const uint8_t *rd, size_t rdlen)
{
	uint8_t *ram = calloc(1, RAM_SIZE), *bp;
	struct bzimage_boot boot;
	uint64_t top = RAM_SIZE;
	char err[160] = "";

	if (!check(ram != NULL, "256 MiB for the guest's RAM"))
		return;
	if (!check(bzimage_load(k, klen, ram, RAM_SIZE, rd, rdlen, CMDLINE, strlen(CMDLINE),
				ZERO_PAGE, CMDLINE_AT, &boot, err, sizeof(err)),
		   "loads with mem=256M and the initramfs: %s", err)) {
		free(ram);
		return;
	}
	check(boot.load >= HIGH_RAM && boot.load % info->kernel_alignment == 0,
	      "kernel at 0x%lx, at or above 1 MiB, aligned to kernel_alignment 0x%x", boot.load,
	      info->kernel_alignment);
	check(info->relocatable || boot.load == info->pref_address,
	      "a kernel that cannot move loads at pref_address");
	check(memcmp(ram + boot.load, k + info->setup_size, info->kernel_size) == 0,
	      "the protected-mode kernel copied byte for byte");
	check(boot.entry == boot.load + 0x200, "64-bit entry at load + 0x200");
	if ((uint64_t)info->initrd_addr_max + 1 < top)
		top = (uint64_t)info->initrd_addr_max + 1;
	check(boot.initrd % 4096 == 0 && boot.initrd + rdlen <= top,
	      "initrd at 0x%lx, page-aligned, its last byte below initrd_addr_max and RAM's end",
	      boot.initrd);
	check(boot.load + info->init_size <= boot.initrd,
	      "init_size (%u KiB) from the kernel's load ends below the initrd", info->init_size >> 10);
	check(memcmp(ram + boot.initrd, rd, rdlen) == 0, "the initramfs copied byte for byte");

	bp = ram + ZERO_PAGE;
	check(memcmp(bp + HDR_START, k + HDR_START, HDR_TYPE_OF_LOADER - HDR_START) == 0,
	      "the zero page holds the image's setup header up to type_of_loader");
	check(bp[HDR_TYPE_OF_LOADER] == LOADER_UNDEFINED, "type_of_loader 0xFF (no assigned ID)");
	check(get_le(bp, HDR_CMD_LINE_PTR, 4) == CMDLINE_AT &&
	      strcmp((char *)ram + CMDLINE_AT, CMDLINE) == 0, "cmd_line_ptr: the command line");
	check(get_le(bp, HDR_RAMDISK_IMAGE, 4) == boot.initrd &&
	      get_le(bp, HDR_RAMDISK_SIZE, 4) == rdlen, "ramdisk_image and ramdisk_size");
	check(bp[BP_E820_ENTRIES] == boot.e820_entries && boot.e820_entries >= 2,
	      "an e820 map of %u entries", boot.e820_entries);
	free(ram);
}

/* mem= below what init_size needs above 1 MiB: refused with the reason, RAM untouched. */
static void test_too_small(const uint8_t *k, size_t klen, const struct bzimage_info *info,
			   const uint8_t *rd, size_t rdlen)
{
	uint64_t small = (HIGH_RAM + info->init_size) & ~((1ull << 20) - 1);
	uint8_t *ram = calloc(1, small);
	struct bzimage_boot boot;
	char err[160] = "", want[40];
	size_t i;

	if (!check(ram != NULL, "%lu MiB for the guest's RAM", small >> 20))
		return;
	snprintf(want, sizeof(want), "too large for mem=%luM", small >> 20);
	check(!bzimage_load(k, klen, ram, small, rd, rdlen, CMDLINE, strlen(CMDLINE), ZERO_PAGE,
			    CMDLINE_AT, &boot, err, sizeof(err)) && strstr(err, want),
	      "mem=%luM (below 1 MiB + init_size %u KiB) refused: %s", small >> 20,
	      info->init_size >> 10, err);
	for (i = 0; i < small && !ram[i]; i++)
		;
	check(i == small, "nothing written to the refused domain's RAM");
	free(ram);
}

int main(void)
{
	const char *dir = getenv("PERFVISOR_LINUX_DIR") ? getenv("PERFVISOR_LINUX_DIR")
							 : "build/linux";
	char kpath[256], rpath[256];
	size_t klen = 0, rdlen = 0;
	struct bzimage_info info;
	uint8_t *k, *rd;

	snprintf(kpath, sizeof(kpath), "%s/vmlinuz", dir);
	snprintf(rpath, sizeof(rpath), "%s/initrd.gz", dir);
	k = slurp(kpath, &klen);
	rd = slurp(rpath, &rdlen);
	if (check(k && rd, "Debian's kernel and the initramfs are there (%s)", dir)) {
		memset(&info, 0, sizeof(info));
		test_header(k, klen, &info);
		if (info.version) {
			test_load(k, klen, &info, rd, rdlen);
			test_too_small(k, klen, &info, rd, rdlen);
		}
	}
	free(k);
	free(rd);
	return unit_summary();
}
