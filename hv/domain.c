/* Domains: built from multiboot modules (config, RAM, EPT, image, boot data, VCPUs), ended, and summed up. */
#include <stdarg.h>

#include "lib/cpu.h"
#include "lib/exit.h"
#include "lib/frame.h"
#include "lib/printk.h"
#include "lib/string.h"
#include "hv/acpi.h"
#include "hv/bzimage.h"
#include "hv/domain.h"
#include "hv/irq.h"
#include "hv/elf.h"
#include "hv/ept.h"
#include "hv/guest_mbi.h"
#include "hv/pcpu.h"
#include "hv/sched.h"
#include "hv/hv.h"
#include "hv/vcpu.h"
#include "hv/vmx.h"

/* The boot data the hypervisor writes in low RAM beside the image (hv/guest_mbi.c places it). */
#define BOOT_GDT	0x0000ull	/* the first-instruction GDT */
#define BOOT_PML4	0x1000ull	/* ELF64 guests: identity page tables for the low 4 GiB */
#define BOOT_PDPT	0x2000ull
#define BOOT_PD		0x3000ull	/* four page directories */
#define BOOT_MBI	0x7000ull	/* the multiboot information, up to BOOT_SIZE */
#define BOOT_ZERO_PAGE	0x7000ull	/* bzImage kernels: boot_params, then the command line */
#define BOOT_CMDLINE	0x8000ull
#define BOOT_SIZE	0xF000ull
#define MB_LOADER_MAGIC	0x2BADB002

_Static_assert(sizeof(struct vcpu) <= 4096, "a vcpu must fit in one frame");
_Static_assert(DOM_ACCT_GUEST == (int)PMU_ACCT_GUEST && DOM_ACCT_VCPU == (int)PMU_ACCT_VCPU &&
	       DOM_ACCT_HYBRID == (int)PMU_ACCT_HYBRID, "acct= maps onto the PMU accounting modes");

/* What a loader leaves for the boot VCPU's first instruction. */
struct boot_start {
	const char *kind;		/* the image's kind, as the domain's start line says it */
	bool is64;			/* long mode at entry, else 32-bit protected mode */
	uint16_t cs_sel;		/* the boot GDT's code selector; data is the next one */
	uint64_t entry;
	uint64_t rax, rbx, rdi, rsi;
};

/*
 * Modules that are no domain but files for one: "data=NAME", named by a domain's initrd=.
 * hv/main.c adds at most one per module, and modules are at most MAX_DOMAINS.
 */
static struct dom_data {
	char name[DOM_NAME_MAX + 1];
	const void *start;
	uint64_t len;
} data_mods[MAX_DOMAINS];
static unsigned num_data;

/* In frames from the allocator, not the image's bss: the table is most of what bss would hold. */
struct domain *domains;
unsigned num_domains;
uint64_t dom_frames_free_at_start;
static struct spinlock dump_lock;

bool dom_table_init(void)
{
	uint64_t pages = (sizeof(struct domain) * MAX_DOMAINS + FRAME_SIZE - 1) / FRAME_SIZE;

	/* The allocator hands out zeroed frames, as bss would be; the low 4 GiB are identity-mapped. */
	domains = (struct domain *)frame_alloc_contig(pages, 1);
	return domains;
}

/* Gives every frame of the domain back: its VCPUs' VMCSs and pages, EPT tables and RAM. */
static void release(struct domain *d)
{
	for (unsigned i = 0; i < d->nvcpus; i++) {
		step_cache_free(d->vcpus[i]);
		frame_free(d->vcpus[i]->vmcs_pa);
		frame_free((uint64_t)d->vcpus[i]);
		d->vcpus[i] = (struct vcpu *)0;
	}
	if (d->eptp)
		ept_destroy(d->eptp);
	if (d->ram_hpa)
		frame_free_contig(d->ram_hpa, d->ram_size / FRAME_SIZE);
	if (d->testdev_hpa)
		frame_free_contig(d->testdev_hpa, TESTDEV_IOMEM_LEN / FRAME_SIZE);
	d->eptp = d->ram_hpa = d->testdev_hpa = 0;
	__atomic_store_n(&d->released, true, __ATOMIC_RELEASE);
}

void dom_vcpu_gone(struct vcpu *v)
{
	struct domain *d = v->dom;
	struct dom_vcpu_stats *s = &d->stats[v->id];
	bool last;

	s->exits = v->total_exits;
	s->guest_tsc = v->run_tsc;
	s->hv_tsc = v->hv_tsc;
	s->steps = v->step.steps;
	s->ring0_runs = v->step.ring0_runs;
	if (v->step.cache) {
		s->cache_hits = v->step.cache->hits;
		s->cache_fills = v->step.cache->fills;
		s->cache_drops = v->step.cache->drops;
	}
	s->retired = v->pmu.retired;
	s->hv_ticks = v->pmu.hv_ticks;
	s->hv_counted = v->pmu.hv_counted;
	s->hv_counted_branches = v->pmu.hv_counted_branches;
	s->migrations = v->migrations;
	/* SDM Vol. 3C 25.11.1: VMCLEAR on the processor where the VMCS was last active. */
	vcpu_unload(v);
	spin_lock(&d->lock);
	last = ++d->vcpus_gone == d->nvcpus;
	spin_unlock(&d->lock);
	/* Only once none of its VCPUs can run anywhere may their memory go. */
	if (last)
		release(d);
}

/* Module-string messages: printed, and the first one kept as the reason if the domain cannot start. */
static void report_line(void *ctx, const char *msg)
{
	struct domain *d = ctx;
	const char *reason = strchr(msg, ')');
	size_t n = strlen(msg);

	/* dom_config_parse() ends a fatal verdict with "...: not started"; not_started() says it. */
	if (n > 13 && !strcmp(msg + n - 13, ": not started"))
		return;
	printk("perfvisor: %s\n", msg);
	if (!d->fate[0] && reason && reason[1] == ':')
		snprintk(d->fate, sizeof(d->fate), "%s", reason + 3);
}

/*
 * A guest line is printed after "[name] ", with every control or non-ASCII byte as '?': a guest
 * must not be able to end the line early (form feed, vertical tab, NEL...) and forge
 * hypervisor lines in the log that tests and users read.
 */
static void uart_line(void *ctx, const char *line, size_t len)
{
	struct domain *d = ctx;
	char clean[VUART_LINE_MAX + 1];

	for (size_t i = 0; i < len && i < VUART_LINE_MAX; i++)
		clean[i] = (line[i] >= 0x20 && line[i] < 0x7F) || line[i] == '\t' ? line[i] : '?';
	clean[len < VUART_LINE_MAX ? len : VUART_LINE_MAX] = '\0';
	printk("[%s] %s\n", d->cfg.name, clean);
}

static void not_started(struct domain *d, const char *fmt, ...)
{
	char why[sizeof(d->fate)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintk(why, sizeof(why), fmt, ap);
	va_end(ap);
	memcpy(d->fate, why, sizeof(why));
	d->state = DOM_NOT_STARTED;
	release(d);
	printk("perfvisor: domain %u (%s) not started: %s\n", d->id, d->cfg.name, d->fate);
}

/* The identity map an ELF64 guest starts with: low 4 GiB in 2 MiB pages (it may build its own). */
static void write_boot_page_tables(struct domain *d, uint64_t boot)
{
	uint64_t *pml4 = dom_gpa_to_hva(d, boot + BOOT_PML4, 4096);
	uint64_t *pdpt = dom_gpa_to_hva(d, boot + BOOT_PDPT, 4096);
	uint64_t *pd = dom_gpa_to_hva(d, boot + BOOT_PD, 4 * 4096);

	pml4[0] = (boot + BOOT_PDPT) | 3;
	for (unsigned i = 0; i < 4; i++)
		pdpt[i] = (boot + BOOT_PD + i * 4096) | 3;
	for (unsigned i = 0; i < 2048; i++)
		pd[i] = ((uint64_t)i << 21) | 0x83;	/* present, writable, 2 MiB */
}

/* A null descriptor, then flat code at cs_sel and flat data at the next descriptor. */
static void write_boot_gdt(struct domain *d, uint64_t boot, bool is64, uint16_t cs_sel)
{
	uint64_t *gdt = dom_gpa_to_hva(d, boot + BOOT_GDT, cs_sel + 16u);

	memset(gdt, 0, cs_sel);
	gdt[cs_sel / 8] = is64 ? 0x00AF9A000000FFFFull : 0x00CF9A000000FFFFull;
	gdt[cs_sel / 8 + 1] = 0x00CF92000000FFFFull;
}

/* Puts the VCPUs on their PCPUs' run queues, once every pin is online and every queue has room. */
static bool place_vcpus(struct domain *d)
{
	char why[sizeof(d->fate)];

	if (!sched_place(d->vcpus, d->nvcpus, d->cfg.pin, d->cfg.npin, why, sizeof(why))) {
		not_started(d, "%s", why);
		return false;
	}
	return true;
}

/* Builds the VCPUs; the boot VCPU gets the first-instruction state its loader chose. */
static bool create_vcpus(struct domain *d, const struct boot_start *start, uint64_t boot)
{
	for (unsigned i = 0; i < d->cfg.vcpus; i++) {
		uint64_t pa = frame_alloc();
		struct vcpu *v = (struct vcpu *)pa;

		if (!pa || vcpu_init(v, d, i)) {
			if (pa)
				frame_free(pa);
			not_started(d, "out of memory for vcpu %u", i);
			return false;
		}
		d->vcpus[d->nvcpus++] = v;
		msr_vcpu_init(&v->msr);
		/* A VCPU's TSC starts at 0 unless it shows the host's (tsc=host); building later
		 * domains is waiting for a PCPU, which its clock must not count. */
		if (d->cfg.tsc == DOM_TSC_VCPU)
			v->tsc_offset = -rdtsc();
		v->desched_tsc = rdtsc();
		if (i == 0) {
			v->gpr[GPR_RAX] = start->rax;
			v->gpr[GPR_RBX] = start->rbx;
			v->gpr[GPR_RDI] = start->rdi;
			v->gpr[GPR_RSI] = start->rsi;
			if (start->is64)
				vcpu_start_long_mode(v, start->entry, boot + BOOT_PML4,
						     boot + BOOT_GDT, start->cs_sel);
			else
				vcpu_start_protected32(v, (uint32_t)start->entry, boot + BOOT_GDT);
		}
		vcpu_unload(v);
	}
	return true;
}

void dom_refuse(unsigned index, const char *fmt, ...)
{
	struct domain *d = &domains[index];
	char why[sizeof(d->fate)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintk(why, sizeof(why), fmt, ap);
	va_end(ap);
	d->id = index;
	num_domains = index + 1;
	/* An empty module string: the default name, without a message. */
	dom_config_parse(index, "", num_pcpus, pmu_event_names, NULL, d, &d->cfg);
	not_started(d, "%s", why);
}

void dom_add_data(const char *name, const void *start, uint64_t len)
{
	struct dom_data *m = &data_mods[num_data++];

	snprintk(m->name, sizeof(m->name), "%s", name);
	m->start = start;
	m->len = len;
}

/*
 * The data module initrd= names (*out NULL when the domain names none); false, with d not
 * started by name, when no module has that name.
 */
static bool find_initrd(struct domain *d, const struct dom_data **out)
{
	*out = (const struct dom_data *)0;
	if (!d->cfg.initrd[0])
		return true;
	for (unsigned i = 0; i < num_data; i++) {
		if (!strcmp(data_mods[i].name, d->cfg.initrd)) {
			*out = &data_mods[i];
			return true;
		}
	}
	not_started(d, "initrd '%s' missing: no module has data=%s", d->cfg.initrd, d->cfg.initrd);
	return false;
}

/* Guest RAM from the frame allocator (2 MiB aligned for the EPT's 2 MiB pages), mapped by EPT. */
static bool alloc_ram(struct domain *d)
{
	d->ram_size = d->cfg.mem;
	d->ram_hpa = frame_alloc_contig(d->ram_size / FRAME_SIZE, (2u << 20) / FRAME_SIZE);
	if (!d->ram_hpa) {
		not_started(d, "not enough host memory for %lu MiB of guest RAM", d->ram_size >> 20);
		return false;
	}
	return true;
}

/*
 * With testdev, pc-testdev's 64 KiB at TESTDEV_IOMEM_BASE are plain memory: QEMU emulates
 * them as a device that reads back what was written, which is what RAM does, so the CPU
 * runs every instruction on them itself, as a PC with memory there would.
 */
static bool map_ram(struct domain *d)
{
	d->eptp = ept_create();
	if (!d->eptp || !ept_map(d->eptp, 0, d->ram_hpa, d->ram_size, EPT_RWX)) {
		not_started(d, "out of memory for its EPT");
		return false;
	}
	if (!d->cfg.testdev)
		return true;
	d->testdev_hpa = frame_alloc_contig(TESTDEV_IOMEM_LEN / FRAME_SIZE, 1);
	if (!d->testdev_hpa || !ept_map(d->eptp, TESTDEV_IOMEM_BASE, d->testdev_hpa,
					TESTDEV_IOMEM_LEN, EPT_RWX)) {
		not_started(d, "out of memory for its test device's RAM");
		return false;
	}
	memset((void *)d->testdev_hpa, 0, TESTDEV_IOMEM_LEN);
	return true;
}

/*
 * The initrd= data module of a multiboot guest, copied on the page after the loaded image:
 * mods_count 1 in its multiboot information, as QEMU's -initrd and GRUB's module give it.
 * kvm-unit-tests reads its environment from it.
 */
static bool place_module(struct domain *d, const struct elf_info *info,
			 const struct dom_data *data, struct guest_mbi_module *mod)
{
	uint64_t at = guest_module_place(info->load_hi, data->len, d->ram_size);

	if (at == UINT64_MAX) {
		not_started(d, "initrd '%s' (%lu bytes) does not fit in mem=%luM after the image "
			    "(which ends at 0x%lx)", data->name, data->len, d->ram_size >> 20,
			    info->load_hi);
		return false;
	}
	memcpy((void *)(d->ram_hpa + at), data->start, data->len);
	mod->start = at;
	mod->end = at + data->len;
	printk("perfvisor: domain %u (%s): module '%s', %lu bytes at 0x%lx\n", d->id, d->cfg.name,
	       data->name, data->len, at);
	return true;
}

/* An ELF64 or multiboot ELF32 image, started with the multiboot information. */
static bool load_elf(struct domain *d, const void *image, uint64_t image_len,
		     struct boot_start *start, uint64_t *boot)
{
	struct guest_mbi_module mod, *modp = (struct guest_mbi_module *)0;
	const struct dom_data *data;
	struct elf_info info;
	char err[160];
	const char *why;
	uint32_t mbi;

	if (!elf_check(image, image_len, &info, err, sizeof(err))) {
		not_started(d, "%s", err);
		return false;
	}
	/* Images may load anywhere in RAM (realmode tests at 0x8000): the boot data moves aside. */
	*boot = guest_boot_area(info.load_lo, info.load_hi, BOOT_SIZE);
	if (*boot == UINT64_MAX) {
		not_started(d, "the image [0x%lx, 0x%lx) leaves no %lu KiB in the low 640 KiB "
			    "for its boot data", info.load_lo, info.load_hi, BOOT_SIZE >> 10);
		return false;
	}
	if (!find_initrd(d, &data))
		return false;
	if (data) {
		/* The module's string is the data module's name. */
		mod.string = data->name;
		modp = &mod;
	}
	if (guest_mbi_size(strlen(d->cfg.args), modp) > BOOT_SIZE - BOOT_MBI) {
		not_started(d, "guest arguments too long (%zu characters; the multiboot information "
			    "has %lu bytes)", strlen(d->cfg.args), BOOT_SIZE - BOOT_MBI);
		return false;
	}
	if (!info.is64 && !info.has_multiboot) {
		not_started(d, "a 32-bit image must be a multiboot kernel (no multiboot header)");
		return false;
	}
	if (!alloc_ram(d))
		return false;
	if (!elf_load(image, image_len, &info, (void *)d->ram_hpa, d->ram_size, err, sizeof(err))) {
		not_started(d, "%s", err);
		return false;
	}
	if (data && !place_module(d, &info, data, &mod))
		return false;
	if (!map_ram(d))
		return false;
	/* The ACPI tables in the BIOS area, unless the image itself loads there. */
	if (info.load_hi <= ACPI_AREA || info.load_lo >= ACPI_AREA_END) {
		why = acpi_build((void *)d->ram_hpa, d->ram_size, d->cfg.vcpus);
		if (why) {
			not_started(d, "no room for its ACPI tables: %s", why);
			return false;
		}
	} else {
		printk("perfvisor: domain %u (%s): no ACPI tables, the image loads over 0x%lx-0x%lx\n",
		       d->id, d->cfg.name, ACPI_AREA, ACPI_AREA_END - 1);
	}
	write_boot_gdt(d, *boot, info.is64, GUEST_SEL_CODE);
	if (info.is64)
		write_boot_page_tables(d, *boot);
	why = guest_mbi_build((void *)d->ram_hpa, d->ram_size, *boot + BOOT_MBI,
			      BOOT_SIZE - BOOT_MBI, d->cfg.args, strlen(d->cfg.args), modp, &mbi);
	if (why) {
		not_started(d, "%s", why);
		return false;
	}
	*start = (struct boot_start){ .kind = info.is64 ? "ELF64" : "ELF32 multiboot",
				      .is64 = info.is64, .cs_sel = GUEST_SEL_CODE,
				      .entry = info.entry, .rax = MB_LOADER_MAGIC, .rbx = mbi,
				      .rdi = info.is64 ? mbi : 0 };
	return true;
}

/*
 * A Linux bzImage by the boot protocol's 64-bit entry (boot.rst "64-bit Boot Protocol"): the
 * zero page and command line in the boot area, identity paging of the low 4 GiB (it holds the
 * kernel's init_size, the zero page and the command line), a GDT with __BOOT_CS and __BOOT_DS,
 * interrupts off (RFLAGS 0x2), RSI = the zero page. The initrd is the data module initrd= names.
 */
static bool load_bzimage(struct domain *d, const void *image, uint64_t image_len,
			 struct boot_start *start, uint64_t *boot)
{
	const struct dom_data *initrd;
	struct bzimage_info info;
	struct bzimage_boot bz;
	size_t cmd_len = strlen(d->cfg.args);
	char err[160];
	const char *why;

	if (!bzimage_check(image, image_len, &info, err, sizeof(err))) {
		not_started(d, "%s", err);
		return false;
	}
	if (!find_initrd(d, &initrd))
		return false;
	/* A bzImage loads at 1 MiB or above: the boot data always has its low place. */
	*boot = GUEST_BOOT_LOW;
	if (cmd_len >= BOOT_SIZE - BOOT_CMDLINE) {
		not_started(d, "kernel command line too long (%zu characters; its area has %lu "
			    "bytes)", cmd_len, BOOT_SIZE - BOOT_CMDLINE);
		return false;
	}
	if (!alloc_ram(d))
		return false;
	if (!bzimage_load(image, image_len, (void *)d->ram_hpa, d->ram_size,
			  initrd ? initrd->start : (const void *)0, initrd ? initrd->len : 0,
			  d->cfg.args, cmd_len, *boot + BOOT_ZERO_PAGE, *boot + BOOT_CMDLINE, &bz,
			  err, sizeof(err))) {
		not_started(d, "%s", err);
		return false;
	}
	if (!map_ram(d))
		return false;
	why = acpi_build((void *)d->ram_hpa, d->ram_size, d->cfg.vcpus);
	if (why) {
		not_started(d, "no room for its ACPI tables: %s", why);
		return false;
	}
	write_boot_gdt(d, *boot, true, BZ_BOOT_CS);
	write_boot_page_tables(d, *boot);
	printk("perfvisor: domain %u (%s): bzImage, boot protocol %u.%02u, kernel at 0x%lx "
	       "(init_size %u KiB), initrd %lu bytes at 0x%lx, zero page at 0x%lx\n", d->id,
	       d->cfg.name, info.version >> 8, info.version & 0xFF, bz.load, info.init_size >> 10,
	       bz.initrd_size, bz.initrd, bz.zero_page);
	*start = (struct boot_start){ .kind = "bzImage", .is64 = true, .cs_sel = BZ_BOOT_CS,
				      .entry = bz.entry, .rsi = bz.zero_page };
	return true;
}

void dom_create(unsigned index, const void *image, uint64_t image_len, const char *modstr)
{
	struct domain *d = &domains[index];
	struct boot_start start;
	uint64_t boot;
	bool loaded;

	d->id = index;
	num_domains = index + 1;
	if (dom_config_parse(index, modstr, num_pcpus, pmu_event_names, report_line, d,
			     &d->cfg) == DOM_CFG_FATAL) {
		not_started(d, "bad module string: %s", d->fate);
		return;
	}
	d->fate[0] = '\0';
	/* The image's own header picks its loader: a Linux setup header, else ELF. */
	if (bzimage_is(image, image_len))
		loaded = load_bzimage(d, image, image_len, &start, &boot);
	else
		loaded = load_elf(d, image, image_len, &start, &boot);
	if (!loaded)
		return;
	/* No events= means every event the backend counts; else only those named. */
	pmu_domain_init(&d->pmu, d->cfg.events ? d->cfg.events : ~0ull, d->cfg.acct);
	vuart_init(&d->uart, uart_line, d);
	fwcfg_init(&d->fwcfg, d->ram_size, (uint16_t)d->cfg.vcpus);
	vioapic_init(&d->ioapic);
	if (!create_vcpus(d, &start, boot) || !place_vcpus(d))
		return;
	d->state = DOM_RUNNING;
	printk("perfvisor: domain %u (%s): %s image, %u vcpu%s, %lu MiB, entry 0x%lx\n", d->id,
	       d->cfg.name, start.kind, d->nvcpus, d->nvcpus > 1 ? "s" : "", d->ram_size >> 20,
	       start.entry);
}

/*
 * Ends a running domain once; later calls find it ended and do nothing. The messages are
 * printed before the state is published, so the summary always comes after them.
 */
void dom_exit(struct domain *d, int code)
{
	spin_lock(&d->lock);
	if (d->state == DOM_RUNNING) {
		dom_uart_flush(d);
		pr_info("perfvisor: domain %u (%s) exited with code %d\n", d->id, d->cfg.name, code);
		d->exit_code = code;
		d->end_tsc = rdtsc();
		__atomic_store_n(&d->state, DOM_EXITED, __ATOMIC_RELEASE);
	}
	spin_unlock(&d->lock);
}

void dom_kill(struct domain *d, struct vcpu *v, const char *fmt, ...)
{
	va_list ap;

	spin_lock(&d->lock);
	if (d->state == DOM_RUNNING) {
		va_start(ap, fmt);
		vsnprintk(d->fate, sizeof(d->fate), fmt, ap);
		va_end(ap);
		dom_uart_flush(d);
		/* One dump at a time: kills on two PCPUs must not interleave their lines. */
		spin_lock(&dump_lock);
		printk("perfvisor: domain %u (%s) killed: %s\n", d->id, d->cfg.name, d->fate);
		if (v)
			vcpu_dump(v, d->fate);
		spin_unlock(&dump_lock);
		d->end_tsc = rdtsc();
		__atomic_store_n(&d->state, DOM_KILLED, __ATOMIC_RELEASE);
	}
	spin_unlock(&d->lock);
}

/*
 * COM1 is ISA IRQ 4: with no interrupt source override in the MADT (hv/acpi.c), GSI 4, the I/O
 * APIC's pin 4, edge-triggered and active high as ISA interrupts are (ACPI 6.4 5.2.12.5).
 */
#define UART_IOAPIC_PIN	4

void dom_uart_io(struct vcpu *v, unsigned off, bool write, unsigned size, uint32_t *val)
{
	struct domain *d = v->dom;
	bool irq;

	spin_lock(&d->uart_lock);
	vuart_io(&d->uart, off, write, size, val);
	irq = vuart_irq(&d->uart);
	/* Under the lock: the pin's changes reach the I/O APIC in the order they happened. */
	if (irq != d->uart_irq) {
		d->uart_irq = irq;
		irq_ioapic_line(v, UART_IOAPIC_PIN, irq);
	}
	spin_unlock(&d->uart_lock);
}

void dom_uart_write(struct domain *d, const char *buf, uint64_t len)
{
	spin_lock(&d->uart_lock);
	for (uint64_t i = 0; i < len; i++)
		vuart_put(&d->uart, (uint8_t)buf[i]);
	spin_unlock(&d->uart_lock);
}

void dom_uart_flush(struct domain *d)
{
	spin_lock(&d->uart_lock);
	vuart_flush(&d->uart);
	spin_unlock(&d->uart_lock);
}

bool dom_all_released(void)
{
	for (unsigned i = 0; i < num_domains; i++)
		if (!domains[i].released)
			return false;
	return true;
}

bool dom_all_ended(void)
{
	for (unsigned i = 0; i < num_domains; i++)
		if (domains[i].state == DOM_RUNNING)
			return false;
	return true;
}

int dom_summary(void)
{
	int overall = 0;

	printk("perfvisor: summary of %u domain%s\n", num_domains, num_domains == 1 ? "" : "s");
	for (unsigned i = 0; i < num_domains; i++) {
		struct domain *d = &domains[i];
		uint64_t exits = 0, guest = 0, hv = 0;
		unsigned migrations = 0;

		for (unsigned j = 0; j < d->nvcpus; j++) {
			exits += d->stats[j].exits;
			migrations += d->stats[j].migrations;
			guest += d->stats[j].guest_tsc;
			hv += d->stats[j].hv_tsc;
		}
		if (d->state == DOM_EXITED)
			printk("perfvisor:   domain %u (%s): exit code %d, %u vcpus, %lu exits, "
			       "%u migrations, ran %lu host TSC ticks\n", d->id, d->cfg.name,
			       d->exit_code, d->nvcpus, exits, migrations, d->end_tsc - d->start_tsc);
		else
			printk("perfvisor:   domain %u (%s): %s: %s\n", d->id, d->cfg.name,
			       d->state == DOM_KILLED ? "killed" : "not started", d->fate);
		if (d->state != DOM_EXITED || d->exit_code)
			overall = EXIT_DOMAIN_FAILED;
		if (guest + hv)
			printk("perfvisor:     time: %lu ticks in the guest, %lu in the hypervisor "
			       "on its exits (%lu.%02lu%%)\n", guest, hv, hv * 100 / (guest + hv),
			       hv * 10000 / (guest + hv) % 100);
		for (unsigned j = 0; j < d->nvcpus; j++) {
			struct dom_vcpu_stats *s = &d->stats[j];

			if (s->steps || s->retired || s->hv_ticks)
				printk("perfvisor:     vcpu %u: pmu %lu stepped instructions, %lu retired, "
				       "%lu hypervisor ticks (%lu counted as vcpu-mode branches) "
				       "(%lu counted as vcpu-mode instructions)\n", j, s->steps,
				       s->retired, s->hv_ticks, s->hv_counted_branches,
				       s->hv_counted);
			/* The soft PMU left CPL 0 unstepped (nothing counted there): hv/step.c. */
			if (s->ring0_runs)
				printk("perfvisor:     vcpu %u: soft PMU: %lu runs at CPL 0 "
				       "unstepped\n", j, s->ring0_runs);
			/* Blocks taken from the cache, cached, and dropped by writes: hv/step_cache.c. */
			if (s->cache_fills)
				printk("perfvisor:     vcpu %u: soft PMU: block cache: %lu hits, %lu "
				       "blocks cached, %lu dropped by writes\n", j, s->cache_hits,
				       s->cache_fills, s->cache_drops);
		}
	}
	for (unsigned i = 0; i < num_pcpus; i++) {
		struct pcpu *p = &pcpus[i];

		printk("perfvisor:   pcpu %u: %lu vcpu switches (%lu ticks each, PMU %lu), "
		       "%lu migrations in\n", i, p->switches,
		       p->switches ? p->switch_tsc / p->switches : 0,
		       p->switches ? p->switch_pmu_tsc / p->switches : 0, p->migrations_in);
	}
	printk("perfvisor:   boot: %lu TSC ticks from the hypervisor's entry to the first guest entry\n",
	       first_entry_tsc - boot_entry_tsc);
	return overall;
}
