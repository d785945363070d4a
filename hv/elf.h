/* ELF32/ELF64 x86 executable checking, loading into guest RAM, and function symbol walking. */
#ifndef PERFVISOR_HV_ELF_H
#define PERFVISOR_HV_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What elf_check() learned about an image; all addresses are guest-physical unless named _virt. */
struct elf_info {
	bool is64;		/* ELFCLASS64/EM_X86_64, else ELFCLASS32/EM_386 */
	uint64_t entry_virt;	/* e_entry as linked */
	uint64_t entry;		/* e_entry translated by its segment's p_vaddr -> p_paddr */
	uint64_t load_lo;	/* lowest p_paddr of a non-empty PT_LOAD */
	uint64_t load_hi;	/* highest p_paddr + p_memsz (exclusive) */
	unsigned nload;		/* number of non-empty PT_LOAD segments */
	bool has_multiboot;	/* a valid multiboot v1 header was found */
	uint32_t mb_offset;	/* its file offset */
	uint32_t mb_flags;	/* its flags; bit 16 (address fields) is not used to load */
};

/*
 * Validate an ET_EXEC image of len bytes: headers, program headers, and the section
 * table and sections (if any) inside the file. On failure returns false and writes a
 * one-line reason ("ELF: ...") into err (always NUL-terminated when errlen > 0).
 */
bool elf_check(const void *img, size_t len, struct elf_info *info, char *err, size_t errlen);

/*
 * elf_check() the image, then copy every PT_LOAD to p_paddr in ram (a buffer that
 * stands for guest-physical 0..ram_size) and zero its bss. Nothing is written unless
 * every segment fits in RAM.
 */
bool elf_load(const void *img, size_t len, struct elf_info *info, void *ram, uint64_t ram_size,
	      char *err, size_t errlen);

/*
 * Called for each STT_FUNC symbol; name points into img and is NUL-terminated.
 * Return false to stop the walk.
 */
typedef bool (*elf_sym_fn)(void *ctx, uint64_t addr, uint64_t size, const char *name);

/*
 * Walk the defined STT_FUNC symbols of every SHT_SYMTAB of an image that
 * elf_check() accepted (with this info). Symbol tables and symbols that do not
 * make sense are skipped. Returns how many symbols were passed to fn.
 */
size_t elf_symbols(const void *img, const struct elf_info *info, elf_sym_fn fn, void *ctx);

#endif
