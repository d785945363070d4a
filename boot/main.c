/* boot_main(): from the 64-bit entry to hv_main(): console, descriptor tables, boot information, platform report. */
#include <stdint.h>

#include "boot/console.h"
#include "boot/exit.h"
#include "boot/gdt.h"
#include "boot/printk.h"
#include "boot/trap.h"
#include "hv/hv.h"
#include "hv/platform.h"

#define MULTIBOOT_LOADER_MAGIC	0x2BADB002

static struct cpu_tables bsp_tables __attribute__((aligned(16)));

void boot_main(uint32_t magic, uint32_t info_pa);

void boot_main(uint32_t magic, uint32_t info_pa)
{
	con_init();
	gdt_load_cpu(&bsp_tables);
	idt_init();
	idt_load();
	printk("perfvisor 0.1: a hypervisor that virtualizes the performance counters\n");
	if (magic != MULTIBOOT_LOADER_MAGIC) {
		printk("perfvisor: not started by a multiboot loader (EAX=0x%x, expected 0x%x)\n",
		       magic, MULTIBOOT_LOADER_MAGIC);
		hv_exit(EXIT_BAD_BOOT);
	}
	(void)info_pa;
	if (!platform_report()) {
		printk("perfvisor: VT-x is not available on this CPU; run under KVM with nested "
		       "VT-x, on bare metal, or under Bochs (make run)\n");
		hv_exit(EXIT_NO_VTX);
	}
	hv_main();
}
