/* Builds the multiboot v1 information structure a guest kernel receives in EBX. */
#include "hv/guest_mbi.h"
#include "lib/multiboot.h"
#include "lib/string.h"

/* Multiboot 0.6.96 3.3: the flag lib/multiboot.h does not read, and field offsets. */
#define MB_INFO_LOADER_NAME	(1u << 9)

#define MBI_FLAGS		0
#define MBI_MEM_LOWER		4
#define MBI_MEM_UPPER		8
#define MBI_CMDLINE_ADDR	16
#define MBI_MODS_COUNT		20
#define MBI_MODS_ADDR		24
#define MBI_MMAP_LENGTH		44
#define MBI_MMAP_ADDR		48
#define MBI_LOADER_NAME_ADDR	64
#define MBI_SIZE		88	/* through the VBE fields, which stay 0 */

/* A memory map entry: size (of the rest, 20), base_addr, length, type. */
#define MMAP_ENTRY_SIZE		24

/* Usable low RAM ends at the EBDA as in a PC's map; mem_lower says 640 KiB as QEMU does. */
#define LOW_RAM_END		0x9FC00u
#define LOW_RAM_KIB		640
#define HIGH_RAM_START		0x100000u

/* A module entry: mod_start, mod_end, string, reserved (multiboot 0.6.96 3.3). */
#define MOD_ENTRY_SIZE		16

/*
 * The info, the map and the loader name; then the module entry and string, if any; then the
 * command line.
 */
#define MMAP_OFF		MBI_SIZE
#define NAME_OFF		(MMAP_OFF + 2 * MMAP_ENTRY_SIZE)
#define TAIL_OFF		(NAME_OFF + sizeof(loader_name))
#define MOD_OFF			((TAIL_OFF + 7) & ~7ull)
#define MOD_STRING_OFF		(MOD_OFF + MOD_ENTRY_SIZE)
#define PAGE_SIZE		0x1000ull

static const char loader_name[] = "perfvisor";

/* The guest is x86 like us, so native stores are the little-endian layout the spec wants. */
static void put32(uint8_t *p, uint32_t v)
{
	__builtin_memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	__builtin_memcpy(p, &v, 8);
}

static void put_mmap_entry(uint8_t *p, uint64_t base, uint64_t len)
{
	put32(p, MMAP_ENTRY_SIZE - 4);
	put64(p + 4, base);
	put64(p + 12, len);
	put32(p + 20, MB_MMAP_AVAILABLE);
}

uint64_t guest_boot_area(uint64_t image_lo, uint64_t image_hi, uint64_t size)
{
	uint64_t after = (image_hi + 0xFFF) & ~0xFFFull;

	if (size > LOW_RAM_END - GUEST_BOOT_LOW)
		return UINT64_MAX;
	if (image_lo >= GUEST_BOOT_LOW + size || image_hi <= GUEST_BOOT_LOW)
		return GUEST_BOOT_LOW;
	if (image_hi < LOW_RAM_END && after <= LOW_RAM_END - size)
		return after;
	return UINT64_MAX;
}

uint64_t guest_module_place(uint64_t image_hi, uint64_t len, uint64_t ram_size)
{
	uint64_t end = image_hi < HIGH_RAM_START ? HIGH_RAM_START : image_hi;
	uint64_t at = (end + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);

	if (at < end || at > ram_size || len > ram_size - at)
		return UINT64_MAX;
	return at;
}

/* Where the command line starts: after the module's string, or after the loader name. */
static uint64_t cmdline_off(const struct guest_mbi_module *mod)
{
	return mod ? MOD_STRING_OFF + strlen(mod->string) + 1 : TAIL_OFF;
}

uint64_t guest_mbi_size(size_t cmdline_len, const struct guest_mbi_module *mod)
{
	if (cmdline_len > UINT32_MAX || (mod && strlen(mod->string) > UINT32_MAX))
		return UINT64_MAX;
	return cmdline_off(mod) + (uint64_t)cmdline_len + 1;
}

const char *guest_mbi_build(void *ram, uint64_t ram_size, uint64_t area, uint64_t area_size,
			    const char *cmdline, size_t cmdline_len,
			    const struct guest_mbi_module *mod, uint32_t *mbi)
{
	uint64_t need, upper_kib, cmd_off = cmdline_off(mod);
	uint32_t mmap_len = MMAP_ENTRY_SIZE;
	uint8_t *p;

	if (!cmdline)
		cmdline_len = 0;
	need = guest_mbi_size(cmdline_len, mod);
	if (ram_size < HIGH_RAM_START)
		return "guest RAM is smaller than 1 MiB";
	if (area % 8)
		return "multiboot info area is not 8-byte aligned";
	if (area_size > ram_size || area > ram_size - area_size)
		return "multiboot info area is outside guest RAM";
	if (mod && (mod->end < mod->start || mod->end > ram_size))
		return "the module is outside guest RAM";
	if (need > area_size)
		return "multiboot info does not fit in its area";
	/* The info and everything it points to must have 32-bit addresses. */
	if (area + need > (uint64_t)1 << 32)
		return "multiboot info area is above 4 GiB";

	p = (uint8_t *)ram + area;
	upper_kib = (ram_size - HIGH_RAM_START) >> 10;
	/* Zero fields include mods_count: MB_INFO_MODS with no modules unless one is given. */
	__builtin_memset(p, 0, MBI_SIZE);
	put32(p + MBI_FLAGS, MB_INFO_MEMORY | MB_INFO_CMDLINE | MB_INFO_MODS | MB_INFO_MEM_MAP |
	      MB_INFO_LOADER_NAME);
	put32(p + MBI_MEM_LOWER, LOW_RAM_KIB);
	put32(p + MBI_MEM_UPPER, upper_kib > UINT32_MAX ? UINT32_MAX : upper_kib);
	put32(p + MBI_CMDLINE_ADDR, area + cmd_off);

	put_mmap_entry(p + MMAP_OFF, 0, LOW_RAM_END);
	if (ram_size > HIGH_RAM_START) {
		put_mmap_entry(p + MMAP_OFF + MMAP_ENTRY_SIZE, HIGH_RAM_START,
			       ram_size - HIGH_RAM_START);
		mmap_len += MMAP_ENTRY_SIZE;
	}
	put32(p + MBI_MMAP_LENGTH, mmap_len);
	put32(p + MBI_MMAP_ADDR, area + MMAP_OFF);

	__builtin_memcpy(p + NAME_OFF, loader_name, sizeof(loader_name));
	put32(p + MBI_LOADER_NAME_ADDR, area + NAME_OFF);
	if (mod) {
		size_t slen = strlen(mod->string);

		__builtin_memset(p + TAIL_OFF, 0, MOD_OFF - TAIL_OFF);
		put32(p + MBI_MODS_COUNT, 1);
		put32(p + MBI_MODS_ADDR, area + MOD_OFF);
		put32(p + MOD_OFF, mod->start);
		put32(p + MOD_OFF + 4, mod->end);
		put32(p + MOD_OFF + 8, area + MOD_STRING_OFF);
		put32(p + MOD_OFF + 12, 0);
		__builtin_memcpy(p + MOD_STRING_OFF, mod->string, slen + 1);
	}
	if (cmdline_len)
		__builtin_memcpy(p + cmd_off, cmdline, cmdline_len);
	p[need - 1] = '\0';

	*mbi = area;
	return NULL;
}
