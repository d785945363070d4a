/* Unit tests for hv/elf.c: checking, loading, multiboot search and symbols, hostile images too. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/elf.c"

#define IMG_MAX		0x6000
#define RAM_SIZE	(16u << 20)
#define PHOFF		0x40
#define MBOFF		0x200

struct seg {
	uint32_t type;
	uint64_t offset, vaddr, paddr, filesz, memsz;
};

/* The last name has no NUL inside the table and must be skipped. */
static const char strtab[] = "\0main\0data\0ext\0helper\0tail";

struct image {
	uint8_t b[IMG_MAX];
	size_t len;
	bool is64;
};

static void put(uint8_t *p, uint64_t v, unsigned n)
{
	while (n--) {
		*p++ = v;
		v >>= 8;
	}
}

static uint8_t seg_byte(unsigned seg, uint64_t k)
{
	return 0x40 + seg * 0x10 + k % 13;
}

static size_t grow(size_t len, uint64_t end)
{
	return end > len ? end : len;
}

/*
 * Build an image: header, program headers at PHOFF, a multiboot header (flags 3)
 * at MBOFF, segment bytes at their offsets, and with syms a symbol table, string
 * table and the section header table at the very end.
 */
static void build(struct image *im, bool is64, const struct seg *segs, unsigned nseg,
		  uint64_t entry, bool syms)
{
	unsigned w = is64 ? 8 : 4, phsize = is64 ? 56 : 32, i;
	uint64_t k;

	memset(im, 0, sizeof(*im));
	im->is64 = is64;
	memcpy(im->b, "\177ELF", 4);
	im->b[4] = is64 ? 2 : 1;
	im->b[5] = 1;
	im->b[6] = 1;
	put(im->b + 16, 2, 2);
	put(im->b + 18, is64 ? 62 : 3, 2);
	put(im->b + 20, 1, 4);
	put(im->b + 24, entry, w);
	put(im->b + 24 + w, PHOFF, w);
	put(im->b + 3 * w + 28, is64 ? 64 : 52, 2);	/* e_ehsize */
	put(im->b + 3 * w + 30, phsize, 2);
	put(im->b + 3 * w + 32, nseg, 2);
	im->len = PHOFF + nseg * phsize;
	for (i = 0; i < nseg; i++) {
		uint8_t *ph = im->b + PHOFF + i * phsize;

		put(ph, segs[i].type, 4);
		put(ph + w, segs[i].offset, w);
		put(ph + 2 * w, segs[i].vaddr, w);
		put(ph + 3 * w, segs[i].paddr, w);
		put(ph + 4 * w, segs[i].filesz, w);
		put(ph + 5 * w, segs[i].memsz, w);
		for (k = 0; segs[i].type == 1 && k < segs[i].filesz; k++)
			im->b[segs[i].offset + k] = seg_byte(i, k);
		im->len = grow(im->len, segs[i].offset + segs[i].filesz);
	}
	put(im->b + MBOFF, 0x1BADB002, 4);
	put(im->b + MBOFF + 4, 3, 4);
	put(im->b + MBOFF + 8, -(0x1BADB002u + 3), 4);
	im->len = grow(im->len, MBOFF + 12);
	if (syms) {
		struct {
			uint32_t name;
			uint64_t value, size;
			uint8_t info;
			uint16_t shndx;
		} sym[] = {
			{ 0, 0, 0, 0, 0 },
			{ 1, 0x100010, 0x20, 0x12, 1 },	 /* main: global func */
			{ 6, 0x101000, 4, 0x11, 2 },	 /* data: object */
			{ 11, 0, 0, 0x12, 0 },		 /* ext: undefined func */
			{ 15, 0x100100, 0x40, 0x02, 1 }, /* helper: local func */
			{ 500, 0x100200, 8, 0x12, 1 },	 /* name beyond the table */
			{ 22, 0x100300, 8, 0x12, 1 },	 /* tail: unterminated */
		};
		unsigned symsize = is64 ? 24 : 16, shsize = is64 ? 64 : 40, n = 7;
		uint64_t str_off = (im->len + 15) & ~15ull, sym_off = str_off + sizeof(strtab) - 1;
		uint64_t sh_off = (sym_off + n * symsize + 15) & ~15ull;
		uint8_t *sh;

		memcpy(im->b + str_off, strtab, sizeof(strtab) - 1);
		for (i = 0; i < n; i++) {
			uint8_t *s = im->b + sym_off + i * symsize;

			put(s, sym[i].name, 4);
			if (is64) {
				s[4] = sym[i].info;
				put(s + 6, sym[i].shndx, 2);
				put(s + 8, sym[i].value, 8);
				put(s + 16, sym[i].size, 8);
			} else {
				put(s + 4, sym[i].value, 4);
				put(s + 8, sym[i].size, 4);
				s[12] = sym[i].info;
				put(s + 14, sym[i].shndx, 2);
			}
		}
		/* Sections: 0 null, 1 symtab (link 2), 2 strtab. */
		sh = im->b + sh_off + shsize;
		put(sh + 4, 2, 4);
		put(sh + 8 + 2 * w, sym_off, w);
		put(sh + 8 + 3 * w, n * symsize, w);
		put(sh + 8 + 4 * w, 2, 4);
		put(sh + 16 + 5 * w, symsize, w);
		sh += shsize;
		put(sh + 4, 3, 4);
		put(sh + 8 + 2 * w, str_off, w);
		put(sh + 8 + 3 * w, sizeof(strtab) - 1, w);
		put(im->b + 2 * w + 24, sh_off, w);		/* e_shoff */
		put(im->b + 3 * w + 34, shsize, 2);		/* e_shentsize */
		put(im->b + 3 * w + 36, 3, 2);			/* e_shnum */
		im->len = sh_off + 3 * shsize;
	}
}

/* Two loadable segments (text; data + bss) and a note, entry in the text. */
static const struct seg segs32[] = {
	{ 1, 0x1000, 0x100000, 0x100000, 0x300, 0x300 },
	{ 1, 0x2000, 0x101000, 0x101000, 0x100, 0x900 },
	{ 4, 0x2000, 0, 0, 0x10, 0x10 },
};

/* Linked high, loaded low: entry must be translated to physical. */
static const struct seg segs64[] = {
	{ 1, 0x1000, 0xffffffff80100000ull, 0x100000, 0x300, 0x300 },
	{ 1, 0x2000, 0xffffffff80101000ull, 0x101000, 0x100, 0x900 },
	{ 4, 0x2000, 0, 0, 0x10, 0x10 },
};

static void build_std(struct image *im, bool is64, bool syms)
{
	if (is64)
		build(im, true, segs64, 3, 0xffffffff80100010ull, syms);
	else
		build(im, false, segs32, 3, 0x100010, syms);
}

static bool seg_copied(const uint8_t *ram, const struct seg *s, unsigned i)
{
	uint64_t k;

	for (k = 0; k < s->memsz; k++)
		if (ram[s->paddr + k] != (k < s->filesz ? seg_byte(i, k) : 0))
			return false;
	return true;
}

static void test_good(bool is64, uint8_t *ram)
{
	const char *cls = is64 ? "ELF64" : "ELF32";
	const struct seg *segs = is64 ? segs64 : segs32;
	struct image im;
	struct elf_info info;
	char err[160] = "";
	bool ok;

	build_std(&im, is64, true);
	ok = elf_check(im.b, im.len, &info, err, sizeof(err));
	check(ok, "%s: a well-formed image passes (%s)", cls, err);
	check(info.is64 == is64, "%s: class reported", cls);
	check(info.entry == 0x100010, "%s: physical entry 0x%llx", cls,
	      (unsigned long long)info.entry);
	check(info.entry_virt == (is64 ? 0xffffffff80100010ull : 0x100010), "%s: e_entry kept",
	      cls);
	check(info.load_lo == 0x100000 && info.load_hi == 0x101900,
	      "%s: loaded range 0x%llx-0x%llx", cls, (unsigned long long)info.load_lo,
	      (unsigned long long)info.load_hi);
	check(info.nload == 2, "%s: the note is not a load segment", cls);
	check(info.has_multiboot && info.mb_offset == MBOFF && info.mb_flags == 3,
	      "%s: multiboot header found with its flags", cls);

	memset(ram, 0xaa, RAM_SIZE);
	ok = elf_load(im.b, im.len, &info, ram, RAM_SIZE, err, sizeof(err));
	check(ok, "%s: loads into 16 MiB (%s)", cls, err);
	check(seg_copied(ram, &segs[0], 0) && seg_copied(ram, &segs[1], 1),
	      "%s: segments copied, bss zeroed", cls);
	check(ram[0xfffff] == 0xaa && ram[0x100300] == 0xaa && ram[0x101900] == 0xaa,
	      "%s: nothing written outside the segments", cls);
}

struct sym_seen {
	unsigned n, stop_after;
	char names[8][16];
	uint64_t addr[8], size[8];
};

static bool on_sym(void *ctx, uint64_t addr, uint64_t size, const char *name)
{
	struct sym_seen *s = ctx;

	if (s->n < 8) {
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
		s->addr[s->n] = addr;
		s->size[s->n] = size;
	}
	s->n++;
	return s->n != s->stop_after;
}

static void test_symbols(bool is64)
{
	const char *cls = is64 ? "ELF64" : "ELF32";
	struct image im;
	struct elf_info info;
	struct sym_seen seen = { 0 };
	uint8_t *copy;
	size_t n;

	build_std(&im, is64, true);
	elf_check(im.b, im.len, &info, NULL, 0);
	n = elf_symbols(im.b, &info, on_sym, &seen);
	check(n == 2 && seen.n == 2, "%s: two usable function symbols (got %zu)", cls, n);
	check(!strcmp(seen.names[0], "main") && seen.addr[0] == 0x100010 && seen.size[0] == 0x20,
	      "%s: main at 0x100010 size 0x20", cls);
	check(!strcmp(seen.names[1], "helper") && seen.addr[1] == 0x100100,
	      "%s: local helper at 0x100100", cls);

	memset(&seen, 0, sizeof(seen));
	seen.stop_after = 1;
	n = elf_symbols(im.b, &info, on_sym, &seen);
	check(n == 1 && seen.n == 1, "%s: the callback can stop the walk", cls);

	/* Symbol table entry size wrong: the table is skipped. */
	put(im.b + im.len - 2 * (is64 ? 64 : 40) + 16 + 5 * (is64 ? 8 : 4), 7, is64 ? 8 : 4);
	memset(&seen, 0, sizeof(seen));
	check(elf_check(im.b, im.len, &info, NULL, 0) &&
	      elf_symbols(im.b, &info, on_sym, &seen) == 0,
	      "%s: a symbol table with a bad entry size is skipped", cls);

	/* The string table moved to the very end of an exact-size copy: no read past it. */
	build_std(&im, is64, true);
	memcpy(im.b + im.len, strtab, sizeof(strtab) - 1);
	put(im.b + im.len - (is64 ? 64 : 40) + 8 + 2 * (is64 ? 8 : 4), im.len, is64 ? 8 : 4);
	im.len += sizeof(strtab) - 1;
	copy = malloc(im.len);
	memcpy(copy, im.b, im.len);
	memset(&seen, 0, sizeof(seen));
	check(elf_check(copy, im.len, &info, NULL, 0) &&
	      elf_symbols(copy, &info, on_sym, &seen) == 2,
	      "%s: an unterminated last name at the end of the file is skipped", cls);
	free(copy);

	build_std(&im, is64, false);
	elf_check(im.b, im.len, &info, NULL, 0);
	check(elf_symbols(im.b, &info, on_sym, &seen) == 0, "%s: no sections, no symbols", cls);
}

/* Every prefix of a complete image is rejected, and none crashes (ASan watches the reads). */
static void test_truncation(bool is64, bool syms)
{
	struct image im;
	struct elf_info info;
	char err[160];
	size_t len, passed = 0;
	uint8_t *copy;

	build_std(&im, is64, syms);
	for (len = 0; len < im.len; len++) {
		/* An exact-size heap copy, so any read past the end is caught. */
		copy = malloc(len ? len : 1);
		memcpy(copy, im.b, len);
		if (elf_check(copy, len, &info, err, sizeof(err)))
			passed++;
		free(copy);
	}
	check(passed == 0, "%s%s: no truncation (0..%zu bytes) passes (%zu did)",
	      is64 ? "ELF64" : "ELF32", syms ? " with symbols" : "", im.len - 1, passed);
}

/* One hostile change to a good image and the words its rejection must contain. */
struct mutation {
	const char *name;
	bool is64, syms;
	unsigned off, size;
	uint64_t val;
	const char *want;
};

#define PH32(i, f)	(PHOFF + 32 * (i) + (f))
#define PH64(i, f)	(PHOFF + 56 * (i) + (f))

static const struct mutation mutations[] = {
	{ "bad magic", false, false, 1, 1, 'e', "ELF: bad magic" },
	{ "class 3", false, false, 4, 1, 3, "class 3 is neither" },
	{ "big-endian", false, false, 5, 1, 2, "not little-endian" },
	{ "ident version 0", false, false, 6, 1, 0, "ident version 0, want 1" },
	{ "e_version 2", true, false, 20, 4, 2, "ELF: version 2, want 1" },
	{ "ET_DYN", false, false, 16, 2, 3, "type 3 is not ET_EXEC" },
	{ "x86-64 machine in ELF32", false, false, 18, 2, 62, "machine 62 does not match" },
	{ "i386 machine in ELF64", true, false, 18, 2, 3, "machine 3 does not match" },
	{ "e_ehsize", false, false, 40, 2, 64, "header size 64, want 52" },
	{ "e_phentsize", true, false, 54, 2, 32, "program header size 32, want 56" },
	{ "phoff beyond the file", false, false, 28, 4, 0x100000,
	  "program header table (offset 0x100000" },
	{ "phoff + table wraps 32 bits", false, false, 28, 4, 0xffffffe0, "program header table" },
	{ "phoff wraps 64 bits", true, false, 32, 8, 0xffffffffffffffe0ull,
	  "program header table (offset 0xffffffffffffffe0, 3 entries)" },
	{ "phnum 0xffff", false, false, 44, 2, 0xffff, "65535 entries) ends beyond the file" },
	{ "phnum 0", true, false, 56, 2, 0, "no non-empty PT_LOAD" },
	{ "segment data beyond the file", false, false, PH32(1, 4), 4, 0x20000,
	  "ELF: program header 1 ends beyond the file (offset 0x20000 + size 0x100 > 0x2100)" },
	{ "p_filesz > p_memsz", false, false, PH32(1, 16), 4, 0x5000,
	  "program header 1 has file size 0x5000 > memory size 0x900" },
	{ "p_offset + p_filesz wraps 32 bits", false, false, PH32(0, 4), 4, 0xffffff00,
	  "program header 0 ends beyond the file (offset 0xffffff00 + size 0x300" },
	{ "p_offset + p_filesz wraps 64 bits", true, false, PH64(0, 8), 8, 0xffffffffffffff00ull,
	  "program header 0 ends beyond the file" },
	{ "p_filesz 2^64-1", true, false, PH64(0, 32), 8, ~0ull, "file size 0xffffffffffffffff" },
	{ "p_paddr + p_memsz wraps 32 bits", false, false, PH32(1, 12), 4, 0xfffff800,
	  "segment 1 (paddr 0xfffff800, vaddr 0x101000, size 0x900) wraps the address space" },
	{ "p_memsz wraps 32 bits", false, false, PH32(1, 20), 4, 0xffffffff,
	  "wraps the address space" },
	{ "p_vaddr + p_memsz wraps 64 bits", true, false, PH64(1, 16), 8, 0xfffffffffffff800ull,
	  "wraps the address space" },
	{ "p_memsz wraps 64 bits", true, false, PH64(1, 40), 8, 0xfffffffffffff000ull,
	  "wraps the address space" },
	{ "only a note left", false, false, PH32(0, 0), 4, 4,
	  "entry point 0x100010 is in no loaded" },
	{ "entry outside", false, false, 24, 4, 0x200000,
	  "ELF: entry point 0x200000 is in no loaded segment" },
	{ "entry at a segment end", true, false, 24, 8, 0xffffffff80100300ull,
	  "in no loaded segment" },
	{ "shoff beyond the file", false, true, 32, 4, 0x7000,
	  "section header table (offset 0x7000, 3 entries) ends beyond the file" },
	{ "e_shentsize", true, true, 58, 2, 40, "section header size 40, want 64" },
};

static void test_mutations(void)
{
	struct image im;
	struct elf_info info;
	char err[160];
	size_t i;
	bool ok;

	for (i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
		const struct mutation *m = &mutations[i];

		build_std(&im, m->is64, m->syms);
		put(im.b + m->off, m->val, m->size);
		err[0] = '\0';
		ok = elf_check(im.b, im.len, &info, err, sizeof(err));
		check(!ok && strstr(err, m->want), "%s rejected: \"%s\"", m->name, err);
	}

	/* A section whose contents lie outside the file (the string table, section 2). */
	for (i = 0; i < 2; i++) {
		unsigned w = i ? 8 : 4, shsize = i ? 64 : 40;

		build_std(&im, i, true);
		put(im.b + im.len - shsize + 8 + 2 * w, 0xfffffffffffffff0ull, w);
		ok = elf_check(im.b, im.len, &info, err, sizeof(err));
		check(!ok && strstr(err, "section 2 ends beyond the file"),
		      "%s: section outside the file rejected: \"%s\"", i ? "ELF64" : "ELF32", err);
	}
}

static void test_ram(uint8_t *ram)
{
	struct image im;
	struct elf_info info;
	char err[160];
	struct seg s[2];
	bool ok;

	/* Second segment far above 16 MiB: fails, and the first is not written either. */
	memcpy(s, segs32, sizeof(s));
	s[1].paddr = s[1].vaddr = 0x4000000;
	build(&im, false, s, 2, 0x100010, false);
	memset(ram, 0xaa, RAM_SIZE);
	ok = elf_load(im.b, im.len, &info, ram, RAM_SIZE, err, sizeof(err));
	check(!ok && !strcmp(err, "ELF: segment 1 at 0x4000000 (size 0x900) is outside guest RAM "
				  "(16 MiB)"),
	      "segment outside RAM: \"%s\"", err);
	check(ram[0x100000] == 0xaa, "nothing loaded when one segment does not fit");

	/* Ends one byte past RAM. */
	s[1].paddr = s[1].vaddr = RAM_SIZE - 0x8ff;
	build(&im, false, s, 2, 0x100010, false);
	ok = elf_load(im.b, im.len, &info, ram, RAM_SIZE, err, sizeof(err));
	check(!ok && strstr(err, "outside guest RAM"), "segment ending 1 byte past RAM rejected");
	s[1].paddr = s[1].vaddr = RAM_SIZE - 0x900;
	build(&im, false, s, 2, 0x100010, false);
	ok = elf_load(im.b, im.len, &info, ram, RAM_SIZE, err, sizeof(err));
	check(ok && ram[RAM_SIZE - 1] == 0, "segment ending exactly at the end of RAM loads");

	/* ELF64 memsz of 1 TiB passes elf_check but not a 16 MiB RAM. */
	memcpy(s, segs64, sizeof(s));
	s[1].vaddr = s[1].paddr;
	s[1].memsz = 1ull << 40;
	build(&im, true, s, 2, 0xffffffff80100010ull, false);
	ok = elf_check(im.b, im.len, &info, err, sizeof(err));
	check(ok, "huge p_memsz without overflow is a valid image");
	ok = elf_load(im.b, im.len, &info, ram, RAM_SIZE, err, sizeof(err));
	check(!ok && strstr(err, "segment 1 at 0x101000 (size 0x10000000000) is outside"),
	      "huge p_memsz rejected by RAM: \"%s\"", err);

	/* A RAM size that is not whole MiB is shown in bytes. */
	ok = elf_load(im.b, im.len, &info, ram, RAM_SIZE - 4096, err, sizeof(err));
	check(!ok && strstr(err, "(0xfff000 bytes)"), "odd RAM size shown in bytes: \"%s\"", err);
}

static void test_multiboot(void)
{
	struct image im;
	struct elf_info info;
	static const struct {
		const char *name;
		unsigned off;
		uint32_t flags, sum_delta;
		bool found;
	} cases[] = {
		{ "bad checksum", 0x400, 3, 1, false },
		{ "not 4-byte aligned", 0x402, 3, 0, false },
		{ "last aligned slot inside 8192 bytes", 8180, 0x10003, 0, true },
		{ "straddling byte 8192", 8184, 3, 0, false },
		{ "beyond 8192 bytes", 8192, 3, 0, false },
	};
	struct seg s = { 1, 0x1000, 0x100000, 0x100000, 0x2400, 0x2400 };
	uint32_t sum;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		build(&im, false, &s, 1, 0x100000, false);
		memset(im.b + MBOFF, 0, 12);	/* drop the standard header */
		put(im.b + cases[i].off, 0x1BADB002, 4);
		put(im.b + cases[i].off + 4, cases[i].flags, 4);
		sum = -(0x1BADB002u + cases[i].flags) + cases[i].sum_delta;
		put(im.b + cases[i].off + 8, sum, 4);
		elf_check(im.b, im.len, &info, NULL, 0);
		check(info.has_multiboot == cases[i].found &&
		      (!cases[i].found ||
		       (info.mb_offset == cases[i].off && info.mb_flags == cases[i].flags)),
		      "multiboot header %s: %s", cases[i].name,
		      cases[i].found ? "found" : "not found");
	}
}

static void test_messages(void)
{
	struct image im;
	struct elf_info info;
	char err[16], full[64];

	build_std(&im, false, false);
	put(im.b + 16, 3, 2);
	memset(err, 'x', sizeof(err));
	elf_check(im.b, im.len, &info, err, sizeof(err));
	check(!strcmp(err, "ELF: type 3 is "), "message truncated to the buffer: \"%s\"", err);
	check(!elf_check(im.b, im.len, &info, NULL, 0), "no message buffer is fine");
	check(!elf_check(NULL, 0, &info, full, sizeof(full)) &&
	      strstr(full, "too short for an ELF header (0 bytes)"),
	      "empty image: \"%s\"", full);
}

int main(void)
{
	uint8_t *ram = malloc(RAM_SIZE);

	test_good(false, ram);
	test_good(true, ram);
	test_symbols(false);
	test_symbols(true);
	test_truncation(false, false);
	test_truncation(false, true);
	test_truncation(true, false);
	test_truncation(true, true);
	test_mutations();
	test_ram(ram);
	test_multiboot();
	test_messages();
	free(ram);
	return unit_summary();
}
