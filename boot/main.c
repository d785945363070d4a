/* boot_main(): from the 64-bit entry to hv_main(): console, descriptor tables, boot information, options, memory. */
#include <stdint.h>

#include "lib/cmdline.h"
#include "lib/console.h"
#include "lib/cpu.h"
#include "lib/exit.h"
#include "lib/frame.h"
#include "lib/inject.h"
#include "lib/multiboot.h"
#include "lib/printk.h"
#include "boot/cpu_init.h"
#include "boot/trap.h"
#include "hv/hv.h"
#include "hv/irq.h"
#include "hv/lapic.h"
#include "hv/pcpu.h"
#include "hv/platform.h"
#include "hv/sched.h"
#include "pmu/pmu.h"

#define MULTIBOOT_LOADER_MAGIC	0x2BADB002

extern char __image_start[], __image_end[];

static struct mb_boot_info boot_info;

static const char *const console_words[] = { "serial", "e9", "both", (const char *)0 };
static const char *const migrate_words[] = { "none", "random", (const char *)0 };
/* In enum pmu_choice order. */
static const char *const pmu_words[] = { "auto", "arch", "soft", "off", (const char *)0 };
static unsigned pmu_choice;
/* In enum inject_fault order (lib/inject.h). */
static const char *const inject_words[] = { "none", "pv-skip-sum", "pv-stale-start",
					    "vpmu-no-sext", "pmi-drop", "tsc-no-offset",
					    "pv-drop-pending", "pv-keep-pending", "acct-as-guest",
					    "pv-stale-active", (const char *)0 };
_Static_assert(sizeof(inject_words) / sizeof(inject_words[0]) == INJECT_COUNT + 1,
	       "one inject= word per enum inject_fault");
static unsigned console_choice = 2;
static uint64_t loglevel_opt = LOG_INFO;
static unsigned migrate_choice;

/* The hypervisor's own options (README "Command line"); bad values fall back to the default. */
static const struct cmdline_opt hv_options[] = {
	{ .name = "loglevel", .kind = CMDLINE_UINT, .dest = &loglevel_opt, .min = 0, .max = 7 },
	{ .name = "console", .kind = CMDLINE_ENUM, .dest = &console_choice, .words = console_words },
	{ .name = "slice", .kind = CMDLINE_UINT, .dest = &sched_opts.slice_us, .min = 100,
	  .max = 1000000 },
	{ .name = "migrate", .kind = CMDLINE_ENUM, .dest = &migrate_choice, .words = migrate_words },
	{ .name = "pmu", .kind = CMDLINE_ENUM, .dest = &pmu_choice, .words = pmu_words },
	{ .name = "inject", .kind = CMDLINE_ENUM, .dest = &inject_fault, .words = inject_words },
	{ .name = "cpus", .kind = CMDLINE_UINT, .dest = &sched_opts.max_cpus, .min = 1,
	  .max = MAX_PCPUS },
	{ .name = "seed", .kind = CMDLINE_UINT, .dest = &sched_opts.seed, .min = 0,
	  .max = UINT64_MAX },
};

static void report_option(void *ctx, const char *msg)
{
	(void)ctx;
	printk("cmdline: %s\n", msg);
}

static void parse_options(const char *line)
{
	struct cmdline_parser p = {
		.opts = hv_options,
		.nopts = sizeof(hv_options) / sizeof(hv_options[0]),
		.report = report_option,
	};

	cmdline_parse(&p, line);
	log_level = (int)loglevel_opt;
	con_set_sinks((enum con_sink)(console_choice + 1));
	sched_opts.migrate_random = migrate_choice == 1;
	if (!inject_on(INJECT_NONE))
		printk("perfvisor: FAULT INJECTION: inject=%s (counts will be wrong: docs/tour.md)\n",
		       inject_words[inject_fault]);
}

static void *identity(uint64_t pa)
{
	return (void *)pa;
}

/* Frames for the hypervisor: usable RAM minus the image, the modules and the loader's data. */
static void init_memory(void)
{
	struct frame_range usable[MB_MMAP_MAX], reserved[MB_RESERVED_MAX];
	size_t nu = mb_usable_ranges(&boot_info, usable);
	size_t nr = mb_reserved_ranges(&boot_info, reserved);
	uint64_t total, free;

	if (frame_init(usable, nu, reserved, nr, identity)) {
		printk("perfvisor: no usable memory for the frame allocator\n");
		hv_exit(EXIT_BAD_BOOT);
	}
	frame_stats(&total, &free);
	pr_info("perfvisor: memory: %lu MiB managed, %lu MiB free\n", total >> 8, free >> 8);
}

/* A kick or the idle timer ended an idle HLT (hv/irq.c): the wake-up was all it had to do. */
static void wake_irq(struct trap_frame *f)
{
	(void)f;
	lapic_write(APIC_EOI, 0);
}

/* SDM Vol. 3A 11.9: a spurious interrupt takes no EOI. */
static void spurious_irq(struct trap_frame *f)
{
	(void)f;
}

void boot_main(uint32_t magic, uint32_t info_pa);

void boot_main(uint32_t magic, uint32_t info_pa)
{
	/* The low 4 GiB are identity-mapped: the whole window a multiboot loader can use. */
	const struct mb_window window = { (const uint8_t *)0, 0, 1ull << 32 };
	char msg[160];

	con_init();
	/* The 8259s stay masked: the hypervisor polls, and the BIOS left the timer IRQ on. */
	outb(0x21, 0xFF);
	outb(0xA1, 0xFF);
	idt_init();
	trap_set_handler(IRQ_KICK_VECTOR, wake_irq);
	trap_set_handler(IRQ_TIMER_VECTOR, wake_irq);
	trap_set_handler(IRQ_SPURIOUS_VECTOR, spurious_irq);
	fpu_enable();
	boot_cpu_init(&pcpus[0]);
	pcpus[0].online = true;
	printk("perfvisor 0.1: a hypervisor that virtualizes the performance counters\n");
	if (magic != MULTIBOOT_LOADER_MAGIC) {
		printk("perfvisor: not started by a multiboot loader (EAX=0x%x, expected 0x%x)\n",
		       magic, MULTIBOOT_LOADER_MAGIC);
		hv_exit(EXIT_BAD_BOOT);
	}
	if (mb_parse(&window, info_pa, (uint64_t)__image_start, (uint64_t)__image_end, &boot_info,
		     msg, sizeof(msg))) {
		printk("perfvisor: bad boot information: %s\n", msg);
		hv_exit(EXIT_BAD_BOOT);
	}
	parse_options(boot_info.cmdline);
	init_memory();
	if (!platform_report()) {
		printk("perfvisor: VT-x is not available on this CPU; run under KVM with nested "
		       "VT-x, on bare metal, or under Bochs (make run)\n");
		hv_exit(EXIT_NO_VTX);
	}
	pmu_init((enum pmu_choice)pmu_choice);
	hv_main(&boot_info, boot_cpu_init);
}
