/* Multiboot v1 boot information: checked parsing through a window on physical memory. */
#ifndef PERFVISOR_LIB_MULTIBOOT_H
#define PERFVISOR_LIB_MULTIBOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/frame.h"

/* Multiboot 0.6.96 3.3: the flags bits this parser reads. */
#define MB_INFO_MEMORY		(1u << 0)
#define MB_INFO_CMDLINE		(1u << 2)
#define MB_INFO_MODS		(1u << 3)
#define MB_INFO_MEM_MAP		(1u << 6)

#define MB_MMAP_AVAILABLE	1	/* memory map type of usable RAM */

#define MB_MMAP_MAX	64
#define MB_MODS_MAX	16
#define MB_CMDLINE_MAX	512	/* bytes with the NUL; longer is an error */
/* Loader structures: info, command line, memory map, module list, module strings. */
#define MB_USED_MAX	(4 + MB_MODS_MAX)
#define MB_RESERVED_MAX	(1 + MB_MODS_MAX + MB_USED_MAX)

/* Negative returns of mb_parse(). */
enum {
	MB_E_WINDOW = -1,	/* a structure, string or module lies (partly) outside the window */
	MB_E_NOMEM = -2,	/* no memory information at all */
	MB_E_MMAP = -3,		/* malformed memory map */
	MB_E_MODS = -4,		/* bad module list: start > end, overlaps */
	MB_E_STRING = -5,	/* string unterminated in the window, or too long */
};

/* Physical memory [pa, pa + size) is readable at base. */
struct mb_window {
	const uint8_t *base;
	uint64_t pa;
	uint64_t size;
};

struct mb_mmap_entry {
	uint64_t base, length;
	uint32_t type;
};

struct mb_module {
	uint64_t start, end;	/* [start, end): GRUB and QEMU store start + size in mod_end */
	/* Where the loader left it, any length: its bytes are among the used ranges, kept. */
	const char *string;
};

struct mb_boot_info {
	uint32_t flags;
	uint32_t mem_lower_kb, mem_upper_kb;	/* valid if flags & MB_INFO_MEMORY */
	struct mb_mmap_entry mmap[MB_MMAP_MAX];
	unsigned mmap_count;
	unsigned mmap_dropped;		/* entries past MB_MMAP_MAX: ignored (RAM lost, no harm) */
	bool mmap_synthesized;		/* built from mem_lower/mem_upper: no memory map given */
	char cmdline[MB_CMDLINE_MAX];
	struct mb_module mods[MB_MODS_MAX];
	unsigned mod_count;
	uint32_t mods_refused;		/* modules past MB_MODS_MAX: not read, never started */
	struct frame_range image;	/* the hypervisor image, as passed to mb_parse() */
	struct frame_range used[MB_USED_MAX];	/* the loader's structures read by the parser */
	unsigned used_count;
};

/*
 * Parse the information structure at info_pa, reading only inside w, into *out.
 * The image range is checked against the modules and kept for mb_reserved_ranges().
 * A zero command line or module string address means an empty string.
 * Returns 0 (msg empty) or an MB_E_* code with msg saying why, for example
 * "multiboot: module 2 ends before it starts (0x200000 < 0x300000)".
 * Modules are numbered from 0; those past MB_MODS_MAX are only counted (mods_refused), their
 * list entries are not read.
 */
int mb_parse(const struct mb_window *w, uint64_t info_pa, uint64_t image_start, uint64_t image_end,
	     struct mb_boot_info *out, char *msg, size_t msg_size);

/* The available-RAM entries of the memory map; returns how many were written. */
size_t mb_usable_ranges(const struct mb_boot_info *info, struct frame_range out[MB_MMAP_MAX]);

/* What the frame allocator must keep: image, modules, loader structures; returns the count. */
size_t mb_reserved_ranges(const struct mb_boot_info *info, struct frame_range out[MB_RESERVED_MAX]);

#endif
