/* A stand-in Linux kernel: checks what the 64-bit boot protocol promises it, prints its inputs. */
#include <stdint.h>

#define COM1		0x3F8
/* zero-page.rst and boot.rst offsets the checks read. */
#define BP_E820_ENTRIES	0x1E8
#define BP_E820_TABLE	0x2D0
#define HDR_MAGIC	0x202
#define HDR_TYPE_LOADER	0x210
#define HDR_RAMDISK	0x218
#define HDR_RAMDISK_LEN	0x21C
#define HDR_CMD_LINE	0x228
#define HDR_ALIGN	0x230
#define RFLAGS_IF	(1u << 9)

/* entry.S: the 64-bit entry, 0x200 past the load address. */
extern char startup_64[];

/* Kept on the stack: the flat image has no zeroed data (bzstub.ld). */
struct tally {
	unsigned checks, failed;
};

static void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static void puts_(const char *s)
{
	while (*s)
		outb(COM1, (uint8_t)*s++);
}

static void putn(uint64_t v, unsigned base)
{
	char buf[24];
	int n = 0;

	if (base == 16)
		puts_("0x");
	do {
		buf[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n)
		outb(COM1, (uint8_t)buf[--n]);
}

/* The guest test library's line format: "ok N - what" / "not ok N - what". */
static void report(struct tally *t, int ok, const char *what)
{
	t->checks++;
	t->failed += !ok;
	puts_(ok ? "ok " : "not ok ");
	putn(t->checks, 10);
	puts_(" - ");
	puts_(what);
	puts_("\n");
}

static uint64_t rd(const uint8_t *p, unsigned off, unsigned n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[off + n];
	return v;
}

int bz_main(const uint8_t *bp)
{
	uint16_t cs, ds, ss;
	uint64_t rflags, initrd = rd(bp, HDR_RAMDISK, 4);
	uint64_t initrd_len = rd(bp, HDR_RAMDISK_LEN, 4);
	const uint8_t *e820 = bp + BP_E820_TABLE;
	const char *rd_text = (const char *)initrd;
	unsigned n = bp[BP_E820_ENTRIES];
	struct tally t = { 0, 0 };

	__asm__ volatile("mov %%cs, %0; mov %%ds, %1; mov %%ss, %2" : "=r"(cs), "=r"(ds), "=r"(ss));
	__asm__ volatile("pushf; pop %0" : "=r"(rflags));
	report(&t, cs == 0x10 && ds == 0x18 && ss == 0x18,
	       "segments: CS __BOOT_CS, DS and SS __BOOT_DS");
	report(&t, !(rflags & RFLAGS_IF), "interrupts off at entry");
	report(&t, rd(bp, HDR_MAGIC, 4) == 0x53726448, "zero page: RSI points at a setup header copy");
	report(&t, bp[HDR_TYPE_LOADER] == 0xFF, "zero page: type_of_loader 0xff");
	report(&t, !(((uint64_t)startup_64 - 0x200) & (rd(bp, HDR_ALIGN, 4) - 1)) &&
	       (uint64_t)startup_64 >= 0x100000, "entered at +0x200 of a kernel_alignment boundary");
	puts_("cmdline: ");
	puts_((const char *)rd(bp, HDR_CMD_LINE, 4));
	puts_("\n");
	puts_("initrd: ");
	putn(initrd_len, 10);
	puts_(" bytes at ");
	putn(initrd, 16);
	puts_("\n");
	/* The initrd bzstub.mk makes starts "pv" and ends with a newline. */
	report(&t, !initrd_len || (rd_text[0] == 'p' && rd_text[1] == 'v' &&
			       rd_text[initrd_len - 1] == '\n'),
	       "initrd: its first and last bytes where ramdisk_image and ramdisk_size say");
	puts_("e820: ");
	putn(n, 10);
	puts_(" entries, RAM up to ");
	putn(n ? rd(e820, (n - 1) * 20, 8) + rd(e820, (n - 1) * 20 + 8, 8) : 0, 16);
	puts_("\n");
	return (int)t.failed;
}
