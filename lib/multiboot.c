/* Multiboot v1 boot information parsing: every address and length is checked against the window. */
#include <stdarg.h>

#include "lib/multiboot.h"
#include "lib/printk.h"

/* Multiboot 0.6.96 3.3: field offsets in the boot information structure. */
#define MBI_MEM_LOWER	4
#define MBI_MEM_UPPER	8
#define MBI_CMDLINE	16
#define MBI_MODS_COUNT	20
#define MBI_MODS_ADDR	24
#define MBI_MMAP_LENGTH	44
#define MBI_MMAP_ADDR	48

/* Multiboot 0.6.96 3.3: where the fields that flags bit 0, 1, ... 12 make present end. */
static const uint8_t mbi_field_end[] = { 12, 16, 20, 28, 44, 44, 52, 60, 64, 68, 72, 88, 116 };

#define MOD_ENTRY_SIZE	16	/* 3.3: mod_start, mod_end, string, reserved */
#define MMAP_ENTRY_MIN	20	/* 3.3: base_addr, length, type follow the size field */
#define HIGH_MEM_START	0x100000ull	/* 3.3: mem_upper counts from 1 MiB, mem_lower from 0 */

struct parse {
	const struct mb_window *w;
	struct mb_boot_info *out;
	char *msg;
	size_t msg_size;
};

__attribute__((format(printf, 3, 4)))
static int fail(struct parse *p, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintk(p->msg, p->msg_size, fmt, ap);
	va_end(ap);
	return err;
}

/* Host address of [pa, pa + len) if the window holds all of it, else NULL. */
static const uint8_t *window_at(const struct mb_window *w, uint64_t pa, uint64_t len)
{
	if (pa < w->pa || pa - w->pa > w->size || len > w->size - (pa - w->pa))
		return NULL;
	return w->base + (pa - w->pa);
}

/* The loader's structures are little-endian like us, but not always aligned. */
static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, sizeof(v));
	return v;
}

/* Empty ranges overlap nothing. */
static bool overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	return a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1;
}

/* At most MB_USED_MAX calls: info, command line, map, module list and one string per module. */
static void add_used(struct parse *p, uint64_t pa, uint64_t len)
{
	p->out->used[p->out->used_count++] = (struct frame_range){ pa, pa + len };
}

/*
 * 3.3: strings are zero-terminated; the NUL must come inside the window and within max bytes.
 * *str is the string in the window (an empty one for address 0), *len its length.
 */
static int string_at(struct parse *p, uint64_t pa, uint64_t max, const char *what,
		     const char **str, uint64_t *len)
{
	const uint8_t *s = window_at(p->w, pa, 1);
	uint64_t n, avail;

	*str = "";
	*len = 0;
	if (!pa)
		return 0;
	if (!s)
		return fail(p, MB_E_WINDOW, "multiboot: %s at 0x%lx is outside the memory window",
			    what, pa);
	avail = p->w->size - (pa - p->w->pa);
	for (n = 0; n < avail && s[n]; n++)
		if (n == max)
			return fail(p, MB_E_STRING,
				    "multiboot: %s at 0x%lx is longer than %lu bytes",
				    what, pa, max);
	if (n == avail)
		return fail(p, MB_E_STRING,
			    "multiboot: %s at 0x%lx is not terminated inside the memory window",
			    what, pa);
	add_used(p, pa, n + 1);
	*str = (const char *)s;
	*len = n;
	return 0;
}

/*
 * 3.3: the map is a run of entries, each led by a size field that does not count
 * itself; an entry may be larger than the 20 bytes defined, so walk by size.
 */
static int parse_mmap(struct parse *p, const uint8_t *info)
{
	uint32_t len = rd32(info + MBI_MMAP_LENGTH), addr = rd32(info + MBI_MMAP_ADDR);
	const uint8_t *map = window_at(p->w, addr, len);
	struct mb_boot_info *out = p->out;
	uint32_t off = 0, size;

	if (!map)
		return fail(p, MB_E_WINDOW,
			    "multiboot: memory map at 0x%x (%u bytes) is outside the memory window",
			    addr, len);
	add_used(p, addr, len);
	for (unsigned i = 0; off < len; i++, off += 4 + size) {
		const uint8_t *e = map + off;
		uint64_t base, length;

		if (len - off < 4)
			return fail(p, MB_E_MMAP, "multiboot: memory map entry %u at offset %u "
				    "runs past the end of the map (%u bytes)", i, off, len);
		size = rd32(e);
		if (size < MMAP_ENTRY_MIN)
			return fail(p, MB_E_MMAP, "multiboot: memory map entry %u has size %u "
				    "(at least %u)", i, size, MMAP_ENTRY_MIN);
		if (size > len - off - 4)
			return fail(p, MB_E_MMAP, "multiboot: memory map entry %u at offset %u "
				    "runs past the end of the map (%u bytes)", i, off, len);
		base = rd64(e + 4);
		length = rd64(e + 12);
		if (length > UINT64_MAX - base)
			return fail(p, MB_E_MMAP, "multiboot: memory map entry %u overflows "
				    "(base 0x%lx, length 0x%lx)", i, base, length);
		if (out->mmap_count == MB_MMAP_MAX) {
			out->mmap_dropped++;
			continue;
		}
		out->mmap[out->mmap_count++] = (struct mb_mmap_entry){ base, length, rd32(e + 20) };
	}
	if (!out->mmap_count)
		return fail(p, MB_E_MMAP, "multiboot: memory map is empty");
	return 0;
}

/* Without a map, 3.3 still gives RAM from 0 (mem_lower KiB) and from 1 MiB (mem_upper KiB). */
static void synthesize_mmap(struct mb_boot_info *out)
{
	out->mmap[0] = (struct mb_mmap_entry){ 0, out->mem_lower_kb * 1024ull, MB_MMAP_AVAILABLE };
	out->mmap[1] = (struct mb_mmap_entry){ HIGH_MEM_START, out->mem_upper_kb * 1024ull,
					       MB_MMAP_AVAILABLE };
	out->mmap_count = 2;
	out->mmap_synthesized = true;
}

static int parse_mods(struct parse *p, const uint8_t *info)
{
	uint32_t count = rd32(info + MBI_MODS_COUNT), addr = rd32(info + MBI_MODS_ADDR);
	const struct frame_range *img = &p->out->image;
	const uint8_t *list;

	if (!count)
		return 0;
	/* Modules past the limit are neither read nor kept: the caller refuses each by index. */
	if (count > MB_MODS_MAX) {
		p->out->mods_refused = count - MB_MODS_MAX;
		count = MB_MODS_MAX;
	}
	list = window_at(p->w, addr, count * MOD_ENTRY_SIZE);
	if (!list)
		return fail(p, MB_E_WINDOW, "multiboot: module list at 0x%x (%u entries) is "
			    "outside the memory window", addr, count);
	add_used(p, addr, count * MOD_ENTRY_SIZE);
	for (unsigned i = 0; i < count; i++) {
		const uint8_t *e = list + i * MOD_ENTRY_SIZE;
		struct mb_module *m = &p->out->mods[i];
		char what[24];
		uint64_t len;
		int err;

		m->start = rd32(e);
		m->end = rd32(e + 4);
		if (m->start > m->end)
			return fail(p, MB_E_MODS, "multiboot: module %u ends before it starts "
				    "(0x%lx < 0x%lx)", i, m->end, m->start);
		if (!window_at(p->w, m->start, m->end - m->start))
			return fail(p, MB_E_WINDOW, "multiboot: module %u [0x%lx, 0x%lx) is "
				    "outside the memory window", i, m->start, m->end);
		if (overlap(m->start, m->end, img->start, img->end))
			return fail(p, MB_E_MODS, "multiboot: module %u [0x%lx, 0x%lx) overlaps "
				    "the hypervisor image [0x%lx, 0x%lx)", i, m->start, m->end,
				    img->start, img->end);
		for (unsigned j = 0; j < i; j++) {
			const struct mb_module *o = &p->out->mods[j];

			if (overlap(m->start, m->end, o->start, o->end))
				return fail(p, MB_E_MODS, "multiboot: modules %u and %u overlap "
					    "([0x%lx, 0x%lx) and [0x%lx, 0x%lx))", j, i,
					    o->start, o->end, m->start, m->end);
		}
		snprintk(what, sizeof(what), "module %u string", i);
		/* Any length the loader gives (GRUB passes long ones); the domain judges it. */
		err = string_at(p, rd32(e + 8), UINT64_MAX, what, &m->string, &len);
		if (err)
			return err;
		p->out->mod_count = i + 1;
	}
	return 0;
}

int mb_parse(const struct mb_window *w, uint64_t info_pa, uint64_t image_start, uint64_t image_end,
	     struct mb_boot_info *out, char *msg, size_t msg_size)
{
	struct parse p = { w, out, msg, msg_size };
	const uint8_t *info = window_at(w, info_pa, 4);
	uint32_t flags, size = 4;
	int err;

	__builtin_memset(out, 0, sizeof(*out));
	if (msg_size)
		msg[0] = '\0';
	out->image = (struct frame_range){ image_start, image_end };
	if (!info)
		return fail(&p, MB_E_WINDOW, "multiboot: info structure at 0x%lx is outside the "
			    "memory window", info_pa);
	flags = rd32(info);
	for (unsigned b = 0; b < sizeof(mbi_field_end); b++)
		if (flags >> b & 1 && mbi_field_end[b] > size)
			size = mbi_field_end[b];
	info = window_at(w, info_pa, size);
	if (!info)
		return fail(&p, MB_E_WINDOW, "multiboot: info structure at 0x%lx (%u bytes for "
			    "flags 0x%x) is outside the memory window", info_pa, size, flags);
	out->flags = flags;
	add_used(&p, info_pa, size);
	if (flags & MB_INFO_MEMORY) {
		out->mem_lower_kb = rd32(info + MBI_MEM_LOWER);
		out->mem_upper_kb = rd32(info + MBI_MEM_UPPER);
	}
	if (flags & MB_INFO_MEM_MAP) {
		err = parse_mmap(&p, info);
		if (err)
			return err;
	} else if (flags & MB_INFO_MEMORY) {
		synthesize_mmap(out);
	} else {
		return fail(&p, MB_E_NOMEM, "multiboot: no memory information (flags 0x%x have "
			    "neither bit 0 nor bit 6)", flags);
	}
	if (flags & MB_INFO_CMDLINE) {
		const char *s;
		uint64_t len;

		err = string_at(&p, rd32(info + MBI_CMDLINE), sizeof(out->cmdline) - 1,
				"command line", &s, &len);
		if (err)
			return err;
		__builtin_memcpy(out->cmdline, s, len + 1);
	}
	return flags & MB_INFO_MODS ? parse_mods(&p, info) : 0;
}

size_t mb_usable_ranges(const struct mb_boot_info *info, struct frame_range out[MB_MMAP_MAX])
{
	size_t n = 0;

	for (unsigned i = 0; i < info->mmap_count; i++) {
		const struct mb_mmap_entry *e = &info->mmap[i];

		if (e->type == MB_MMAP_AVAILABLE && e->length)
			out[n++] = (struct frame_range){ e->base, e->base + e->length };
	}
	return n;
}

size_t mb_reserved_ranges(const struct mb_boot_info *info, struct frame_range out[MB_RESERVED_MAX])
{
	size_t n = 0;

	out[n++] = info->image;
	for (unsigned i = 0; i < info->mod_count; i++)
		out[n++] = (struct frame_range){ info->mods[i].start, info->mods[i].end };
	for (unsigned i = 0; i < info->used_count; i++)
		out[n++] = info->used[i];
	return n;
}
