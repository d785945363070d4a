/* C start-up: reads the multiboot info, sets up console, traps, heap and stdio, runs main. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "guest-stub/rt/internal.h"

/* Multiboot spec 0.6.96, 3.3: the part of the boot information guests use. */
struct mb_info {
	uint32_t flags;
	uint32_t mem_lower;
	uint32_t mem_upper;	/* KiB of contiguous RAM from 1 MiB */
	uint32_t boot_device;
	uint32_t cmdline;	/* physical address of a NUL-terminated string */
};

#define MB_INFO_MEM	0x001
#define MB_INFO_CMDLINE	0x004

/* Assumed when the loader tells nothing: less than any platform perfvisor runs on. */
#define DEFAULT_RAM_END	0x2000000

#define CMDLINE_MAX	1024
#define ARGS_MAX	64

/*
 * Loaders put the command line above the image, where the heap will grow: copy it first.
 * Each word ends with a NUL in place, and argv points into this copy.
 */
static char cmdline[CMDLINE_MAX];
static char *args[ARGS_MAX + 1];

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static int split_words(void)
{
	int n = 0;
	char *p = cmdline;

	for (;;) {
		while (is_space(*p))
			*p++ = '\0';
		if (*p == '\0' || n == ARGS_MAX)
			return n;
		args[n++] = p;
		while (*p && !is_space(*p))
			p++;
	}
}

/* QEMU -kernel puts the kernel's path first, GRUB does not: a path has '/' and no '='. */
static int looks_like_path(const char *word)
{
	int slash = 0;

	for (; *word; word++) {
		if (*word == '=')
			return 0;
		slash |= *word == '/';
	}
	return slash;
}

static void copy_cmdline(const char *src)
{
	int i;

	for (i = 0; i < CMDLINE_MAX - 1 && src[i]; i++)
		cmdline[i] = src[i];
	cmdline[i] = '\0';
}

int main(int argc, char **argv);

void rt_start(uint64_t mb_addr) __attribute__((noreturn));

/* Called by start.S on its own stack with .bss zeroed and SSE on; mb_addr may be 0. */
void rt_start(uint64_t mb_addr)
{
	const struct mb_info *mb = (const struct mb_info *)(uintptr_t)mb_addr;
	uintptr_t ram_end = DEFAULT_RAM_END;
	char **argv = args;
	int argc;

	rt_console_init();
	rt_trap_init();

	if (mb && (mb->flags & MB_INFO_MEM))
		ram_end = 0x100000 + (uintptr_t)mb->mem_upper * 1024;
	if (mb && (mb->flags & MB_INFO_CMDLINE) && mb->cmdline)
		copy_cmdline((const char *)(uintptr_t)mb->cmdline);
	rt_heap_init(ram_end);

	/* Unbuffered: a guest that faults or hangs has shown everything it printed. */
	setvbuf(stdout, NULL, _IONBF, 0);

	argc = split_words();
	if (argc > 0 && looks_like_path(argv[0])) {
		argv++;
		argc--;
	}
	exit(main(argc, argv));
}
