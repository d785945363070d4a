/* ELF32/ELF64 x86 executable checking, loading into guest RAM, and function symbol walking. */
#include "hv/elf.h"

/* Values from the System V gABI and the i386/x86-64 psABI supplements. */
#define ELFCLASS32	1
#define ELFCLASS64	2
#define ELFDATA2LSB	1
#define EV_CURRENT	1
#define ET_EXEC		2
#define EM_386		3
#define EM_X86_64	62
#define PT_LOAD		1
#define SHT_SYMTAB	2
#define SHT_STRTAB	3
#define SHT_NOBITS	8
#define SHN_UNDEF	0
#define STT_FUNC	2

#define EHDR32_SIZE	52
#define EHDR64_SIZE	64
#define PHDR32_SIZE	32
#define PHDR64_SIZE	56
#define SHDR32_SIZE	40
#define SHDR64_SIZE	64
#define SYM32_SIZE	16
#define SYM64_SIZE	24

/* Multiboot 0.6.96 3.1.1: header magic, searched in the first 8192 bytes at 4-byte alignment. */
#define MB_HEADER_MAGIC	0x1BADB002u
#define MB_SEARCH_LEN	8192

struct elf_ehdr {
	uint16_t type, machine;
	uint32_t version;
	uint64_t entry, phoff, shoff;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum;
};

struct elf_phdr {
	uint32_t type;
	uint64_t offset, vaddr, paddr, filesz, memsz;
};

struct elf_shdr {
	uint32_t type, link;
	uint64_t offset, size, entsize;
};

/* Little-endian read of n bytes; images may be unaligned. */
static uint64_t rd(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* True when [off, off + size) lies inside a file of len bytes, without overflowing. */
static bool in_file(uint64_t off, uint64_t size, uint64_t len)
{
	return size <= len && off <= len - size;
}

static void put_char(char *err, size_t errlen, size_t *pos, char c)
{
	if (*pos + 1 < errlen)
		err[(*pos)++] = c;
}

static void put_num(char *err, size_t errlen, size_t *pos, uint64_t v, unsigned base)
{
	char digits[20];
	unsigned n = 0;

	if (base == 16) {
		put_char(err, errlen, pos, '0');
		put_char(err, errlen, pos, 'x');
	}
	do {
		digits[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n)
		put_char(err, errlen, pos, digits[--n]);
}

/*
 * Write fmt into err, replacing each %u (decimal) or %x (0x-prefixed hex) with the
 * next of args. Always returns false so callers can "return fail(...)".
 */
static bool fail(char *err, size_t errlen, const char *fmt, const uint64_t *args)
{
	size_t pos = 0;

	for (; *fmt; fmt++) {
		if (fmt[0] == '%' && (fmt[1] == 'u' || fmt[1] == 'x')) {
			put_num(err, errlen, &pos, *args++, fmt[1] == 'x' ? 16 : 10);
			fmt++;
		} else {
			put_char(err, errlen, &pos, *fmt);
		}
	}
	if (errlen)
		err[pos] = '\0';
	return false;
}

/* The ELF64 header is the ELF32 one with three fields widened to 8 bytes. */
static void read_ehdr(const uint8_t *p, bool is64, struct elf_ehdr *e)
{
	unsigned w = is64 ? 8 : 4;

	e->type = rd(p + 16, 2);
	e->machine = rd(p + 18, 2);
	e->version = rd(p + 20, 4);
	e->entry = rd(p + 24, w);
	e->phoff = rd(p + 24 + w, w);
	e->shoff = rd(p + 24 + 2 * w, w);
	p += 3 * w - 12;	/* the 16-bit fields follow e_flags */
	e->ehsize = rd(p + 40, 2);
	e->phentsize = rd(p + 42, 2);
	e->phnum = rd(p + 44, 2);
	e->shentsize = rd(p + 46, 2);
	e->shnum = rd(p + 48, 2);
}

/* Both layouts have offset, vaddr, paddr, filesz, memsz in a row of words after p_type. */
static void read_phdr(const uint8_t *img, uint64_t phoff, bool is64, unsigned i,
		      struct elf_phdr *ph)
{
	unsigned w = is64 ? 8 : 4;
	const uint8_t *p = img + phoff + (uint64_t)i * (is64 ? PHDR64_SIZE : PHDR32_SIZE);

	ph->type = rd(p, 4);
	ph->offset = rd(p + w, w);
	ph->vaddr = rd(p + 2 * w, w);
	ph->paddr = rd(p + 3 * w, w);
	ph->filesz = rd(p + 4 * w, w);
	ph->memsz = rd(p + 5 * w, w);
}

/* Both layouts keep sh_type at 4; the other fields we need shift with the word size. */
static void read_shdr(const uint8_t *img, const struct elf_ehdr *e, bool is64, unsigned i,
		      struct elf_shdr *sh)
{
	unsigned w = is64 ? 8 : 4;
	const uint8_t *p = img + e->shoff + (uint64_t)i * e->shentsize;

	sh->type = rd(p + 4, 4);
	sh->offset = rd(p + 8 + 2 * w, w);
	sh->size = rd(p + 8 + 3 * w, w);
	sh->link = rd(p + 8 + 4 * w, 4);
	sh->entsize = rd(p + 16 + 5 * w, w);
}

/* Multiboot 0.6.96 3.1.2: magic + flags + checksum == 0 (mod 2^32). */
static void find_multiboot(const uint8_t *img, size_t len, struct elf_info *info)
{
	size_t end = len < MB_SEARCH_LEN ? len : MB_SEARCH_LEN;
	size_t off;

	for (off = 0; off + 12 <= end; off += 4) {
		uint32_t magic = rd(img + off, 4), flags = rd(img + off + 4, 4);
		uint32_t sum = magic + flags + rd(img + off + 8, 4);

		if (magic == MB_HEADER_MAGIC && sum == 0) {
			info->has_multiboot = true;
			info->mb_offset = off;
			info->mb_flags = flags;
			return;
		}
	}
}

static bool check_header(const uint8_t *img, size_t len, struct elf_ehdr *e, bool *is64,
			 char *err, size_t errlen)
{
	static const uint8_t magic[4] = { 0x7f, 'E', 'L', 'F' };
	unsigned ehsize, phentsize;

	if (len < EHDR32_SIZE)
		return fail(err, errlen, "ELF: image too short for an ELF header (%u bytes)",
			    (uint64_t[]){ len });
	if (__builtin_memcmp(img, magic, 4))
		return fail(err, errlen, "ELF: bad magic", NULL);
	if (img[4] != ELFCLASS32 && img[4] != ELFCLASS64)
		return fail(err, errlen, "ELF: class %u is neither ELF32 nor ELF64",
			    (uint64_t[]){ img[4] });
	*is64 = img[4] == ELFCLASS64;
	ehsize = *is64 ? EHDR64_SIZE : EHDR32_SIZE;
	phentsize = *is64 ? PHDR64_SIZE : PHDR32_SIZE;
	if (len < ehsize)
		return fail(err, errlen, "ELF: image too short for an ELF header (%u bytes)",
			    (uint64_t[]){ len });
	if (img[5] != ELFDATA2LSB)
		return fail(err, errlen, "ELF: data encoding %u is not little-endian",
			    (uint64_t[]){ img[5] });
	if (img[6] != EV_CURRENT)
		return fail(err, errlen, "ELF: ident version %u, want 1", (uint64_t[]){ img[6] });
	read_ehdr(img, *is64, e);
	if (e->version != EV_CURRENT)
		return fail(err, errlen, "ELF: version %u, want 1", (uint64_t[]){ e->version });
	if (e->type != ET_EXEC)
		return fail(err, errlen, "ELF: type %u is not ET_EXEC (2)",
			    (uint64_t[]){ e->type });
	if (e->machine != (*is64 ? EM_X86_64 : EM_386))
		return fail(err, errlen, "ELF: machine %u does not match the class (want %u)",
			    (uint64_t[]){ e->machine, *is64 ? EM_X86_64 : EM_386 });
	if (e->ehsize != ehsize)
		return fail(err, errlen, "ELF: header size %u, want %u",
			    (uint64_t[]){ e->ehsize, ehsize });
	if (e->phentsize != phentsize)
		return fail(err, errlen, "ELF: program header size %u, want %u",
			    (uint64_t[]){ e->phentsize, phentsize });
	if (!in_file(e->phoff, (uint64_t)e->phnum * phentsize, len))
		return fail(err, errlen,
			    "ELF: program header table (offset %x, %u entries) "
			    "ends beyond the file (%x)",
			    (uint64_t[]){ e->phoff, e->phnum, len });
	return true;
}

/* The section table, if any, and every section with file contents lie inside the file. */
static bool check_sections(const uint8_t *img, size_t len, const struct elf_ehdr *e, bool is64,
			   char *err, size_t errlen)
{
	unsigned shentsize = is64 ? SHDR64_SIZE : SHDR32_SIZE;
	struct elf_shdr sh;
	unsigned i;

	if (!e->shnum)
		return true;
	if (e->shentsize != shentsize)
		return fail(err, errlen, "ELF: section header size %u, want %u",
			    (uint64_t[]){ e->shentsize, shentsize });
	if (!in_file(e->shoff, (uint64_t)e->shnum * shentsize, len))
		return fail(err, errlen,
			    "ELF: section header table (offset %x, %u entries) "
			    "ends beyond the file (%x)",
			    (uint64_t[]){ e->shoff, e->shnum, len });
	for (i = 0; i < e->shnum; i++) {
		read_shdr(img, e, is64, i, &sh);
		if (sh.type != SHT_NOBITS && !in_file(sh.offset, sh.size, len))
			return fail(err, errlen,
				    "ELF: section %u ends beyond the file "
				    "(offset %x + size %x > %x)",
				    (uint64_t[]){ i, sh.offset, sh.size, len });
	}
	return true;
}

bool elf_check(const void *img, size_t len, struct elf_info *info, char *err, size_t errlen)
{
	const uint8_t *p = img;
	uint64_t limit;
	struct elf_ehdr e = { 0 };
	struct elf_phdr ph;
	bool is64 = false, entry_found = false;
	unsigned i;

	__builtin_memset(info, 0, sizeof(*info));
	if (!check_header(p, len, &e, &is64, err, errlen) ||
	    !check_sections(p, len, &e, is64, err, errlen))
		return false;
	info->is64 = is64;
	info->entry_virt = e.entry;
	info->load_lo = UINT64_MAX;
	/* Segments must not wrap the 32-bit or 64-bit address space. */
	limit = is64 ? UINT64_MAX : (uint64_t)1 << 32;
	for (i = 0; i < e.phnum; i++) {
		read_phdr(p, e.phoff, is64, i, &ph);
		if (ph.type != PT_LOAD)
			continue;
		if (ph.filesz > ph.memsz)
			return fail(err, errlen,
				    "ELF: program header %u has file size %x > memory size %x",
				    (uint64_t[]){ i, ph.filesz, ph.memsz });
		if (!in_file(ph.offset, ph.filesz, len))
			return fail(err, errlen,
				    "ELF: program header %u ends beyond the file "
				    "(offset %x + size %x > %x)",
				    (uint64_t[]){ i, ph.offset, ph.filesz, len });
		if (ph.memsz > limit || ph.paddr > limit - ph.memsz ||
		    ph.vaddr > limit - ph.memsz)
			return fail(err, errlen,
				    "ELF: segment %u (paddr %x, vaddr %x, size %x) "
				    "wraps the address space",
				    (uint64_t[]){ i, ph.paddr, ph.vaddr, ph.memsz });
		if (!ph.memsz)
			continue;
		info->nload++;
		if (ph.paddr < info->load_lo)
			info->load_lo = ph.paddr;
		if (ph.paddr + ph.memsz > info->load_hi)
			info->load_hi = ph.paddr + ph.memsz;
		if (!entry_found && e.entry >= ph.vaddr && e.entry - ph.vaddr < ph.memsz) {
			entry_found = true;
			info->entry = e.entry - ph.vaddr + ph.paddr;
		}
	}
	if (!info->nload)
		return fail(err, errlen, "ELF: no non-empty PT_LOAD segment", NULL);
	if (!entry_found)
		return fail(err, errlen, "ELF: entry point %x is in no loaded segment",
			    (uint64_t[]){ e.entry });
	find_multiboot(p, len, info);
	return true;
}

bool elf_load(const void *img, size_t len, struct elf_info *info, void *ram, uint64_t ram_size,
	      char *err, size_t errlen)
{
	const uint8_t *p = img;
	uint8_t *dst = ram;
	struct elf_ehdr e;
	struct elf_phdr ph;
	bool mib = !(ram_size % (1 << 20));
	const char *outside = mib ?
		"ELF: segment %u at %x (size %x) is outside guest RAM (%u MiB)" :
		"ELF: segment %u at %x (size %x) is outside guest RAM (%x bytes)";
	unsigned i;

	if (!elf_check(img, len, info, err, errlen))
		return false;
	read_ehdr(p, info->is64, &e);
	/* Every segment is checked against RAM before any is copied: all or nothing. */
	for (i = 0; i < e.phnum; i++) {
		read_phdr(p, e.phoff, info->is64, i, &ph);
		if (ph.type == PT_LOAD && ph.memsz &&
		    (ph.memsz > ram_size || ph.paddr > ram_size - ph.memsz))
			return fail(err, errlen, outside, (uint64_t[]){
				    i, ph.paddr, ph.memsz, mib ? ram_size >> 20 : ram_size });
	}
	for (i = 0; i < e.phnum; i++) {
		read_phdr(p, e.phoff, info->is64, i, &ph);
		if (ph.type != PT_LOAD || !ph.memsz)
			continue;
		__builtin_memcpy(dst + ph.paddr, p + ph.offset, ph.filesz);
		__builtin_memset(dst + ph.paddr + ph.filesz, 0, ph.memsz - ph.filesz);
	}
	return true;
}

/* One symbol table: returns how many symbols went to fn; *stop when fn asked to stop. */
static size_t walk_symtab(const uint8_t *img, const struct elf_shdr *sym,
			  const struct elf_shdr *str, bool is64, elf_sym_fn fn, void *ctx,
			  bool *stop)
{
	unsigned symsize = is64 ? SYM64_SIZE : SYM32_SIZE;
	const char *strtab = (const char *)img + str->offset;
	size_t n = 0;
	uint64_t off;

	for (off = 0; off + symsize <= sym->size && !*stop; off += symsize) {
		const uint8_t *s = img + sym->offset + off;
		uint64_t name = rd(s, 4), value, size, end;
		unsigned info, shndx;

		if (is64) {
			info = s[4];
			shndx = rd(s + 6, 2);
			value = rd(s + 8, 8);
			size = rd(s + 16, 8);
		} else {
			value = rd(s + 4, 4);
			size = rd(s + 8, 4);
			info = s[12];
			shndx = rd(s + 14, 2);
		}
		if ((info & 0xf) != STT_FUNC || shndx == SHN_UNDEF)
			continue;
		/* The name must end inside the string table. */
		for (end = name; end < str->size && strtab[end]; end++)
			;
		if (end >= str->size)
			continue;
		n++;
		*stop = !fn(ctx, value, size, strtab + name);
	}
	return n;
}

size_t elf_symbols(const void *img, const struct elf_info *info, elf_sym_fn fn, void *ctx)
{
	const uint8_t *p = img;
	struct elf_ehdr e;
	struct elf_shdr sym, str;
	bool stop = false;
	size_t n = 0;
	unsigned i;

	/* elf_check() has put the section table and the sections inside the file. */
	read_ehdr(p, info->is64, &e);
	for (i = 0; i < e.shnum && !stop; i++) {
		read_shdr(p, &e, info->is64, i, &sym);
		if (sym.type != SHT_SYMTAB || sym.link >= e.shnum ||
		    sym.entsize != (info->is64 ? SYM64_SIZE : SYM32_SIZE))
			continue;
		read_shdr(p, &e, info->is64, sym.link, &str);
		if (str.type == SHT_STRTAB)
			n += walk_symtab(p, &sym, &str, info->is64, fn, ctx, &stop);
	}
	return n;
}
