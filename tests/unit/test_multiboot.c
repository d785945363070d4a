/* Unit tests for boot/multiboot: a valid layout, each malformed field's message, random damage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/asan_interface.h>

#include "tests/unit/unit.h"
#include "lib/multiboot.c"
#include "lib/printk.c"

/* printk.c writes to the console; these tests use only its formatting. */
void con_write(const char *s, size_t len)
{
	(void)s;
	(void)len;
}

/* The window stands for physical [WIN_PA, WIN_END). */
#define WIN_PA		0x10000ull
#define WIN_SIZE	0x400000ull
#define WIN_END		(WIN_PA + WIN_SIZE)

#define INFO		0x20000ull
#define CMDLINE		0x21000ull
#define MMAP		0x22000ull
#define MODS		0x23000ull
#define MOD0_STR	0x24000ull
#define MOD2_STR	0x24100ull
#define STR_600		0x30000ull	/* 600 characters */
#define STR_511		0x31000ull	/* 511 characters */
#define STR_512		0x32000ull
#define STR_255		0x33000ull
#define STR_256		0x34000ull
#define IMG_START	0x100000ull
#define IMG_END		0x180000ull

#define FLAGS		0x24d		/* memory, cmdline, mods, mmap, loader name: 68 bytes */
#define MMAP_LEN	104
#define NO_NUL		0x4141414141414141ull	/* eight 'A's */
#define N(a)		(sizeof(a) / sizeof((a)[0]))

static uint8_t *mem;

static void poke(uint64_t pa, uint64_t v, int width)
{
	memcpy(mem + (pa - WIN_PA), &v, (size_t)width);
}

static void poke_str(uint64_t pa, const char *s)
{
	memcpy(mem + (pa - WIN_PA), s, strlen(s) + 1);
}

static void poke_mmap(uint64_t pa, uint32_t size, uint64_t base, uint64_t len, uint32_t type)
{
	poke(pa, size, 4);
	poke(pa + 4, base, 8);
	poke(pa + 12, len, 8);
	poke(pa + 20, type, 4);
}

static void poke_mod(unsigned i, uint32_t start, uint32_t end, uint32_t str)
{
	poke(MODS + 16 * i, start, 4);
	poke(MODS + 16 * i + 4, end, 4);
	poke(MODS + 16 * i + 8, str, 4);
	poke(MODS + 16 * i + 12, 0, 4);
}

static void build_valid(void)
{
	memset(mem, 0, WIN_SIZE);
	poke(INFO, FLAGS, 4);
	poke(INFO + 4, 639, 4);
	poke(INFO + 8, 261120, 4);
	poke(INFO + 16, CMDLINE, 4);
	poke(INFO + 20, 3, 4);
	poke(INFO + 24, MODS, 4);
	poke(INFO + 44, MMAP_LEN, 4);
	poke(INFO + 48, MMAP, 4);
	poke(INFO + 64, 0x25000, 4);
	poke_str(0x25000, "GRUB 2.06");
	poke_str(CMDLINE, "/boot/perfvisor.elf loglevel=7");
	poke_mmap(MMAP, 20, 0, 0x9fc00, 1);
	poke_mmap(MMAP + 24, 20, 0x9fc00, 0x400, 2);
	poke_mmap(MMAP + 48, 28, 0xf0000, 0x10000, 2);	/* longer entry: the walk uses size */
	poke(MMAP + 72, 0xffffffffffffffffull, 8);
	poke_mmap(MMAP + 80, 20, 0x100000, 0xff00000, 1);
	poke_mod(0, 0x200000, 0x204000, MOD0_STR);
	poke_mod(1, 0x300000, 0x300800, 0);			/* no string */
	poke_mod(2, 0x204000, 0x204000, MOD2_STR);		/* empty, right after module 0 */
	poke_str(MOD0_STR, "/boot/guest.elf name=a vcpus=2");
	poke_str(MOD2_STR, "x");
	memset(mem + (STR_600 - WIN_PA), 'a', 600);
	memset(mem + (STR_511 - WIN_PA), 'b', 511);
	memset(mem + (STR_512 - WIN_PA), 'c', 512);
	memset(mem + (STR_255 - WIN_PA), 'd', 255);
	memset(mem + (STR_256 - WIN_PA), 'e', 256);
}

static int parse(uint64_t info_pa, uint64_t win_size, struct mb_boot_info *out, char *msg)
{
	const struct mb_window w = { mem, WIN_PA, win_size };

	return mb_parse(&w, info_pa, IMG_START, IMG_END, out, msg, 200);
}

static bool has_range(const struct frame_range *r, size_t n, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].start == start && r[i].end == end)
			return true;
	return false;
}

static void test_valid(void)
{
	static struct mb_boot_info mb;
	static const struct mb_mmap_entry want_mmap[] = {
		{ 0, 0x9fc00, 1 }, { 0x9fc00, 0x400, 2 }, { 0xf0000, 0x10000, 2 },
		{ 0x100000, 0xff00000, 1 },
	};
	static const struct frame_range want_used[] = {
		{ INFO, INFO + 68 }, { MMAP, MMAP + MMAP_LEN }, { CMDLINE, CMDLINE + 31 },
		{ MODS, MODS + 48 }, { MOD0_STR, MOD0_STR + 31 }, { MOD2_STR, MOD2_STR + 2 },
	};
	struct frame_range usable[MB_MMAP_MAX], reserved[MB_RESERVED_MAX];
	char msg[200] = "junk";
	size_t n;
	int r;

	build_valid();
	r = parse(INFO, WIN_SIZE, &mb, msg);
	check(r == 0 && !msg[0], "valid info parses (%d: %s)", r, msg);
	check(mb.flags == FLAGS && mb.mem_lower_kb == 639 && mb.mem_upper_kb == 261120,
	      "flags 0x%x, memory %u/%u KiB", mb.flags, mb.mem_lower_kb, mb.mem_upper_kb);
	check(mb.mmap_count == 4 && !mb.mmap_dropped && !mb.mmap_synthesized, "4 mmap entries");
	for (unsigned i = 0; i < 4; i++)
		check(!memcmp(&mb.mmap[i], &want_mmap[i], sizeof(want_mmap[i])),
		      "mmap %u: 0x%lx+0x%lx type %u", i, mb.mmap[i].base, mb.mmap[i].length,
		      mb.mmap[i].type);
	check(!strcmp(mb.cmdline, "/boot/perfvisor.elf loglevel=7"), "cmdline '%s'", mb.cmdline);
	check(mb.mod_count == 3, "3 modules");
	check(mb.mods[0].start == 0x200000 && mb.mods[0].end == 0x204000 &&
	      !strcmp(mb.mods[0].string, "/boot/guest.elf name=a vcpus=2"),
	      "module 0: 0x%lx-0x%lx '%s'", mb.mods[0].start, mb.mods[0].end, mb.mods[0].string);
	check(mb.mods[1].start == 0x300000 && mb.mods[1].end == 0x300800 &&
	      !strcmp(mb.mods[1].string, ""), "module 1 with no string");
	check(mb.mods[2].start == 0x204000 && mb.mods[2].end == 0x204000 &&
	      !strcmp(mb.mods[2].string, "x"), "module 2: empty, adjacent to module 0");
	check(mb.image.start == IMG_START && mb.image.end == IMG_END, "image kept");
	check(mb.used_count == N(want_used), "%u used ranges", mb.used_count);
	for (size_t i = 0; i < N(want_used); i++)
		check(has_range(mb.used, mb.used_count, want_used[i].start, want_used[i].end),
		      "used range [0x%lx, 0x%lx)", want_used[i].start, want_used[i].end);

	n = mb_usable_ranges(&mb, usable);
	check(n == 2 && usable[0].start == 0 && usable[0].end == 0x9fc00 &&
	      usable[1].start == 0x100000 && usable[1].end == 0x10000000,
	      "usable ranges: the two type 1 entries");
	n = mb_reserved_ranges(&mb, reserved);
	check(n == 1 + 3 + N(want_used), "%zu reserved ranges", n);
	check(has_range(reserved, n, IMG_START, IMG_END) &&
	      has_range(reserved, n, 0x200000, 0x204000) &&
	      has_range(reserved, n, 0x300000, 0x300800) && has_range(reserved, n, INFO, INFO + 68),
	      "reserved: image, modules, structures");
}

static void test_variants(void)
{
	static struct mb_boot_info mb;
	char msg[200];
	int r;

	build_valid();
	poke(INFO, 0x1, 4);
	r = parse(INFO, WIN_SIZE, &mb, msg);
	check(r == 0 && mb.mmap_synthesized && mb.mmap_count == 2 &&
	      mb.mmap[0].base == 0 && mb.mmap[0].length == 639 * 1024 && mb.mmap[0].type == 1 &&
	      mb.mmap[1].base == 0x100000 && mb.mmap[1].length == 261120ull * 1024 &&
	      mb.mmap[1].type == 1 && mb.used_count == 1 && mb.used[0].end == INFO + 12,
	      "flags bit 0 only: map made from mem_lower/mem_upper, 12-byte info");
	check(!mb.cmdline[0] && mb.mod_count == 0, "no cmdline, no modules without their flags");

	build_valid();
	poke(INFO + 16, 0, 4);
	check(parse(INFO, WIN_SIZE, &mb, msg) == 0 && !mb.cmdline[0], "cmdline address 0: empty");

	build_valid();
	poke(INFO + 16, STR_511, 4);
	r = parse(INFO, WIN_SIZE, &mb, msg);
	check(r == 0 && strlen(mb.cmdline) == 511, "511-character cmdline fits (%s)", msg);

	build_valid();
	poke(MODS + 8, STR_600, 4);
	r = parse(INFO, WIN_SIZE, &mb, msg);
	check(r == 0 && strlen(mb.mods[0].string) == 600 &&
	      mb.mods[0].string == (const char *)mem + (STR_600 - WIN_PA),
	      "a 600-character module string is taken where it lies, whole (%s)", msg);

	build_valid();
	poke(INFO + 20, 0, 4);
	poke(INFO + 24, 0xdeadbeef, 4);
	check(parse(INFO, WIN_SIZE, &mb, msg) == 0 && mb.mod_count == 0,
	      "no modules: the list address is not used");

	/* 70 entries: 64 kept, the rest counted. */
	build_valid();
	for (unsigned i = 0; i < 70; i++)
		poke_mmap(0x40000 + 24 * i, 20, 0x100000ull * i, 0x1000, 1);
	poke(INFO + 44, 70 * 24, 4);
	poke(INFO + 48, 0x40000, 4);
	r = parse(INFO, WIN_SIZE, &mb, msg);
	check(r == 0 && mb.mmap_count == MB_MMAP_MAX && mb.mmap_dropped == 6 &&
	      mb.mmap[63].base == 63 * 0x100000ull, "70 map entries: 64 kept, 6 dropped");

	/* An info structure that ends exactly at the end of the window. */
	build_valid();
	poke(WIN_END - 52, 0x41, 4);
	poke(WIN_END - 52 + 44, 24, 4);
	poke(WIN_END - 52 + 48, MMAP, 4);
	r = parse(WIN_END - 52, WIN_SIZE, &mb, msg);
	check(r == 0 && mb.mmap_count == 1, "info flush with the window's end (%s)", msg);
}

/* Modules past MB_MODS_MAX are counted, not read: the first 16 are taken whatever follows. */
static void test_mods_past_limit(void)
{
	struct frame_range reserved[MB_RESERVED_MAX];
	struct mb_boot_info mb;
	char msg[200];
	bool spread;
	int r;

	build_valid();
	for (unsigned i = 0; i < MB_MODS_MAX; i++)
		poke_mod(i, 0x200000 + 0x1000 * i, 0x200800 + 0x1000 * i, 0);
	poke_mod(MB_MODS_MAX, 0x400000, 0x300000, 0xdeadbeef);	/* would be refused if read */
	poke(INFO + 20, MB_MODS_MAX, 4);
	r = parse(INFO, WIN_SIZE, &mb, msg);
	check(r == 0 && mb.mod_count == MB_MODS_MAX && mb.mods_refused == 0,
	      "16 modules: all taken, none refused (%s)", msg);

	poke(INFO + 20, MB_MODS_MAX + 1, 4);
	r = parse(INFO, WIN_SIZE, &mb, msg);
	spread = r == 0;
	for (unsigned i = 0; spread && i < MB_MODS_MAX; i++)
		spread = mb.mods[i].start == 0x200000 + 0x1000 * i;
	check(spread && mb.mod_count == MB_MODS_MAX && mb.mods_refused == 1 &&
	      has_range(mb.used, mb.used_count, MODS, MODS + 16 * MB_MODS_MAX) &&
	      mb_reserved_ranges(&mb, reserved) == 1 + MB_MODS_MAX + mb.used_count,
	      "17 modules: the first 16 taken, the 17th refused unread (%s)", msg);

	/* Only the 16 entries read must lie in the window. */
	memmove(mem + (WIN_END - 16 * MB_MODS_MAX - WIN_PA), mem + (MODS - WIN_PA),
		16 * MB_MODS_MAX);
	poke(INFO + 24, WIN_END - 16 * MB_MODS_MAX, 4);
	poke(INFO + 20, 0xffffffff, 4);
	r = parse(INFO, WIN_SIZE, &mb, msg);
	check(r == 0 && mb.mod_count == MB_MODS_MAX && mb.mods_refused == 0xffffffff - MB_MODS_MAX,
	      "4294967295 modules, list at the window's end: 16 taken, %u refused (%s)",
	      mb.mods_refused, msg);
}

static void test_errors(void)
{
	static const struct {
		uint64_t info_pa, win_size;	/* 0: INFO, WIN_SIZE */
		struct {
			uint64_t pa, val;
			int width;
		} patch[3];
		int err;
		const char *msg;
	} cases[] = {
		{ 0x1000, 0, { { 0 } }, MB_E_WINDOW,
		  "multiboot: info structure at 0x1000 is outside the memory window" },
		{ WIN_END - 2, 0, { { 0 } }, MB_E_WINDOW,
		  "multiboot: info structure at 0x40fffe is outside the memory window" },
		{ 0, INFO - WIN_PA + 40, { { 0 } }, MB_E_WINDOW,
		  "multiboot: info structure at 0x20000 (68 bytes for flags 0x24d) is outside the "
		  "memory window" },
		{ WIN_END - 40, 0, { { WIN_END - 40, 0x41, 4 } }, MB_E_WINDOW,
		  "multiboot: info structure at 0x40ffd8 (52 bytes for flags 0x41) is outside the "
		  "memory window" },
		{ WIN_END - 100, 0, { { WIN_END - 100, 0x1001, 4 } }, MB_E_WINDOW,
		  "multiboot: info structure at 0x40ff9c (116 bytes for flags 0x1001) is outside "
		  "the memory window" },
		{ 0, 0, { { INFO, 0x4, 4 } }, MB_E_NOMEM,
		  "multiboot: no memory information (flags 0x4 have neither bit 0 nor bit 6)" },
		{ 0, 0, { { INFO + 48, 0xdeadbeef, 4 } }, MB_E_WINDOW,
		  "multiboot: memory map at 0xdeadbeef (104 bytes) is outside the memory window" },
		{ 0, 0, { { INFO + 44, 0xffffffff, 4 } }, MB_E_WINDOW,
		  "multiboot: memory map at 0x22000 (4294967295 bytes) is outside the memory "
		  "window" },
		{ 0, 0, { { INFO + 48, WIN_END - 100, 4 } }, MB_E_WINDOW,
		  "multiboot: memory map at 0x40ff9c (104 bytes) is outside the memory window" },
		{ 0, 0, { { MMAP, 0, 4 } }, MB_E_MMAP,
		  "multiboot: memory map entry 0 has size 0 (at least 20)" },
		{ 0, 0, { { MMAP + 24, 19, 4 } }, MB_E_MMAP,
		  "multiboot: memory map entry 1 has size 19 (at least 20)" },
		{ 0, 0, { { MMAP + 80, 100, 4 } }, MB_E_MMAP,
		  "multiboot: memory map entry 3 at offset 80 runs past the end of the map "
		  "(104 bytes)" },
		{ 0, 0, { { MMAP + 80, 0xfffffffc, 4 } }, MB_E_MMAP,
		  "multiboot: memory map entry 3 at offset 80 runs past the end of the map "
		  "(104 bytes)" },
		{ 0, 0, { { INFO + 44, MMAP_LEN + 2, 4 } }, MB_E_MMAP,
		  "multiboot: memory map entry 4 at offset 104 runs past the end of the map "
		  "(106 bytes)" },
		{ 0, 0, { { INFO + 44, MMAP_LEN + 20, 4 } }, MB_E_MMAP,
		  "multiboot: memory map entry 4 has size 0 (at least 20)" },
		{ 0, 0, { { INFO + 44, 0, 4 } }, MB_E_MMAP, "multiboot: memory map is empty" },
		{ 0, 0, { { MMAP + 84, 0xffffffffffff0000ull, 8 }, { MMAP + 92, 0x10000, 8 } },
		  MB_E_MMAP, "multiboot: memory map entry 3 overflows (base 0xffffffffffff0000, "
		  "length 0x10000)" },
		{ 0, 0, { { INFO + 16, 0xdeadbeef, 4 } }, MB_E_WINDOW,
		  "multiboot: command line at 0xdeadbeef is outside the memory window" },
		{ 0, 0, { { INFO + 16, WIN_END, 4 } }, MB_E_WINDOW,
		  "multiboot: command line at 0x410000 is outside the memory window" },
		{ 0, 0, { { INFO + 16, WIN_END - 5, 4 }, { WIN_END - 8, NO_NUL, 8 } }, MB_E_STRING,
		  "multiboot: command line at 0x40fffb is not terminated inside the memory "
		  "window" },
		{ 0, 0, { { INFO + 16, STR_600, 4 } }, MB_E_STRING,
		  "multiboot: command line at 0x30000 is longer than 511 bytes" },
		{ 0, 0, { { INFO + 16, STR_512, 4 } }, MB_E_STRING,
		  "multiboot: command line at 0x32000 is longer than 511 bytes" },
		{ 0, 0, { { INFO + 24, 0xfffffff0, 4 } }, MB_E_WINDOW,
		  "multiboot: module list at 0xfffffff0 (3 entries) is outside the memory window" },
		{ 0, 0, { { INFO + 24, WIN_END - 32, 4 } }, MB_E_WINDOW,
		  "multiboot: module list at 0x40ffe0 (3 entries) is outside the memory window" },
		{ 0, 0, { { MODS + 16, 0x300000, 4 }, { MODS + 20, 0x200000, 4 } }, MB_E_MODS,
		  "multiboot: module 1 ends before it starts (0x200000 < 0x300000)" },
		{ 0, 0, { { MODS + 16, 0x500000, 4 }, { MODS + 20, 0x500800, 4 } }, MB_E_WINDOW,
		  "multiboot: module 1 [0x500000, 0x500800) is outside the memory window" },
		{ 0, 0, { { MODS + 16, 0x40f000, 4 }, { MODS + 20, 0x410001, 4 } }, MB_E_WINDOW,
		  "multiboot: module 1 [0x40f000, 0x410001) is outside the memory window" },
		{ 0, 0, { { MODS + 16, 0x17f000, 4 }, { MODS + 20, 0x181000, 4 } }, MB_E_MODS,
		  "multiboot: module 1 [0x17f000, 0x181000) overlaps the hypervisor image "
		  "[0x100000, 0x180000)" },
		{ 0, 0, { { MODS, 0x0f0000, 4 }, { MODS + 4, 0x300000, 4 } }, MB_E_MODS,
		  "multiboot: module 0 [0xf0000, 0x300000) overlaps the hypervisor image "
		  "[0x100000, 0x180000)" },
		{ 0, 0, { { MODS + 16, 0x203fff, 4 }, { MODS + 20, 0x204800, 4 } }, MB_E_MODS,
		  "multiboot: modules 0 and 1 overlap ([0x200000, 0x204000) and "
		  "[0x203fff, 0x204800))" },
		{ 0, 0, { { MODS + 32, 0x2fffff, 4 }, { MODS + 36, 0x300001, 4 } }, MB_E_MODS,
		  "multiboot: modules 1 and 2 overlap ([0x300000, 0x300800) and "
		  "[0x2fffff, 0x300001))" },
		{ 0, 0, { { MODS + 8, 0xdeadbeef, 4 } }, MB_E_WINDOW,
		  "multiboot: module 0 string at 0xdeadbeef is outside the memory window" },
		{ 0, 0, { { MODS + 40, WIN_END - 5, 4 }, { WIN_END - 8, NO_NUL, 8 } }, MB_E_STRING,
		  "multiboot: module 2 string at 0x40fffb is not terminated inside the memory "
		  "window" },
	};
	static struct mb_boot_info mb;

	for (size_t i = 0; i < N(cases); i++) {
		uint64_t info_pa = cases[i].info_pa ? cases[i].info_pa : INFO;
		uint64_t size = cases[i].win_size ? cases[i].win_size : WIN_SIZE;
		char msg[200] = "";
		int r;

		build_valid();
		for (size_t k = 0; k < 3 && cases[i].patch[k].width; k++)
			poke(cases[i].patch[k].pa, cases[i].patch[k].val, cases[i].patch[k].width);
		r = parse(info_pa, size, &mb, msg);
		if (!check(r == cases[i].err && !strcmp(msg, cases[i].msg), "error %d: %s",
			   cases[i].err, cases[i].msg))
			printf("    got %d: %s\n", r, msg);
	}
}

/* Random damage to the valid layout: never a read outside the window, never a wrong success. */
static void test_random_damage(void)
{
	static const uint64_t spots[] = {
		INFO, INFO + 16, INFO + 20, INFO + 24, INFO + 44, INFO + 48, MMAP, MMAP + 24,
		MMAP + 48, MMAP + 80, MODS, MODS + 4, MODS + 8, MODS + 16, MODS + 20, MODS + 36,
	};
	static struct mb_boot_info mb;
	unsigned ok = 0, bad = 0, wrong = 0;

	srand(1);
	build_valid();
	for (int iter = 0; iter < 20000; iter++) {
		/* Whole ASan granules, so that every byte past the window is poisoned. */
		uint64_t size = (rand() % 2 ? WIN_SIZE : (uint64_t)rand() % WIN_SIZE) & ~7ull;
		const struct mb_window w = { mem, WIN_PA, size };
		uint64_t where[4];
		uint32_t saved[4];
		int n = rand() % 4 + 1, r;
		char msg[200];

		for (int k = 0; k < n; k++) {
			uint32_t v = (uint32_t)rand();

			if (rand() % 2)
				v %= 0x420000;	/* mostly plausible addresses and sizes */
			where[k] = spots[rand() % N(spots)];
			memcpy(&saved[k], mem + (where[k] - WIN_PA), 4);
			poke(where[k], v, 4);
		}
		ASAN_POISON_MEMORY_REGION(mem + size, WIN_SIZE - size);
		r = mb_parse(&w, INFO, IMG_START, IMG_END, &mb, msg, sizeof(msg));
		ASAN_UNPOISON_MEMORY_REGION(mem + size, WIN_SIZE - size);
		while (n--)
			poke(where[n], saved[n], 4);
		if (r < 0) {
			bad++;
			if (strncmp(msg, "multiboot: ", 11))
				wrong++;
			continue;
		}
		ok++;
		for (unsigned i = 0; i < mb.used_count; i++)
			if (mb.used[i].start < WIN_PA || mb.used[i].end > WIN_PA + size)
				wrong++;
		for (unsigned i = 0; i < mb.mod_count; i++)
			if (mb.mods[i].start > mb.mods[i].end || mb.mods[i].end > WIN_PA + size ||
			    (mb.mods[i].start < IMG_END && IMG_START < mb.mods[i].end &&
			     mb.mods[i].start < mb.mods[i].end))
				wrong++;
		if (r > 0 || mb.mmap_count == 0 || mb.mmap_count > MB_MMAP_MAX ||
		    mb.mod_count > MB_MODS_MAX)
			wrong++;
	}
	check(wrong == 0 && ok > 100 && bad > 100,
	      "20000 damaged layouts: %u parsed, %u refused, %u wrong", ok, bad, wrong);
}

int main(void)
{
	mem = malloc(WIN_SIZE);
	if (!mem)
		return 2;
	test_valid();
	test_variants();
	test_mods_past_limit();
	test_errors();
	test_random_damage();
	free(mem);
	return unit_summary();
}
