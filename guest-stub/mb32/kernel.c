/* mb32: a QEMU -kernel style multiboot test kernel; checks loader, fw_cfg and local APIC, exits with a bit per failure. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "include/perfvisor/fwcfg.h"
#include "include/x86/apic.h"

/* Multiboot 0.6.96, 3.3. */
#define MB_BOOT_MAGIC	0x2BADB002
#define MB_INFO_MEM	(1u << 0)
#define MB_INFO_CMDLINE	(1u << 2)
#define MB_INFO_MODS	(1u << 3)
#define MB_INFO_MMAP	(1u << 6)
#define MB_MMAP_RAM	1

struct mb_info {
	uint32_t flags;
	uint32_t mem_lower;
	uint32_t mem_upper;	/* KiB from 1 MiB */
	uint32_t boot_device;
	uint32_t cmdline;
	uint32_t mods_count;
	uint32_t mods_addr;
	uint32_t syms[4];
	uint32_t mmap_length;
	uint32_t mmap_addr;
};

struct mb_module {
	uint32_t start;
	uint32_t end;
	uint32_t string;
	uint32_t reserved;
};

/* `size` counts the bytes after itself. */
struct mb_mmap_entry {
	uint32_t size;
	uint64_t base;
	uint64_t len;
	uint32_t type;
} __attribute__((packed));

#define COM1		0x3F8
#define UART_LSR	5
#define LSR_THRE	0x20
#define LSR_TEMT	0x40

#define PIC1_DATA	0x21
#define PIC2_DATA	0xA1
#define EXIT_PORT	0xF4	/* QEMU isa-debug-exit */
#define SHUTDOWN_PORT	0x8900	/* Bochs */

#define SPURIOUS_VECTOR	0xFF
#define TIMER_VECTOR	0x40
#define TIMER_COUNT	100000u
#define SPIN_LIMIT	5000000u	/* far more than 100000 ticks take anywhere */
#define POLL_LIMIT	100000u		/* count reads: each may cost a VM exit */

/* The exit code: one bit per failed check; an unexpected interrupt ends the run at once. */
#define FAIL_MAGIC	0x01
#define FAIL_MBI	0x02
#define FAIL_SIGNATURE	0x04
#define FAIL_CPUS	0x08
#define FAIL_RAM	0x10
#define FAIL_APIC	0x20
#define FAIL_TIMER	0x40
#define EXIT_UNEXPECTED	0x80
#define FAIL_MODULE	0x100

#define PAGE_SIZE	0x1000u
#define HIGH_RAM	0x100000u
#define MODULE_LINES	4	/* lines of the module printed, each up to LINE_MAX bytes */
#define LINE_MAX	80

struct idt_gate {
	uint16_t offset_low;
	uint16_t selector;
	uint8_t zero;
	uint8_t type;
	uint16_t offset_high;
} __attribute__((packed));

struct idt_ptr {
	uint16_t limit;
	uint32_t base;
} __attribute__((packed));

struct interrupt_frame;

#define SEL_CODE	0x08	/* entry.S's GDT */
#define GATE_INTERRUPT	0x8E	/* present, DPL 0, 32-bit interrupt gate */

extern char kernel_end[];

static struct idt_gate idt[256];
static volatile uint32_t timer_interrupts;

static inline void outb(uint16_t port, uint8_t val)
{
	__asm__ volatile("outb %0, %1" : : "a"(val), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t val)
{
	__asm__ volatile("outw %0, %1" : : "a"(val), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t val)
{
	__asm__ volatile("outl %0, %1" : : "a"(val), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t val;

	__asm__ volatile("inb %1, %0" : "=a"(val) : "Nd"(port));
	return val;
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static void putc(char c)
{
	while (!(inb(COM1 + UART_LSR) & LSR_THRE))
		;
	outb(COM1, (uint8_t)c);
}

static void puts(const char *s)
{
	while (*s)
		putc(*s++);
}

static void put_uint(uint32_t v)
{
	char buf[10];
	int n = 0;

	do {
		buf[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		putc(buf[--n]);
}

static void put_hex(uint32_t v)
{
	puts("0x");
	for (int shift = 28; shift >= 0; shift -= 4)
		putc("0123456789abcdef"[(v >> shift) & 0xF]);
}

/* One line "mb32: WHAT ok" or "... FAILED"; returns the failure bit or 0. */
static uint32_t verdict(const char *what, bool ok, uint32_t bit)
{
	puts("mb32: ");
	puts(what);
	puts(ok ? ": ok\n" : ": FAILED\n");
	return ok ? 0 : bit;
}

static void uart_init(void)
{
	outb(COM1 + 1, 0x00);	/* no UART interrupts */
	outb(COM1 + 3, 0x80);	/* DLAB: divisor 1, 115200 baud */
	outb(COM1 + 0, 0x01);
	outb(COM1 + 1, 0x00);
	outb(COM1 + 3, 0x03);	/* 8N1, DLAB off */
	outb(COM1 + 2, 0x07);	/* FIFOs on and cleared */
}

/* Waits for the last bit to leave, then both exit ports; halts if neither ends the machine. */
static __attribute__((noreturn)) void finish(uint32_t code)
{
	static const char shutdown[] = "Shutdown";

	puts("mb32: exit ");
	put_uint(code);
	putc('\n');
	while (!(inb(COM1 + UART_LSR) & LSR_TEMT))
		;
	outl(EXIT_PORT, code);
	for (const char *p = shutdown; *p; p++)
		outb(SHUTDOWN_PORT, (uint8_t)*p);
	for (;;)
		__asm__ volatile("cli; hlt");
}

/* Finds "KEY=<decimal>" as a word of the command line; QEMU puts the kernel path first. */
static bool cmdline_uint(const char *cmdline, const char *key, uint32_t *val)
{
	for (const char *w = cmdline; *w; w++) {
		const char *k = key, *p = w;

		if (w != cmdline && w[-1] != ' ')
			continue;
		while (*k && *p == *k) {
			k++;
			p++;
		}
		if (*k || *p != '=' || p[1] < '0' || p[1] > '9')
			continue;
		*val = 0;
		for (p++; *p >= '0' && *p <= '9'; p++)
			*val = *val * 10 + (uint32_t)(*p - '0');
		return true;
	}
	return false;
}

static void fwcfg_read(uint16_t key, void *buf, size_t len)
{
	uint8_t *b = buf;

	outw(FWCFG_PORT_SELECTOR, key);
	for (size_t i = 0; i < len; i++)
		b[i] = inb(FWCFG_PORT_DATA);
}

static uint32_t apic_read(uint32_t reg)
{
	return *(volatile uint32_t *)(APIC_DEFAULT_BASE + reg);
}

static void apic_write(uint32_t reg, uint32_t val)
{
	*(volatile uint32_t *)(APIC_DEFAULT_BASE + reg) = val;
}

__attribute__((interrupt)) static void timer_isr(struct interrupt_frame *frame)
{
	(void)frame;
	timer_interrupts++;
	apic_write(APIC_EOI, 0);
}

/* Exceptions and interrupts nobody asked for; it never returns, so error codes do not matter. */
__attribute__((interrupt)) static void unexpected_isr(struct interrupt_frame *frame)
{
	(void)frame;
	puts("mb32: unexpected interrupt or exception\n");
	finish(EXIT_UNEXPECTED);
}

static void set_gate(unsigned vector, void (*handler)(struct interrupt_frame *))
{
	uint32_t addr = (uint32_t)(uintptr_t)handler;

	idt[vector] = (struct idt_gate){
		.offset_low = (uint16_t)addr,
		.selector = SEL_CODE,
		.type = GATE_INTERRUPT,
		.offset_high = (uint16_t)(addr >> 16),
	};
}

static void idt_init(void)
{
	struct idt_ptr ptr = { sizeof(idt) - 1, (uint32_t)(uintptr_t)idt };

	for (unsigned v = 0; v < 256; v++)
		set_gate(v, unexpected_isr);
	set_gate(TIMER_VECTOR, timer_isr);
	__asm__ volatile("lidt %0" : : "m"(ptr));
}

static bool mmap_covers_kernel(const struct mb_info *mbi)
{
	uint32_t p = mbi->mmap_addr, end = mbi->mmap_addr + mbi->mmap_length;

	while (p < end) {
		const struct mb_mmap_entry *e = (const struct mb_mmap_entry *)(uintptr_t)p;

		if (e->type == MB_MMAP_RAM && e->base <= 0x100000 &&
		    e->base + e->len >= (uint32_t)(uintptr_t)kernel_end)
			return true;
		p += e->size + sizeof(e->size);
	}
	return false;
}

static uint32_t check_loader(uint32_t magic, const struct mb_info *mbi)
{
	const uint32_t need = MB_INFO_MEM | MB_INFO_CMDLINE | MB_INFO_MMAP;
	uint32_t fails = verdict("multiboot magic in EAX", magic == MB_BOOT_MAGIC, FAIL_MAGIC);

	if (fails)
		return fails;
	puts("mb32: command line '");
	if (mbi->flags & MB_INFO_CMDLINE)
		puts((const char *)(uintptr_t)mbi->cmdline);
	puts("', mem_upper ");
	put_uint(mbi->mem_upper);
	puts(" KiB\n");
	fails |= verdict("memory, command line and memory map flags",
			 (mbi->flags & need) == need, FAIL_MBI);
	if (!fails)
		fails |= verdict("memory map covers the kernel", mmap_covers_kernel(mbi),
				 FAIL_MBI);
	return fails;
}

/* Expected CPUs and MiB come from the command line (cpus=, mem=): the runner knows them. */
static uint32_t check_fwcfg(const struct mb_info *mbi)
{
	char sig[4];
	uint16_t cpus;
	uint64_t ram;
	uint64_t upper_end = ((uint64_t)mbi->mem_upper + 1024) << 10;
	uint32_t want_cpus, want_mib, fails = 0;
	bool have_cpus, have_mib;
	const char *cmdline = (mbi->flags & MB_INFO_CMDLINE) ?
			      (const char *)(uintptr_t)mbi->cmdline : "";

	have_cpus = cmdline_uint(cmdline, "cpus", &want_cpus);
	have_mib = cmdline_uint(cmdline, "mem", &want_mib);
	fwcfg_read(FWCFG_SIGNATURE, sig, sizeof(sig));
	fails |= verdict("fw_cfg signature QEMU",
			 sig[0] == 'Q' && sig[1] == 'E' && sig[2] == 'M' && sig[3] == 'U',
			 FAIL_SIGNATURE);
	if (fails)
		return fails;
	fwcfg_read(FWCFG_NB_CPUS, &cpus, sizeof(cpus));
	fwcfg_read(FWCFG_RAM_SIZE, &ram, sizeof(ram));
	puts("mb32: fw_cfg: ");
	put_uint(cpus);
	puts(" cpus, ");
	put_uint((uint32_t)(ram >> 20));
	puts(" MiB\n");
	fails |= verdict("fw_cfg cpus as cpus= says", have_cpus && cpus == want_cpus, FAIL_CPUS);
	fails |= verdict("fw_cfg RAM as mem= says",
			 have_mib && ram == (uint64_t)want_mib << 20, FAIL_RAM);
	/* Multiboot 0.6.96, 3.3: mem_upper ends at the first hole, at most 1 MiB below the top. */
	fails |= verdict("mem_upper ends within 1 MiB of the top of RAM",
			 upper_end <= ram && upper_end + (1u << 20) > ram, FAIL_RAM);
	return fails;
}

/* Prints the module's first lines as "mb32: module line: TEXT", text only, up to the end. */
static void print_module_lines(const char *p, const char *end)
{
	for (int line = 0; line < MODULE_LINES && p < end; line++) {
		puts("mb32: module line: ");
		for (int n = 0; p < end && *p != '\n' && n < LINE_MAX; p++, n++)
			putc(*p >= 0x20 && *p < 0x7F ? *p : '?');
		while (p < end && *p++ != '\n')
			;
		putc('\n');
	}
}

/*
 * With mods=1 on the command line, one module as QEMU's -initrd or GRUB's module gives it
 * (multiboot 0.6.96 3.3): the flag, mods_count 1, on a page boundary (the header's
 * MULTIBOOT_PAGE_ALIGN), in RAM above 1 MiB, clear of the kernel and of the info structure.
 */
static uint32_t check_module(const struct mb_info *mbi)
{
	const char *cmdline = (mbi->flags & MB_INFO_CMDLINE) ?
			      (const char *)(uintptr_t)mbi->cmdline : "";
	uint64_t ram_end = ((uint64_t)mbi->mem_upper + 1024) << 10;
	uint32_t want, kend = (uint32_t)(uintptr_t)kernel_end, info = (uint32_t)(uintptr_t)mbi;
	const struct mb_module *m;
	bool placed;

	if (!cmdline_uint(cmdline, "mods", &want) || want != 1)
		return 0;
	if (verdict("one module", (mbi->flags & MB_INFO_MODS) && mbi->mods_count == 1,
		    FAIL_MODULE))
		return FAIL_MODULE;
	m = (const struct mb_module *)(uintptr_t)mbi->mods_addr;
	puts("mb32: module '");
	puts(m->string ? (const char *)(uintptr_t)m->string : "");
	puts("', ");
	put_uint(m->end - m->start);
	puts(" bytes at ");
	put_hex(m->start);
	putc('\n');
	placed = m->start % PAGE_SIZE == 0 && m->start >= HIGH_RAM && m->start >= kend &&
		 m->end >= m->start && m->end <= ram_end &&
		 (info + sizeof(*mbi) <= m->start || info >= m->end);
	if (verdict("module page-aligned in RAM above 1 MiB, clear of the kernel and the info",
		    placed, FAIL_MODULE))
		return FAIL_MODULE;
	print_module_lines((const char *)(uintptr_t)m->start, (const char *)(uintptr_t)m->end);
	return 0;
}

/* Spins with interrupts on until the timer has fired `want` times, or gives up; returns the spins. */
static uint32_t wait_timer(uint32_t want)
{
	uint32_t spins = 0;

	__asm__ volatile("sti");
	while (timer_interrupts < want && spins < SPIN_LIMIT) {
		__asm__ volatile("pause");
		spins++;
	}
	__asm__ volatile("cli");
	return spins;
}

/*
 * One period of the timer with its LVT entry masked, timed by its own current count, which
 * must fall to 0 and stay there: a count that goes up was reloaded, as only periodic mode does.
 */
static bool masked_period_passes(void)
{
	uint32_t now, last = TIMER_COUNT;
	bool ok = false;

	apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED | TIMER_VECTOR);
	apic_write(APIC_TIMER_ICR, TIMER_COUNT);
	__asm__ volatile("sti");
	/* Each read may be a VM exit: bounded by reads, not spins. */
	for (uint32_t reads = 0; reads < POLL_LIMIT; reads++) {
		now = apic_read(APIC_TIMER_CCR);
		if (now > last)
			break;
		if (!now) {
			ok = true;
			break;
		}
		last = now;
	}
	__asm__ volatile("cli");
	return ok;
}

/* SDM Vol. 3A 11.4.7.1 (software enable), 11.5.1 (LVT mask), 11.5.4 (one-shot timer), 11.8.5 (EOI). */
static uint32_t check_apic(void)
{
	uint32_t version = apic_read(APIC_VERSION), fails = 0, count[2], spins[2], left[2];
	bool counting = true, quiet;
	uint64_t armed;

	puts("mb32: apic id ");
	put_uint(apic_read(APIC_ID) >> 24);
	puts(", version ");
	put_hex(version);
	putc('\n');
	fails |= verdict("apic id 0 and an integrated xAPIC",
			 apic_read(APIC_ID) >> 24 == 0 && (version & 0xF0) == 0x10, FAIL_APIC);
	apic_write(APIC_SPIV, APIC_SPIV_ENABLE | SPURIOUS_VECTOR);
	fails |= verdict("apic software-enabled",
			 (apic_read(APIC_SPIV) & 0x1FF) == (APIC_SPIV_ENABLE | SPURIOUS_VECTOR),
			 FAIL_APIC);
	if (fails)
		return fails;

	/* Two shots, nothing printed while they run: the second comes only after the first EOI. */
	apic_write(APIC_TIMER_DCR, APIC_DCR_DIVIDE_1);
	apic_write(APIC_LVT_TIMER, TIMER_VECTOR);	/* one-shot, unmasked */
	for (int shot = 0; shot < 2; shot++) {
		armed = rdtsc();
		apic_write(APIC_TIMER_ICR, TIMER_COUNT);
		count[shot] = apic_read(APIC_TIMER_CCR);
		/*
		 * The timer's clock never runs faster than the TSC (under perfvisor it is the
		 * TSC), so a count read within TIMER_COUNT TSC ticks of arming is still running;
		 * a host that stalls an emulator for longer may let it run out first.
		 */
		counting &= count[shot] <= TIMER_COUNT &&
			    (count[shot] || rdtsc() - armed >= TIMER_COUNT);
		spins[shot] = wait_timer((uint32_t)shot + 1);
		left[shot] = apic_read(APIC_TIMER_CCR);
	}
	/* A one-shot timer that wrongly reloads would fire again within this period. */
	quiet = masked_period_passes() && timer_interrupts == 2;

	puts("mb32: timer fired after ");
	put_uint(spins[0]);
	puts(" and ");
	put_uint(spins[1]);
	puts(" spins\n");
	fails |= verdict("timer counts down from its initial count", counting, FAIL_TIMER);
	fails |= verdict("two one-shot interrupts, each leaving the count at 0",
			 spins[0] < SPIN_LIMIT && spins[1] < SPIN_LIMIT && !left[0] && !left[1],
			 FAIL_TIMER);
	fails |= verdict("a masked period: no interrupt, no reload", quiet, FAIL_TIMER);
	return fails;
}

void kmain(uint32_t magic, const struct mb_info *mbi) __attribute__((noreturn));

void kmain(uint32_t magic, const struct mb_info *mbi)
{
	uint32_t fails;

	uart_init();
	/* The BIOS left the 8259s routing the PIT to vector 8: mask them, as kernels do. */
	outb(PIC1_DATA, 0xFF);
	outb(PIC2_DATA, 0xFF);
	idt_init();
	puts("mb32: 32-bit multiboot test kernel\n");
	fails = check_loader(magic, mbi);
	if (fails & FAIL_MAGIC)
		finish(fails);
	fails |= check_fwcfg(mbi);
	fails |= check_module(mbi);
	fails |= check_apic();
	finish(fails);
}
