/* kernel_init(): the kernel's arguments, then every piece set up in order, BSP first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/kernel/internal.h"
#include "guest-stub/rt/rt.h"
#include "include/perfvisor/fwcfg.h"

#define DEFAULT_QUANTUM	20000

/* perfvisor's and QEMU's number of VCPUs; 1 without fw_cfg. */
static unsigned count_vcpus(void)
{
	uint16_t n = 1;

	if (!rt_fwcfg_read(FWCFG_NB_CPUS, &n, sizeof(n)) || n == 0)
		return 1;
	if (n > KCPU_MAX) {
		printf("kernel: %u vcpus, using the first %u\n", n, KCPU_MAX);
		return KCPU_MAX;
	}
	return n;
}

static void write_cr3(uint64_t cr3)
{
	__asm__ volatile("movq %0, %%cr3" : : "r"(cr3) : "memory");
}

unsigned kernel_init(int argc, char **argv)
{
	uint64_t quantum = DEFAULT_QUANTUM, seed = 1, cr3;
	bool migrate = false;

	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "quantum=", 8) == 0)
			quantum = strtoull(argv[i] + 8, NULL, 0);
		else if (strcmp(argv[i], "migrate=random") == 0)
			migrate = true;
		else if (strcmp(argv[i], "migrate=none") == 0)
			migrate = false;
		else if (strncmp(argv[i], "seed=", 5) == 0)
			seed = strtoull(argv[i] + 5, NULL, 0);
	}
	if (quantum == 0)
		quantum = DEFAULT_QUANTUM;

	kcpu_count = count_vcpus();
	for (unsigned i = 0; i < kcpu_count; i++)
		kcpus[i].id = i;	/* perfvisor and QEMU number the APIC IDs 0..n-1 */

	/* Interrupts stay masked until the end: first the address space and descriptors. */
	cr3 = paging_init();
	write_cr3(cr3);
	gdt_init(kcpu_count);
	gdt_load(&kcpus[0]);
	heap_init();		/* needs this_cpu(), which gdt_load() made work */
	irq_init();
	pic_mask_all();
	apic_cpu_init();
	apic_timer_calibrate();
	/* The idle threads exist before the APs, which start on their stacks. */
	if (!sched_init(migrate, seed)) {
		printf("kernel: out of memory for the idle threads\n");
		rt_exit(1);
	}
	kcpu_count = smp_boot_aps(cr3, quantum);
	printf("kernel: %u vcpus, quantum %llu TSC ticks, migrate %s seed %llu\n", kcpu_count,
	       (unsigned long long)quantum, migrate ? "random" : "none",
	       (unsigned long long)seed);

	apic_timer_start(quantum);
	__asm__ volatile("sti" : : : "memory");
	return kcpu_count;
}
