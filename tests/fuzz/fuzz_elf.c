/* Fuzz target for hv/elf.c: elf_check(), elf_load() into a small fake RAM, and elf_symbols(). */
#include "hv/elf.c"
#include "tests/fuzz/fakes.h"

#define RAM_MAX		(2u << 20)	/* 2 MiB: the "MiB" message form at 1 MiB */
#define RAM_UNIT	32		/* ASan granules: every byte past the RAM is poisoned */

/* Symbols seen; the walk is asked to stop after `stop_after` of them. */
struct sym_walk {
	size_t seen, stop_after;
	const uint8_t *img;
	size_t len;
};

static bool on_symbol(void *ctx, uint64_t addr, uint64_t size, const char *name)
{
	struct sym_walk *s = ctx;
	const uint8_t *n = (const uint8_t *)name;

	(void)addr;
	(void)size;
	FZ_CHECK(n >= s->img && n < s->img + s->len, "name outside the image");
	FZ_CHECK(fz_terminated(name, (size_t)(s->img + s->len - n)), "name unterminated");
	return ++s->seen < s->stop_after;
}

static void check_info(const struct elf_info *info, size_t len)
{
	FZ_CHECK(info->nload >= 1 && info->load_lo < info->load_hi, "load range");
	FZ_CHECK(info->entry >= info->load_lo && info->entry < info->load_hi, "entry 0x%llx",
		 (unsigned long long)info->entry);
	FZ_CHECK(!info->has_multiboot || (info->mb_offset % 4 == 0 && info->mb_offset + 12 <= len &&
					  info->mb_offset + 12 <= MB_SEARCH_LEN), "multiboot");
}

static void check_error(const char *err, size_t errlen)
{
	FZ_CHECK(!errlen || fz_terminated(err, errlen), "error message unterminated");
	FZ_CHECK(errlen <= 5 || !strncmp(err, "ELF: ", 5), "error message %s", err);
}

/* Input: RAM size in RAM_UNITs (2 bytes), error buffer size, symbol stop count; then the image. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t ram[RAM_MAX];
	static uint64_t ram_limit = RAM_MAX;	/* fz_limit() over 2 MiB is slow: on changes */
	struct fz in = { data, size };
	uint64_t ram_size = (uint64_t)fz_u16(&in) * RAM_UNIT;
	size_t errlen = fz_u8(&in), len;
	struct sym_walk walk = { 0, fz_u8(&in) + 1u, NULL, 0 };
	char *err = (char *)fz_block(errlen);
	uint8_t *img = fz_bytes(&in, in.n, &len);
	struct elf_info info, loaded;
	bool ok, ok_load;

	ok = elf_check(img, len, &info, err, errlen);
	if (ok)
		check_info(&info, len);
	else
		check_error(err, errlen);

	if (ram_size != ram_limit) {
		fz_limit(ram, RAM_MAX, ram_size);
		ram_limit = ram_size;
	}
	ok_load = elf_load(img, len, &loaded, ram, ram_size, err, errlen);
	FZ_CHECK(ok_load <= ok, "elf_load() took what elf_check() refused");
	if (ok_load)
		FZ_CHECK(!memcmp(&info, &loaded, sizeof(info)) && info.load_hi <= ram_size,
			 "loaded image differs or exceeds RAM");
	else
		check_error(err, errlen);

	if (ok) {
		walk.img = img;
		walk.len = len;
		FZ_CHECK(elf_symbols(img, &info, on_symbol, &walk) == walk.seen, "symbol count");
		FZ_CHECK(walk.seen <= walk.stop_after, "walk did not stop");
	}
	fz_free(img, len);
	fz_free(err, errlen);
	return 0;
}
