/* Unit tests for hv/guest_mbi.c: the multiboot information a guest reads, and every refusal. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/guest_mbi.c"

#define RAM_SIZE	(128u << 20)
#define AREA		0x9e000u
#define AREA_SIZE	0x1000u

static uint32_t rd32(const uint8_t *ram, uint64_t a)
{
	uint32_t v;

	memcpy(&v, ram + a, 4);
	return v;
}

static uint64_t rd64(const uint8_t *ram, uint64_t a)
{
	uint64_t v;

	memcpy(&v, ram + a, 8);
	return v;
}

/* True when nothing but [start, end) differs from the 0xcc fill. */
static bool only_changed(const uint8_t *ram, uint64_t size, uint64_t start, uint64_t end)
{
	uint64_t i;

	for (i = 0; i < size; i++)
		if ((i < start || i >= end) && ram[i] != 0xcc)
			return false;
	return true;
}

/* Walk the memory map the way a kernel does: by each entry's size field. */
static void test_layout(uint8_t *ram)
{
	static const char cmd[] = "console=ttyS0 pmu=on";
	uint32_t mbi = 0, flags, mm, mm_len, p, n = 0;
	uint64_t need = guest_mbi_size(strlen(cmd), NULL), base[4] = { 0 }, len[4] = { 0 },
		 type[4] = { 0 };
	const char *err;

	memset(ram, 0xcc, RAM_SIZE);
	err = guest_mbi_build(ram, RAM_SIZE, AREA, AREA_SIZE, cmd, strlen(cmd), NULL, &mbi);
	check(!err && mbi == AREA, "built at 0x%x (%s)", mbi, err ? err : "ok");
	flags = rd32(ram, mbi);
	check(flags == 0x24d, "flags: memory, cmdline, mods, mmap, loader name (0x%x)", flags);
	check(rd32(ram, mbi + 4) == 640, "mem_lower 640 KiB");
	check(rd32(ram, mbi + 8) == (RAM_SIZE >> 10) - 1024,
	      "mem_upper = RAM above 1 MiB in KiB (%u)", rd32(ram, mbi + 8));
	check(rd32(ram, mbi + 20) == 0, "no modules");
	check(!strcmp((char *)ram + rd32(ram, mbi + 16), cmd), "command line copied");
	check(!strcmp((char *)ram + rd32(ram, mbi + 64), "perfvisor"), "boot loader name");

	mm = rd32(ram, mbi + 48);
	mm_len = rd32(ram, mbi + 44);
	for (p = mm; p < mm + mm_len && n < 4; p += rd32(ram, p) + 4, n++) {
		base[n] = rd64(ram, p + 4);
		len[n] = rd64(ram, p + 12);
		type[n] = rd32(ram, p + 20);
	}
	check(n == 2 && base[0] == 0 && len[0] == 0x9fc00 && type[0] == 1,
	      "mmap entry 0: 0-0x9fc00 usable");
	check(base[1] == 0x100000 && len[1] == RAM_SIZE - 0x100000 && type[1] == 1,
	      "mmap entry 1: 1 MiB to the end of RAM usable");
	check(need == 88 + 48 + 10 + strlen(cmd) + 1, "guest_mbi_size counts everything (%llu)",
	      (unsigned long long)need);
	check(only_changed(ram, RAM_SIZE, AREA, AREA + need),
	      "nothing written outside the area's used part");
	check(mm >= AREA && mm + mm_len <= AREA + need &&
	      rd32(ram, mbi + 16) + strlen(cmd) < AREA + need,
	      "all pointers lie inside the area");
}

static void test_edges(uint8_t *ram)
{
	uint32_t mbi;
	const char *err;

	/* Exactly 1 MiB: no upper memory, a single map entry. */
	err = guest_mbi_build(ram, 1 << 20, AREA, AREA_SIZE, NULL, 0, NULL, &mbi);
	check(!err && rd32(ram, mbi + 8) == 0 && rd32(ram, mbi + 44) == 24,
	      "1 MiB of RAM: mem_upper 0, one map entry");
	check(ram[rd32(ram, mbi + 16)] == '\0', "no command line gives an empty string");

	/* The area exactly as large as needed, at the very end of RAM. */
	memset(ram, 0xcc, RAM_SIZE);
	err = guest_mbi_build(ram, RAM_SIZE, RAM_SIZE - 152, 152, "abcde", 5, NULL, &mbi);
	check(!err && !strcmp((char *)ram + RAM_SIZE - 6, "abcde"),
	      "an area of exactly the size fits");
}

static const struct {
	const char *name;
	uint64_t ram_size, area, area_size;
	size_t cmdline_len;
	const char *want;
} refusals[] = {
	{ "RAM under 1 MiB", 0xfffff, 0x1000, 0x1000, 4, "smaller than 1 MiB" },
	{ "unaligned area", RAM_SIZE, 0x9e004, 0x1000, 4, "not 8-byte aligned" },
	{ "area past RAM", RAM_SIZE, RAM_SIZE - 0x800, 0x1000, 4, "outside guest RAM" },
	{ "area larger than RAM", RAM_SIZE, 0, RAM_SIZE + 8, 4, "outside guest RAM" },
	{ "area + size wraps", RAM_SIZE, 0xfffffffffffffff8ull, 0x10, 4, "outside guest RAM" },
	{ "area one byte short", RAM_SIZE, AREA, 88 + 48 + 10 + 4, 4, "does not fit" },
	{ "command line longer than 4 GiB", RAM_SIZE, AREA, AREA_SIZE, (size_t)1 << 33,
	  "does not fit" },
	{ "crossing 4 GiB", 8ull << 30, 0xffffff80ull, 0x2000, 4, "above 4 GiB" },
};

/* Refusals leave RAM alone; a large ram_size is only claimed, never touched. */
static void test_refusals(uint8_t *ram)
{
	uint32_t mbi = 0x1234;
	size_t i;
	const char *err;

	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		memset(ram, 0xcc, 0x100000);
		err = guest_mbi_build(ram, refusals[i].ram_size, refusals[i].area,
				      refusals[i].area_size, "abcd", refusals[i].cmdline_len, NULL, &mbi);
		check(err && strstr(err, refusals[i].want) && mbi == 0x1234 &&
		      only_changed(ram, 0x100000, 0, 0), "%s refused: %s", refusals[i].name, err);
	}
}

/* Boot data beside any image: at 0x1000 when there is room, after the image below 640 KiB. */
static void test_boot_area(void)
{
	const uint64_t size = 0xF000;

	check(guest_boot_area(0x100000, 0x200000, size) == 0x1000, "image at 1 MiB: boot data at 0x1000");
	check(guest_boot_area(0x10000, 0x20000, size) == 0x1000, "image at 0x10000: room below it");
	check(guest_boot_area(0x8000, 0xDA30, size) == 0xE000,
	      "kvm-unit-tests' realmode.flat at 0x8000: boot data on the page after it");
	check(guest_boot_area(0xFFF, 0x10000, size) == 0x10000, "an image over 0x1000 pushes it up");
	check(guest_boot_area(0x0, 0x800, size) == 0x1000, "an image in page 0 leaves 0x1000 free");
	check(guest_boot_area(0x8000, 0x92000, size) == UINT64_MAX,
	      "an image filling low RAM leaves no room: refused");
	check(guest_boot_area(0x8000, 0x200000, size) == UINT64_MAX,
	      "an image from low RAM into high RAM: refused");
	check(guest_boot_area(0x100000, 0x200000, 0x100000) == UINT64_MAX,
	      "boot data larger than low RAM: refused");
}

/*
 * One module (a domain's initrd=): mods_count 1, mods_addr at an entry with mod_start,
 * mod_end and the string (multiboot 0.6.96 3.3), everything inside the area, the command line
 * after it intact.
 */
static void test_module(uint8_t *ram)
{
	static const char cmd[] = "x86/apic.flat -v";
	const struct guest_mbi_module mod = { 0x200000, 0x200023, "kut-env" };
	uint64_t need = guest_mbi_size(strlen(cmd), &mod);
	uint32_t mbi = 0, entry;
	const char *err;

	memset(ram, 0xcc, RAM_SIZE);
	err = guest_mbi_build(ram, RAM_SIZE, AREA, AREA_SIZE, cmd, strlen(cmd), &mod, &mbi);
	check(!err && mbi == AREA, "with a module: built (%s)", err ? err : "ok");
	check(rd32(ram, mbi) & 0x8, "with a module: the mods flag");
	check(rd32(ram, mbi + 20) == 1, "with a module: mods_count 1");
	entry = rd32(ram, mbi + 24);
	check(entry % 4 == 0 && entry >= AREA && entry + 16 <= AREA + need,
	      "module entry aligned, inside the area (0x%x)", entry);
	check(rd32(ram, entry) == 0x200000 && rd32(ram, entry + 4) == 0x200023,
	      "mod_start and mod_end as given");
	check(!strcmp((char *)ram + rd32(ram, entry + 8), "kut-env") && rd32(ram, entry + 12) == 0,
	      "module string, reserved word 0");
	check(!strcmp((char *)ram + rd32(ram, mbi + 16), cmd), "command line intact after it");
	check(need == 152 + 16 + 8 + strlen(cmd) + 1,
	      "guest_mbi_size counts the entry and string (%llu)", (unsigned long long)need);
	check(only_changed(ram, RAM_SIZE, AREA, AREA + need), "nothing written outside the area");

	/* A module that is not inside RAM is the caller's bug: refused, RAM untouched. */
	const struct guest_mbi_module past = { RAM_SIZE - 0x1000, RAM_SIZE + 1, "x" };
	const struct guest_mbi_module inverted = { 0x300000, 0x200000, "x" };

	memset(ram, 0xcc, 0x100000);
	err = guest_mbi_build(ram, RAM_SIZE, AREA, AREA_SIZE, cmd, strlen(cmd), &past, &mbi);
	check(err && strstr(err, "module is outside") && only_changed(ram, 0x100000, 0, 0),
	      "a module past the end of RAM refused");
	err = guest_mbi_build(ram, RAM_SIZE, AREA, AREA_SIZE, cmd, strlen(cmd), &inverted, &mbi);
	check(err && strstr(err, "module is outside"), "a module ending before it starts refused");
	err = guest_mbi_build(ram, RAM_SIZE, AREA, need - 1, cmd, strlen(cmd), &mod, &mbi);
	check(err && strstr(err, "does not fit"), "an area one byte short of the module refused");
}

/* Modules go on the page after the image, never below 1 MiB, never past the end of RAM. */
static void test_module_place(void)
{
	check(guest_module_place(0x100000 + 0x3A123, 100, RAM_SIZE) == 0x13B000,
	      "after an image at 1 MiB: the next page");
	check(guest_module_place(0x200000, 100, RAM_SIZE) == 0x200000,
	      "an image ending on a page boundary: that page");
	check(guest_module_place(0xDA30, 100, RAM_SIZE) == 0x100000,
	      "realmode.flat (0x8000-0xDA30): at 1 MiB, above the boot data and the BIOS area");
	check(guest_module_place(0x100000, 0, RAM_SIZE) == 0x100000, "an empty module fits");
	check(guest_module_place(RAM_SIZE - 0x1000, 0x1000, RAM_SIZE) == RAM_SIZE - 0x1000,
	      "a module filling the last page fits");
	check(guest_module_place(RAM_SIZE - 0x1000, 0x1001, RAM_SIZE) == UINT64_MAX,
	      "one byte more than the RAM left: nowhere");
	check(guest_module_place(RAM_SIZE + 1, 1, RAM_SIZE) == UINT64_MAX,
	      "an image past RAM: nowhere");
	check(guest_module_place(0x100000, UINT64_MAX, RAM_SIZE) == UINT64_MAX,
	      "a length that would wrap: nowhere");
	check(guest_module_place(UINT64_MAX - 10, 1, UINT64_MAX) == UINT64_MAX,
	      "an image end whose page rounding would wrap: nowhere");
}

int main(void)
{
	uint8_t *ram = malloc(RAM_SIZE);

	test_layout(ram);
	test_edges(ram);
	test_refusals(ram);
	test_boot_area();
	test_module(ram);
	test_module_place();
	free(ram);
	return unit_summary();
}
