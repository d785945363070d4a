/* Fuzz target for hv/bzimage.c: bzimage_check() and bzimage_load() of any image into fake RAM. */
#include "hv/bzimage.c"
#define FZ_PRINTK
#include "tests/fuzz/fakes.h"

#define RAM_MAX		(4u << 20)	/* the kernel's placement past 1 MiB, in 4 KiB steps */
#define RAM_UNIT	4096
#define ZERO_PAGE	0x8000u
#define CMDLINE_AT	0x9000u

static void check_error(const char *err, size_t errlen)
{
	FZ_CHECK(!errlen || fz_terminated(err, errlen), "error message unterminated");
	FZ_CHECK(errlen <= 9 || !strncmp(err, "bzImage: ", 9), "error message %s", err);
}

/* What a loaded kernel must find: inside RAM, above 1 MiB, clear of its initrd, e820 to the end. */
static void check_boot(const struct bzimage_info *info, const struct bzimage_boot *b,
		       const uint8_t *ram, uint64_t ram_size, uint64_t initrd_len)
{
	uint64_t span = kernel_span(info), n = ram[ZERO_PAGE + BP_E820_ENTRIES];
	const uint8_t *last = ram + ZERO_PAGE + BP_E820_TABLE + (n - 1) * E820_ENTRY_SIZE;

	FZ_CHECK(b->load >= HIGH_RAM && b->load + span <= ram_size, "kernel 0x%llx outside RAM",
		 (unsigned long long)b->load);
	FZ_CHECK(b->load == info->pref_address ||
		 (info->relocatable && !(b->load % info->kernel_alignment)), "kernel misplaced");
	FZ_CHECK(b->entry == b->load + BZ_ENTRY64_OFFSET && b->zero_page == ZERO_PAGE, "entry");
	FZ_CHECK(b->initrd_size == initrd_len, "initrd size");
	if (initrd_len)
		FZ_CHECK(!(b->initrd & PAGE_MASK) && b->initrd >= b->load + span &&
			 b->initrd + initrd_len <= ram_size &&
			 b->initrd + initrd_len - 1 <= info->initrd_addr_max, "initrd misplaced");
	FZ_CHECK(n == b->e820_entries && get64(last, 0) + get64(last, 8) == ram_size, "e820");
}

/* Input: RAM size in RAM_UNITs (2 bytes), initrd length (2), command line length and error
 * buffer size (1 each), then those bytes and the image. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t ram[RAM_MAX];
	struct fz in = { data, size };
	uint64_t ram_size = (uint64_t)fz_u16(&in) % (RAM_MAX / RAM_UNIT + 1) * RAM_UNIT;
	size_t initrd_want = fz_u16(&in), cmd_want = fz_u8(&in), errlen = fz_u8(&in);
	size_t initrd_len, cmd_len, len;
	char *err = (char *)fz_block(errlen);
	uint8_t *initrd = fz_bytes(&in, initrd_want, &initrd_len);
	uint8_t *cmd = fz_bytes(&in, cmd_want, &cmd_len);
	uint8_t *img = fz_bytes(&in, in.n, &len);
	struct bzimage_info info;
	struct bzimage_boot boot;
	bool ok, ok_load;

	ok = bzimage_check(img, len, &info, err, errlen);
	if (!ok)
		check_error(err, errlen);
	FZ_CHECK(ok <= bzimage_is(img, len), "a bzImage without its magic");
	ok_load = bzimage_load(img, len, ram, ram_size, initrd_len ? initrd : NULL, initrd_len,
			       (const char *)cmd, cmd_len, ZERO_PAGE, CMDLINE_AT, &boot, err, errlen);
	FZ_CHECK(ok_load <= ok, "bzimage_load() took what bzimage_check() refused");
	if (ok_load)
		check_boot(&info, &boot, ram, ram_size, initrd_len);
	else
		check_error(err, errlen);
	fz_free(img, len);
	fz_free(cmd, cmd_len);
	fz_free(initrd, initrd_len);
	fz_free(err, errlen);
	return 0;
}
